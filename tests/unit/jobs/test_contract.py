"""The contract between Python and Lua: each script uses exactly what its spec declares, its
header lists exactly that, and neither side spells a name the other defines."""

import importlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass

import pytest

from jobs.contract import ErrorCode, EventField, Field, JobStatus, Reply, Stage, WebhookOutcome
from jobs.transitions import TRANSITIONS, spec
from jobs.transitions.claim import CLAIM
from jobs.transitions.spec import INCLUDES_DIR, LUA_DIR, RELEASE_ARGS, RELEASE_KEYS, ROOT_KEYS
from tests.keyspace import keys
from tests.unit.jobs.conftest import parse_intervals, roots_of

SCRIPTS = {t.name: t for t in TRANSITIONS}
LUA_FILES = sorted(LUA_DIR.glob("*.lua")) + sorted(INCLUDES_DIR.glob("*.lua"))


def _body(transition) -> str:
    """The script as Redis runs it, less the generated preamble and inputs."""
    source = transition.source()
    return re.sub(r"--.*", "", source.split("return out\nend\n", 1)[1])


def test_every_lua_file_is_a_transition_or_an_include():
    assert {p.stem for p in LUA_DIR.glob("*.lua")} == set(SCRIPTS)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_s_spec_is_the_python_file_of_the_same_name(name):
    module = importlib.import_module(f"jobs.transitions.{name}")
    assert getattr(module, name.upper()) is SCRIPTS[name]


def _header(transition) -> str:
    text = transition.path.read_text()
    assert text.startswith("--[["), f"{transition.name}.lua opens with its header"
    return text[: text.index("\n]]\n")]


def _header_block(header: str, title: str) -> list[str]:
    """The names a header's ``Keys:`` or ``Args:`` block lists: the first word of each line
    indented four spaces (deeper ones go on describing), a bundle of spec.py expanded."""
    lines = header.splitlines()
    starts = [i for i, line in enumerate(lines) if line == f"  {title}:"]
    assert len(starts) == 1, f"one '{title}:' block"
    names: list[str] = []
    for line in lines[starts[0] + 1 :]:
        indent = len(line) - len(line.lstrip(" "))
        if not line.strip() or indent < 4:
            break
        if indent == 4:
            word = line.split()[0]
            if word.isupper():
                bundle = getattr(spec, word)
                names += [a if isinstance(a, str) else a.name for a in bundle]
            else:
                names.append(word)
    return names


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_header_lists_exactly_the_keys_and_args_of_its_spec(name):
    transition = SCRIPTS[name]
    header = _header(transition)
    assert sorted(_header_block(header, "Keys")) == sorted(transition.keys), "Keys"
    assert sorted(_header_block(header, "Args")) == sorted(a.name for a in transition.args), "Args"


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_header_names_the_replies_as_its_spec_does(name):
    """Each ``{CODE, field, ...}`` of the header's Reply names a code the script answers and fields
    of the reply dataclass in their order; every field is named somewhere, every code the
    script's own file answers too."""
    transition = SCRIPTS[name]
    replies = _header(transition).split("\n  Reply:", 1)[1]
    fields = [f for f, _ in transition.reply_fields if f != "code"]
    named_codes: set[str] = set()
    named_fields: set[str] = set()
    for shape in re.findall(r"\{([^{}]*)\}", replies):
        code, *rest = [part.strip() for part in shape.split(",")]
        named_codes.add(code)
        parts = [re.sub(r"=.*|\.\.\.$", "", part) for part in rest]
        assert set(parts) <= set(fields), f"{{{shape}}}: no such field in {fields}"
        order = [fields.index(part) for part in parts]
        assert order == sorted(order), f"{{{shape}}}: fields out of the reply's order {fields}"
        named_fields |= {fields[i] for i in order}
    answered = set(re.findall(r"\bREPLY\.(\w+)", _body(transition)))
    own_file = re.sub(r"--.*", "", re.sub(r"--\[\[.*?\]\]", "", transition.path.read_text(), flags=re.S))
    own = set(re.findall(r"\bREPLY\.(\w+)", own_file))
    assert own <= named_codes <= answered
    assert named_codes <= set(Reply.__members__)
    assert named_fields == set(fields)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_that_releases_children_takes_the_release_inputs(name):
    transition = SCRIPTS[name]
    body = _body(transition)
    releases = body.count("release_children(") > body.count("function release_children(")
    assert (set(RELEASE_KEYS) <= set(transition.keys)) == releases
    assert (set(RELEASE_ARGS) <= set(transition.args)) == releases


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_loads_in_redis(name, r):
    assert r.function_load(SCRIPTS[name].source(), replace=True) == SCRIPTS[name].function_name.encode()


def _calls(name: str, body: str) -> list[str]:
    """The calls of an include's function in a script (their text, up to the closing parenthesis)."""
    return re.findall(rf"(?<!function )\b{name}\(((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)", body)


def _keys_through_defaults(body: str) -> set[str]:
    """The keys the shared moves read from K when a call gives no group keys of its own (``ks``, see
    group_keys_of in includes/indexes.lua): the listing's sets by status, and a job's move its parent."""
    defaulted = {
        name: [c for c in _calls(name, body) if not re.search(r",\s*(?:ks|group_keys_of\(.*\))\s*$", c, re.S)]
        for name in ("move_root", "move_job", "claim_job")
    }
    used: set[str] = set()
    if any(defaulted.values()):
        used |= set(ROOT_KEYS)
    if defaulted["move_job"] or defaulted["claim_job"]:
        used.add("parent")
    return used


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_reads_exactly_the_keys_and_args_its_spec_declares(name):
    transition = SCRIPTS[name]
    body = _body(transition)
    used_keys = set(re.findall(r"\bK\.(\w+)", body))
    used_keys |= _keys_through_defaults(body)
    # a script whose own file names the listing's sets by status (expire takes a root out of all of them)
    if "K['roots_' .." in transition.path.read_text():
        used_keys |= set(ROOT_KEYS)
    used_args = set(re.findall(r"\bA\.(\w+)", body))
    declared_args = {a.name + ("_from" if a.rest else "") for a in transition.args}
    assert used_keys == set(transition.keys), name
    assert used_args == declared_args, name


