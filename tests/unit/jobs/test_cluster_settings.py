"""OCRGW_REDIS_CLUSTER: how it is read and checked."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from cli.main import main
from jobs.config import InvalidSettings, Settings

CLUSTER = {
    "OCRGW_REDIS_CLUSTER": "10.0.0.1:7000, 10.0.0.2:7001,node-3:7002",
    "CELERY_BROKER_URL": "redis://broker:6379/0",
}


def test_without_it_nothing_changes():
    assert Settings.from_env({}).redis_cluster == ()


def test_the_seed_nodes_are_read_in_order():
    settings = Settings.from_env({**CLUSTER, "REDIS_URL": "redis://:pw@unused:7000/0"})
    assert settings.redis_cluster == (("10.0.0.1", 7000), ("10.0.0.2", 7001), ("node-3", 7002))
    assert settings.broker_url == "redis://broker:6379/0"


@pytest.mark.parametrize(
    "env, named",
    [
        ({**CLUSTER, "OCRGW_REDIS_CLUSTER": "node"}, "OCRGW_REDIS_CLUSTER"),
        ({**CLUSTER, "OCRGW_REDIS_CLUSTER": "node:0"}, "OCRGW_REDIS_CLUSTER"),
        ({**CLUSTER, "OCRGW_REDIS_CLUSTER": "node:65536"}, "OCRGW_REDIS_CLUSTER"),
        ({**CLUSTER, "OCRGW_REDIS_CLUSTER": "node:x"}, "OCRGW_REDIS_CLUSTER"),
        ({**CLUSTER, "OCRGW_REDIS_CLUSTER": ":7000"}, "OCRGW_REDIS_CLUSTER"),
        ({**CLUSTER, "OCRGW_REDIS_CLUSTER": "a:1,a:1"}, "OCRGW_REDIS_CLUSTER"),
        ({**CLUSTER, "OCRGW_REDIS_CLUSTER": " , "}, "OCRGW_REDIS_CLUSTER"),
        (
            {**CLUSTER, "OCRGW_REDIS_SENTINELS": "s:26379", "OCRGW_REDIS_SENTINEL_MASTER": "ocrgw"},
            "OCRGW_REDIS_CLUSTER",
        ),
        ({**CLUSTER, "REDIS_URL": "unix:///run/redis.sock"}, "REDIS_URL"),
        ({**CLUSTER, "REDIS_URL": "redis://:pw@unused:7000/2"}, "REDIS_URL"),
        ({"OCRGW_REDIS_CLUSTER": "node:7000"}, "CELERY_BROKER_URL"),
    ],
)
def test_what_cannot_be_used_is_refused_naming_its_variable(env, named):
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env(env)
    assert str(caught.value).startswith(f"{named}: ")


def test_a_bad_seed_stops_the_process_with_one_line():
    result = CliRunner().invoke(main, ["config"], env={**CLUSTER, "OCRGW_REDIS_CLUSTER": "node-1:7000,node-2"})

    assert result.exit_code == 1
    assert result.stderr == (
        "ocrgw: OCRGW_REDIS_CLUSTER: must be a comma-separated list of host:port, each given once, "
        "got 'node-1:7000,node-2' (malformed entry)\n"
    )
