"""Tenants take turns within a lane (ready.lua): a worker's next job is the earliest turn, each tenant's jobs
spread over turns of its own by its weight, whoever queued first; a tenant's own jobs keep their order."""

from __future__ import annotations

from dataclasses import replace

from jobs import controls
from jobs.contract import Priority
from jobs.records import Claim, GroupRules, Owner
from tests.keyspace import keys
from tests.unit.conftest import PINNED_BUCKET

INTERACTIVE = Priority.INTERACTIVE.value
BATCH = Priority.BATCH.value
ALPHA, BETA, GAMMA = "alpha", "beta", "gamma"


def single(kit, tenant: str, lane: str = INTERACTIVE, weight: int = 1) -> str:
    return kit.store.create_single(replace(kit.doc(), priority=lane), owner=Owner(tenant, weight=weight)).job_id


def first_take(kit, lane: str = INTERACTIVE) -> Claim:
    claim, _ = kit.store.claim_next("echo", lane, PINNED_BUCKET)
    assert claim is not None
    return claim


def run_all(kit, claim: Claim | None) -> list[str]:
    """A worker going from job to job (each complete takes the next) until none is ready: the ids it ran."""
    ran = []
    while claim is not None:
        ran.append(claim.job_id)
        claim = kit.store.complete(claim.job_id, claim.attempt, {}, take_next="echo").next_claim
    return ran


def tenants(kit, ran: list[str], ids: dict[str, list[str]]) -> list[str]:
    owner = {job: name for name, jobs in ids.items() for job in jobs}
    return [owner[job] for job in ran]


def test_a_tenant_s_job_queued_behind_another_s_burst_is_taken_next(kit):
    alpha = [single(kit, ALPHA) for _ in range(8)]
    running = first_take(kit)
    assert running.job_id == alpha[0]

    beta = single(kit, BETA)

    # Beta's job comes right after the job running when it came, ahead of alpha's seven others.
    done = kit.store.complete(running.job_id, running.attempt, {}, take_next="echo")
    assert done.next_claim is not None and done.next_claim.job_id == beta
    assert run_all(kit, kit.store.complete(beta, done.next_claim.attempt, {}, take_next="echo").next_claim) == alpha[1:]


def test_backlogged_tenants_alternate_and_each_keeps_its_own_order(kit):
    ids = {ALPHA: [single(kit, ALPHA) for _ in range(4)], BETA: [single(kit, BETA) for _ in range(4)]}

    ran = run_all(kit, first_take(kit))

    assert sorted(ran) == sorted(ids[ALPHA] + ids[BETA])
    order = tenants(kit, ran, ids)
    assert all(order[i] != order[i + 1] for i in range(len(order) - 1)), order
    assert [j for j in ran if j in ids[ALPHA]] == ids[ALPHA]
    assert [j for j in ran if j in ids[BETA]] == ids[BETA]


def test_weights_share_the_turns_in_proportion(kit):
    ids = {ALPHA: [single(kit, ALPHA, weight=2) for _ in range(8)], BETA: [single(kit, BETA) for _ in range(4)]}

    order = tenants(kit, run_all(kit, first_take(kit)), ids)

    # Two of alpha's for each of beta's, in every stretch of three, until both are done.
    for start in range(0, 12, 3):
        assert sorted(order[start : start + 3]) == [ALPHA, ALPHA, BETA], order


def test_three_tenants_take_turns_whatever_order_they_queued_in(kit):
    ids = {name: [single(kit, name) for _ in range(3)] for name in (ALPHA, BETA, GAMMA)}

    order = tenants(kit, run_all(kit, first_take(kit)), ids)

    for start in range(0, 9, 3):
        assert sorted(order[start : start + 3]) == [ALPHA, BETA, GAMMA], order


def test_a_group_s_children_take_their_tenant_s_turns_in_the_batch_lane_too(kit):
    group = kit.store.create_group(kit.docs(6), GroupRules(max_parallel=0), owner=Owner(ALPHA)).job_id
    children = kit.child_ids(group, 6)
    running = first_take(kit, BATCH)
    beta = single(kit, BETA, lane=BATCH)

    ran = run_all(kit, kit.store.complete(running.job_id, running.attempt, {}, take_next="echo").next_claim)

    assert running.job_id == children[0]
    assert ran == [beta, *children[1:]]


def test_a_tenant_back_after_the_others_ran_starts_at_the_lane_s_clock_not_behind_its_past(kit):
    # Alpha ran alone for a while: its turns are far on; nothing of it waits now.
    for _ in range(5):
        single(kit, ALPHA)
    run_all(kit, first_take(kit))
    beta = [single(kit, BETA) for _ in range(3)]
    running = first_take(kit)
    alpha = single(kit, ALPHA)

    ran = run_all(kit, kit.store.complete(running.job_id, running.attempt, {}, take_next="echo").next_claim)

    # Alpha's new job takes the next turn (beta's second), not one after beta's whole backlog, nor before it.
    assert running.job_id == beta[0]
    assert ran.index(alpha) <= 1 and set(ran) == {alpha, *beta[1:]}


