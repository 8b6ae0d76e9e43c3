"""Calling a transition's function when Redis does not have it: one never loaded there, or forgotten (a
restart of a Redis without persistence forgets every function)."""

from __future__ import annotations

import fakeredis
import pytest

from jobs import controls
from jobs.contract import Reply
from jobs.transitions import LOAD_ATTEMPTS, Scripts
from jobs.transitions.scripts import FunctionMissing
from jobs.transitions.spec import per_call_state
from jobs.transitions.unlock_sweep import UNLOCK_SWEEP
from tests.keyspace import keys


def forgetful(client: fakeredis.FakeRedis, times: int) -> None:
    """Makes the server forget every function right after each of the next ``times`` loads,
    as a Redis restarted between a function's load and its call does."""
    load = client.function_load
    left = [times]

    def load_then_forget(code, replace=False):
        name = load(code, replace=replace)
        if left[0] > 0:
            left[0] -= 1
            client.function_flush()
        return name

    client.function_load = load_then_forget  # type: ignore[method-assign]


def unlock(scripts: Scripts):
    return scripts.run(UNLOCK_SWEEP, keys={"lock": keys.sweep_lock(0)}, args={"token": "t"})


def test_a_function_forgotten_again_right_after_its_load_is_loaded_and_called_again():
    client = fakeredis.FakeRedis()
    scripts = Scripts(client, keys)
    client.set(keys.sweep_lock(0), "t")
    forgetful(client, times=LOAD_ATTEMPTS - 1)

    assert unlock(scripts).code == Reply.OK
    assert client.get(keys.sweep_lock(0)) is None


def test_a_server_that_never_keeps_a_function_still_fails_the_call():
    client = fakeredis.FakeRedis()
    scripts = Scripts(client, keys)
    forgetful(client, times=2 * LOAD_ATTEMPTS)

    with pytest.raises(FunctionMissing):
        unlock(scripts)


def test_what_one_call_noted_is_not_seen_by_the_next(kit, store):
    """A library's top level runs once, when it loads: an include's state of one call (here, the jobs it
    cancelled before they started) starts afresh at every call."""
    first, second = kit.group(3, max_parallel=1), kit.group(2, max_parallel=1)

    assert controls.cancel(store, first.job_id).cancelled_unstarted == {"echo": 3}
    assert controls.cancel(store, second.job_id).cancelled_unstarted == {"echo": 2}


def test_a_batch_whose_function_is_missing_is_loaded_and_sent_again_in_one_pipeline(monkeypatch):
    client = fakeredis.FakeRedis()
    scripts = Scripts(client, keys)
    client.set(keys.sweep_lock(0), "t")
    forgetful(client, times=LOAD_ATTEMPTS - 1)
    pipelines = []
    real_pipeline = client.pipeline

    def counted(*args, **kwargs):
        pipelines.append(real_pipeline(*args, **kwargs))
        return pipelines[-1]

    def alone(*args, **kwargs):
        raise AssertionError("a call of a batch was sent on its own")

    monkeypatch.setattr(client, "pipeline", counted)
    monkeypatch.setattr(client, "fcall", alone)
    calls = [({"lock": keys.sweep_lock(0)}, {"token": "t"}), ({"lock": keys.sweep_lock(0)}, {"token": "other"})]

    assert [r.code for r in scripts.run_all(UNLOCK_SWEEP, calls)] == [Reply.OK, Reply.NOTHING]
    assert client.get(keys.sweep_lock(0)) is None
    # Sent, then sent again after each load: in a pipeline each time, never a call on its own.
    assert len(pipelines) == LOAD_ATTEMPTS + 1


def test_an_include_s_top_level_local_is_a_constant_or_one_call_s_state():
    """State of one call is set afresh as each call begins; anything that would be set once, at the load,
    and carried over (two names at once, no value, a value over several lines, a name in mixed case) is
    refused when the library is built."""
    assert per_call_state("local TURN = 1000\nlocal turns = {}  -- read or moved\nlocal function f() end") == (
        "  turns = {}\n"
    )
    for line in ("local lastSeen = {}", "local seen", "local a, b = {}, {}", "local seen = {", "local seen={}"):
        with pytest.raises(ValueError, match="neither a constant nor one call's state"):
            per_call_state(line)
