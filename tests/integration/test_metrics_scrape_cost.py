"""What one scrape of the gateway's /metrics costs the store, counted by a real redis-server: bounded by a constant.

A gateway on its own redis-server (nothing else talks to it) holds 1,000
children waiting for a slot, in mixed groups (whose children each have a
model of their own: the costliest to count), once over 5 groups and once
over 20.  ``CONFIG RESETSTAT`` then ``INFO commandstats`` around one
``GET /metrics`` count the commands the scrape ran, those of Lua scripts
included.
"""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gateway import create_app
from jobs import observed
from jobs.config import Settings
from jobs.records import GroupRules, NewJob
from jobs.store import JobStore
from tests.keyspace import keys

pytestmark = pytest.mark.integration

HELD = 1000
MAX_COMMANDS = 100


def child(i: int) -> NewJob:
    model = "echo" if i % 2 else "tesseract"
    return NewJob(model=model, content_type="text/plain" if model == "echo" else "image/png", payload=b"x")


def fill(store: JobStore, groups: int) -> None:
    """``groups`` mixed groups, one child of each released, HELD children held in all."""
    for _ in range(groups):
        store.create_group([child(i) for i in range(HELD // groups + 1)], GroupRules(1))


def commands_run(client) -> dict[str, int]:
    stats = client.info("commandstats")
    counted = {name.removeprefix("cmdstat_"): int(row["calls"]) for name, row in stats.items()}
    # The counting's own commands are not the scrape's.
    return {name: calls for name, calls in counted.items() if not name.startswith(("config", "info"))}


def scrape_cost(redis_server_factory, groups: int) -> tuple[dict[str, int], dict[tuple[str, str], float]]:
    server = redis_server_factory()
    with server.client() as client:
        store = JobStore(client, Settings())
        fill(store, groups)
        observed.record_sample(client, keys)  # the coordinator's count, once an interval
        app = create_app(store.settings, store, len)
        with app.test_client() as http:
            client.config_resetstat()
            response = http.get("/metrics")
            ran = commands_run(client)
    assert response.status_code == 200
    gauges = {
        (s.name, s.labels.get("model", "")): s.value
        for family in text_string_to_metric_families(response.get_data(as_text=True))
        for s in family.samples
    }
    return ran, gauges


def test_a_scrape_runs_a_bounded_number_of_commands_whatever_the_backlog(redis_server_factory):
    over_5, gauges_5 = scrape_cost(redis_server_factory, 5)
    over_20, gauges_20 = scrape_cost(redis_server_factory, 20)

    for gauges in (gauges_5, gauges_20):  # the scrape did show the backlog
        held = gauges[("ocrgw_jobs_held", "echo")] + gauges[("ocrgw_jobs_held", "tesseract")]
        assert held == HELD
    assert sum(over_5.values()) <= MAX_COMMANDS, over_5
    assert over_5 == over_20
