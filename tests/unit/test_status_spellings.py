"""A job status is spelled once: in ``JobStatus`` (jobs/contract.py), and in what is generated from it.

The production code (every Python package, the dashboard's scripts and templates, the Lua transitions)
is read for string literals whose whole text is a status ('queued', "failed", `held`...): in Python
through its syntax tree (a docstring or a sentence that holds the word is not a spelling of it), in
JavaScript, the templates and Lua through a tokenizer of their quoted strings (comments skipped).
Every one found fails the test, but for:

* the declaration itself, the members of ``JobStatus``;
* the generated outputs (``GENERATED``), which must be exactly what scripts/generate_statuses.py writes
  now;
* the name of a key a transition declares (``K.queued``, the index of queued jobs to (re)publish) where a
  script's keys are named: an element of a ``keys=`` tuple or of a ``*_KEYS`` tuple, or a key of a dict
  whose keys (two or more) all name declared keys.  A key's name is part of the stored layout and must not follow a
  rename of the status;
* ``EXCEPTIONS``, each with its reason.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.contract import JobStatus
from jobs.transitions import TRANSITIONS
from tests.harness import ROOT

STATUSES = {status.value for status in JobStatus}
PACKAGES = ("jobs", "gateway", "workers", "coordinator", "cli", "observability", "documents")
GENERATED = {Path("cli/statuses.py"), Path("gateway/static/ui/statuses.js")}
DECLARED_KEYS = {name for transition in TRANSITIONS for name in transition.keys}

#: (file, where: the name a module-level statement assigns, or the function or class the literal is in;
#: "*" for the whole file) -> why the word there is not a job's status.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("jobs/keys.py", "QUEUED"): "the name of the index of queued jobs, a segment of its key: the stored layout",
    ("jobs/migration.py", "*"): "the key layout of the version it migrates from, frozen as that version wrote it",
    ("workers/pdf_build.py", "FAILED"): "what became of a searchable PDF's build (built, failed, skipped)",
}


def _generator():
    spec = importlib.util.spec_from_file_location("generate_statuses", ROOT / "scripts" / "generate_statuses.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- Python --------------------------------------------------------------------------------------------


def _text(node: ast.Constant) -> str | None:
    if isinstance(node.value, str):
        return node.value
    if isinstance(node.value, bytes):
        return node.value.decode("latin-1")
    return None


class _Spellings(ast.NodeVisitor):
    """The status literals of a module, each with where it is; those in a key's place left out."""

    def __init__(self) -> None:
        self.where: list[str] = []
        self.found: list[tuple[int, str, str]] = []
        self.key_names: set[int] = set()  # ids of constants that name a declared key where keys are named

    def _named(self, node: ast.AST, name: str) -> None:
        self.where.append(name)
        if isinstance(node, ast.Constant):
            self.visit(node)
        else:
            self.generic_visit(node)
        self.where.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._named(node, node.name)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._named(node, node.name)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._named(node, node.name)

    def visit_Assign(self, node: ast.Assign) -> None:
        target, value = node.targets[0], node.value
        if not self.where and isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            # ``A, B = "a", "b"``: each value is where its own name is.
            for name, item in zip(target.elts, value.elts, strict=False):
                self._named(item, name.id if isinstance(name, ast.Name) else "")
            return
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if names and all(n.endswith("_KEYS") for n in names):
            self._key_tuple(node.value)
        if not self.where and names:
            self._named(node, names[0])
        else:
            self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if not self.where and isinstance(node.target, ast.Name):
            self._named(node, node.target.id)
        else:
            self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        for keyword in node.keywords:
            if keyword.arg == "keys":
                self._key_tuple(keyword.value)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        named = [k for k in node.keys if k is not None]
        if len(named) >= 2 and all(isinstance(k, ast.Constant) and _text(k) in DECLARED_KEYS for k in named):
            self.key_names |= {id(k) for k in named}
        self.generic_visit(node)

    def _key_tuple(self, node: ast.expr) -> None:
        if isinstance(node, ast.Tuple | ast.List):
            self.key_names |= {id(e) for e in node.elts if isinstance(e, ast.Constant) and _text(e) in DECLARED_KEYS}

    def visit_Constant(self, node: ast.Constant) -> None:
        text = _text(node)
        if text in STATUSES and id(node) not in self.key_names:
            self.found.append((node.lineno, self.where[0] if self.where else "", text))


