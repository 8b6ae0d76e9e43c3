"""The chaos soak at CI length: a mixed load of three tenants while a process is SIGKILLed every few seconds.

What it sends, kills and checks is described in
``tests/integration/soak_support.py`` and ``soak_checks.py``.  In CI the
load runs ``OCRGW_SOAK_SECONDS`` (default 45) seconds, each kind of process
killed at least twice; by hand, for ten minutes::

    OCRGW_SOAK_SECONDS=600 .venv/bin/pytest -s tests/integration/test_soak.py

The numbers are printed and written to ``soak.json`` in the test's
temporary directory.  The test fails on any violation; nothing asserts
how long anything took.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.harness import find_redis_server, in_ci
from tests.integration.soak_support import KINDS, format_report, run_soak

pytestmark = [pytest.mark.integration, pytest.mark.chaos]

SECONDS = float(os.environ.get("OCRGW_SOAK_SECONDS", "45"))


def test_every_invariant_holds_through_a_chaos_soak(tmp_path):
    if find_redis_server() is None:
        if in_ci():
            pytest.fail("redis-server is not installed", pytrace=False)
        pytest.skip("redis-server is not installed")

    report = run_soak(tmp_path, SECONDS)

    (tmp_path / "soak.json").write_text(json.dumps(report.summary(), indent=2) + "\n")
    print(format_report(report))
    assert report.violations == [], format_report(report)
    assert set(report.kills) == set(KINDS), f"not every kind of process was killed: {dict(report.kills)}"
    assert report.load.groups and report.load.singles and report.checked.get("redrives"), report.summary()
