"""``python -m bench [--only NAME[,NAME]] [--quick] [--out DIR]``

Runs the benchmarks in order, each printing its table and writing
``DIR/<name>.json``, then prints a summary and the machine, and writes
``DIR/summary.json``.  Every benchmark and each of its phases has a deadline
(``bench/deadline.py``); one that runs past it stops the run with an error
naming the benchmark and the phase.  Exit status: 0 when every benchmark ran
(whether or not it met its target), 1 when one raised or ran past a
deadline, 2 on bad arguments.  The tables of docs/performance.md and
docs/operating/capacity.md are a full run's figures: rerun it after a change that moves them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import shutil
import signal
import sys
import time
import traceback
from pathlib import Path

from bench.common import ROOT, Options, machine, print_table
from bench.deadline import DeadlineExceeded
from bench.processes import Bench, procfile_concurrency

BENCHMARKS = {
    "fanout_vs_canvas": "bench.fanout",
    "groups_at_once": "bench.groups_at_once",
    "groups_vs_bullmq": "bench.groups_vs_bullmq",
    "handoff": "bench.handoff",
    "ocr_efficiency": "bench.ocr",
    "page_orientation": "bench.orientation",
    "pdf_split": "bench.pdf_split",
    "scan_vs_ocrmypdf": "bench.scan",
    "tesseract_engine": "bench.tesseract_engine",
    "resolution_vs_ocrmypdf": "bench.resolution",
    "submission": "bench.submission",
    "sweep_scaling": "bench.sweep",
    "memory": "bench.memory",
    "capacity": "bench.capacity",
    "capacity_cluster": "bench.capacity_cluster",
    "priority_lanes": "bench.priority",
    "event_streams": "bench.streams",
    "document_structure": "bench.structure",
    "inspection_budget": "bench.inspection",
}


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help=f"run only these (repeatable or comma-separated): {', '.join(BENCHMARKS)}",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny sizes and one round each: checks that everything runs, measures little",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "bench" / "results",
        help="where the JSON results go (default: bench/results/)",
    )
    parser.add_argument(
        "--reps",
        type=int,
        default=None,
        help="alternations of A and B per comparison (default 3, groups_at_once 2; quick 1)",
    )
    parser.add_argument(
        "--keep-logs", action="store_true", help="keep the processes' logs and Redis dir even after a clean run"
    )
    parser.add_argument(
        "--deadline-scale",
        type=float,
        default=1.0,
        metavar="F",
        help="multiply every phase's deadline by F, for a very slow machine (default 1)",
    )
    args = parser.parse_args(argv)
    names = [n.strip() for item in args.only for n in item.split(",") if n.strip()]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
    args.names = names or list(BENCHMARKS)
    if args.reps is not None and args.reps < 1:
        parser.error("--reps must be at least 1")
    if not args.deadline_scale > 0:
        parser.error("--deadline-scale must be above 0")
    return args


def _headline(res: dict) -> list[list]:
    rows = []
    for c in res.get("checks", []):
        rows.append([res["name"], c["figure"], c["value"], c["target"], "pass" if c["passed"] else "MISS"])
    if "error" in res:
        last = res["error"].strip().splitlines()[-1]
        rows.append([res["name"], "error", last if "DeadlineExceeded" in last else last[:60], "", "ERROR"])
    return rows


def _json_default(value):
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


def _clean(value):
    """NaN is not JSON: write null instead."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(_clean(data), indent=2, default=_json_default) + "\n")
    tmp.replace(path)


def _on_sigterm(signum, frame):
    """SIGTERM (a CI timeout, say) unwinds the bench, so that the finally in
    ``main`` still kills every process this run started.  The bench's helper
    processes come from a fresh forkserver, so none of them inherits this handler."""
    sys.exit(143)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    options = Options(
        quick=args.quick,
        out=args.out,
        reps=args.reps or (1 if args.quick else 3),
        concurrency=procfile_concurrency(),
        deadline_scale=args.deadline_scale,
        reps_given=args.reps is not None,
    )
    signal.signal(signal.SIGTERM, _on_sigterm)
    started = time.monotonic()
    bench = Bench(options)
    print(
        f"ocrgw bench: redis-server on port {bench.redis.port}, worker pool {options.concurrency}, "
        f"{'quick' if options.quick else 'full'} run, {options.reps} alternation(s); logs in {bench.work}"
    )
    results: list[dict] = []
    info: dict = {}
    failed = False
    stopped: DeadlineExceeded | None = None
    try:
        for name in args.names:
            t0 = time.monotonic()
            print(f"\n== {name}", flush=True)
            try:
                module = importlib.import_module(BENCHMARKS[name])
                with bench.phase(name, *module.DEADLINE):
                    res = module.run(bench)
            except (Exception, DeadlineExceeded) as exc:
                # A benchmark that fails lets the others run; one that hangs
                # stops the run, since what it left behind may hang the next.
                failed = True
                stopped = exc if isinstance(exc, DeadlineExceeded) else None
                res = {
                    "name": name,
                    "quick": options.quick,
                    "passed": False,
                    "checks": [],
                    "error": traceback.format_exc(),
                }
                print(res["error"], file=sys.stderr)
                for title, text in bench.group.tails(30):
                    print(f"--- {title}\n{text}", file=sys.stderr)
            res["seconds"] = round(time.monotonic() - t0, 2)
            res["phases"] = bench.deadlines.report(name)
            write_json(options.out / f"{name}.json", res)
            results.append(res)
            if stopped is not None:
                print(f"\nthe run stops here: {stopped}", file=sys.stderr)
                break
        info = machine(bench)
    finally:
        bench.close()

    rows = [row for res in results for row in _headline(res)]
    print_table("summary", ["benchmark", "figure", "value", "target", "result"], rows)
    print_table("machine", ["what", "value"], [[k, v] for k, v in info.items()])
    total = time.monotonic() - started
    print(f"\n{len(results)} benchmark(s) in {total:.0f} s; results in {options.out}")
    write_json(
        options.out / "summary.json",
        {
            "quick": options.quick,
            "reps": options.reps,
            "concurrency": options.concurrency,
            "seconds": round(total, 1),
            "machine": info,
            "deadline_scale": options.deadline_scale,
            "stopped": None if stopped is None else str(stopped),
            "not_run": [name for name in args.names if name not in {res["name"] for res in results}],
            "benchmarks": {
                res["name"]: {"passed": res["passed"], "checks": res.get("checks", []), "error": res.get("error")}
                for res in results
            },
        },
    )
    if not failed and not args.keep_logs:
        shutil.rmtree(bench.work, ignore_errors=True)
    elif failed:
        print(f"logs kept in {bench.work}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
