"""A split's document is stored once, as its parent's payload; its children name their pages of it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from jobs.records import GroupRules, NewJob
from tests.keyspace import keys

SOURCE = b"%PDF- the whole document, stored once"


def split_children(n: int, pages_each: int = 2) -> list[NewJob]:
    return [
        NewJob(
            "echo",
            "application/pdf",
            b"",
            doc_hash="whole",
            pages=pages_each,
            source_pages=(i * pages_each + 1, (i + 1) * pages_each),
        )  # fmt: skip
        for i in range(n)
    ]


def test_the_source_is_the_parents_payload_and_the_children_store_none(kit):
    created = kit.store.create_group(split_children(3), GroupRules(0), source=SOURCE)

    children = kit.child_ids(created.job_id, 3)
    assert kit.r.get(keys.payload(created.job_id)) == SOURCE
    assert [kit.r.exists(keys.payload(c)) for c in children] == [0, 0, 0]
    assert kit.fields(children, "source_pages") == [b"1-2", b"3-4", b"5-6"]
    assert kit.store.queries.source_document(children[1]) == SOURCE


def test_a_group_of_its_own_documents_stores_no_source_and_no_source_pages(kit):
    created = kit.group(2, 0)

    assert not kit.r.exists(keys.payload(created.job_id))
    assert kit.fields(kit.child_ids(created.job_id, 2), "source_pages") == [None, None]


def test_a_claim_answers_the_childs_pages_and_no_payload(kit):
    created = kit.store.create_group(split_children(2), GroupRules(0), source=SOURCE)

    claim = kit.claim(kit.child_ids(created.job_id, 2)[1])

    assert claim.source_pages == (3, 4) and claim.payload is None
    assert claim.source_id == created.job_id


def test_a_kept_slot_claims_the_next_child_with_its_pages_and_no_payload(kit):
    created = kit.store.create_group(split_children(2), GroupRules(1), source=SOURCE)
    first, second = kit.child_ids(created.job_id, 2)
    claim = kit.claim(first)

    completion = kit.store.complete(first, claim.attempt, {"text": "", "pages": []}, take_next="echo")

    assert completion.next_claim is not None and completion.next_claim.job_id == second
    assert completion.next_claim.source_pages == (3, 4) and completion.next_claim.payload is None


def test_a_single_job_has_no_pages_of_a_source(kit):
    assert kit.store.create_single(kit.doc()).job_id
    assert kit.claim(kit.single().job_id).source_pages is None
    with pytest.raises(ValueError):
        kit.store.create_single(split_children(1)[0])


@pytest.mark.parametrize("source", [None, SOURCE])
def test_a_source_goes_with_children_that_name_pages_of_it_and_only_then(kit, source):
    children = kit.docs(2) if source is not None else split_children(2)
    with pytest.raises(ValueError):
        kit.store.create_group(children, GroupRules(0), source=source)


def test_expiry_deletes_the_source_with_the_group(kit):
    created = kit.store.create_group(split_children(1), GroupRules(0), source=SOURCE)
    child = kit.child_ids(created.job_id, 1)[0]
    kit.store.complete(child, kit.claim(child).attempt, {"text": "", "pages": []})
    kit.store.settings = replace(kit.store.settings, result_ttl=0)

    assert kit.store.expire([created.job_id]) == 1

    left = [k for k in kit.r.keys(f"{keys.group_prefix(created.job_id)}*") if not keys.is_call_record(k.decode())]
    assert left == []
