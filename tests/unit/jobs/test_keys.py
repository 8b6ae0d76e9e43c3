"""Key shapes: jobs/keys.py, and the Lua helpers that must build the same strings."""

import hashlib

import pytest
from redis.crc import key_slot

from jobs import keys
from jobs.config import CALL_RECORD_MS
from jobs.contract import lua_preamble
from jobs.ids import DEFAULT_TENANT, is_job_id, new_job_id, tenant_tag

ROOT = "0123456789abcdef0123456789abcdef"


def test_job_keys_of_a_root_have_their_exact_shape():
    assert keys.group_prefix(ROOT) == f"ocrgw:{{{ROOT}}}:"
    assert keys.job(ROOT) == f"ocrgw:{{{ROOT}}}:job:{ROOT}"
    assert keys.payload(ROOT) == f"ocrgw:{{{ROOT}}}:payload:{ROOT}"
    assert keys.result(ROOT) == f"ocrgw:{{{ROOT}}}:result:{ROOT}"
    assert keys.events(ROOT) == f"ocrgw:{{{ROOT}}}:events"


def test_child_ids_and_child_keys_live_under_the_parent_root():
    child = keys.child_id(ROOT, 7)
    assert child == f"{ROOT}-7"
    assert keys.root_of(child) == ROOT
    assert keys.root_of(ROOT) == ROOT
    assert keys.group_prefix(child) == keys.group_prefix(ROOT)
    assert keys.job(child) == f"ocrgw:{{{ROOT}}}:job:{ROOT}-7"
    assert keys.payload(child) == f"ocrgw:{{{ROOT}}}:payload:{ROOT}-7"
    assert keys.call(child, "0123abcd") == f"ocrgw:{{{ROOT}}}:call:0123abcd"
    assert keys.is_call_record(keys.call(child, "0123abcd"))
    assert not any(keys.is_call_record(k) for k in (keys.job(child), keys.events(child), keys.LEASES))
    assert keys.result(child) == f"ocrgw:{{{ROOT}}}:result:{ROOT}-7"
    # One stream per root: a child's events go to its parent's stream.
    assert keys.events(child) == keys.events(ROOT)


def test_a_parent_and_its_children_share_one_hash_tag_and_slot():
    group = [keys.job(ROOT), keys.payload(ROOT), keys.events(ROOT)]
    for i in (0, 1, 999):
        child = keys.child_id(ROOT, i)
        group += [keys.job(child), keys.payload(child), keys.result(child), keys.events(child), keys.call(child, "t")]
    assert {k.split("{", 1)[1].split("}", 1)[0] for k in group} == {ROOT}
    assert {key_slot(k.encode()) for k in group} == {key_slot(keys.job(ROOT).encode())}


def test_global_keys_and_the_idempotency_record():
    assert keys.LEASES == "ocrgw:leases"
    assert keys.QUEUED == "ocrgw:queued"
    assert keys.roots("parent", "failed", "0123456789ab") == "ocrgw:roots:0123456789ab:parent:failed"
    assert keys.roots("parent", "failed") == f"ocrgw:roots:{tenant_tag('default')}:parent:failed"
    assert keys.DUE_PARENTS == "ocrgw:parents:due"
    assert keys.SWEEP_LOCK == "ocrgw:sweep:lock"
    assert keys.DRAINING == "ocrgw:draining"
    assert keys.EXPIRING == "ocrgw:expiring"
    client_key = "order 42 / ünïcode"
    digest = hashlib.sha256(f"acme:{client_key}".encode()).hexdigest()
    assert keys.idempotency("acme", client_key) == "ocrgw:idem:" + digest
    assert keys.idempotency("acme", "a") != keys.idempotency("acme", "b")
    assert keys.idempotency("acme", "a") != keys.idempotency("globex", "a")


def test_lua_key_helpers_build_the_strings_of_keys_py(r):
    script = lua_preamble() + (
        "\nreturn {job_key_of(ARGV[1], ARGV[2]), child_id_of(ARGV[3], tonumber(ARGV[4])),"
        " payload_key_of(ARGV[1], ARGV[2]), children_key_of(ARGV[1], 'failed'), result_key_of(ARGV[1], ARGV[2])}"
    )
    child = keys.child_id(ROOT, 12)
    replies = r.eval(script, 0, keys.group_prefix(ROOT), child, ROOT, 12)
    assert [v.decode() for v in replies] == [
        keys.job(child),
        child,
        keys.payload(child),
        keys.children(ROOT, "failed"),
        keys.result(child),
    ]