def _python_spellings(path: Path) -> Iterator[tuple[int, str, str]]:
    visitor = _Spellings()
    visitor.visit(ast.parse(path.read_text(), str(path)))
    yield from visitor.found


# -- JavaScript, templates, Lua ------------------------------------------------------------------------

_JS = re.compile(r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`""", re.S)
_HTML = re.compile(r"""\{#.*?#\}|<!--.*?-->|"[^"\n]*"|'[^'\n]*'""", re.S)
_LUA = re.compile(r"""--\[(=*)\[.*?\]\1\]|--[^\n]*|\[(=*)\[(.*?)\]\2\]|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.S)


def _quoted_spellings(text: str, tokens: re.Pattern[str]) -> Iterator[tuple[int, str, str]]:
    for match in tokens.finditer(text):
        token = match.group(0)
        if token.startswith(("//", "/*", "--", "{#", "<!--")):
            continue
        inner = match.group(3) if tokens is _LUA and match.group(3) is not None else token[1:-1]
        if inner in STATUSES:
            yield text.count("\n", 0, match.start()) + 1, "", inner


def _files() -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))
    yield from sorted((ROOT / "gateway" / "static").rglob("*.js"))
    yield from sorted((ROOT / "gateway" / "templates").rglob("*.html"))
    yield from sorted((ROOT / "jobs" / "transitions").rglob("*.lua"))


def spellings(path: Path) -> list[tuple[int, str, str]]:
    if path.suffix == ".py":
        return list(_python_spellings(path))
    tokens = {".js": _JS, ".html": _HTML, ".lua": _LUA}[path.suffix]
    return list(_quoted_spellings(path.read_text(), tokens))


def _allowed(relative: Path, where: str) -> bool:
    if relative in GENERATED:
        return True
    if relative == Path("jobs/contract.py") and where == "JobStatus":
        return True
    return (str(relative), where) in EXCEPTIONS or (str(relative), "*") in EXCEPTIONS


def test_no_status_is_spelled_outside_its_declaration():
    found = []
    for path in _files():
        relative = path.relative_to(ROOT)
        for line, where, text in spellings(path):
            if not _allowed(relative, where):
                found.append(f"{relative}:{line} ({where or 'module'}): {text!r}")
    assert not found, "statuses spelled outside jobs.contract.JobStatus and its generated outputs:\n" + "\n".join(found)


def test_every_exception_still_has_its_spelling():
    """An exception whose spelling went away is dropped, so that the list says only what is true."""
    for (name, where), _why in EXCEPTIONS.items():
        spelled = spellings(ROOT / name)
        assert any(where in ("*", found_where) for _, found_where, _ in spelled), (name, where)


def test_the_generated_statuses_are_what_the_script_writes_now():
    generator = _generator()
    assert {path.relative_to(ROOT) for path in generator.OUTPUTS} == GENERATED
    assert generator.out_of_date() == [], "run scripts/generate_statuses.py"


# -- the reading itself --------------------------------------------------------------------------------

CAUGHT = {
    ".py": 'def f(view):\n    return view["status"] == "failed"\n',
    ".js": 'const done = (view) => view.status === "completed"; // a "held" comment is fine\n',
    ".html": '<td data-count="held">{{ q.held }}</td>\n',
    ".lua": "-- 'queued' in a comment is fine\nredis.call('HSET', K.job, F.status, [[queued]])\n",
}
PASSED = {
    ".py": '"""A docstring saying queued."""\nSCRIPT_KEYS = ("queued",)\nrun(keys={"queued": q, "due": d})\n',
    ".js": "// held\nconst text = `the failed children`;\n",
    ".html": "<p>Held: children waiting for a slot.</p>\n",
    ".lua": "-- 'failed' in a comment\nlocal s = STATUS.failed\n",
}


@pytest.mark.parametrize("suffix", sorted(CAUGHT))
def test_the_reading_finds_a_spelling_and_only_a_spelling(suffix, tmp_path):
    caught, passed = tmp_path / f"caught{suffix}", tmp_path / f"passed{suffix}"
    caught.write_text(CAUGHT[suffix])
    passed.write_text(PASSED[suffix])
    assert len(spellings(caught)) == 1, spellings(caught)
    assert spellings(passed) == []
