"""Tenancy in the store: whose a job is, kept on its root only; a tenant's listing sets, idempotency
records and reads; audit events that name the tenant and key id while the worker's side knows no tenant."""

from __future__ import annotations

from jobs.controls import cancel
from jobs.ids import new_job_id, tenant_tag
from jobs.queries import JobQueries
from jobs.records import GroupRules, Idempotency, Owner
from tests.keyspace import keys
from tests.unit.jobs.conftest import roots_of

ACME = Owner("acme", "a1b2c3d4e5f6")
GLOBEX = Owner("globex", "0f0e0d0c0b0a")


def test_a_root_keeps_its_tenant_and_key_id_and_its_children_keep_nothing_new(kit):
    created = kit.store.create_group(kit.docs(3), GroupRules(1), owner=ACME)
    parent = created.job_id

    assert parent.startswith(tenant_tag("acme")) and len(parent) == 32
    root = kit.job(parent)
    assert (root["tenant"], root["key_id"]) == ("acme", "a1b2c3d4e5f6")
    # A child belongs through its root: a field per child would cost memory per held child.
    assert all("tenant" not in kit.job(c) and "key_id" not in kit.job(c) for c in kit.child_ids(parent, 3))


def test_a_single_job_is_listed_in_its_tenants_sets_only(kit):
    job_id = kit.store.create_single(kit.doc(), owner=ACME).job_id

    assert kit.job(job_id)["tenant"] == "acme"
    assert kit.members(roots_of("single", "queued", tenant_tag("acme"))) == {job_id}
    assert kit.members(roots_of("single", "queued", tenant_tag("globex"))) == set()
    assert kit.members(roots_of("single", "queued")) == set()  # the default tenant's


def test_transitions_move_a_root_within_its_tenants_sets_knowing_only_its_id(kit):
    parent = kit.store.create_group(kit.docs(2), GroupRules(0), owner=ACME).job_id
    for child in kit.child_ids(parent, 2):
        claim = kit.claim(child)  # the worker's side: ids only
        kit.store.complete(child, claim.attempt, {"text": child})

    acme = tenant_tag("acme")
    assert kit.members(roots_of("parent", "completed", acme)) == {parent}
    assert kit.members(roots_of("parent", "queued", acme)) == set()
    assert kit.members(roots_of("parent", "processing", acme)) == set()


def test_terminal_events_name_the_roots_tenant_and_key_id_for_children_and_roots(kit):
    parent = kit.store.create_group(kit.docs(2), GroupRules(0), owner=ACME).job_id
    first, second = kit.child_ids(parent, 2)
    claim = kit.claim(first)
    kit.store.fail(first, claim.attempt, "echo_failed", "no")
    cancel(kit.store, second)
    single = kit.store.create_single(kit.doc(), owner=GLOBEX).job_id
    claim = kit.claim(single)
    kit.store.complete(single, claim.attempt, {"text": "x"})

    events = kit.events(parent)
    assert [(e["operation"], e["job_id"]) for e in events] == [
        ("job_child", first),
        ("job_child", second),
        ("job", parent),
    ]
    assert {(e["tenant"], e["key_id"]) for e in events} == {("acme", "a1b2c3d4e5f6")}
    assert [(e["tenant"], e["key_id"]) for e in kit.events(single)] == [("globex", "0f0e0d0c0b0a")]


def test_an_idempotency_key_is_a_tenants_own(kit):
    key = Idempotency("order-42", "same request")

    acme = kit.store.create_single(kit.doc(), key, owner=ACME)
    globex = kit.store.create_single(kit.doc(), key, owner=GLOBEX)
    again = kit.store.create_single(kit.doc(), key, owner=ACME)

    assert acme.job_id != globex.job_id and not globex.replayed
    assert (again.job_id, again.replayed) == (acme.job_id, True)
    assert kit.r.exists(keys.idempotency("acme", "order-42"), keys.idempotency("globex", "order-42")) == 2


def test_a_tenants_read_finds_its_own_jobs_and_children_only(kit):
    parent = kit.store.create_group(kit.docs(2), GroupRules(1), owner=ACME).job_id
    queries = JobQueries(kit.r, keys)

    own_parent, own_child = queries.get(parent, "acme"), queries.get(f"{parent}-1", "acme")
    assert own_parent is not None and own_parent["id"] == parent
    assert own_child is not None and own_child["id"] == f"{parent}-1"
    assert queries.get(parent, "globex") is None
    assert queries.get(f"{parent}-1", "globex") is None
    unscoped = queries.get(parent)  # no tenant named: the store's own reads
    assert unscoped is not None and unscoped["id"] == parent


def test_the_stored_tenant_decides_when_two_tenants_tags_collide(kit, monkeypatch):
    # globex's job under acme's tag, as if the two tags were equal.
    monkeypatch.setattr("jobs.store.new_job_id", lambda tenant: new_job_id("acme"))
    impostor = kit.store.create_single(kit.doc(), owner=GLOBEX).job_id
    monkeypatch.undo()
    own = kit.store.create_single(kit.doc(), owner=ACME).job_id
    queries = JobQueries(kit.r, keys)

    assert queries.get(impostor, "acme") is None
    assert [row["id"] for row in queries.list_jobs(tenant="acme").jobs] == [own]
    assert queries.list_jobs(tenant="globex").jobs == []  # not in globex's sets: its tag routed it to acme's
