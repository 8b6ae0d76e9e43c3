"""mkdocs hook: a page for every problem code, every job error code and every webhook error code,
and an index of each.

The pages are made from the catalogues at every build (``gateway.problems.CATALOGUE``,
``jobs.contract.ErrorCode``, ``jobs.contract.WebhookErrorCode``), so a new code cannot lack its page;
what a code means and what to do about it come from ``code_guide.py``.  A code without a guide entry,
or an entry for no code, is a warning, which fails the strict build (``make docs``, ``tests/unit/docs``).

The indexes' tables are the only tables of the codes: a page that lists them carries a marker
(``TABLE_MARKERS``) that the hook replaces with the same table, linked from where the page is.
"""

from __future__ import annotations

import json
import logging
import posixpath
import sys
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for path in (ROOT, HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import code_guide  # noqa: E402

from gateway.problems import CATALOGUE, PLAIN_HTTP_CODES, type_of  # noqa: E402
from jobs.contract import ErrorCode, WebhookErrorCode  # noqa: E402

log = logging.getLogger("mkdocs.plugins.ocrgw_codes")


def on_files(files: Files, config: Any) -> Files:
    _check_guide()
    pages = {
        "problems/index.md": problems_index(),
        "errors/index.md": errors_index(),
        "webhook-errors/index.md": webhook_errors_index(),
    }
    for code in CATALOGUE:
        pages[f"problems/{code}.md"] = problem_page(code)
    for error in ErrorCode:
        pages[f"errors/{error.value}.md"] = error_page(error)
    for webhook_error in WebhookErrorCode:
        pages[f"webhook-errors/{webhook_error.value}.md"] = webhook_error_page(webhook_error)
    for src_uri, content in pages.items():
        inclusion = InclusionLevel.UNDEFINED if src_uri.endswith("index.md") else InclusionLevel.NOT_IN_NAV
        files.append(File.generated(config, src_uri, content=content, inclusion=inclusion))
    return files


def _check_guide() -> None:
    for catalogue, guide, where in (
        (set(CATALOGUE), set(code_guide.PROBLEMS), "PROBLEMS"),
        ({e.value for e in ErrorCode}, set(code_guide.JOB_ERRORS), "JOB_ERRORS"),
        ({e.value for e in WebhookErrorCode}, set(code_guide.WEBHOOK_ERRORS), "WEBHOOK_ERRORS"),
    ):
        for code in sorted(catalogue - guide):
            log.warning(
                "docs/hooks/code_guide.py: %s has no entry for %r: say what it means and what to do", where, code
            )
        for code in sorted(guide - catalogue):
            log.warning("docs/hooks/code_guide.py: %s has an entry for %r, which is no code", where, code)


def problem_page(code: str) -> str:
    status, title = CATALOGUE[code]
    meaning, what_to_do = code_guide.PROBLEMS.get(code, ("", ""))
    example = {"type": type_of(code), "title": title, "status": status, "detail": "…", "code": code}
    return "\n".join(
        [
            f"# `{code}`",
            "",
            f"**{status} {HTTPStatus(status).phrase}** · {title}",
            "",
            "## What it means",
            "",
            meaning,
            "",
            "## What to do",
            "",
            what_to_do,
            "",
            "## The problem document",
            "",
            "```json",
            json.dumps(example, indent=2, ensure_ascii=False),
            "```",
            "",
            "Other members may come with it, as the operation's entry in `/openapi.json` says. "
            "All problem codes: [Problem codes](index.md).",
            "",
        ]
    )


def error_page(error: ErrorCode) -> str:
    retried = (
        "**Retried**: the job gets another attempt while it has attempts left (`OCRGW_MAX_ATTEMPTS`, "
        "after `OCRGW_RETRY_BACKOFF`); the last attempt's error fails the job with this code."
        if error.retried
        else "**Not retried**: the job fails with this code at once."
    )
    return "\n".join(
        [
            f"# `{error.value}`",
            "",
            "A job's `error_code` (or, while it waits for another attempt, its `last_error_code`).",
            "",
            retried,
            "",
            "## What it means",
            "",
            _sentence(error.meaning),
            "",
            "## What to do",
            "",
            code_guide.JOB_ERRORS.get(error.value, ""),
            "",
            "All job error codes: [Job error codes](index.md).",
            "",
        ]
    )


def _link(code: str, section: str, page_uri: str) -> str:
    """``code`` linked to its page in ``section`` (``problems``, ...), relative to the page ``page_uri``."""
    return f"[`{code}`]({posixpath.relpath(f'{section}/{code}.md', posixpath.dirname(page_uri) or '.')})"


def problems_table(page_uri: str) -> str:
    """The one table of problem codes: status, code, title and when it is answered, by status."""
    rows = [
        f"| {status} | {_link(code, 'problems', page_uri)} | {title} | {code_guide.PROBLEMS.get(code, ('', ''))[0]} |"
        for code, (status, title) in sorted(CATALOGUE.items(), key=lambda item: (item[1][0], item[0]))
    ]
    return "\n".join(["| status | code | title | when |", "|---|---|---|---|", *rows])


def errors_table(page_uri: str) -> str:
    """The one table of job error codes: code, whether it is retried, and what it means, in catalogue order."""
    rows = [
        f"| {_link(error.value, 'errors', page_uri)} | {'yes' if error.retried else 'no'} | {error.meaning} |"
        for error in ErrorCode
    ]
    return "\n".join(["| `error_code` | retried | meaning |", "|---|---|---|", *rows])


def webhook_errors_table(page_uri: str) -> str:
    """The one table of a webhook attempt's error codes and what each means, in catalogue order."""
    meanings = {code: meaning for code, (meaning, _) in code_guide.WEBHOOK_ERRORS.items()}
    rows = [
        f"| {_link(error.value, 'webhook-errors', page_uri)} | {meanings.get(error.value, '')} |"
        for error in WebhookErrorCode
    ]
    return "\n".join(["| `error_code` | meaning |", "|---|---|", *rows])


#: A page's marker -> the table the hook puts in its place (given the page's path under docs/).
TABLE_MARKERS: dict[str, Callable[[str], str]] = {
    "<!-- problem-codes -->": problems_table,
    "<!-- job-error-codes -->": errors_table,
    "<!-- webhook-error-codes -->": webhook_errors_table,
}


def on_page_markdown(markdown: str, page: Page, config: Any, files: Files) -> str:
    for marker, table in TABLE_MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, table(page.file.src_uri))
    return markdown