def test_batch_gives_way_to_interactive_whatever_the_turns(kit):
    batch = [single(kit, BETA, lane=BATCH) for _ in range(3)]
    interactive = [single(kit, ALPHA) for _ in range(3)]

    ran = run_all(kit, first_take(kit, BATCH))

    assert ran == interactive + batch


def test_a_retry_back_from_its_backoff_takes_its_tenant_s_next_turn(kit, r):
    retried = single(kit, ALPHA)
    kit.store.retry(retried, kit.claim(retried).attempt, 60.0, "engine_unavailable", "try later")
    alpha = [single(kit, ALPHA) for _ in range(2)]
    beta = [single(kit, BETA) for _ in range(2)]
    r.zadd(keys.later(PINNED_BUCKET), {retried: 1})  # its backoff is over

    ran = run_all(kit, first_take(kit))

    assert set(ran) == {retried, *alpha, *beta}
    assert ran.index(retried) > ran.index(alpha[1])  # behind alpha's jobs queued meanwhile, in its own line


def test_the_weight_a_creation_records_is_the_one_later_releases_use(kit, r):
    kit.store.create_single(kit.doc(), owner=Owner(ALPHA, weight=3))
    tag = keys.tag_of(kit.ready()[0])

    assert r.hget(keys.turns(PINNED_BUCKET), f"{keys.TURN_WEIGHT}{tag}") == b"3"
    kit.store.create_single(kit.doc(), owner=Owner(ALPHA))
    assert r.hget(keys.turns(PINNED_BUCKET), f"{keys.TURN_WEIGHT}{tag}") == b"1"


def test_a_tenant_s_backlog_on_one_model_does_not_push_its_work_on_another_back(kit):
    for _ in range(5):
        kit.store.create_single(kit.doc(model="tesseract"), owner=Owner(ALPHA))
    beta = [single(kit, BETA, lane=BATCH) for _ in range(3)]
    running = first_take(kit, BATCH)
    alpha = single(kit, ALPHA, lane=BATCH)

    ran = run_all(kit, kit.store.complete(running.job_id, running.attempt, {}, take_next="echo").next_claim)

    # Alpha's echo job takes the echo lane's next turn, as if its tesseract backlog were not there.
    assert running.job_id == beta[0]
    assert ran.index(alpha) <= 1 and set(ran) == {alpha, *beta[1:]}


def test_jobs_a_tenant_cancelled_before_their_turn_give_their_turns_back(kit):
    cancelled = [single(kit, ALPHA) for _ in range(20)]
    for job in cancelled:
        controls.cancel(kit.store, job)
    beta = [single(kit, BETA) for _ in range(5)]
    alpha = single(kit, ALPHA)

    ran = run_all(kit, first_take(kit))

    # Alpha's new job takes its turn among beta's, not one after each of the twenty it cancelled.
    assert set(ran) == {alpha, *beta}
    assert ran.index(alpha) <= 1, tenants(kit, ran, {ALPHA: [alpha], BETA: beta})


def test_a_cancelled_group_s_queued_children_give_their_turns_back(kit):
    group = kit.store.create_group(kit.docs(20), GroupRules(max_parallel=0, priority=INTERACTIVE), owner=Owner(ALPHA))
    controls.cancel(kit.store, group.job_id)
    beta = [single(kit, BETA) for _ in range(5)]
    alpha = single(kit, ALPHA)

    ran = run_all(kit, first_take(kit))

    assert set(ran) == {alpha, *beta}
    assert ran.index(alpha) <= 1, tenants(kit, ran, {ALPHA: [alpha], BETA: beta})


def test_a_tenant_s_jobs_keep_their_order_when_one_between_them_is_cancelled(kit):
    alpha = [single(kit, ALPHA) for _ in range(3)]
    controls.cancel(kit.store, alpha[1])
    alpha.append(single(kit, ALPHA))

    assert run_all(kit, first_take(kit)) == [alpha[0], alpha[2], alpha[3]]


def test_jobs_claimed_by_their_own_messages_move_the_lane_s_clock(kit):
    # Alpha's jobs ran from their own messages (republished), never taken from the index.
    for job in [single(kit, ALPHA) for _ in range(5)]:
        claim = kit.claim(job)
        kit.store.complete(job, claim.attempt, {})
    beta = [single(kit, BETA) for _ in range(3)]
    running = first_take(kit)
    alpha = single(kit, ALPHA)

    ran = run_all(kit, kit.store.complete(running.job_id, running.attempt, {}, take_next="echo").next_claim)

    # Alpha's turns were used as its jobs ran: its new one is behind one of beta's at most, not all of them.
    assert running.job_id == beta[0]
    assert ran.index(alpha) <= 1 and set(ran) == {alpha, *beta[1:]}
