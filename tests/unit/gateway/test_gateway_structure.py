"""GET /jobs/{id}/result.md, GET /jobs/{id}/tables/{n}.csv, and the tables of GET /jobs/{id}/result."""

from __future__ import annotations

import csv
import io

import pytest

from documents.markdown import render_markdown
from jobs.config import Settings
from tests.pdfs import text_pdf
from tests.unit.documents.structured_pages import SPANNING, plain_page, structured_page

from .support import assert_problem, echo_job, fanout
from .test_gateway_result_formats import ok, result_of, run


@pytest.fixture
def settings() -> Settings:
    return Settings(max_children=4, max_pages=20, max_body_bytes=1 << 20)


def json_of(response) -> dict:
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def rows(response) -> list[list[str]]:
    return list(csv.reader(io.StringIO(response.get_data(as_text=True))))


def submitted(client) -> str:
    return client.post("/jobs", json=echo_job("x")).get_json()["id"]


# -- result.md ---------------------------------------------------------------------------------------------------


def test_a_jobs_markdown_is_its_pages_rendered(client, store):
    job_id = submitted(client)
    pages = [structured_page(1), plain_page(2, "A plain line")]
    run(store, job_id, result_of(*pages))

    response = ok(client.get(f"/jobs/{job_id}/result.md"), "text/markdown")

    assert response.get_data(as_text=True) == render_markdown(pages)
    assert response.headers["Content-Disposition"] == f'inline; filename="{job_id}.md"'
    text = response.get_data(as_text=True)
    assert "# Harbour Traffic" in text and "| Quarter | Ships |" in text and "Page 7" not in text


def test_a_split_parents_markdown_holds_its_childrens_pages_in_document_order(client, store):
    data = text_pdf("one", "two", "three", "four", "five")
    parent_id = client.post("/jobs?split_pages=2", data=data, content_type="application/pdf").get_json()["id"]
    run(store, f"{parent_id}-2", result_of(plain_page(5, "five")))
    run(store, f"{parent_id}-0", result_of(structured_page(1), plain_page(2, "two")))
    run(store, f"{parent_id}-1", "engine_timeout")

    group = ok(client.get(f"/jobs/{parent_id}/result.md"), "text/markdown").get_data(as_text=True)
    child = ok(client.get(f"/jobs/{parent_id}-2/result.md"), "text/markdown").get_data(as_text=True)

    assert [line for line in group.splitlines() if line.startswith("<!-- page")] == [
        "<!-- page 1 -->", "<!-- page 2 -->", "<!-- page 5 -->"]  # fmt: skip
    assert group.index("# Harbour Traffic") < group.index("two") < group.index("five")
    assert child == "<!-- page 5 -->\n\nfive\n"


def test_markdown_answers_the_problems_of_the_other_documents(client, store):
    running = submitted(client)
    failed = submitted(client)
    run(store, failed, "invalid_document")

    assert_problem(client.get(f"/jobs/{running}/result.md"), 409, "result_not_ready")
    assert_problem(client.get(f"/jobs/{failed}/result.md"), 409, "no_result")
    assert_problem(client.get(f"/jobs/{'0' * 32}/result.md"), 404, "job_not_found")


# -- tables ------------------------------------------------------------------------------------------------------


def test_a_table_is_served_as_csv_by_its_number_in_the_document(client, store):
    job_id = submitted(client)
    run(store, job_id, result_of(structured_page(1), plain_page(2, "no table"), structured_page(3, table=SPANNING)))

    first = ok(client.get(f"/jobs/{job_id}/tables/1.csv"), "text/csv")
    second = ok(client.get(f"/jobs/{job_id}/tables/2.csv"), "text/csv")

    assert rows(first) == [["Quarter", "Ships"], ["Q1 | first", "120"]]
    assert rows(second) == [["Ships per quarter", ""], ["Q1", "120"]]
    assert first.headers["Content-Disposition"] == f'inline; filename="{job_id}-table-1.csv"'


