"""``ocrgw usage``: the tenant's usage per model and period, as lines or JSON, and a bad range's problem."""

from __future__ import annotations

import json

from cli.main import EXIT_PROBLEM


def test_usage_after_jobs_ran(served, ocrgw, tmp_path):
    path = tmp_path / "doc.txt"
    path.write_text("one page of text")
    for _ in range(2):
        assert ocrgw("submit", str(path), "--model", "echo", "--wait").exit_code == 0

    as_json = ocrgw("usage", "--json")
    assert as_json.exit_code == 0, as_json.output
    document = json.loads(as_json.stdout)
    [total] = document["totals"]
    assert (document["tenant"], total["model"], total["jobs"]) == ("default", "echo", 2)
    assert total["input_bytes"] == 2 * len("one page of text")
    assert total["engine_seconds"] > 0

    lines = ocrgw("usage", "--granularity", "hour").stdout.splitlines()
    period, totals = lines[0].split("\t"), lines[-1].split("\t")
    assert period[1] == "echo" and totals[:2] == ["total", "echo"]
    seconds = f"{total['engine_seconds']:.3f}"
    assert totals[2:] == [str(total["ocr_pages"]), "0", seconds, str(total["input_bytes"]), "2"]


def test_a_bad_range_is_the_gateway_s_problem(served, ocrgw):
    result = ocrgw("usage", "--from", "2026-12-05", "--to", "2026-12-01")
    assert result.exit_code == EXIT_PROBLEM
    assert "invalid_field" in result.stderr and "from" in result.stderr
