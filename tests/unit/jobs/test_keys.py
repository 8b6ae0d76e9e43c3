"""Key shapes: jobs/keys.py, and the Lua helpers that must build the same strings."""

import hashlib

import pytest
from redis.crc import key_slot

from jobs.config import CALL_RECORD_MS
from jobs.ids import DEFAULT_TENANT, is_job_id, new_job_id, tenant_tag
from jobs.keys import BUCKET_PREFIX_OF_CALL, lua_preamble
from tests.keyspace import keys

SLOTS = 16384

ROOT = "0123456789abcdef0123456789abcdef"
# The root's bucket: the four digits after its tenant's tag, modulo the bucket count.
BUCKET = 0xCDEF % keys.bucket_count
B = keys.bucket_prefix(BUCKET)


def test_job_keys_of_a_root_have_their_exact_shape():
    assert keys.bucket_of(ROOT) == BUCKET
    assert f"ocrgw:{{{keys.bucket_tag(BUCKET)}}}:" == B
    assert keys.group_prefix(ROOT) == f"{B}{ROOT}:"
    assert keys.job(ROOT) == f"{B}{ROOT}:job:{ROOT}"
    assert keys.payload(ROOT) == f"{B}{ROOT}:payload:{ROOT}"
    assert keys.result(ROOT) == f"{B}{ROOT}:result:{ROOT}"
    assert keys.events(ROOT) == f"{B}{ROOT}:events"


def test_child_ids_and_child_keys_live_under_the_parent_root():
    child = keys.child_id(ROOT, 7)
    assert child == f"{ROOT}-7"
    assert keys.root_of(child) == ROOT
    assert keys.root_of(ROOT) == ROOT
    assert keys.bucket_of(child) == BUCKET
    assert keys.group_prefix(child) == keys.group_prefix(ROOT)
    assert keys.job(child) == f"{B}{ROOT}:job:{ROOT}-7"
    assert keys.payload(child) == f"{B}{ROOT}:payload:{ROOT}-7"
    assert keys.call(child, "0123abcd") == f"{B}{ROOT}:call:0123abcd"
    assert keys.is_call_record(keys.call(child, "0123abcd"))
    assert keys.is_call_record(keys.pull_call(BUCKET, "0123abcd"))
    assert not any(
        keys.is_call_record(k) for k in (keys.job(child), keys.events(child), keys.leases(BUCKET), keys.DRAINING)
    )
    assert keys.is_wakeup_count(keys.wakeups(BUCKET, "echo", "batch"))
    assert not any(keys.is_wakeup_count(k) for k in (keys.ready(BUCKET, "echo", "batch"), keys.job(child)))
    assert keys.result(child) == f"{B}{ROOT}:result:{ROOT}-7"
    # One stream per root: a child's events go to its parent's stream.
    assert keys.events(child) == keys.events(ROOT)


def test_a_parent_and_its_children_share_one_hash_tag_and_slot():
    group = [keys.job(ROOT), keys.payload(ROOT), keys.events(ROOT)]
    for i in (0, 1, 999):
        child = keys.child_id(ROOT, i)
        group += [keys.job(child), keys.payload(child), keys.result(child), keys.events(child), keys.call(child, "t")]
    assert {k.split("{", 1)[1].split("}", 1)[0] for k in group} == {keys.bucket_tag(BUCKET)}
    assert {key_slot(k.encode()) for k in group} == {key_slot(keys.job(ROOT).encode())}


def test_a_bucket_s_indexes_and_the_global_keys():
    assert keys.leases(BUCKET) == f"{B}leases"
    assert keys.queued(BUCKET) == f"{B}queued"
    assert keys.roots("parent", "failed", "0123456789ab", BUCKET) == f"{B}roots:0123456789ab:parent:failed"
    assert keys.due_parents(BUCKET) == f"{B}parents:due"
    assert keys.webhooks(BUCKET) == f"{B}webhooks"
    assert keys.expiring(BUCKET) == f"{B}expiring"
    assert keys.sweep_lock(BUCKET) == f"{B}sweep:lock"
    assert keys.ready(BUCKET, "echo", "batch") == f"{B}ready:echo:batch"
    assert keys.wakeups(BUCKET, "echo", "batch") == f"{B}wakeups:echo:batch"
    assert keys.pull_call(BUCKET, "t") == f"{B}pull_call:t"
    assert keys.replication_mark(BUCKET) == f"{B}replication-mark"
    assert keys.DRAINING == "ocrgw:draining"
    assert keys.worker_report("w") == "ocrgw:{workers}:w"
    assert key_slot(keys.worker_report("w").encode()) == key_slot(keys.WORKERS.encode())


