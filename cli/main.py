"""The ``ocrgw`` command: submit documents, watch jobs run, read their results, run the stack.

Exit status: 0 when the command did what it was asked (and, with
``--wait``, the job completed); 1 when a waited-for job ended failed or
cancelled, or the stack of ``ocrgw up`` cannot start, or ``ocrgw config``
finds a bad setting, or ``ocrgw store migrate`` is refused or cannot move
a key, or the server's packages (the extra ``ocrgw[server]``) are not
installed for ``up``, ``config`` or ``store``; 2 for a usage error; 3 when
the gateway answered a problem (its title, code and detail are printed); 4
when the gateway could not be reached; 130 when interrupted.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from cli import extras, stack, views, waiting
from cli.client import DEFAULT_URL, FORMATS, ApiError, Gateway, Unreachable
from cli.ocr import MAX_IMAGE_DPI, MIN_IMAGE_DPI, OcrRequest, image_resolution
from cli.ocr import run as run_ocr
from cli.output import Printer, is_terminal
from cli.statuses import CANCELLED, COMPLETED, ROOT_STATUSES
from cli.submitting import WEBHOOK_EVENTS, SubmitError, build, parse_options, read_documents

EXIT_NOT_COMPLETED = 1
EXIT_PROBLEM = 3
EXIT_UNREACHABLE = 4
EXIT_INTERRUPTED = 130


def error(text: str) -> None:
    click.echo(f"ocrgw: {text}", err=True)


class Cli(click.Group):
    """Turns the errors every command may meet into a line or two and an exit status, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ApiError as problem:
            error(str(problem))
            for field, messages in (problem.problem.get("errors") or {}).items():
                error(f"  {field}: {json.dumps(messages, ensure_ascii=False)}")
            ctx.exit(EXIT_PROBLEM)
        except Unreachable as unreachable:
            error(str(unreachable))
            ctx.exit(EXIT_UNREACHABLE)
        except (stack.StackError, extras.MissingExtra) as why:
            error(str(why))
            ctx.exit(1)