def test_a_table_the_result_does_not_have_is_404(client, store):
    job_id = submitted(client)
    plain = submitted(client)
    run(store, job_id, result_of(structured_page(1)))
    run(store, plain, result_of(plain_page(1, "read without layout")))

    beyond = assert_problem(client.get(f"/jobs/{job_id}/tables/2.csv"), 404, "table_not_found")
    zero = assert_problem(client.get(f"/jobs/{job_id}/tables/0.csv"), 404, "table_not_found")
    none = assert_problem(client.get(f"/jobs/{plain}/tables/1.csv"), 404, "table_not_found")

    assert beyond["tables"] == zero["tables"] == 1 and none["tables"] == 0


def test_a_groups_tables_are_numbered_over_its_childrens_pages(client, store):
    parent_id = client.post("/jobs", json=fanout(echo_job("a"), echo_job("b"))).get_json()["id"]
    run(store, f"{parent_id}-1", result_of(structured_page(1, table=SPANNING)))
    run(store, f"{parent_id}-0", result_of(structured_page(1)))

    result = json_of(client.get(f"/jobs/{parent_id}/result"))
    second = ok(client.get(f"/jobs/{parent_id}/tables/2.csv"), "text/csv")
    childs_own = ok(client.get(f"/jobs/{parent_id}-1/tables/1.csv"), "text/csv")

    assert [(t["number"], t["page"], t["caption"]) for t in result["tables"]] == [
        (1, 1, "Table 1: Ships per quarter"), (2, 2, "Table 1: Ships per quarter")]  # fmt: skip
    assert rows(second) == rows(childs_own) == [["Ships per quarter", ""], ["Q1", "120"]]


def test_a_tables_csv_answers_the_problems_of_the_other_documents(client, store):
    running = submitted(client)
    parent_id = client.post("/jobs", json=fanout(echo_job("a"))).get_json()["id"]
    run(store, f"{parent_id}-0", "engine_timeout")

    assert_problem(client.get(f"/jobs/{running}/tables/1.csv"), 409, "result_not_ready")
    assert_problem(client.get(f"/jobs/{parent_id}/tables/1.csv"), 409, "no_result")
    assert_problem(client.get(f"/jobs/{'0' * 32}/tables/1.csv"), 404, "job_not_found")


# -- the JSON result ---------------------------------------------------------------------------------------------


def test_a_result_with_layout_lists_its_tables_and_keeps_its_blocks(client, store):
    job_id = submitted(client)
    page = structured_page(4)
    run(store, job_id, result_of(page))

    result = json_of(client.get(f"/jobs/{job_id}/result"))

    assert result["tables"] == [{"number": 1, "page": 4, "block": 7, "rows": 2, "cols": 2,
                                 "caption": "Table 1: Ships per quarter"}]  # fmt: skip
    assert result["pages"][0]["blocks"] == page["blocks"]


def test_a_result_without_layout_has_no_tables_member(client, store):
    job_id = submitted(client)
    run(store, job_id, result_of(plain_page(1, "plain")))

    assert "tables" not in client.get(f"/jobs/{job_id}/result").get_json()


def test_a_page_whose_layout_failed_is_documented_and_gives_its_lines(client, store):
    job_id = submitted(client)
    page = {**plain_page(1, "kept line"), "layout_error": "the layout model failed: bad file"}
    run(store, job_id, result_of(page, structured_page(2)))

    result = json_of(client.get(f"/jobs/{job_id}/result"))
    markdown = ok(client.get(f"/jobs/{job_id}/result.md"), "text/markdown").get_data(as_text=True)

    assert result["pages"][0]["layout_error"] == "the layout model failed: bad file"
    assert markdown.startswith("<!-- page 1 -->\n\nkept line\n\n<!-- page 2 -->")


def test_a_group_laid_out_with_no_table_lists_none(client, store):
    parent_id = client.post("/jobs", json=fanout(echo_job("a"))).get_json()["id"]
    blank = {**plain_page(1), "blocks": []}  # laid out, and nothing on it
    run(store, f"{parent_id}-0", result_of(blank))

    assert json_of(client.get(f"/jobs/{parent_id}/result"))["tables"] == []
