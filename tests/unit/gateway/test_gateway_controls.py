"""The controls over HTTP: DELETE (cancel), PATCH (a group's cap), POST .../retry (redrive), and a
group's failure tolerance at submission; every answer checked against the OpenAPI document."""

from jobs.records import Dispatch
from jobs.transitions.spec import PULL
from tests.unit.conftest import PINNED_BUCKET

from .support import assert_problem, echo_job, fanout


def submit(client, body) -> str:
    response = client.post("/jobs", json=body)
    assert response.status_code == 202, response.get_data(as_text=True)
    return response.get_json()["id"]


def run(store, job_id: str, ok: bool = True) -> None:
    claim = store.claim(job_id)
    assert claim is not None
    if ok:
        store.complete(job_id, claim.attempt, {"text": job_id, "pages": []})
    else:
        store.fail(job_id, claim.attempt, "echo_failed", "asked to")


# -- cancel ------------------------------------------------------------------------------------------


def test_cancelling_a_queued_job_answers_200_with_it_cancelled(client):
    job_id = submit(client, echo_job())
    response = client.delete(f"/jobs/{job_id}")
    assert response.status_code == 200
    view = response.get_json()
    assert (view["status"], view["error"], view["error_code"]) == ("cancelled", "cancelled by a client", None)


def test_cancelling_a_running_job_answers_202_and_asks_it_to_stop(client, store):
    job_id = submit(client, echo_job())
    store.claim(job_id)
    response = client.delete(f"/jobs/{job_id}")
    assert response.status_code == 202
    assert (response.get_json()["status"], response.get_json()["cancel_requested"]) == ("processing", True)


def test_cancelling_a_finished_or_unknown_job_is_refused(client, store):
    job_id = submit(client, echo_job())
    run(store, job_id)
    assert assert_problem(client.delete(f"/jobs/{job_id}"), 409, "job_finished")["job_status"] == "completed"
    assert_problem(client.delete(f"/jobs/{'a' * 32}"), 404, "job_not_found")
    assert_problem(client.delete("/jobs/not-an-id"), 404, "job_not_found")


def test_a_repeated_cancel_answers_409_with_the_status_its_first_call_left(client):
    job_id = submit(client, echo_job())
    assert client.delete(f"/jobs/{job_id}").status_code == 200
    # A client whose first answer was lost tells from job_status that the cancel went through.
    assert assert_problem(client.delete(f"/jobs/{job_id}"), 409, "job_finished")["job_status"] == "cancelled"


def test_cancelling_a_group_cancels_what_has_not_started(client, store, published):
    parent = submit(client, fanout(*[echo_job(f"c{i}") for i in range(4)], max_parallel=2))
    store.claim(f"{parent}-0")
    response = client.delete(f"/jobs/{parent}")
    assert response.status_code == 202  # child 0 still runs
    statuses = [c["status"] for c in response.get_json()["children"]]
    assert statuses == ["processing", "cancelled", "cancelled", "cancelled"]


def test_cancelling_a_queued_child_queues_the_child_it_frees_a_slot_for(client, store, published):
    parent = submit(client, fanout(*[echo_job(f"c{i}") for i in range(3)], max_parallel=1))
    assert published == [[Dispatch("", "echo", PULL, "batch", PINNED_BUCKET)]]
    published.clear()
    assert client.delete(f"/jobs/{parent}-0").status_code == 200
    # The wake-up of the creation, not yet taken by a worker, counts for the child now queued: nothing more.
    assert [d for batch in published for d in batch] == []
    assert store.queries.get(f"{parent}-1")["status"] == "queued"


# -- the cap -----------------------------------------------------------------------------------------


def test_raising_a_groups_cap_publishes_the_children_it_releases(client, published):
    parent = submit(client, fanout(*[echo_job(f"c{i}") for i in range(4)], max_parallel=1))
    published.clear()
    response = client.patch(f"/jobs/{parent}", json={"max_parallel": 3})
    assert response.status_code == 200
    assert response.get_json()["max_parallel"] == 3
    assert published == [
        [Dispatch("", "echo", PULL, "batch", PINNED_BUCKET), Dispatch("", "echo", PULL, "batch", PINNED_BUCKET)]
    ]


