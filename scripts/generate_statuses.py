"""Writes the job statuses, from jobs/contract.py, where code that cannot import ``jobs`` reads them.

* ``cli/statuses.py``: the command line installs without the server's packages (``pip install ocrgw``),
  so it cannot import ``jobs``; it imports this module instead.
* ``gateway/static/ui/statuses.js``: the dashboard's pages import it (through ``common.js``).

Both are checked in; tests/unit/test_status_spellings.py fails when either differs from what this
script writes now, and when a status is spelled anywhere else.

    python scripts/generate_statuses.py           # writes both
    python scripts/generate_statuses.py --check   # exits 1, naming the files that are out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from jobs.contract import ROOT_STATUSES, TERMINAL, JobStatus  # noqa: E402

HEADER = "Generated from jobs/contract.py by scripts/generate_statuses.py: do not edit."
ACTIVE = tuple(s for s in JobStatus if s not in TERMINAL)


def python_module() -> str:
    names = {s: s.name for s in JobStatus}
    lines = ['"""The job statuses as the API spells them.', "", HEADER, '"""', ""]
    lines += [f'{s.name} = "{s.value}"' for s in JobStatus]
    lines += [
        "",
        "#: Every status, in the order of jobs.contract.JobStatus.",
        f"STATUSES = ({', '.join(names[s] for s in JobStatus)})",
        "#: What a single job or a parent can be: it is never held.",
        f"ROOT_STATUSES = ({', '.join(names[s] for s in ROOT_STATUSES)})",
        "#: Where a job ends; a redrive may start a group again.",
        f"TERMINAL = frozenset({{{', '.join(names[s] for s in JobStatus if s in TERMINAL)}}})",
        "#: Not ended yet: held, waiting for a worker, or running.",
        f"ACTIVE = ({', '.join(names[s] for s in ACTIVE)})",
        "",
    ]
    return "\n".join(lines)


def js_module() -> str:
    def array(statuses) -> str:
        return "[" + ", ".join(json.dumps(s.value) for s in statuses) + "]"

    status = ", ".join(f"{s.value}: {json.dumps(s.value)}" for s in JobStatus)
    return "\n".join(
        [
            f"// The job statuses as the API spells them.  {HEADER}",
            f"export const STATUS = Object.freeze({{ {status} }});",
            f"export const STATUSES = Object.freeze({array(JobStatus)});",
            f"export const TERMINAL = new Set({array(s for s in JobStatus if s in TERMINAL)});",
            f"export const ACTIVE = Object.freeze({array(ACTIVE)});",
            "",
        ]
    )


OUTPUTS: dict[Path, Callable[[], str]] = {
    ROOT / "cli" / "statuses.py": python_module,
    ROOT / "gateway" / "static" / "ui" / "statuses.js": js_module,
}


def out_of_date() -> list[Path]:
    return [path for path, made in OUTPUTS.items() if not path.is_file() or path.read_text() != made()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is out of date")
    check = parser.parse_args(argv).check
    stale = out_of_date()
    if check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} is out of date: run scripts/generate_statuses.py", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(OUTPUTS[path]())
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
