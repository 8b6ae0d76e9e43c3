"""jobs.queries: pages of children, the newest-first listing and its cursor, on index members written directly.

Each test writes the records and index members a read needs, the way the
transitions leave them, so that what is checked is the read alone: its
order, its paging, and that its cost follows the page, not the group.
"""

from __future__ import annotations

import json

import fakeredis
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.ids import tenant_tag
from jobs.queries import ROOT_KINDS, ROOT_STATUSES, InvalidCursor, JobQueries, decode_cursor, encode_cursor
from tests.keyspace import keys
from tests.unit.redis_spy import round_trips

PARENT = "a" * 32


@pytest.fixture
def redis() -> fakeredis.FakeRedis:
    return fakeredis.FakeRedis()


@pytest.fixture
def queries(redis) -> JobQueries:
    return JobQueries(redis, keys)


def write_parent(redis, parent_id: str, statuses: list[str]) -> None:
    """A parent whose child ``i`` is in ``statuses[i]``, each child in its status set."""
    pipe = redis.pipeline(transaction=False)
    pipe.hset(keys.job(parent_id), mapping={"id": parent_id, "kind": "parent", "total": len(statuses)})
    for index, status in enumerate(statuses):
        child_id = keys.child_id(parent_id, index)
        pipe.hset(
            keys.job(child_id),
            mapping={
                "id": child_id,
                "index": index,
                "status": status,
                "model": "echo",
                "doc_hash": f"d{index}",
                "stage": status,
                "progress": "0",
                "attempts": "0",
                "started_at": "",
                "finished_at": "",
                "error_code": "echo_failed" if status == "failed" else "",
            },
        )
        pipe.zadd(keys.children(parent_id, status), {child_id: index})
    pipe.execute()


def write_root(redis, job_id: str, kind: str, status: str, created_at: int) -> None:
    redis.hset(
        keys.job(job_id),
        mapping={
            "id": job_id,
            "kind": kind,
            "status": status,
            "model": "echo",
            "created_at": created_at,
            "started_at": "",
            "finished_at": "",
            "error_code": "",
            "total": 2 if kind == "parent" else "",
            "tenant": "default",
        },
    )
    # Listed as the default tenant's, whatever the id's tag (the listing checks the stored tenant).
    redis.zadd(keys.roots(kind, status, tenant_tag("default"), keys.bucket_of(job_id)), {job_id: created_at})


def root_id(n: int) -> str:
    return f"{n:032x}"


# -- a parent's children --------------------------------------------------------------------


def test_a_page_of_children_is_read_by_index(queries, redis):
    write_parent(redis, PARENT, ["completed"] * 3 + ["queued"] * 2 + ["held"] * 5)

    page = queries.children_page(PARENT, 2, 4)

    assert [c["index"] for c in page.children] == ["2", "3", "4", "5"]
    assert [c["status"] for c in page.children] == ["completed", "queued", "queued", "held"]
    assert (page.offset, page.limit, page.total, page.next_offset) == (2, 4, 10, 6)


def test_the_last_page_stops_at_the_last_child(queries, redis):
    write_parent(redis, PARENT, ["held"] * 5)

    page = queries.children_page(PARENT, 3, 20)
    past = queries.children_page(PARENT, 9, 20)

    assert [c["index"] for c in page.children] == ["3", "4"]
    assert page.next_offset is None
    assert (past.children, past.total, past.next_offset) == ([], 5, None)


def test_a_page_in_one_status_comes_from_that_status_set_in_index_order(queries, redis):
    statuses = ["failed", "completed", "failed", "held", "failed", "failed", "completed"]
    write_parent(redis, PARENT, statuses)

    first = queries.children_page(PARENT, 0, 3, "failed")
    second = queries.children_page(PARENT, 3, 3, "failed")

    assert [c["index"] for c in first.children] == ["0", "2", "4"]
    assert (first.total, first.next_offset) == (4, 3)
    assert [c["index"] for c in second.children] == ["5"]
    assert second.next_offset is None
    assert all(c["error_code"] == "echo_failed" for c in first.children + second.children)


def test_a_page_costs_the_page_not_the_group(queries, redis, monkeypatch):
    write_parent(redis, PARENT, ["held"] * 990 + ["failed"] * 10)

    with round_trips(monkeypatch) as all_children:
        queries.children_page(PARENT, 0, 20)
    with round_trips(monkeypatch) as failed:
        page = queries.children_page(PARENT, 5, 20, "failed")

    assert all_children == [["HGET"] + ["HMGET"] * 20]
    assert failed == [["ZCARD", "ZRANGE"], ["HMGET"] * 5]
    assert [c["index"] for c in page.children] == [str(i) for i in range(995, 1000)]


