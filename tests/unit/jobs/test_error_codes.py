"""The catalogue of job error codes (``jobs.contract.ErrorCode``): every code a job can end with is
in it, nothing else spells one, and the docs' one table of the codes (made by docs/hooks/codes.py) is the
catalogue's."""

from __future__ import annotations

import ast
import importlib
import inspect
import logging
import pkgutil
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.problems import CATALOGUE as PROBLEM_CODES
from jobs.contract import JOB_ERROR_CODES, SCRIPT_ERROR_CODES, ErrorCode, lua_preamble
from jobs.errors import AdapterError
from jobs.store import JobStore
from jobs.transitions.spec import INCLUDES_DIR, LUA_DIR

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("jobs", "documents", "gateway", "workers", "coordinator", "observability", "cli")
CATALOGUE_MODULE = ROOT / "jobs" / "contract.py"
# Words of other vocabularies that happen to be spelled like a job error code.
OTHER_VOCABULARIES = {
    ("coordinator/sweep.py", "lease_expired"): "the sweep's action, as its metric names it",
    ("observability/metrics.py", "lease_expired"): "an attempt's outcome, as its metric names it",
}
DOCS = ROOT / "docs"
TABLE_PAGE = DOCS / "api" / "jobs.md"
TABLE_MARKER = "<!-- job-error-codes -->"


def production_modules() -> Iterator[tuple[str, ast.Module]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(), str(path))


def table_row(code: ErrorCode, link: str) -> str:
    return f"| [`{code.value}`]({link}) | {'yes' if code.retried else 'no'} | {code.meaning} |"


@pytest.fixture(scope="module")
def codes_hook():
    """docs/hooks/codes.py, the mkdocs hook that makes the code pages and the tables of the codes."""
    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        return importlib.import_module("codes")
    finally:
        sys.path.remove(str(DOCS / "hooks"))


# -- the catalogue -------------------------------------------------------------------------------


@pytest.mark.parametrize("code", list(ErrorCode), ids=str)
def test_each_code_says_whether_it_is_retried_and_what_it_means_in_one_line(code):
    assert re.fullmatch(r"[a-z]+(_[a-z]+)*", code.value)
    assert isinstance(code.retried, bool)
    assert (
        code.meaning.strip() == code.meaning and code.meaning and "\n" not in code.meaning and "|" not in code.meaning
    )


def test_the_api_spelling_of_every_code_is_listed_once_as_plain_strings():
    assert tuple(code.value for code in ErrorCode) == JOB_ERROR_CODES
    assert len(set(JOB_ERROR_CODES)) == len(JOB_ERROR_CODES)
    assert all(type(code) is str for code in JOB_ERROR_CODES)


def test_a_code_is_written_logged_and_formatted_as_its_value():
    code = ErrorCode.ENGINE_TIMEOUT
    logged = logging.LogRecord("runner", logging.WARNING, __file__, 1, "%s", (code,), None).getMessage()
    assert (str(code), f"{code}", logged) == ("engine_timeout",) * 3


@pytest.mark.parametrize("code", list(ErrorCode), ids=str)
def test_an_adapter_error_is_transient_exactly_when_the_catalogue_retries_its_code(code):
    assert AdapterError("x", code=code).transient is code.retried


# -- every code a job can end with is in it -----------------------------------------------------------


def _adapter_error_classes() -> set[type[AdapterError]]:
    for package in ("jobs", "documents", "workers"):
        for module in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            importlib.import_module(module.name)
    found, todo = set(), [AdapterError]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_adapter_error_class_carries_a_code_of_the_catalogue():
    classes = _adapter_error_classes()

    assert len(classes) > 4  # InvalidDocument, EngineUnavailable, EchoFailed, the limits' ...
    assert {cls.__name__: cls.code for cls in classes if not isinstance(cls.code, ErrorCode)} == {}


def _error_code_argument(call: ast.Call, method: str) -> ast.expr | None:
    position = [p for p in inspect.signature(getattr(JobStore, method)).parameters if p != "self"].index("error_code")
    named = [k.value for k in call.keywords if k.arg == "error_code"]
    return named[0] if named else call.args[position] if len(call.args) > position else None