def problems_index() -> str:
    plain = ", ".join(f"`{code}` ({status})" for code, status in PLAIN_HTTP_CODES.items())
    return "\n".join(
        [
            "# Problem codes",
            "",
            "Every error the gateway answers is an RFC 9457 problem document (`application/problem+json`) "
            "with a stable `code`, which always has the same status. Its `type` is the address of the code's "
            "page in this manual, as the gateway serves it (`/manual/problems/<code>/`). "
            "When each is answered: [API, Errors](../api/index.md#errors).",
            "",
            problems_table("problems/index.md"),
            "",
            f"A route or method that does not exist, or a request that is not HTTP, answers a plain problem "
            f"whose `type` is `about:blank`: {plain}.",
            "",
        ]
    )


def errors_index() -> str:
    return "\n".join(
        [
            "# Job error codes",
            "",
            "A failed job's `error_code` says why it failed (its `error` says it in words); see "
            "[A job](../api/jobs.md). A retried code gives the job another attempt while it has attempts left.",
            "",
            errors_table("errors/index.md"),
            "",
        ]
    )


def webhook_error_page(error: WebhookErrorCode) -> str:
    meaning, what_to_do = code_guide.WEBHOOK_ERRORS.get(error.value, ("", ""))
    return "\n".join(
        [
            f"# `{error.value}`",
            "",
            "A failed webhook attempt's `error_code`, in the job's events (`operation: webhook`); "
            "its `error` says it in words.",
            "",
            "**Retried**: the attempt is made again after `OCRGW_WEBHOOK_BACKOFF`, doubling up to "
            "`OCRGW_WEBHOOK_BACKOFF_MAX`, until `OCRGW_WEBHOOK_GIVE_UP_AFTER`; see [Webhooks](../webhooks.md).",
            "",
            "## What it means",
            "",
            meaning,
            "",
            "## What to do",
            "",
            what_to_do,
            "",
            "All webhook error codes: [Webhook error codes](index.md).",
            "",
        ]
    )


def webhook_errors_index() -> str:
    return "\n".join(
        [
            "# Webhook error codes",
            "",
            "A failed webhook attempt is an event of its job (`operation: webhook`) whose `error_code` says why "
            "it failed; see [Webhooks](../webhooks.md). Every failed attempt is made again, until the webhook "
            "is given up. These are not a job's error codes ([Job error codes](../errors/index.md)): "
            "`timeout` is in both, and means the job ran too long in one and the receiver answered too late "
            "in the other.",
            "",
            webhook_errors_table("webhook-errors/index.md"),
            "",
        ]
    )


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
