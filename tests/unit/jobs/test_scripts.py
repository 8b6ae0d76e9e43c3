"""Calling a transition's script when Redis forgot it: a restart empties the script cache."""

from __future__ import annotations

import fakeredis
import pytest
from redis.exceptions import NoScriptError

from jobs.contract import Reply
from jobs.transitions import NOSCRIPT_ATTEMPTS, Scripts
from jobs.transitions.unlock_sweep import UNLOCK_SWEEP
from tests.keyspace import keys


def forgetful(client: fakeredis.FakeRedis, times: int) -> None:
    """Makes the server forget every script right after each of the next ``times`` loads,
    as a Redis restarted between redis-py's load of a script and its call does."""
    load = client.script_load
    left = [times]

    def load_then_forget(script):
        sha = load(script)
        if left[0] > 0:
            left[0] -= 1
            client.script_flush()
        return sha

    client.script_load = load_then_forget  # type: ignore[method-assign]


def unlock(scripts: Scripts):
    return scripts.run(UNLOCK_SWEEP, keys={"lock": keys.sweep_lock(0)}, args={"token": "t"})


def test_a_script_forgotten_again_right_after_its_reload_is_loaded_and_called_again():
    client = fakeredis.FakeRedis()
    scripts = Scripts(client, keys)
    client.set(keys.sweep_lock(0), "t")
    forgetful(client, times=NOSCRIPT_ATTEMPTS - 1)

    assert unlock(scripts).code == Reply.OK
    assert client.get(keys.sweep_lock(0)) is None


def test_a_server_that_never_keeps_a_script_still_fails_the_call():
    client = fakeredis.FakeRedis()
    scripts = Scripts(client, keys)
    forgetful(client, times=NOSCRIPT_ATTEMPTS)

    with pytest.raises(NoScriptError):
        unlock(scripts)