def test_a_cap_change_is_refused_for_a_single_job_a_finished_group_or_a_bad_body(client, store):
    single = submit(client, echo_job())
    assert_problem(client.patch(f"/jobs/{single}", json={"max_parallel": 2}), 409, "not_a_group")
    parent = submit(client, fanout(echo_job(), max_parallel=1))
    assert_problem(client.patch(f"/jobs/{parent}", json={"max_parallel": "2"}), 422, "invalid_field")
    assert_problem(client.patch(f"/jobs/{parent}", json={"max_parallel": 2, "x": 1}), 422, "invalid_field")
    assert_problem(client.patch(f"/jobs/{parent}", json={}), 422, "invalid_field")
    for huge in (2**63, -(2**63), 10**30):
        assert_problem(client.patch(f"/jobs/{parent}", json={"max_parallel": huge}), 422, "invalid_field")
    bad_json = client.patch(
        f"/jobs/{parent}", data=b'{"max_parallel": 1, "max_parallel": 2}', content_type="application/json"
    )
    assert_problem(bad_json, 400, "malformed_json")
    run(store, f"{parent}-0")
    assert_problem(client.patch(f"/jobs/{parent}", json={"max_parallel": 2}), 409, "job_finished")


# -- redrive ------------------------------------------------------------------------------------------


def test_retrying_a_failed_group_runs_its_failed_children_again(client, store, published):
    parent = submit(client, fanout(echo_job("a"), echo_job("b"), max_parallel=2))
    run(store, f"{parent}-0", ok=False)
    run(store, f"{parent}-1")
    published.clear()

    response = client.post(f"/jobs/{parent}/retry", headers={"Idempotency-Key": "again-1"})

    assert response.status_code == 202
    view = response.get_json()
    assert (view["status"], view["redrives"], view["error_code"]) == ("processing", 1, None)
    # The wake-ups of the creation were never taken here (the children ran by id): they still count.
    assert [d for batch in published for d in batch] == []
    assert store.queries.get(f"{parent}-0")["status"] == "queued"
    replay = client.post(f"/jobs/{parent}/retry", headers={"Idempotency-Key": "again-1"})
    assert replay.status_code == 202 and replay.headers["Idempotent-Replayed"] == "true"
    assert [d for batch in published for d in batch] == []
    reused = client.post(
        f"/jobs/{parent}/retry", json={"include_cancelled": True}, headers={"Idempotency-Key": "again-1"}
    )
    assert_problem(reused, 422, "idempotency_key_reused")


def test_a_retry_is_refused_while_the_group_runs_or_when_nothing_failed(client, store):
    parent = submit(client, fanout(echo_job(), max_parallel=1))
    assert_problem(client.post(f"/jobs/{parent}/retry"), 409, "group_not_finished")
    run(store, f"{parent}-0")
    assert_problem(client.post(f"/jobs/{parent}/retry"), 409, "nothing_to_retry")
    assert_problem(client.post(f"/jobs/{parent}/retry", json={"include_cancelled": 1}), 422, "invalid_field")
    single = submit(client, echo_job())
    assert_problem(client.post(f"/jobs/{single}/retry"), 409, "not_a_group")


# -- tolerance -----------------------------------------------------------------------------------------


def test_a_group_tolerates_what_it_was_told_to(client, store):
    body = fanout(*[echo_job(f"c{i}") for i in range(4)], max_parallel=4)
    body["fanout"]["tolerated_failure_percentage"] = 50
    parent = submit(client, body)
    assert client.get(f"/jobs/{parent}").get_json()["tolerated_failures"] == 2
    for i in range(4):
        run(store, f"{parent}-{i}", ok=i >= 2)
    view = client.get(f"/jobs/{parent}").get_json()
    assert (view["status"], view["counts"]["failed"]) == ("completed", 2)


def test_tolerance_fields_are_checked(client, keyspace):
    before = keyspace()
    for fields in (
        {"tolerated_failures": -1},
        {"tolerated_failure_percentage": 101},
        {"fail_fast": "yes"},
        {"tolerated_failures": 1, "tolerated_failure_percentage": 10},
        {"tolerated_failures": 2**63},
        {"max_parallel": 2**63},
        {"max_parallel": -(2**63)},
    ):
        body = fanout(echo_job(), max_parallel=1)
        body["fanout"].update(fields)
        assert_problem(client.post("/jobs", json=body), 422, "invalid_field")
    assert keyspace() == before
