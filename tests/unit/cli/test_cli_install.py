"""The command line in its own install: what it imports, the extras it asks for, the Procfile it ships.

``pip install ocrgw`` gives requests, click and rich only. A child Python in which every server
package (and ocrgw's own server packages) fails to import runs every command but ``up`` and
``config``, as that install would; those two name the extra to install instead of failing deep
inside an import.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli import extras, ocr, stack
from cli.main import main as ocrgw
from jobs.contract import ErrorCode
from tests.harness import ROOT
from tests.pdfs import text_pdf

#: What a command-line-only install lacks: the server extra's packages, their heavy dependencies, and
#: ocrgw's own server packages (importing any of them would pull the rest in).
SERVER_MODULES = [
    "celery",
    "kombu",
    "billiard",
    "redis",
    "flask",
    "flask_smorest",
    "werkzeug",
    "marshmallow",
    "gunicorn",
    "honcho",
    "PIL",
    "pypdfium2",
    "pikepdf",
    "fontTools",
    "numpy",
    "cv2",
    "onnxruntime",
    "rapidocr_onnxruntime",
    "pytesseract",
    "tesserocr",
    "prometheus_client",
    "jobs",
    "documents",
    "gateway",
    "workers",
    "coordinator",
    "observability",
]
UNREACHABLE = "http://127.0.0.1:9"

#: Runs in a child Python: blocks those imports, then runs the commands and prints their outcomes.
CHILD = textwrap.dedent(
    """
    import importlib.abc, json, sys

    BLOCKED = set(sys.argv[1].split())

    class NotInstalled(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NotInstalled())
    from click.testing import CliRunner
    from cli.main import main

    outcomes = []
    for args in json.loads(sys.argv[2]):
        result = CliRunner().invoke(main, args)
        outcomes.append({"args": args, "code": result.exit_code, "output": result.output,
                         "error": repr(result.exception) if result.exit_code not in (0, 1, 2, 3, 4, 15) else None})
    imported = sorted({name.split(".")[0] for name in sys.modules} & BLOCKED)
    print(json.dumps({"outcomes": outcomes, "imported": imported}))
    """
)


def run_without_server_packages(tmp_path, commands: list[list[str]]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, " ".join(SERVER_MODULES), json.dumps(commands)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_PROXY": "*"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_client_command_runs_without_the_server_packages(tmp_path):
    page = tmp_path / "page.txt"
    page.write_text("hello")
    pdf = tmp_path / "in.pdf"
    pdf.write_bytes(text_pdf("a page with text"))
    client_commands = sorted(set(ocrgw.commands) - {"up", "config", "store"})
    commands = [["--help"], *([name, "--help"] for name in ocrgw.commands)]
    commands += [
        ["submit", str(page), "--url", UNREACHABLE],
        ["status", "some-id", "--url", UNREACHABLE],
        ["result", "some-id", "--url", UNREACHABLE],
        ["events", "some-id", "--url", UNREACHABLE],
        ["cancel", "some-id", "--url", UNREACHABLE],
        ["ls", "--url", UNREACHABLE],
        ["models", "--url", UNREACHABLE],
        ["usage", "--url", UNREACHABLE],
        ["ocr", str(pdf), str(tmp_path / "out.pdf"), "--force-ocr", "--url", UNREACHABLE],
    ]
    assert {args[0] for args in commands[len(ocrgw.commands) + 1 :]} == set(client_commands)

    ran = run_without_server_packages(tmp_path, commands)

    assert ran["imported"] == []
    helps, runs = ran["outcomes"][: len(ocrgw.commands) + 1], ran["outcomes"][len(ocrgw.commands) + 1 :]
    assert all(outcome["code"] == 0 for outcome in helps), helps
    assert [outcome["code"] for outcome in runs[:-1]] == [4] * (len(runs) - 1), runs  # unreachable, said plainly
    assert runs[-1]["code"] == ocr.EXIT_OTHER_ERROR, runs[-1]
    assert all("cannot reach the gateway" in outcome["output"] for outcome in runs), runs


def test_ocr_of_a_pdf_without_pypdfium2_names_the_extra(tmp_path):
    pdf = tmp_path / "in.pdf"
    pdf.write_bytes(text_pdf("a page with text"))

    ran = run_without_server_packages(tmp_path, [["ocr", str(pdf), str(tmp_path / "out.pdf"), "--url", UNREACHABLE]])

    (outcome,) = ran["outcomes"]
    assert outcome["code"] == ocr.EXIT_MISSING_DEPENDENCY
    assert "pip install 'ocrgw[pdf]'" in outcome["output"]
    assert "--skip-text, --force-ocr or --redo-ocr" in outcome["output"]


@pytest.mark.parametrize("command", ["up", "config", "store migrate", "store layout"])
def test_a_server_command_without_the_server_extra_says_which_extra_to_install(monkeypatch, command):
    requirements = ["requests>=2.31", 'celery[redis]<6,>=5.4; extra == "server"', 'honcho>=1.1; extra == "server"']
    installed = {"requests", "honcho"}

    def distribution(name: str) -> object:
        if name not in installed:
            raise metadata.PackageNotFoundError(name)
        return object()

    monkeypatch.setattr(extras.metadata, "requires", lambda name: requirements)
    monkeypatch.setattr(extras.metadata, "distribution", distribution)

    result = CliRunner().invoke(ocrgw, command.split())

    assert result.exit_code == 1
    assert (
        result.output == "ocrgw: `ocrgw " + command + "` needs the server packages, and celery is not installed: "
        f"{sys.executable} -m pip install --upgrade pip && {sys.executable} -m pip install 'ocrgw[server]'\n"
    )


def test_the_extras_requirements_are_read_from_metadata_lines():
    lines = [
        "click>=8.1",
        'celery[redis]<6,>=5.4; extra == "server"',
        "flask>=3.0 ; extra == 'server'",
        'pypdfium2>=4.25; extra == "server"',
        'pypdfium2>=4.25; extra == "pdf"',
        'pytest>=8; extra == "test"',
        'tomli; python_version < "3.11" and extra == "test"',
    ]

    assert extras.requirements_of("server", lines) == ["celery", "flask", "pypdfium2"]
    assert extras.requirements_of("pdf", lines) == ["pypdfium2"]
    assert extras.requirements_of("test", lines) == ["pytest", "tomli"]


def test_the_projects_procfile_is_a_symlink_to_the_packaged_one():
    # One declaration: cli/Procfile ships in the wheel for `ocrgw up` outside a checkout.
    top = ROOT / "Procfile"
    assert top.is_symlink(), "the top-level Procfile is a symlink: ln -sf cli/Procfile Procfile"
    assert top.readlink() == Path("cli") / stack.PACKAGED_PROCFILE
    assert (ROOT / "cli" / stack.PACKAGED_PROCFILE).is_file()
    assert not (ROOT / "cli" / stack.PACKAGED_PROCFILE).is_symlink()


def test_up_uses_the_working_directorys_procfile_else_the_packaged_one_run_here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with stack.procfile_and_root(stack.default_procfile()) as (procfile, root):
        assert procfile.read_bytes() == (ROOT / "Procfile").read_bytes()
        assert root == tmp_path

    (tmp_path / "Procfile").write_text("web: true\n")
    with stack.procfile_and_root(stack.default_procfile()) as (procfile, root):
        assert (procfile, root) == (tmp_path / "Procfile", tmp_path)

    with pytest.raises(stack.StackError, match="no Procfile at"), stack.procfile_and_root(tmp_path / "nothing"):
        pass


def test_a_symlinked_procfile_runs_in_the_links_directory_as_a_checkouts_does(tmp_path, monkeypatch):
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "Procfile").write_text("web: true\n")
    (tmp_path / "Procfile").symlink_to(Path("cli") / "Procfile")
    monkeypatch.chdir(tmp_path)
    with stack.procfile_and_root(stack.default_procfile()) as (procfile, root):
        assert root == tmp_path  # beside the checkout's packages, not in cli/
        assert procfile.read_text() == "web: true\n"
    with stack.procfile_and_root(Path("Procfile")) as (procfile, root):
        assert (procfile, root) == (tmp_path / "Procfile", tmp_path)


def test_the_error_codes_ocr_names_are_the_gateways():
    # The command line spells them as strings, so that it imports none of the server's packages.
    assert ErrorCode.INVALID_DOCUMENT in ocr._INPUT_PROBLEMS
    assert {ErrorCode.UNSUPPORTED_LANGUAGE} == ocr._LANGUAGE_PROBLEMS
