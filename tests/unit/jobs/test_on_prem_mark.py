"""create stores each job's on_prem mark, which the worker reads before a cloud model runs."""

from jobs.contract import Field
from jobs.records import GroupRules, NewJob


def test_a_single_job_keeps_its_mark(kit):
    marked = kit.store.create_single(NewJob("echo", "text/plain", b"secret", on_prem=True)).job_id
    unmarked = kit.store.create_single(NewJob("echo", "text/plain", b"public")).job_id

    assert kit.job(marked)[Field.ON_PREM.value] == "1"
    assert kit.job(unmarked)[Field.ON_PREM.value] == "0"


def test_each_child_keeps_its_own_mark(kit):
    children = [NewJob("echo", "text/plain", f"child {i}".encode(), on_prem=i == 1) for i in range(3)]
    parent = kit.store.create_group(children, GroupRules(1)).job_id

    assert [kit.job(child)[Field.ON_PREM.value] for child in kit.child_ids(parent, 3)] == ["0", "1", "0"]
