"""How a transition script is described once and called by name from both sides.

A ``Transition`` names its keys, its arguments (with their types) and its
reply (a dataclass).  From that one description come:

* the Lua the script starts with: ``K.<key>`` and ``A.<arg>`` for its
  inputs (numbers already converted, JSON already decoded) and a
  ``reply{...}`` function that lays a named reply out as Redis returns it,
  so a script never indexes KEYS, ARGV or its own reply by position;
* the Python side: ``pack`` checks that a call names exactly the declared
  keys and arguments and orders them, ``decode`` turns the raw reply into
  the reply dataclass.

The script's own file (``<name>.lua`` beside its spec ``<name>.py``) holds
the body and the header a reader needs: what it does; a ``Keys:`` and an
``Args:`` block, one line per input (or per bundle of inputs that several
scripts take alike, named as here: ``ROOT_KEYS``, ``RELEASE_KEYS``,
``RELEASE_ARGS``) saying what it is; a ``Reply:`` block, one ``{CODE,
field, ...}`` per answer; and the keys it derives from a declared
hash-tagged prefix rather than from KEYS.  Every key a script touches is in
one bucket (one hash slot, see jobs.keys): the keys it derives start with
the bucket prefix of its first declared key (``BUCKET_PREFIX``).  tests/unit/jobs/test_contract.py
holds the three blocks to the spec: a header cannot omit or misname an input.
Shared Lua lives in ``includes/``; an include says what it needs with
``-- @needs <include>`` lines and a script what it uses with
``-- @include <include>``, so order no longer matters: each is inlined
once, after what it needs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Generic, Literal, NewType, TypeVar

from jobs.contract import DEFAULT_PRIORITY, ROOT_STATUSES, Reply
from jobs.keys import BUCKET_PREFIX_OF_CALL, lua_preamble
from jobs.state_machine import lua_comment

LUA_DIR = Path(__file__).parent
INCLUDES_DIR = LUA_DIR / "includes"
_INCLUDE = re.compile(r"^-- @include (\w+)\s*$", re.MULTILINE)
_NEEDS = re.compile(r"^-- @needs (\w+)\s*$", re.MULTILINE)
#: An include's state of one call: a top-level local in lower case (a constant is in upper case), set afresh
#: as each call begins, since a library's top level runs once, when it loads.
_PER_CALL = re.compile(r"^local ([a-z_][a-z0-9_]*) = (.*?)\s*(?:--.*)?$")
#: A constant at an include's top level: its name in upper case, defined once, when the library loads.
_CONSTANT = re.compile(r"^local [A-Z_][A-Z0-9_]* = ")
#: Every transition's function (and its library) is named ``ocrgw_<transition>_<digest>``.
FUNCTION_PREFIX = "ocrgw_"
FUNCTION_DIGEST_LENGTH = 12
_FUNCTION_NAME_PLACEHOLDER = "<function name>"

#: The listing's sets a script that changes a root's status declares, one per status, and the
#: expiring index a root enters when it ends (see keys.Keyspace.roots_by_status).
ROOT_KEYS = (*(f"roots_{s.value}" for s in ROOT_STATUSES), "expiring")

ArgType = Literal["str", "int", "json", "bytes"]


@dataclass(frozen=True)
class Arg:
    name: str
    type: ArgType = "str"
    # A rest argument takes every ARGV from its position on (one per item);
    # Lua gets ``A.<name>_from``, the index of the first.
    rest: bool = False

    def lua(self, index: int) -> str:
        if self.rest:
            return f"{self.name}_from = {index}"
        value = f"ARGV[{index}]"
        if self.type == "int":
            value = f"tonumber({value})"
        elif self.type == "json":
            value = f"cjson.decode({value})"
        return f"{self.name} = {value}"

    @property
    def convert(self) -> Callable[[Any], Any] | None:
        """How a value of this argument is packed for Redis; None: it goes as it is."""
        return _CONVERTERS.get(self.type)


# json.dumps with options of its own builds a new encoder at every call; this one is built once.
_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "int": int,
    "json": json.JSONEncoder(separators=(",", ":")).encode,
}


# The inputs of every transition that releases held children into free slots
# (release_children in includes/release.lua, directly or through finish), filled
# at every call alike by StoreContext.run (jobs/transitions/context.py), so that
# an entry's call names only its own inputs:
#   parent       the parent whose slots are filled (a child's parent, else the job itself)
#   queued, due  the indexes a released child and a parent left waiting go on
#   prefix       the group's hash-tagged prefix, which the children's keys derive from
#   release_limit        held children released by this call at most (0: none, the
#                        parent goes on the due index for the sweep)
#   requeue_ms           when the sweep re-publishes a released child nobody claimed,
#                        and retries a parent its tenant's cap held back
#   tenant_max_inflight  the tenant's cap on its jobs in flight (<= 0: no cap)
#   tenant_quota         1: the tenant's room in the bucket is its quota there (more than one
#                        bucket, jobs/tenant_quota.py), not the cap less its in-flight count
RELEASE_KEYS = ("parent", "queued", "due")
RELEASE_ARGS = (
    Arg("prefix"),
    Arg("release_limit", "int"),
    Arg("requeue_ms", "int"),
    Arg("tenant_max_inflight", "int"),
    Arg("tenant_quota", "int"),
)


#: What a message asks of a worker: run the job (OCR), build its searchable PDF, or take the next ready
#: job of a model (a wake-up, see includes/ready.lua).
RUN, BUILD_PDF, PULL = "run", "build_pdf", "pull"


@dataclass(frozen=True)
class Dispatch:
    """A job that a transition moved to ``queued``: it needs a Celery message (to its model's queue of
    its ``priority``'s lane).

    ``task`` BUILD_PDF asks instead for the searchable PDF of a terminal job, on the queue of ``model``;
    PULL (no ``job_id``) is a wake-up: a worker of ``model`` takes the model's next ready job, whichever it is,
    of the ready index of ``bucket`` (that of the script that answered it, see jobs.keys).
    """

    job_id: str
    model: str
    task: str = RUN
    priority: str = DEFAULT_PRIORITY.value  # a ``Priority`` value: 'interactive' goes to the model's interactive queue
    bucket: int = 0  # a wake-up's: the bucket whose ready index it is for
    pdf_variant: str = ""  # a BUILD_PDF's: the variant of the PDF to build (jobs.pdf_outputs; '': the default)


Dispatches = list[Dispatch]
#: Jobs per model, as a script answers them: ``model:n,model:n`` ('' for none).
ModelCounts = NewType("ModelCounts", dict[str, int])


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)


def _dispatches(flat: Sequence[Any], bucket: int) -> Dispatches:
    """A script's released jobs, laid out flat as ``{job_id, model, priority, ...}``; a job id '' is a
    wake-up for the model's lane of ``bucket``, the script's (includes/ready.lua)."""
    out = []
    for i in range(0, len(flat), 3):
        job_id, model, lane = _text(flat[i]), _text(flat[i + 1]), _text(flat[i + 2])
        if job_id == "":
            out.append(Dispatch(job_id, model, PULL, lane, bucket))
        else:
            out.append(Dispatch(job_id, model, RUN, lane))
    return out


def _model_counts(value: Any) -> ModelCounts:
    counts = {}
    for part in filter(None, _text(value).split(",")):
        model, _, n = part.rpartition(":")
        counts[model] = int(n)
    return ModelCounts(counts)


# How a reply field of each declared type comes back from Redis: Lua's false
# arrives as None, true as 1, strings as bytes.
_DECODERS: dict[Any, Any] = {
    Reply: lambda v: Reply(int(v)),
    int: lambda v: int(v) if v is not None else 0,
    bool: lambda v: v not in (None, 0, b"0", b""),
    str: _text,
    bytes | None: lambda v: v,
    ModelCounts: _model_counts,
}


#: A transition's reply dataclass.
ReplyT = TypeVar("ReplyT")


@dataclass(frozen=True)
class Transition(Generic[ReplyT]):
    name: str
    keys: tuple[str, ...]
    args: tuple[Arg, ...]
    reply: type[ReplyT]
    #: The folder of the entry, where its ``<name>.lua`` is: this package for the house's own.
    home: Path = LUA_DIR

    @cached_property
    def releases(self) -> bool:
        """Whether the script releases held children: it takes the release bundle (RELEASE_KEYS and
        RELEASE_ARGS), which ``StoreContext.run`` fills.  Cached: every call asks."""
        names = {a.name for a in self.args}
        return set(RELEASE_KEYS) <= set(self.keys) and all(a.name in names for a in RELEASE_ARGS)

    @cached_property
    def reply_fields(self) -> list[tuple[str, Any]]:
        # Cached: every call's decode reads it, and resolving the hints costs more than the rest of decode.
        hints = typing.get_type_hints(self.reply)
        # A reply is a dataclass (the specs declare one each), which the type variable cannot say.
        return [(f.name, hints[f.name]) for f in dataclasses.fields(typing.cast(Any, self.reply))]

    # -- Python side -------------------------------------------------------------------------

    @cached_property
    def _pack_plan(self) -> tuple[frozenset[str], frozenset[str], tuple[tuple[str, bool, Any], ...]]:
        """The declared key names, argument names, and per argument how it is packed (None: as it is).

        Worked out once per spec: a worker packs about 35 inputs per job, and asking each ``Arg`` its type
        at every call cost as much as the rest of the packing."""
        plan = tuple((a.name, a.rest, a.convert) for a in self.args)
        return frozenset(self.keys), frozenset(a.name for a in self.args), plan

    @cached_property
    def _decode_plan(self) -> tuple[tuple[tuple[int, str, Any], ...], tuple[int, str] | None]:
        """Each reply field before the tail with its position and decoder, and the tail (the dispatches from
        its position on), if the reply has one.  Worked out once per spec: every call's reply is decoded."""
        fields: list[tuple[int, str, Any]] = []
        for position, (name, hint) in enumerate(self.reply_fields):
            if hint == Dispatches:
                return tuple(fields), (position, name)
            fields.append((position, name, _DECODERS[hint]))
        return tuple(fields), None

    def pack(self, keys: Mapping[str, str], args: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
        key_names, arg_names, plan = self._pack_plan
        if keys.keys() != key_names:
            raise TypeError(f"{self.name}: keys {sorted(keys)} are not the declared {sorted(self.keys)}")
        if args.keys() != arg_names:
            raise TypeError(f"{self.name}: args {sorted(args)} are not the declared {sorted(arg_names)}")
        packed: list[Any] = []
        for name, rest, convert in plan:
            value = args[name]
            if rest:
                packed += [convert(v) for v in value] if convert else list(value)
            else:
                packed.append(convert(value) if convert else value)
        return [keys[k] for k in self.keys], packed

    def decode(self, raw: Any, bucket: int = 0) -> ReplyT:
        """The reply; ``bucket``: the bucket the script ran in, which its wake-ups are for."""
        raw = raw if isinstance(raw, list) else [raw]
        fields, tail = self._decode_plan
        length = len(raw)
        values = {name: decode(raw[position] if position < length else None) for position, name, decode in fields}
        if tail is not None:
            values[tail[1]] = _dispatches(raw[tail[0] :], bucket)
        return self.reply(**values)

    # -- Lua side ----------------------------------------------------------------------------

    def lua_inputs(self) -> str:
        """The inputs' and the reply's names: ``K`` and ``A``, filled as each call begins (``lua_call_begins``),
        and ``reply``."""
        fields = []
        tail = None
        for name, hint in self.reply_fields:
            if hint == Dispatches:
                tail = name
            else:
                fields.append(f"present(t.{name})")
        lines = [
            f"-- Generated from the spec of `{self.name}` (jobs/transitions).",
            "local K, A",
            # Lua drops a nil from a list and everything after it: a field left out is false (None).
            "local function present(v) if v == nil then return false end return v end",
            "local function reply(t)",
            f"  local out = {{{', '.join(fields)}}}",
        ]
        if tail:
            lines.append(f"  for _, v in ipairs(t.{tail} or {{}}) do out[#out + 1] = v end")
        lines += ["  return out", "end"]
        return "\n".join(lines) + "\n"

    def lua_call_begins(self, per_call_state: str) -> str:
        """What each call does first: its inputs named (numbers converted, JSON decoded), its bucket's prefix
        read off its first key, and the includes' state of one call (``per_call_state``) set afresh."""
        keys = ", ".join(f"{k} = KEYS[{i}]" for i, k in enumerate(self.keys, start=1))
        args = ", ".join(a.lua(i) for i, a in enumerate(self.args, start=1))
        return (
            "  KEYS, ARGV = keys, args\n"
            f"  {BUCKET_PREFIX_OF_CALL}\n"
            f"  K = {{{keys}}}\n"
            f"  A = {{{args}}}\n"
            f"{per_call_state}"
        )

    @property
    def path(self) -> Path:
        return self.home / f"{self.name}.lua"

    @cached_property
    def function_name(self) -> str:
        """The name of its library and of the one function in it: the transition's, then a digest of the
        library's code, so that two versions of ocrgw on one Redis each call their own."""
        digest = hashlib.sha1(self._library_code.encode()).hexdigest()[:FUNCTION_DIGEST_LENGTH]
        return f"{FUNCTION_PREFIX}{self.name}_{digest}"

    def source(self) -> str:
        """The Redis Function library Redis runs: its shared names, the moves it may make (a comment), its
        inputs and its includes, defined once when the library loads; then the one function, the script's body,
        which each call runs (FCALL)."""
        return f"#!lua name={self.function_name}\n" + self._library_code.replace(
            _FUNCTION_NAME_PLACEHOLDER, self.function_name
        )

    @cached_property
    def _library_code(self) -> str:
        """The library less its first line (its name comes from this code's digest); built once per
        transition, for its name and its source both."""
        body = self.path.read_text()
        includes = _with_includes("".join(f"-- @include {n}\n" for n in _INCLUDE.findall(body)))
        per_call = per_call_state(includes)
        return (
            "local KEYS, ARGV\n"
            + lua_preamble()
            + lua_comment(self.name)
            + self.lua_inputs()
            + includes
            + f"redis.register_function('{_FUNCTION_NAME_PLACEHOLDER}', function(keys, args)\n"
            + self.lua_call_begins(per_call)
            + _INCLUDE.sub("", body)
            + "\nend)\n"
        )


def per_call_state(includes: str) -> str:
    """The lines that set the includes' state of one call afresh as a call begins: one per top-level
    ``local`` in lower case.  Any other top-level ``local`` but a function or an upper-case constant (two
    names at once, no value, a value over several lines) is refused: it would be set once, at the load, and
    carried from one call to the next."""
    resets = []
    for line in includes.splitlines():
        if not line.startswith("local ") or line.startswith("local function ") or _CONSTANT.match(line):
            continue
        state = _PER_CALL.match(line)
        if state is None or state.group(2).count("{") != state.group(2).count("}"):
            raise ValueError(f"an include's top-level local is neither a constant nor one call's state: {line!r}")
        resets.append(f"  {state.group(1)} = {state.group(2)}\n")
    return "".join(resets)


@cache
def _include(name: str) -> str:
    return (INCLUDES_DIR / f"{name}.lua").read_text()


def _with_includes(body: str) -> str:
    """``body`` with each ``@include`` replaced by that include, preceded by what it ``@needs``."""
    done: set[str] = set()

    def expand(name: str) -> str:
        if name in done:
            return ""
        done.add(name)
        text = _include(name)
        needed = "".join(expand(n) for n in _NEEDS.findall(text))
        return needed + text

    return _INCLUDE.sub(lambda m: expand(m.group(1)), body)
