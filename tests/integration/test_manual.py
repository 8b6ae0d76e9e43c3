"""A problem's ``type`` is a page of the manual that the very gateway which answered it serves."""

from __future__ import annotations

import os
import subprocess
import sys
from urllib.parse import urljoin

import pytest

from gateway import manual
from tests.harness import ROOT

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def built_manual() -> None:
    """The site built where the gateway serves it from, as `make docs` and scripts/setup.sh build it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(manual.SITE_DIR)],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=300,
    )


def test_a_problem_s_type_resolves_to_its_code_s_page_on_the_gateway(built_manual, gateway):
    problem_answer = gateway.http.get(f"{gateway.base_url}/jobs/{'0' * 32}", timeout=gateway.timeout)
    problem = problem_answer.json()
    assert problem_answer.status_code == 404 and problem["code"] == "job_not_found"

    page = gateway.http.get(urljoin(problem_answer.url, problem["type"]), timeout=gateway.timeout)

    assert page.status_code == 200
    assert page.headers["Content-Type"].startswith("text/html")
    assert "<code>job_not_found</code>" in page.text and problem["title"] in page.text
