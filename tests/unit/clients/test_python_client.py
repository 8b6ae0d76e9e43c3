"""The Python client in clients/python is what the generator makes of today's OpenAPI document."""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CLIENT = ROOT / "clients" / "python"
#: What running or installing the client leaves beside it; never generated, never compared.
_LEFT_BY_USE = {"__pycache__", "build", "dist", ".pytest_cache", ".mypy_cache", ".ruff_cache"}


def files_of(directory: Path) -> set[str]:
    return {
        str(path.relative_to(directory))
        for path in directory.rglob("*")
        if path.is_file()
        and not _LEFT_BY_USE & set(path.relative_to(directory).parts)
        and not any(part.endswith(".egg-info") for part in path.relative_to(directory).parts)
    }


def test_the_checked_in_client_is_the_generated_one(tmp_path):
    fresh = tmp_path / "python"
    generated = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_client.py"), "--output", str(fresh)],
        capture_output=True,
        text=True,
    )
    assert generated.returncode == 0, generated.stdout + generated.stderr

    expected, present = files_of(fresh), files_of(CLIENT)
    differing = sorted(
        name for name in expected & present if not filecmp.cmp(fresh / name, CLIENT / name, shallow=False)
    )
    stale = {
        "missing": sorted(expected - present),
        "not generated any more": sorted(present - expected),
        "different": differing,
    }
    assert not any(stale.values()), (
        f"clients/python is not what the OpenAPI document generates: run make client. {stale}"
    )


def test_the_client_names_its_functions_after_the_operations():
    jobs = CLIENT / "ocrgw_client" / "api" / "jobs"

    assert {path.stem for path in jobs.glob("*.py")} >= {"create_job", "get_job", "list_jobs", "cancel_job"}
    assert (CLIENT / "ocrgw_client" / "models" / "error_code.py").is_file()