def test_the_idempotency_record_is_in_its_key_s_bucket_and_a_new_root_with_it_too(spread):
    client_key = "order 42 / ünïcode"
    digest = hashlib.sha256(f"acme:{client_key}".encode()).hexdigest()
    bucket = int(digest[:8], 16) % keys.bucket_count
    assert keys.bucket_of_idempotency("acme", client_key) == bucket
    assert keys.idempotency("acme", client_key) == f"{keys.bucket_prefix(bucket)}idem:{digest}"
    assert keys.idempotency("acme", "a") != keys.idempotency("acme", "b")
    assert keys.idempotency("acme", "a") != keys.idempotency("globex", "a")
    root = new_job_id("acme", bucket, keys.bucket_count)
    assert is_job_id(root) and root.startswith(tenant_tag("acme")) and keys.bucket_of(root) == bucket
    assert key_slot(keys.job(root).encode()) == key_slot(keys.idempotency("acme", client_key).encode())


@pytest.mark.parametrize("count", [1, 3, 24])
def test_bucket_tags_land_near_the_centre_of_equal_ranges_of_slots(count):
    tags = keys.bucket_tags(count)
    assert len(set(tags)) == count
    width = SLOTS / count
    for i, tag in enumerate(tags):
        assert "{" not in tag and "}" not in tag
        slot = key_slot(f"ocrgw:{{{tag}}}:leases".encode())
        assert slot == keys.slot_of(tag)
        # In the i-th range, within a quarter of its width of its centre.
        assert i * width <= slot < (i + 1) * width
        assert abs(slot + 0.5 - (i + 0.5) * width) <= width / 4
    # The same every time (the tags name the keys: they must never change for a count).
    assert keys.bucket_tags.__wrapped__(count) == tags


