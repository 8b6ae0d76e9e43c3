"""The manual builds with ``mkdocs build --strict`` and no warning: no broken link or anchor, no nav entry
without its page, no page outside the nav, no code of the catalogues without its entry in
docs/hooks/code_guide.py; and the pages generated from the catalogues say what the catalogues say."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gateway.problems import CATALOGUE, type_of
from jobs.contract import ErrorCode, WebhookErrorCode
from jobs.state_machine import EDGES, MOVES, MOVING_TRANSITIONS, NEW

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built once into a directory of its own (never into gateway/manual/)."""
    site_dir = tmp_path_factory.mktemp("site")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml")]
        + ["--site-dir", str(site_dir)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    warnings = [line for line in built.stderr.splitlines() if re.match(r"(WARNING|ERROR)\b", line)]
    assert built.returncode == 0 and warnings == [], built.stderr
    return site_dir


def page_text(site: Path, path: str) -> str:
    return (site / path / "index.html").read_text()


def test_every_problem_code_has_its_page_where_its_type_points(site):
    for code, (status, title) in CATALOGUE.items():
        page = site / type_of(code).removeprefix("/manual/") / "index.html"
        text = page.read_text()
        assert f"<code>{code}</code>" in text and str(status) in text and title in text, code


def test_every_job_error_code_has_its_page_saying_whether_it_is_retried(site):
    for error in ErrorCode:
        text = page_text(site, f"errors/{error.value}")
        assert f"<code>{error.value}</code>" in text
        assert ("<strong>Retried</strong>" if error.retried else "<strong>Not retried</strong>") in text


def test_the_index_pages_list_every_code(site):
    problems = page_text(site, "problems")
    errors = page_text(site, "errors")

    assert all(f'href="{code}/"' in problems for code in CATALOGUE)
    assert all(f'href="{error.value}/"' in errors for error in ErrorCode)


def test_every_webhook_error_code_has_its_page_listed_in_its_index(site):
    index = page_text(site, "webhook-errors")

    for error in WebhookErrorCode:
        assert f"<code>{error.value}</code>" in page_text(site, f"webhook-errors/{error.value}")
        assert f'href="{error.value}/"' in index


def test_the_pages_that_list_the_codes_carry_the_generated_tables(site):
    api, jobs, webhooks = page_text(site, "api"), page_text(site, "api/jobs"), page_text(site, "webhooks")

    assert all(f'href="../problems/{code}/"' in api for code in CATALOGUE)
    assert all(f'href="../../errors/{error.value}/"' in jobs for error in ErrorCode)
    assert all(f'href="../webhook-errors/{error.value}/"' in webhooks for error in WebhookErrorCode)
    assert "-codes -->" not in api + jobs + webhooks


def test_the_code_pages_are_not_copied_into_the_site_as_sources(site):
    assert not (site / "hooks").exists()


def test_the_transitions_page_draws_the_state_machine_and_lists_its_moves(site):
    """The diagram is drawn into the page at build time, an SVG with no script: no Mermaid block is left for a
    script the manual's Content-Security-Policy would block (or a network it may not have) to draw."""
    text = page_text(site, "internals/transitions")
    assert '<pre class="mermaid">' not in text and "mermaid" not in text.lower()
    assert '<svg class="state-diagram"' in text and "state-diagram -->" not in text and "state-moves -->" not in text
    pairs: dict[tuple[str, str], set[str]] = {}
    for edge in EDGES:
        source = "(new)" if edge.source is NEW else edge.source.value
        pairs.setdefault((source, edge.target.value), set()).add(edge.transition)
    drawn = re.findall(r'<g class="state-move" data-source="([^"]*)" data-target="([^"]*)"', text)
    assert sorted(drawn) == sorted(pairs)
    for (source, target), transitions in pairs.items():
        names = ", ".join(sorted(transitions, key=MOVING_TRANSITIONS.index))
        assert f"<title>{html.escape(f'{source} → {target}: {names}')}</title>" in text, (source, target)
    for move in MOVES:
        assert html.escape(move.why, quote=False) in text, move