def test_children_with_results_pair_each_child_with_its_result(queries, redis):
    write_parent(redis, PARENT, ["completed", "failed", "completed"])
    redis.set(keys.result(keys.child_id(PARENT, 0)), json.dumps({"text": "zero"}))
    redis.set(keys.result(keys.child_id(PARENT, 2)), json.dumps({"text": "two"}))

    pairs = queries.children_with_results(PARENT, 3)

    assert [(c["index"], c["status"], r) for c, r in pairs] == [
        ("0", "completed", {"text": "zero"}),
        ("1", "failed", None),
        ("2", "completed", {"text": "two"}),
    ]


# -- the listing ------------------------------------------------------------------------------


def test_the_listing_merges_every_index_newest_first(queries, redis):
    write_root(redis, root_id(1), "single", "completed", 100)
    write_root(redis, root_id(2), "parent", "processing", 300)
    write_root(redis, root_id(3), "single", "queued", 200)
    write_root(redis, root_id(4), "parent", "failed", 400)

    listing = queries.list_jobs()

    assert [j["id"] for j in listing.jobs] == [root_id(4), root_id(2), root_id(3), root_id(1)]
    assert listing.next_cursor is None


def test_the_listing_filters_by_kind_and_status(queries, redis):
    write_root(redis, root_id(1), "single", "completed", 100)
    write_root(redis, root_id(2), "parent", "completed", 200)
    write_root(redis, root_id(3), "single", "queued", 300)

    assert [j["id"] for j in queries.list_jobs(status="completed").jobs] == [root_id(2), root_id(1)]
    assert [j["id"] for j in queries.list_jobs(kind="single").jobs] == [root_id(3), root_id(1)]
    assert [j["id"] for j in queries.list_jobs(status="completed", kind="parent").jobs] == [root_id(2)]


def test_a_cursor_is_not_moved_by_jobs_created_after_it(queries, redis):
    for n in range(1, 6):
        write_root(redis, root_id(n), "single", "queued", n * 10)
    first = queries.list_jobs(limit=2)

    write_root(redis, root_id(99), "single", "queued", 1000)  # newer than everything listed
    second = queries.list_jobs(limit=2, cursor=first.next_cursor)
    third = queries.list_jobs(limit=2, cursor=second.next_cursor)

    assert [j["id"] for j in first.jobs] == [root_id(5), root_id(4)]
    assert [j["id"] for j in second.jobs] == [root_id(3), root_id(2)]
    assert [j["id"] for j in third.jobs] == [root_id(1)]
    assert third.next_cursor is None


def test_a_listing_page_is_two_round_trips_however_many_jobs_exist(queries, redis, monkeypatch):
    for n in range(300):
        write_root(redis, root_id(n), "single", "completed", n)

    with round_trips(monkeypatch) as trips:
        listing = queries.list_jobs(limit=20)

    assert len(listing.jobs) == 20
    indexes = len(ROOT_KINDS) * len(ROOT_STATUSES) * keys.bucket_count
    assert trips == [["ZREVRANGEBYSCORE"] * indexes, ["HMGET"] * 20]


roots = st.lists(
    st.tuples(st.integers(0, 30), st.sampled_from(ROOT_KINDS), st.sampled_from(ROOT_STATUSES)),
    max_size=40,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    roots=roots,
    limit=st.integers(1, 7),
    kind=st.sampled_from([None, *ROOT_KINDS]),
    status=st.sampled_from([None, *ROOT_STATUSES]),
)
def test_paging_through_the_listing_yields_every_match_once_newest_first(roots, limit, kind, status):
    # Few distinct times: many jobs share a microsecond, and the cursor must still lose none.
    redis = fakeredis.FakeRedis()
    queries = JobQueries(redis, keys)
    for n, (created_at, job_kind, job_status) in enumerate(roots):
        write_root(redis, root_id(n), job_kind, job_status, created_at)
    expected = sorted(
        (
            (created_at, root_id(n))
            for n, (created_at, k, s) in enumerate(roots)
            if kind in (None, k) and status in (None, s)
        ),
        reverse=True,
    )

    seen, cursor = [], None
    while True:
        page = queries.list_jobs(status=status, kind=kind, limit=limit, cursor=cursor)
        assert len(page.jobs) <= limit
        seen += [j["id"] for j in page.jobs]
        cursor = page.next_cursor
        if cursor is None:
            break

    assert seen == [job_id for _, job_id in expected]


@pytest.mark.parametrize("cursor", ["", "x", "é", encode_cursor(1, "a" * 32)[:-2], "MTpub3RhbmlkCg"])
def test_a_cursor_the_listing_did_not_make_is_refused(queries, cursor):
    with pytest.raises(InvalidCursor):
        queries.list_jobs(cursor=cursor)


def test_a_cursor_round_trips():
    assert decode_cursor(encode_cursor(1796237456987096, "f" * 32)) == (1796237456987096, "f" * 32)