def connects(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--url`` and ``--api-key``, given to the command as a ``Gateway``.

    Either place works: ``ocrgw --url U status ID`` or ``ocrgw status ID --url U``
    (the command's own wins); else OCRGW_URL and OCRGW_API_KEY, else the default URL.
    """

    @functools.wraps(command)
    def with_gateway(*args: Any, url: str | None, api_key: str | None, **kwargs: Any) -> Any:
        chosen = click.get_current_context().find_object(Connection) or Connection(DEFAULT_URL, None)
        return command(*args, gateway=Gateway(url or chosen.url, api_key or chosen.api_key), **kwargs)

    with_gateway = _api_key_option(envvar=None)(with_gateway)
    return _url_option(envvar=None, default=None)(with_gateway)


@dataclass(frozen=True)
class Connection:
    """The gateway the group's options (or their environment variables) name."""

    url: str
    api_key: str | None


def _api_key_option(envvar: str | None) -> Callable[..., Any]:
    return click.option(
        "--api-key", envvar=envvar, metavar="KEY", help="Sent as 'Authorization: Bearer KEY' [env OCRGW_API_KEY]."
    )


def _url_option(envvar: str | None, default: str | None) -> Callable[..., Any]:
    return click.option(
        "--url", envvar=envvar, default=default, show_default=default is not None, help="The gateway [env OCRGW_URL]."
    )


def _page_geometry(**switches: bool) -> dict[str, bool]:
    """The geometry options a flag turns on; a flag left off sends nothing, so the model's default holds."""
    return {name: True for name, on in switches.items() if on}


json_flag = click.option("--json", "as_json", is_flag=True, help="Print the gateway's JSON answer as it is.")


@click.group(cls=Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ocrgw", prog_name="ocrgw")
@_url_option(envvar="OCRGW_URL", default=DEFAULT_URL)
@_api_key_option(envvar="OCRGW_API_KEY")
@click.pass_context
def main(ctx: click.Context, url: str, api_key: str | None) -> None:
    """Submit OCR jobs and fan-out groups to an ocrgw gateway, watch them, read their results."""
    ctx.obj = Connection(url, api_key)


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-m", "--model", help="The model (ocrgw models); default: the gateway's, tesseract in a group.")
@click.option("--max-parallel", type=int, metavar="N", help="A group's cap: at most N children at once; 0: no cap.")
@click.option("--split-pages", type=click.IntRange(min=1), metavar="N", help="Split one PDF into children of N pages.")
@click.option("--idempotency-key", metavar="KEY", help="Resubmitting with the same key gives the same job.")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="A model option (repeatable).")
@click.option("--rotate-pages", is_flag=True, help="Turn pages upright first (the option rotate_pages).")
@click.option("--deskew", is_flag=True, help="Straighten crooked pages first (the option deskew).")
@click.option(
    "--image-dpi",
    type=click.FloatRange(min=MIN_IMAGE_DPI, max=MAX_IMAGE_DPI),
    metavar="DPI",
    help="An image's resolution, instead of the one it states or an estimate (the option image_dpi).",
)
@click.option("--content-type", metavar="TYPE", help="The files' media type, if their bytes and names do not say.")
@click.option("--callback-url", metavar="URL", help="Where the job's view is POSTed once it ends.")
@click.option(
    "--webhook-event",
    "webhook_events",
    multiple=True,
    type=click.Choice(WEBHOOK_EVENTS),
    help="Which webhooks go to --callback-url (repeatable): child.completed, one per child as it ends; "
    "job.completed, the whole job's (the default).",
)
@click.option(
    "--priority",
    type=click.Choice(["interactive", "batch"]),
    help="interactive: ahead of the model's batch work (the gateway's default: batch).",
)
@click.option("--wait", is_flag=True, help="Show progress until the job ends; exit 1 if it did not complete.")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the result here (implies --wait)."
)
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True, help="The result's form for -o."
)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.05),
    default=0.5,
    show_default=True,
    help="Seconds between polls, where the gateway serves no live stream.",
)
@json_flag
@connects
@click.pass_context
def submit(
    ctx: click.Context,
    gateway: Gateway,
    files: tuple[Path, ...],
    model: str | None,
    max_parallel: int | None,
    split_pages: int | None,
    idempotency_key: str | None,
    options: tuple[str, ...],
    rotate_pages: bool,
    deskew: bool,
    image_dpi: float | None,
    content_type: str | None,
    callback_url: str | None,
    webhook_events: tuple[str, ...],
    priority: str | None,
    wait: bool,
    output: Path | None,
    fmt: str,
    interval: float,
    as_json: bool,
) -> None:
    """Submit FILES: one file is a job, several files (or --split-pages) a fan-out group.

    Prints the job's id (its view with --json). The type of each file is read from its bytes or its name.
    """
    try:
        documents = read_documents(list(files), content_type)
        request = build(
            documents,
            model=model,
            max_parallel=max_parallel,
            split_pages=split_pages,
            options=_with_layout_for_markdown(
                parse_options(options)
                | _page_geometry(rotate_pages=rotate_pages, deskew=deskew)
                | image_resolution(image_dpi),
                fmt=fmt,
                model=model,
                content_types={d.content_type for d in documents},
            ),
            callback_url=callback_url,
            idempotency_key=idempotency_key,
            priority=priority,
            webhook_events=webhook_events,
        )
    except SubmitError as why:
        raise click.UsageError(str(why)) from None
    if request.json is not None:
        view = gateway.submit_json(request.json, request.headers)
    else:
        view = gateway.submit_raw(request.body, request.content_type, request.params, request.headers)
    printer = Printer(as_json)
    if not (wait or output):
        if as_json:
            printer.json(view)
        else:
            printer.line(view["id"])
        return
    if not as_json:
        printer.line(view["id"])
        sys.stdout.flush()
    final = _wait(gateway, view["id"], interval)
    if output is not None:
        _write_result(gateway, final, fmt, output)
    if as_json:
        printer.json(final)
    if final["status"] != COMPLETED:
        for line in waiting.why_not_completed(gateway, final, [f.name for f in files]):
            error(line)
        ctx.exit(EXIT_NOT_COMPLETED)


def _wait(gateway: Gateway, job_id: str, interval: float) -> dict[str, Any]:
    try:
        return waiting.wait(gateway, job_id, waiting.display_for(sys.stderr, job_id), interval)
    except KeyboardInterrupt:
        error(f"stopped waiting; the job goes on: ocrgw status {job_id}")
        sys.exit(EXIT_INTERRUPTED)