def test_a_root_status_change_names_the_listing_sets_of_its_kind_and_the_expiring_index():
    assert keys.roots_by_status(ROOT) == {
        "roots_queued": "ocrgw:roots:0123456789ab:single:queued",
        "roots_processing": "ocrgw:roots:0123456789ab:single:processing",
        "roots_completed": "ocrgw:roots:0123456789ab:single:completed",
        "roots_failed": "ocrgw:roots:0123456789ab:single:failed",
        "roots_cancelled": "ocrgw:roots:0123456789ab:single:cancelled",
        "expiring": "ocrgw:expiring",
    }
    assert keys.roots_by_status(keys.child_id(ROOT, 3))["roots_failed"] == "ocrgw:roots:0123456789ab:parent:failed"


def test_a_tenant_s_keys_carry_its_tag():
    tag = tenant_tag("acme")
    assert keys.tenant_in_flight(tag) == f"ocrgw:tenant:{tag}:in_flight"
    assert keys.tenant_waiting(tag) == f"ocrgw:tenant:{tag}:waiting"


def test_lua_derives_a_job_s_group_and_tenant_keys_from_its_id_as_keys_py_does(r):
    script = lua_preamble() + (
        "\nlocal id = ARGV[1]"
        "\nreturn {root_of(id), group_prefix_of(id), tenant_tag_of(id),"
        " tenant_in_flight_key_of(tenant_tag_of(id)), tenant_waiting_key_of(tenant_tag_of(id))}"
    )
    root = new_job_id("acme")
    tag = tenant_tag("acme")
    for job_id in (root, keys.child_id(root, 0), keys.child_id(root, 123456)):
        replies = [v.decode() for v in r.eval(script, 0, job_id)]
        assert replies == [root, keys.group_prefix(job_id), tag, keys.tenant_in_flight(tag), keys.tenant_waiting(tag)]


def test_children_released_by_lua_are_stored_under_the_keys_of_keys_py(kit, r):
    # create and the release inside it build the children's keys in Lua from
    # the group prefix.  A mismatch would leave a stray hash and the child held.
    created = kit.group(3, max_parallel=2)
    parent = created.job_id
    children = kit.child_ids(parent, 3)
    assert created.dispatches == kit.wake_ups(2)
    assert kit.statuses(parent, 3) == ["queued", "queued", "held"]
    expected = {keys.job(parent), keys.QUEUED, keys.roots("parent", "queued")}
    expected |= {keys.ready("echo", "batch"), keys.wakeups("echo", "batch")}
    expected |= {keys.children(parent, "held"), keys.children(parent, "queued")}
    expected |= {keys.job(c) for c in children} | {keys.payload(c) for c in children}
    # The release counted them in flight for the parent's tenant, under the key keys.py spells.
    expected.add(keys.tenant_in_flight(tenant_tag(DEFAULT_TENANT)))
    assert {k.decode() for k in r.keys("*")} == expected

    # ... and so are those released later by complete, in its own Lua.
    claim = kit.claim(children[0])
    kit.store.complete(claim.job_id, claim.attempt, {"text": "x"})
    assert kit.ready() == [children[1], children[2]]
    assert kit.status(children[2]) == "queued"
    # The payload of a completed job stays (for its searchable PDF); its only lease went with it, so no leases key.
    expected = expected - {keys.children(parent, "held"), keys.roots("parent", "queued")}
    expected |= {keys.result(children[0]), keys.events(parent), keys.roots("parent", "processing")}
    expected |= {keys.children(parent, "completed")}
    # The claim and the complete each left a short-lived record of their call, under the group's tag.
    calls = {k.decode() for k in r.keys(keys.call(parent, "*"))}
    assert len(calls) == 2 and all(0 < r.pttl(k) <= CALL_RECORD_MS for k in calls)
    assert {k.decode() for k in r.keys("*")} == expected | calls


@pytest.mark.parametrize(
    "job_id, ok",
    [
        (ROOT, True),
        (f"{ROOT}-0", True),
        (f"{ROOT}-999999", True),
        (f"{ROOT}-1000000", False),
        (f"{ROOT}-", False),
        (f"{ROOT}-x", False),
        (ROOT[:-1], False),
        (ROOT.upper(), False),
        ("", False),
    ],
)
def test_is_job_id(job_id, ok):
    assert is_job_id(job_id) is ok