@pytest.mark.parametrize("path", LUA_FILES, ids=lambda p: p.name)
def test_lua_spells_no_status_field_or_code_that_python_defines(path):
    text = re.sub(r"--.*", "", re.sub(r"--\[\[.*?\]\]", "", path.read_text(), flags=re.S))  # comments may
    quoted = set(re.findall(r"'([a-z_]+)'", text))
    defined = {s.value for s in JobStatus} | {f.value for f in Field} | {e.value for e in ErrorCode}
    defined |= {s.value for s in Stage} | {e.value for e in EventField} | {o.value for o in WebhookOutcome}
    assert quoted & defined == set(), path.name
    assert not re.search(r"KEYS\[|ARGV\[\d", text), f"{path.name} indexes KEYS or ARGV by position"


def test_pack_refuses_a_call_that_does_not_name_exactly_the_declared_inputs():
    keys_ = {k: "k" for k in CLAIM.keys}
    args = {"job_id": "j", "prefix": "p", "lease_ms": 1, "record_ms": 1}
    assert CLAIM.pack(keys_, args)[1] == ["j", "p", 1, 1]
    with pytest.raises(TypeError, match="keys"):
        CLAIM.pack({**keys_, "extra": "k"}, args)
    with pytest.raises(TypeError, match="args"):
        CLAIM.pack(keys_, {k: v for k, v in args.items() if k != "prefix"})


def test_a_reply_decodes_by_name_whatever_its_length():
    reply = CLAIM.decode([-2, None, None, None, None, None, None, b"held"])
    assert (reply.code, reply.status, reply.payload) == (Reply.WRONG_STATUS, "held", None)
    assert CLAIM.decode([-1]).code == Reply.NO_JOB


def test_a_single_job_moves_through_the_listing_as_its_status_changes(kit, r):
    job_id = kit.single().job_id

    def listed_as() -> set[str]:
        return {
            s.value
            for s in JobStatus
            if r.zscore(roots_of("single", s.value)(keys.bucket_of(job_id)), job_id) is not None
        }

    created_at = int(kit.job(job_id)["created_at"])
    assert (
        listed_as() == {"queued"}
        and r.zscore(roots_of("single", "queued")(keys.bucket_of(job_id)), job_id) == created_at
    )
    claim = kit.claim(job_id)
    assert listed_as() == {"processing"}
    kit.store.retry(job_id, claim.attempt, 0, "engine_unavailable", "try again")
    assert listed_as() == {"queued"}
    claim = kit.claim(job_id)
    kit.store.fail(job_id, claim.attempt, "invalid_document", "bad")
    assert listed_as() == {"failed"}
    runs = parse_intervals(kit.job(job_id)["intervals"])
    assert [(run[0], run[3]) for run in runs] == [(1, "retrying"), (2, "failed")]


def test_an_attempt_reclaimed_while_it_still_ran_keeps_its_interval(kit):
    job_id = kit.single().job_id
    first = kit.claim(job_id)
    kit.expire_lease(job_id)
    kit.store.reclaim([job_id])
    second = kit.claim(job_id)
    kit.store.complete(job_id, second.attempt, {"text": "done"})
    runs = parse_intervals(kit.job(job_id)["intervals"])
    assert [(run[0], run[3]) for run in runs] == [(first.attempt, "reclaimed"), (second.attempt, "completed")]
    assert runs[0][2] <= runs[1][1]


def test_pack_converts_each_argument_as_declared_and_decode_reads_the_tail_of_dispatches():
    @dataclass(frozen=True)
    class Answer:
        code: Reply
        done: bool
        label: str
        released: spec.Dispatches

    probe = spec.Transition(
        "probe",
        keys=("job",),
        args=(spec.Arg("name"), spec.Arg("limit", "int"), spec.Arg("units", "json"), spec.Arg("ids", rest=True)),
        reply=Answer,
    )

    packed = probe.pack({"job": "k"}, {"name": "n", "limit": "7", "units": {"a": [1, 2]}, "ids": ("x", "y")})
    answer = probe.decode([1, 1, b"l", b"j1", b"echo", b"batch", b"", b"echo", b"interactive"], bucket=3)

    assert packed == (["k"], ["n", 7, '{"a":[1,2]}', "x", "y"])
    assert (answer.code, answer.done, answer.label) == (Reply.OK, True, "l")
    assert answer.released == [
        spec.Dispatch("j1", "echo", spec.RUN, "batch"),
        spec.Dispatch("", "echo", spec.PULL, "interactive", 3),
    ]
    assert probe.decode([1]).released == []


def test_a_transition_s_function_is_named_alike_by_every_process():
    """Its name carries a digest of its code: processes of one version (each with its own hash seed) must
    generate the same code, or each would load a library of its own."""
    program = "from jobs.transitions.catalogue import discovered; print(*(t.function_name for t in discovered()))"
    names = {
        subprocess.run(
            [sys.executable, "-c", program],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "4", "11", "12", "13", "14")
    }
    assert len(names) == 1