def _is_catalogued(node: ast.expr) -> bool:
    """``ErrorCode.<NAME>`` naming a member, or ``<error>.code`` (an AdapterError's, which is one)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ErrorCode":
        return node.attr in ErrorCode.__members__
    return isinstance(node, ast.Attribute) and node.attr == "code"


def test_the_store_is_told_to_fail_or_retry_a_job_only_with_a_code_of_the_catalogue():
    calls = []
    for path, tree in production_modules():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("fail", "retry")
                and "store" in ast.unparse(node.func.value)
            ):
                code = _error_code_argument(node, node.func.attr)
                calls.append((path, node.lineno, ast.unparse(code) if code is not None else None))
                assert code is not None and _is_catalogued(code), (path, node.lineno, ast.unparse(node))

    assert len(calls) >= 5, calls  # the runner's: a retry, and its four ways to fail a job


def test_the_scripts_write_no_code_but_the_preambles():
    written = set()
    for path in sorted(LUA_DIR.glob("*.lua")) + sorted(INCLUDES_DIR.glob("*.lua")):
        text = re.sub(r"--.*", "", re.sub(r"--\[\[.*?\]\]", "", path.read_text(), flags=re.S))
        assert set(re.findall(r"'([a-z_]+)'", text)) & set(JOB_ERROR_CODES) == set(), path.name
        written |= set(re.findall(r"\bERROR\.(\w+)", text))

    assert written == {code.value for code in SCRIPT_ERROR_CODES}
    assert "local ERROR = {" + ", ".join(f"{c} = '{c}'" for c in sorted(written, key=JOB_ERROR_CODES.index)) + "}" in (
        lua_preamble()
    )


# -- nothing else spells one ---------------------------------------------------------------------------


def test_no_module_spells_a_job_error_code_but_the_catalogue():
    spelled = []
    for path, tree in production_modules():
        if ROOT / path == CATALOGUE_MODULE:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and node.value in JOB_ERROR_CODES):
                continue
            if (path, node.value) in OTHER_VOCABULARIES:
                continue
            if path.startswith(("gateway/", "cli/")) and node.value in PROBLEM_CODES:
                # A problem code (an HTTP answer, which the command line reads without importing the
                # server's packages) that shares its name with a job's error code.
                continue
            spelled.append((path, node.lineno, node.value))

    assert spelled == []


def test_the_other_vocabularies_still_spell_those_words():
    """An entry that no longer matches anything goes, rather than excusing a code spelled later."""
    constants = {
        (path, n.value) for path, tree in production_modules() for n in ast.walk(tree) if isinstance(n, ast.Constant)
    }

    assert set(OTHER_VOCABULARIES) <= constants


# -- the docs ------------------------------------------------------------------------------------------


def test_the_docs_table_of_job_error_codes_is_the_catalogues(codes_hook):
    """The page carries no table of its own: the hook puts the one table, a row per code, in its place."""
    page = TABLE_PAGE.read_text()
    rendered = codes_hook.on_page_markdown(page, _page_at("api/jobs.md"), None, None)
    lines = rendered[rendered.index("| `error_code` |") :].split("\n\n", 1)[0].splitlines()

    assert page.count(TABLE_MARKER) == 1 and TABLE_MARKER not in rendered
    expected = [
        "| `error_code` | retried | meaning |",
        "|---|---|---|",
        *(table_row(code, f"../errors/{code.value}.md") for code in ErrorCode),
    ]
    assert lines == expected, "\n".join(expected)


def test_the_job_error_codes_index_has_a_row_for_each_code(codes_hook):
    rows = re.findall(r"^\| \[`([a-z_]+)`\]\(([a-z_]+)\.md\) \|", codes_hook.errors_index(), flags=re.M)

    assert rows == [(code.value, code.value) for code in ErrorCode]


def _page_at(src_uri: str):
    """What the hook reads of a page: where its source is under docs/."""
    return type("PageAt", (), {"file": type("FileAt", (), {"src_uri": src_uri})()})()


def test_every_docs_row_of_a_job_error_code_says_what_the_catalogue_says_of_its_retry():
    pages = "\n".join(path.read_text() for path in sorted(DOCS.rglob("*.md")))
    rows = re.findall(r"^\| `([a-z_]+)` \| (yes|no) \|", pages, flags=re.M)
    codes = {code.value: code for code in ErrorCode}

    assert len(rows) >= 5  # the remote models' own table (the catalogue's is made by the docs hook)
    assert [
        (name, said) for name, said in rows if name in codes and said != ("yes" if codes[name].retried else "no")
    ] == []
