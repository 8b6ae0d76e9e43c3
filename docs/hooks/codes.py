"""mkdocs hook: a page for every problem code and every job error code, and an index of each.

The pages are made from the catalogues at every build (``gateway.problems.CATALOGUE``,
``jobs.contract.ErrorCode``), so a new code cannot lack its page; what a code means and what to do
about it come from ``code_guide.py``.  A code without a guide entry, or an entry for no code, is a
warning, which fails the strict build (``make docs``, ``tests/unit/docs``).
"""

from __future__ import annotations

import json
import logging
import sys
from http import HTTPStatus
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files, InclusionLevel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for path in (ROOT, HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import code_guide  # noqa: E402

from gateway.problems import CATALOGUE, PLAIN_HTTP_CODES, type_of  # noqa: E402
from jobs.contract import ErrorCode  # noqa: E402

log = logging.getLogger("mkdocs.plugins.ocrgw_codes")


def on_files(files: Files, config: Any) -> Files:
    _check_guide()
    pages = {"problems/index.md": problems_index(), "errors/index.md": errors_index()}
    for code in CATALOGUE:
        pages[f"problems/{code}.md"] = problem_page(code)
    for error in ErrorCode:
        pages[f"errors/{error.value}.md"] = error_page(error)
    for src_uri, content in pages.items():
        inclusion = InclusionLevel.UNDEFINED if src_uri.endswith("index.md") else InclusionLevel.NOT_IN_NAV
        files.append(File.generated(config, src_uri, content=content, inclusion=inclusion))
    return files


def _check_guide() -> None:
    for catalogue, guide, where in (
        (set(CATALOGUE), set(code_guide.PROBLEMS), "PROBLEMS"),
        ({e.value for e in ErrorCode}, set(code_guide.JOB_ERRORS), "JOB_ERRORS"),
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


def problems_index() -> str:
    rows = [
        f"| {status} | [`{code}`]({code}.md) | {title} |"
        for code, (status, title) in sorted(CATALOGUE.items(), key=lambda item: (item[1][0], item[0]))
    ]
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
            "| status | code | title |",
            "|---|---|---|",
            *rows,
            "",
            f"A route or method that does not exist, or a request that is not HTTP, answers a plain problem "
            f"whose `type` is `about:blank`: {plain}.",
            "",
        ]
    )


def errors_index() -> str:
    rows = [
        f"| [`{error.value}`]({error.value}.md) | {'yes' if error.retried else 'no'} | {error.meaning} |"
        for error in ErrorCode
    ]
    return "\n".join(
        [
            "# Job error codes",
            "",
            "A failed job's `error_code` says why it failed (its `error` says it in words); see "
            "[A job](../api/jobs.md). A retried code gives the job another attempt while it has attempts left.",
            "",
            "| `error_code` | retried | meaning |",
            "|---|---|---|",
            *rows,
            "",
        ]
    )


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
