"""``--wait``: poll a job until it ends, showing how far it got.

On a terminal (stderr) the display is live: the overall bar, the count of
children in each status, the time elapsed and rich's estimate of the time
left. In a pipe it is one plain line each time the counts change. Either
way it goes to stderr; stdout keeps the answer.

The progress comes from the job's live stream (``GET /jobs/{id}/events``
as ``text/event-stream``, see ``cli.event_stream``): each ``progress``
event is drawn as it comes, and the stream's end is the job's.  Where the
gateway serves no stream (an older one, or its limit on open streams
reached), ``--wait`` polls ``GET /jobs/{id}?children=none`` instead, the
counts without a page of children, which costs the gateway two Redis round
trips whatever the group's size.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import IO, Any

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from cli.client import Gateway
from cli.event_stream import StreamUnavailable, follow
from cli.output import counts_text, is_terminal
from cli.statuses import CANCELLED, FAILED, TERMINAL

POLL_SECONDS = 0.5
#: Failed children named one by one when a group did not complete; the rest are counted.
FAILED_CHILDREN_SHOWN = 10


def done_and_total(view: dict[str, Any]) -> tuple[float, float]:
    """How much of the job has ended, out of how much: children for a group, a fraction for one job."""
    if view.get("kind") == "parent":
        counts = view.get("counts", {})
        return float(sum(counts.get(s, 0) for s in TERMINAL)), float(view.get("total", 0))
    return (1.0 if view.get("status") in TERMINAL else float(view.get("progress") or 0.0)), 1.0


def counts_of(view: dict[str, Any]) -> dict[str, int]:
    if view.get("kind") == "parent":
        return dict(view.get("counts", {}))
    return {view["status"]: 1}


class LiveDisplay:
    """The rich display: bar, percentage, children done, elapsed, ETA; the counts per status beneath."""

    def __init__(self, console: Console, job_id: str):
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[done]}"),
            TextColumn("elapsed"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
        )
        self.task = self.progress.add_task(job_id, total=None, done="")
        self.counts = counts_text({})
        self.live = Live(self._renderable(), console=console, refresh_per_second=8, transient=False)

    def _renderable(self) -> Group:
        return Group(self.progress, self.counts)

    def __enter__(self) -> LiveDisplay:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.__exit__(*exc)  # type: ignore[arg-type]

    def update(self, view: dict[str, Any]) -> None:
        done, total = done_and_total(view)
        children = f"{int(done)}/{int(total)} children" if view.get("kind") == "parent" else view["status"]
        self.progress.update(self.task, completed=done, total=total or None, done=children)
        self.counts = counts_text(counts_of(view))
        self.live.update(self._renderable())


class PlainDisplay:
    """One line per change: ``processing 2/5 [queued 1, processing 2, completed 2] 1.5s``."""

    def __init__(self, stream: IO[str], clock: Callable[[], float] = time.monotonic):
        self.stream, self.clock = stream, clock
        self.started = clock()
        self.last: tuple | None = None

    def __enter__(self) -> PlainDisplay:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def update(self, view: dict[str, Any]) -> None:
        counts = counts_of(view)
        done, total = done_and_total(view)
        state = (view["status"], tuple(sorted(counts.items())), done)
        if state == self.last:
            return
        self.last = state
        amount = f"{int(done)}/{int(total)}" if view.get("kind") == "parent" else f"{done:.0%}"
        elapsed = self.clock() - self.started
        line = f"{view['status']} {amount} [{counts_text(counts, sep=', ').plain}] {elapsed:.1f}s"
        self.stream.write(line + "\n")
        self.stream.flush()


def display_for(stream: IO[str], job_id: str) -> LiveDisplay | PlainDisplay:
    if is_terminal(stream):
        return LiveDisplay(Console(file=stream), job_id)
    return PlainDisplay(stream)


def wait(
    gateway: Gateway,
    job_id: str,
    display: LiveDisplay | PlainDisplay,
    interval: float = POLL_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
    stream: bool = True,
) -> dict[str, Any]:
    """Follows the job's stream (or, without one, polls) until the job is terminal; returns its last view."""
    with display:
        if stream:
            try:
                return watch(gateway, job_id, display)
            except StreamUnavailable:
                pass
        while True:
            view = gateway.job(job_id, children="none")
            display.update(view)
            if view["status"] in TERMINAL:
                return view
            sleep(interval)


def watch(gateway: Gateway, job_id: str, display: LiveDisplay | PlainDisplay) -> dict[str, Any]:
    """Draws each ``progress`` event of the job's stream until its end; returns the job's view then."""
    for event in follow(lambda last_event_id: gateway.event_stream(job_id, last_event_id)):
        if event.event == "progress":
            display.update(event.data)
    view = gateway.job(job_id, children="none")
    display.update(view)
    return view


def why_not_completed(gateway: Gateway, view: dict[str, Any], names: list[str] | None = None) -> list[str]:
    """Lines that say how a job that did not complete ended: its error, or its failed children's.

    ``names`` are the submitted files, in child order, so a child can be named by its file.
    """
    job_id, status = view["id"], view["status"]
    if view.get("kind") != "parent":
        reason = ": ".join(str(part) for part in (view.get("error_code"), view.get("error")) if part)
        return [f"job {job_id} {status}" + (f": {reason}" if reason else "")]
    counts, total = view.get("counts", {}), view.get("total", 0)
    summary = f"group {job_id} {status}"
    if view.get("error_code"):
        summary += f" ({view['error_code']})"
    summary += f": {counts.get(FAILED, 0)} failed, {counts.get(CANCELLED, 0)} cancelled of {total} children"
    lines = [summary]
    page = gateway.children(job_id, status=FAILED, limit=FAILED_CHILDREN_SHOWN)
    for child in page["children"]:
        index = child["index"]
        name = f" {names[index]}" if names and index < len(names) else ""
        error = gateway.job(child["id"]).get("error") or ""
        reason = ": ".join(part for part in (child.get("error_code") or "", error) if part)
        lines.append(f"  child {index}{name} ({child['id']}) failed" + (f": {reason}" if reason else ""))
    more = page["children_page"]["total"] - len(page["children"])
    if more > 0:
        lines.append(f"  ... and {more} more failed children (ocrgw status {job_id} --json)")
    return lines