@pytest.mark.parametrize("primaries", [1, 2, 3, 4, 6, 8, 12])
def test_24_buckets_are_shared_evenly_by_primaries_that_split_the_slots_evenly(primaries):
    # As redis-cli --cluster create splits them: contiguous ranges of about equal size.
    bounds = [round(SLOTS * n / primaries) for n in range(primaries + 1)]
    per_primary = [0] * primaries
    for tag in keys.bucket_tags(24):
        slot = keys.slot_of(tag)
        per_primary[next(n for n in range(primaries) if bounds[n] <= slot < bounds[n + 1])] += 1
    assert per_primary == [24 // primaries] * primaries


def test_a_root_s_bucket_comes_from_its_id_and_new_ids_spread_over_the_buckets(bucket_count):
    keys.use_bucket_count(24)
    assert keys.bucket_of(ROOT) == 0xCDEF % 24
    found = {keys.bucket_of(new_job_id("acme", b, keys.bucket_count)) for b in range(24) for _ in range(5)}
    assert found == set(range(24))
    assert all(keys.bucket_of(new_job_id("acme", 5, keys.bucket_count)) == 5 for _ in range(50))
    assert keys.bucket_of_key(keys.leases(7)) == 7 and keys.bucket_of_key(keys.job(ROOT)) == 0xCDEF % 24
    with pytest.raises(ValueError):
        keys.use_bucket_count(0)
    with pytest.raises(ValueError):
        keys.use_bucket_count(keys.MAX_BUCKETS + 1)


def test_lua_key_helpers_build_the_strings_of_keys_py(r):
    script = lua_preamble() + (
        "\nreturn {job_key_of(ARGV[1], ARGV[2]), child_id_of(ARGV[3], tonumber(ARGV[4])),"
        " payload_key_of(ARGV[1], ARGV[2]), children_key_of(ARGV[1], 'failed'), result_key_of(ARGV[1], ARGV[2])}"
    )
    child = keys.child_id(ROOT, 12)
    replies = r.eval(script, 1, keys.job(ROOT), keys.group_prefix(ROOT), child, ROOT, 12)
    assert [v.decode() for v in replies] == [
        keys.job(child),
        child,
        keys.payload(child),
        keys.children(ROOT, "failed"),
        keys.result(child),
    ]


def test_a_root_status_change_names_the_listing_sets_of_its_kind_and_the_expiring_index():
    assert keys.roots_by_status(ROOT) == {
        "roots_queued": f"{B}roots:0123456789ab:single:queued",
        "roots_processing": f"{B}roots:0123456789ab:single:processing",
        "roots_completed": f"{B}roots:0123456789ab:single:completed",
        "roots_failed": f"{B}roots:0123456789ab:single:failed",
        "roots_cancelled": f"{B}roots:0123456789ab:single:cancelled",
        "expiring": f"{B}expiring",
    }
    assert keys.roots_by_status(keys.child_id(ROOT, 3))["roots_failed"] == f"{B}roots:0123456789ab:parent:failed"


def test_a_tenant_s_keys_carry_its_tag_in_each_bucket():
    tag = tenant_tag("acme")
    assert keys.tenant_in_flight(tag, BUCKET) == f"{B}tenant:{tag}:in_flight"
    assert keys.tenant_waiting(tag, BUCKET) == f"{B}tenant:{tag}:waiting"
    assert keys.tenant_webhooks(tag, BUCKET) == f"{B}tenant:{tag}:webhooks_in_flight"


def test_a_bucket_s_turns_and_later_set_are_spelled_once():
    assert keys.turns(BUCKET) == f"{B}turns"
    assert keys.later(BUCKET) == f"{B}later"
    assert keys.is_turns(keys.turns(BUCKET)) and not keys.is_turns(keys.later(BUCKET))


def test_lua_derives_a_job_s_group_and_tenant_keys_from_its_id_and_its_first_key_s_bucket(r):
    script = lua_preamble() + (
        f"\n{BUCKET_PREFIX_OF_CALL}"
        "\nlocal id = ARGV[1]"
        "\nreturn {root_of(id), group_prefix_of(id), tenant_tag_of(id),"
        " tenant_in_flight_key_of(tenant_tag_of(id)), tenant_waiting_key_of(tenant_tag_of(id)),"
        " roots_key_of(tenant_tag_of(id), 'parent', 'queued'), ready_key_of('echo', 'batch'),"
        " wakeups_key_of('echo', 'batch'), turns_key_of(), later_key_of()}"
    )
    root = new_job_id("acme")
    tag, bucket = tenant_tag("acme"), keys.bucket_of(root)
    for job_id in (root, keys.child_id(root, 0), keys.child_id(root, 123456)):
        replies = [v.decode() for v in r.eval(script, 1, keys.job(job_id), job_id)]
        assert replies == [
            root,
            keys.group_prefix(job_id),
            tag,
            keys.tenant_in_flight(tag, bucket),
            keys.tenant_waiting(tag, bucket),
            keys.roots("parent", "queued", tag, bucket),
            keys.ready(bucket, "echo", "batch"),
            keys.wakeups(bucket, "echo", "batch"),
            keys.turns(bucket),
            keys.later(bucket),
        ]


def test_children_released_by_lua_are_stored_under_the_keys_of_keys_py(kit, r):
    # create and the release inside it build the children's keys in Lua from
    # the group prefix.  A mismatch would leave a stray hash and the child held.
    created = kit.group(3, max_parallel=2)
    parent = created.job_id
    children = kit.child_ids(parent, 3)
    assert created.dispatches == kit.wake_ups(2)
    assert kit.statuses(parent, 3) == ["queued", "queued", "held"]
    bucket, tag = keys.bucket_of(parent), tenant_tag(DEFAULT_TENANT)
    expected = {keys.job(parent), keys.queued(bucket), keys.roots("parent", "queued", tag, bucket)}
    expected |= {keys.ready(bucket, "echo", "batch"), keys.wakeups(bucket, "echo", "batch")}
    expected.add(keys.turns(bucket))  # the lane's clock, the tenant's next turn and weight
    expected |= {keys.children(parent, "held"), keys.children(parent, "queued")}
    expected |= {keys.job(c) for c in children} | {keys.payload(c) for c in children}
    # The release counted them in flight for the parent's tenant, under the key keys.py spells.
    expected.add(keys.tenant_in_flight(tag, bucket))
    assert {k.decode() for k in r.keys("*")} == expected

    # ... and so are those released later by complete, in its own Lua.
    claim = kit.claim(children[0])
    kit.store.complete(claim.job_id, claim.attempt, {"text": "x"})
    assert kit.ready() == [children[1], children[2]]
    assert kit.status(children[2]) == "queued"
    # The payload of a completed job stays (for its searchable PDF); its only lease went with it, so no leases key.
    expected = expected - {keys.children(parent, "held"), keys.roots("parent", "queued", tag, bucket)}
    expected |= {keys.result(children[0]), keys.events(parent), keys.roots("parent", "processing", tag, bucket)}
    expected |= {keys.children(parent, "completed")}
    # The tenant's usage of the day, in the bucket, as keys.py spells it.
    expected.add(keys.usage(tag, bucket, int(kit.job(children[0])["finished_at"]) // 86_400_000_000))
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