def _with_layout_for_markdown(options: dict, *, fmt: str, model: str | None, content_types: set[str]) -> dict:
    """``options`` with ``layout`` on when the result is asked for as Markdown (``--format md``): headings,
    tables and paragraphs in reading order are what Markdown is for.  Not where the model reads no pages (echo,
    plain text), which would refuse it, nor over the option given by hand."""
    if fmt != "md" or "layout" in options or model == "echo" or content_types <= {"text/plain"}:
        return options
    return {**options, "layout": True}


def _write_result(gateway: Gateway, view: dict[str, Any], fmt: str, output: Path) -> None:
    try:
        data = gateway.result_as(view["id"], fmt)
    except ApiError as problem:
        if problem.code in ("no_result", "pdf_unavailable"):
            error(f"nothing written to {output}: {problem.detail}")
            return
        raise
    output.write_bytes(data)


@main.command()
@click.argument("job_id")
@json_flag
@connects
def status(gateway: Gateway, job_id: str, as_json: bool) -> None:
    """A job's status: a group's counts per status and its first children."""
    view = gateway.job(job_id)
    printer = Printer(as_json)
    if as_json:
        printer.json(view)
    else:
        views.job(printer, view)


@main.command()
@click.argument("job_id")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write it here, not to stdout.")
@json_flag
@connects
def result(gateway: Gateway, job_id: str, fmt: str, output: Path | None, as_json: bool) -> None:
    """A job's result: its text, its JSON (--json, --format json), a searchable PDF (--format pdf),
    hOCR (--format hocr), ALTO XML (--format alto) or Markdown (--format md: headings, paragraphs in reading
    order and tables when the job asked for layout)."""
    fmt = "json" if as_json else fmt
    if fmt == "pdf" and output is None and is_terminal(sys.stdout):
        raise click.UsageError("a PDF is binary: write it with -o FILE, or pipe it")
    data = gateway.result_as(job_id, fmt)
    if output is not None:
        output.write_bytes(data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


@main.command()
@click.argument("job_id")
@json_flag
@connects
def events(gateway: Gateway, job_id: str, as_json: bool) -> None:
    """A job's audit events, oldest first (a group's include its children's)."""
    document = gateway.events(job_id)
    printer = Printer(as_json)
    if as_json:
        printer.json(document)
    else:
        views.events(printer, document)


@main.command()
@click.argument("job_id")
@json_flag
@connects
def cancel(gateway: Gateway, job_id: str, as_json: bool) -> None:
    """Cancel a job, a child or a whole group (a running page is finished first)."""
    view = gateway.cancel(job_id)
    printer = Printer(as_json)
    if as_json:
        printer.json(view)
    elif view["status"] == CANCELLED:
        printer.line(f"{job_id} cancelled")
    else:
        printer.line(f"{job_id} cancel requested: it stops at its next page ({view['status']})")


@main.command(name="ls")
@click.option("--status", type=click.Choice(ROOT_STATUSES), help="Only jobs in this status.")
@click.option("--kind", type=click.Choice(("single", "parent")), help="Only single jobs, or only groups.")
@click.option("--limit", type=click.IntRange(1, 200), default=20, show_default=True)
@click.option("--cursor", help="The next_cursor of the previous page (--json shows it).")
@json_flag
@connects
def list_jobs(
    gateway: Gateway, status: str | None, kind: str | None, limit: int, cursor: str | None, as_json: bool
) -> None:
    """Single jobs and groups, newest first."""
    document = gateway.jobs(status, kind, limit, cursor)
    printer = Printer(as_json)
    if as_json:
        printer.json(document)
    else:
        views.job_list(printer, document)


@main.command()
@click.option("--from", "start", metavar="WHEN", help="A date (UTC) or an RFC 3339 time; default: 30 days before --to.")
@click.option("--to", "end", metavar="WHEN", help="The end (exclusive); default: now.")
@click.option("--granularity", type=click.Choice(("day", "hour")), default="day", show_default=True)
@click.option("--tenant", help="Another tenant's usage (an admin key only).")
@json_flag
@connects
def usage(
    gateway: Gateway, start: str | None, end: str | None, granularity: str, tenant: str | None, as_json: bool
) -> None:
    """What a tenant's jobs used, per model and day or hour: pages, engine seconds, bytes, jobs."""
    document = gateway.usage({"from": start or "", "to": end or "", "granularity": granularity, "tenant": tenant or ""})
    printer = Printer(as_json)
    if as_json:
        printer.json(document)
    else:
        views.usage(printer, document)


@main.command()
@json_flag
@connects
def models(gateway: Gateway, as_json: bool) -> None:
    """The models the gateway offers, and the content types each takes."""
    document = gateway.models()
    printer = Printer(as_json)
    if as_json:
        printer.json(document)
    else:
        views.models(printer, document)


@main.command()
@click.option("--markdown", is_flag=True, help="Print the docs' table of every variable instead.")
@click.pass_context
def config(ctx: click.Context, markdown: bool) -> None:
    """The settings the environment gives a process started here: each variable, its value and where it came from.

    Secrets are masked. Exit status 1, with a line per bad variable, when a process would not start.
    """
    extras.require(extras.SERVER, "config")
    # The server's own settings: imported here, as no other command needs them.
    from jobs.config import InvalidSettings, configuration_table, effective_settings

    if markdown:
        click.echo(configuration_table(), nl=False)
        return
    try:
        effective = effective_settings()
    except InvalidSettings as invalid:
        for problem in invalid.problems:
            error(problem)
        ctx.exit(1)
    Printer().table(("variable", "value", "from"), ((s.variable, s.value, s.source) for s in effective))


@main.group()
def store() -> None:
    """The job store itself (its Redis): what an upgrade needs done to it."""


@store.command()
@click.pass_context
def layout(ctx: click.Context) -> None:
    """Print the store's layout (its bucket count and key schema) and this environment's.

    The first process to reach an empty store records its layout there; every process checks its own
    against it at start. Exit status 1 when they differ (then `ocrgw store migrate`, with the stack stopped).
    """
    extras.require(extras.SERVER, "store layout")
    # The server's own code: imported here, as no other command needs it.
    from redis.exceptions import RedisError

    from jobs import store_layout
    from jobs.config import InvalidSettings, Settings
    from jobs.connections import redis_client
    from jobs.keys import Keyspace

    try:
        settings = Settings.from_env()
    except InvalidSettings as invalid:
        for problem in invalid.problems:
            error(problem)
        ctx.exit(1)
    keyspace = Keyspace(settings.store_buckets)
    try:
        found = store_layout.record_or_read(redis_client(settings, socket_timeout=60), keyspace)
    except store_layout.LayoutMismatch as unreadable:
        error(f"store layout: {unreadable}")
        ctx.exit(1)
    except RedisError as failed:
        error(f"store layout: the store does not answer: {failed}")
        ctx.exit(1)
    process = store_layout.configured(keyspace)
    click.echo(f"store: {found}")
    click.echo(f"this environment: {process}")
    if found != process:
        error(f"store layout: {store_layout.mismatch(found, process)}")
        ctx.exit(1)


@store.command()
@click.option("--dry-run", is_flag=True, help="Print what would be moved, and move nothing.")
@click.pass_context
def migrate(ctx: click.Context, dry_run: bool) -> None:
    """Move a store written before buckets onto the key layout of OCRGW_STORE_BUCKETS buckets.

    With nothing in flight and every ocrgw process stopped, on the single Redis (or Sentinel's master)
    that REDIS_URL names; a Redis Cluster is refused. Running it again finishes a run cut short.
    Exit status 1 when refused (what is in flight is printed) or when a key could not be moved.
    """
    extras.require(extras.SERVER, "store migrate")
    # The server's own code: imported here, as no other command needs it.
    from redis.exceptions import RedisError

    from jobs import migration
    from jobs.config import InvalidSettings

    try:
        report = migration.run_from_env(dry_run)
    except InvalidSettings as invalid:
        for problem in invalid.problems:
            error(problem)
        ctx.exit(1)
    except migration.MigrationRefused as refused:
        error(f"store migrate: refused: {refused}")
        ctx.exit(1)
    except RedisError as failed:
        error(f"store migrate: the store does not answer: {failed}")
        ctx.exit(1)
    for line in migration.describe(report):
        click.echo(line)
    if report.conflicts:
        ctx.exit(1)


@main.command()
@click.option(
    "--port",
    envvar="PORT",
    type=click.IntRange(1, 65535),
    default=8000,
    show_default=True,
    help="The gateway's port [env PORT].",
)
@click.option(
    "--procfile",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Default: ./Procfile, else the one inside ocrgw.",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep the private Redis's data (AOF) here across runs; default: a temporary directory.",
)
@click.option(
    "--redis-port",
    envvar="OCRGW_REDIS_PORT",
    type=click.IntRange(1, 65535),
    help="The private Redis's port [env OCRGW_REDIS_PORT]; default: a free one.",
)
def up(port: int, procfile: Path | None, data_dir: Path | None, redis_port: int | None) -> None:
    """Run the whole stack here: a private Redis unless REDIS_URL is set, then the Procfile under honcho.

    Ctrl-C stops every process, then Redis.
    """
    extras.require(extras.SERVER, "up")
    sys.exit(stack.up(port, procfile, data_dir, redis_port))


@main.command(name="ocr")
@click.argument("input_file", metavar="INPUT", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.argument("output_file", metavar="OUTPUT", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option(
    "-l", "--language", "languages", multiple=True, metavar="LANG", help="Tesseract language(s): eng, deu, eng+deu."
)
@click.option("--rotate-pages", is_flag=True, help="Turn each page upright (Tesseract's orientation detection).")
@click.option("--deskew", is_flag=True, help="Straighten each page before reading it.")
@click.option(
    "--sidecar", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path), help="Write the text here."
)
@click.option(
    "--markdown",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    metavar="FILE",
    help="Read each page's layout too (the option layout) and write the document as Markdown here.",
)
@click.option("--skip-text", is_flag=True, help="Keep the text of pages that have some; OCR the others.")
@click.option("--force-ocr", is_flag=True, help="OCR every page, also those that have text.")
@click.option(
    "--redo-ocr", is_flag=True, help="Replace an earlier OCR layer: keep the visible text, OCR everything else."
)
@click.option(
    "--image-dpi",
    type=click.FloatRange(min=MIN_IMAGE_DPI, max=MAX_IMAGE_DPI),
    metavar="DPI",
    help="An image's resolution, instead of the one it states (without it, one is estimated from its text).",
)
@click.option("-j", "--jobs", type=click.IntRange(min=1), metavar="N", help="Read at most N pages at once.")
@click.option("-m", "--model", default="tesseract", show_default=True, help="The model (ocrgw models).")
@click.option(
    "--output-type", default="pdf", show_default=True, metavar="pdf|pdfa", help="pdfa: PDF/A-2b (also: pdfa-2)."
)
@click.option(
    "-O", "--optimize", type=int, default=0, show_default=True, metavar="0|1|2", help="1 lossless, 2 also lossy."
)
@connects
def ocr(
    gateway: Gateway,
    input_file: Path,
    output_file: Path,
    languages: tuple[str, ...],
    rotate_pages: bool,
    deskew: bool,
    sidecar: Path | None,
    markdown: Path | None,
    skip_text: bool,
    force_ocr: bool,
    redo_ocr: bool,
    image_dpi: float | None,
    jobs: int | None,
    model: str,
    output_type: str,
    optimize: int,
) -> None:
    """Make INPUT (a PDF or an image) a searchable PDF at OUTPUT, as ocrmypdf does, through the gateway.

    Exit statuses follow ocrmypdf's: 1 bad option, 2 bad input, 3 language not installed, 5 output not
    writable, 6 the PDF already has text (see --skip-text, --force-ocr, --redo-ocr), 7 a page failed,
    8 the PDF needs a password, 15 other.
    """
    request = OcrRequest(
        model,
        languages,
        rotate_pages,
        deskew,
        skip_text,
        force_ocr,
        jobs,
        output_type=output_type,
        optimize=optimize,
        redo_ocr=redo_ocr,
        image_dpi=image_dpi,
        layout=markdown is not None,
    )
    sys.exit(run_ocr(gateway, input_file, output_file, sidecar, request, say=error, markdown=markdown))
