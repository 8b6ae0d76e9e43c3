"""The alert rules load in Prometheus and fire, or not, on the series their tests give them (``promtool``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests import harness
from tests.unit.deploy.promql import ALERTS, ALERTS_TEST, alert_expressions, dashboard_expressions


@pytest.fixture(scope="module")
def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        why = "promtool is not installed (scripts/setup.sh --tests installs Debian's prometheus)"
        if harness.in_ci():
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    return found


def run(promtool: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool, *map(str, args)], capture_output=True, text=True, timeout=120, check=False)


def test_the_alert_rules_are_valid(promtool):
    checked = run(promtool, "check", "rules", ALERTS)

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(alert_expressions())} rules found" in checked.stdout


def test_each_alert_fires_on_its_series_and_not_on_the_others(promtool):
    tested = run(promtool, "test", "rules", ALERTS_TEST)

    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_every_alert_has_a_test_that_fires_it_and_one_where_it_does_not():
    tests = yaml.safe_load(ALERTS_TEST.read_text())["tests"]
    cases = [case for test in tests for case in test.get("alert_rule_test", [])]
    fired = {case["alertname"] for case in cases if case.get("exp_alerts")}
    quiet = {case["alertname"] for case in cases if not case.get("exp_alerts")}

    assert fired == set(alert_expressions())
    assert quiet == set(alert_expressions())


def test_every_dashboard_query_is_valid_promql(promtool, tmp_path):
    # promtool checks expressions inside rules: each query becomes a recording rule.
    queries = dashboard_expressions()
    rules = [{"record": f"dashboard:query_{i}", "expr": expr} for i, expr in enumerate(queries.values())]
    path = tmp_path / "dashboard_rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))

    checked = run(promtool, "check", "rules", path)

    assert checked.returncode == 0, checked.stdout + checked.stderr
