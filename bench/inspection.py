"""inspection_budget: how long the gateway takes to answer submissions whose documents are costly to check.

Every document of a submission is checked before anything is stored, in the
gateway thread that answers it, within a per-request budget
(``gateway.document_checks``, ``OCRGW_INSPECTION_SECONDS``).  One client, one
keep-alive connection, against a gateway started with the Procfile's web
command; each request is timed from its first byte sent to its answer read,
and the kinds alternate, so the reference and the rest see the same machine:

(ref)         a group of one real one-page PDF: what any submission costs.
(bombs)       ten copies of a PDF under 1 KB whose cross-reference stream,
              deflated twice, inflates to 200 MB: refused at its first child
              (422 invalid_document) under the bound on opening a PDF, or
              (413) by the budget when a loaded machine reaches it first.
(slow)        ten different PDFs, each a tenth to a fifth of a second of
              PDFium (a cross-reference table rebuilt from 2 MB): refused 413
              inspection_budget_exceeded once the budget is spent, or
              accepted when the machine checks all ten within it (context:
              the run counts its refusals).
(copies)      two hundred copies of one tiny PDF: accepted after one check.
(different)   two hundred different tiny PDFs: accepted, opened one after
              another in one forked process.

No worker consumes the database: accepted groups only sit there, and the
database is emptied at the end.  The target: each of (bombs) and (copies)
answered within 2 s; every figure is also given as a ratio to (ref).
"""

from __future__ import annotations

import base64
import json
from functools import partial

from bench.common import Http, check, median, print_table, result, rotations, timed
from bench.processes import STACK_START_DEADLINE, START_TIMEOUT, Bench
from tests import bad_documents as bad

NAME = "inspection_budget"
#: The benchmark as a whole, full and quick (hang detectors: see bench/deadline.py).
DEADLINE = (600.0, 180.0)
ROUND_DEADLINE = (300.0, 120.0)
INSPECTION_DB = 7
ROUNDS, QUICK_ROUNDS = 5, 1
#: What the issue asks of a request whose documents are costly: answered (accepted or refused) within this.
ANSWER_TARGET_SECONDS = 2.0
#: What each kind must be answered, so that a figure never times the wrong outcome.
#: A bomb is refused by the bound on opening a PDF (422), or on a loaded machine by the budget (413) first.
EXPECTED = {"ref": {202}, "bombs": {422, 413}, "slow": {202, 413}, "copies": {202}, "different": {202}}


def _group(documents: list[bytes]) -> bytes:
    children = [
        {"model": "tesseract", "content_type": "application/pdf", "payload": base64.b64encode(data).decode()}
        for data in documents
    ]
    return json.dumps({"fanout": {"max_parallel": 1, "children": children}}).encode()


def bodies() -> dict[str, bytes]:
    tiny = bad.real_pdf(1)
    return {
        "ref": _group([tiny]),
        "bombs": _group([bad.pdf_xref_stream_bomb()] * 10),
        "slow": _group([bad.pdf_without_xref(2 << 20, tag) for tag in range(10)]),
        "copies": _group([tiny] * 200),
        "different": _group([tiny + b"%%%d\n" % tag for tag in range(200)]),
    }


def run(bench: Bench) -> dict:
    options = bench.options
    rounds = QUICK_ROUNDS if options.quick else ROUNDS
    with bench.phase("start the gateway", STACK_START_DEADLINE):
        web = bench.web(INSPECTION_DB)
        web.wait_ready(web.healthy, START_TIMEOUT)
    requests = bodies()
    http = Http(web.base_url)
    with bench.phase("warm-up", 120):
        for body in requests.values():
            http.request("POST", "/jobs", body)
    times: dict[str, list[float]] = {kind: [] for kind in requests}
    refused_slow = 0
    for number, order in enumerate(rotations(list(requests), rounds)):
        with bench.phase(f"round {number + 1}", *ROUND_DEADLINE):
            for kind in order:
                seconds, (status, answer) = timed(partial(http.request, "POST", "/jobs", requests[kind]))
                if status not in EXPECTED[kind]:
                    raise AssertionError(f"{kind}: answered {status}, not {EXPECTED[kind]}: {answer[:300]!r}")
                times[kind].append(seconds)
                refused_slow += kind == "slow" and status == 413
    http.close()
    bench.stop(web)
    with bench.client(INSPECTION_DB) as client:
        client.flushdb()

    medians = {kind: median(values) for kind, values in times.items()}
    figures: dict[str, float | int] = {"rounds": rounds}
    for kind, seconds in medians.items():
        figures[f"{kind}_median_ms"] = 1000 * seconds
        figures[f"{kind}_worst_ms"] = 1000 * max(times[kind])
        if kind != "ref":
            figures[f"{kind}_over_ref"] = seconds / medians["ref"]
    figures["body_bytes_bombs"] = len(requests["bombs"])
    figures["slow_refused"] = refused_slow
    checks = [
        check("ten 200 MB bombs: worst answer", max(times["bombs"]), "<=", ANSWER_TARGET_SECONDS, " s"),
        check("200 copies of a PDF: worst answer", max(times["copies"]), "<=", ANSWER_TARGET_SECONDS, " s"),
    ]
    print_table(
        f"{NAME}: POST /jobs answered, one client, {rounds} round(s), gateway as the Procfile runs it",
        ["figure", "value"],
        [[name, value] for name, value in figures.items()],
    )
    context = {
        "gateway_command": web.command,
        "seconds": {kind: [round(s, 4) for s in values] for kind, values in times.items()},
        "expected_status": {kind: sorted(statuses) for kind, statuses in EXPECTED.items()},
    }
    return result(NAME, options, figures=figures, checks=checks, context=context, method=__doc__)
