"""/openapi.json, Swagger UI at /docs, and GET /models."""

from __future__ import annotations

import re

import pytest
from openapi_spec_validator import validate
from schemathesis.core.failures import FailureGroup

from coordinator import delivery
from gateway.openapi import PROBLEM_CODES_EXTENSION
from gateway.problems import CATALOGUE, OUTSIDE_API_CODES, PLAIN_HTTP_CODES
from gateway.schemas import RawQuerySchema
from jobs.contract import JOB_ERROR_CODES, WebhookErrorCode
from jobs.registry import MODELS

from .documented import Document

METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE"}


@pytest.fixture
def spec(client) -> dict:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    return response.get_json()


def problem_codes(operation: dict) -> dict[str, set[str]]:
    """status -> the problem codes an operation documents for it."""
    out = {}
    for status, response in operation["responses"].items():
        schema = response.get("content", {}).get("application/problem+json", {}).get("schema")
        if schema is not None:
            assert schema == {"$ref": "#/components/schemas/Problem"}  # one problem schema for every status
            out[status] = set(response[PROBLEM_CODES_EXTENSION])
    return out


def operations(spec: dict):
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method.upper() in METHODS:
                yield path, method.upper(), operation


def test_every_route_of_the_api_is_documented(app, spec):
    documented = {(path, method) for path, method, _ in operations(spec)}
    routes = {
        (re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule), method)
        for rule in app.url_map.iter_rules()
        if rule.endpoint.startswith("api.")
        for method in rule.methods & METHODS
    }

    assert routes == documented
    assert {path for path, _ in routes} == {
        "/jobs",
        "/jobs/{job_id}",
        "/jobs/{job_id}/children",
        "/jobs/{job_id}/result",
        "/jobs/{job_id}/result.pdf",
        "/jobs/{job_id}/result.hocr",
        "/jobs/{job_id}/result.alto",
        "/jobs/{job_id}/result.md",
        "/jobs/{job_id}/tables/{number}.csv",
        "/jobs/{job_id}/events",
        "/jobs/{job_id}/retry",
        "/usage",
        "/models",
        "/healthz",
        "/readyz",
    }


def test_every_problem_code_is_documented_with_its_status(spec):
    seen = set()
    for path, method, operation in operations(spec):
        for status, codes in problem_codes(operation).items():
            for code in codes:
                assert CATALOGUE[code][0] == int(status), f"{method} {path}: {code} under {status}"
                assert f"`{code}`" in operation["responses"][status]["description"]
            seen |= codes
        assert "500" in operation["responses"], f"{method} {path} does not document internal_error"

    assert seen == set(CATALOGUE) - OUTSIDE_API_CODES
    shared = spec["components"]["schemas"]["Problem"]
    assert shared["properties"]["code"] == {"allOf": [{"$ref": "#/components/schemas/ProblemCode"}]}
    problem_code = spec["components"]["schemas"]["ProblemCode"]
    assert problem_code["enum"] == sorted((set(CATALOGUE) - OUTSIDE_API_CODES) | set(PLAIN_HTTP_CODES))
    assert set(shared["required"]) == {"type", "title", "status", "detail", "code"}


def test_each_operation_documents_the_problems_it_answers(spec):
    def codes(path, method):
        return problem_codes(spec["paths"][path][method])

    assert codes("/jobs", "post") == {
        "400": {"malformed_json", "invalid_base64", "invalid_idempotency_key", "host_not_allowed"},
        "401": {"missing_api_key", "invalid_api_key"},
        "403": {"on_prem_required", "interactive_not_allowed", "cross_site_request"},
        "413": {"payload_too_large", "inspection_budget_exceeded"},
        "414": {"uri_too_long"},
        "415": {
            "missing_content_type",
            "unsupported_content_type",
            "content_type_mismatch",
            "json_content_type_required",
        },
        "422": {
            "invalid_field",
            "unknown_model",
            "empty_document",
            "invalid_document",
            "encrypted_document",
            "too_many_pages",
            "too_many_pixels",
            "no_children",
            "too_many_children",
            "idempotency_key_reused",
            "invalid_callback_url",
            "unsupported_language",
            "invalid_options",
        },
        "429": {"interactive_limit_reached"},
        "431": {"request_header_fields_too_large"},
        "500": {"internal_error"},
        "503": {"draining", "store_unavailable"},
    }
    assert codes("/jobs/{job_id}/result", "get")["409"] == {"result_not_ready", "no_result"}
    assert codes("/jobs/{job_id}/result.pdf", "get")["409"] == {"result_not_ready", "no_result", "pdf_unavailable"}
    assert codes("/jobs/{job_id}/result.hocr", "get")["409"] == {"result_not_ready", "no_result"}
    assert codes("/jobs/{job_id}/result.alto", "get")["409"] == {"result_not_ready", "no_result"}
    assert codes("/jobs/{job_id}", "get")["404"] == {"job_not_found"}
    assert codes("/jobs", "get")["422"] == {"invalid_field"}
    assert codes("/jobs/{job_id}", "patch")["413"] == {"payload_too_large"}
    assert codes("/jobs/{job_id}/retry", "post")["413"] == {"payload_too_large"}
    # A JSON body under another type (which a page of any site may send) is refused.
    for path, method in (("/jobs/{job_id}", "patch"), ("/jobs/{job_id}/retry", "post")):
        assert codes(path, method)["415"] == {"json_content_type_required"}, f"{method} {path}"
    # An on_prem_only key starts no cloud model through a control either.
    for path, method in (("/jobs/{job_id}", "patch"), ("/jobs/{job_id}", "delete"), ("/jobs/{job_id}/retry", "post")):
        assert codes(path, method)["403"] == {"on_prem_required", "cross_site_request"}, f"{method} {path}"


def test_every_operation_but_the_probes_documents_the_host_check(spec):
    for path, method, operation in operations(spec):
        codes = problem_codes(operation)
        checked = "host_not_allowed" in codes.get("400", set())
        assert checked == (path not in ("/healthz", "/readyz")), f"{method} {path}"


def test_every_operation_that_changes_something_documents_the_origin_check(spec):
    for path, method, operation in operations(spec):
        checked = "cross_site_request" in problem_codes(operation).get("403", set())
        assert checked == (method in ("POST", "PUT", "PATCH", "DELETE")), f"{method} {path}"


def test_every_operation_documents_the_request_line_and_headers_gunicorn_refuses(spec):
    # Answered by the gateway's gunicorn worker before any route runs, on any path.
    for path, method, operation in operations(spec):
        codes = problem_codes(operation)
        assert codes["414"] == {"uri_too_long"}, f"{method} {path}"
        assert codes["431"] == {"request_header_fields_too_large"}, f"{method} {path}"
    assert "bad_request" in spec["components"]["schemas"]["ProblemCode"]["enum"]


def test_submission_documents_json_and_every_raw_type_with_its_query(spec):
    post = spec["paths"]["/jobs"]["post"]

    content = post["requestBody"]["content"]
    raw_types = {t for m in MODELS.values() for t in m.content_types}
    assert set(content) == {"application/json"} | raw_types
    assert content["application/json"]["schema"] == {
        "oneOf": [{"$ref": "#/components/schemas/Job"}, {"$ref": "#/components/schemas/Group"}],
    }
    assert all(content[t]["schema"] == {"type": "string", "format": "binary"} for t in raw_types)
    params = {(p["in"], p["name"]) for p in post["parameters"]}
    assert params == {("query", name) for name in RawQuerySchema().fields} | {("header", "Idempotency-Key")}
    job = spec["components"]["schemas"]["Job"]
    assert job["properties"]["payload"]["format"] == "byte"
    assert job["properties"]["model"]["enum"] == sorted(MODELS)
    assert job["additionalProperties"] is False


def test_hocr_is_documented_as_html_and_alto_as_xml(spec):
    def ok(path):
        return spec["paths"][path]["get"]["responses"]["200"]["content"]

    assert ok("/jobs/{job_id}/result.hocr") == {"application/xhtml+xml": {"schema": {"type": "string"}}}
    assert ok("/jobs/{job_id}/result.alto") == {"application/xml": {"schema": {"type": "string"}}}


def test_the_searchable_pdf_is_documented_as_a_pdf_and_a_split_as_a_query_and_job_field(spec):
    ok = spec["paths"]["/jobs/{job_id}/result.pdf"]["get"]["responses"]["200"]["content"]

    assert ok == {"application/pdf": {"schema": {"type": "string", "format": "binary"}}}
    building = spec["paths"]["/jobs/{job_id}/result.pdf"]["get"]["responses"]["202"]
    assert "Retry-After" in building["headers"]
    assert building["content"]["application/json"]["schema"]["properties"]["status"]["enum"] == ["building"]
    query = {p["name"]: p for p in spec["paths"]["/jobs"]["post"]["parameters"] if p["in"] == "query"}
    assert query["split_pages"]["schema"]["minimum"] == 1 and "max_parallel" in query
    job = spec["components"]["schemas"]["Job"]["properties"]
    assert job["split_pages"]["minimum"] == 1 and "max_parallel" in job
    page = spec["components"]["schemas"]["Result"]["properties"]["pages"]["items"]
    assert "source" in spec["components"]["schemas"][page["$ref"].rsplit("/", 1)[1]]["properties"]


def test_the_views_are_documented_as_one_of_single_or_parent(spec):
    ok = spec["paths"]["/jobs/{job_id}"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]

    assert ok == {
        "oneOf": [{"$ref": "#/components/schemas/SingleJobView"}, {"$ref": "#/components/schemas/ParentView"}]
    }
    parent = spec["components"]["schemas"]["ParentView"]["properties"]
    assert "result" not in parent and "result_url" in parent


def test_swagger_ui_is_served_with_every_asset_from_this_server(client):
    page = client.get("/docs")

    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assert not re.search(r"https?://", html)  # nothing from the internet
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert {a.rsplit("/", 1)[1] for a in assets} == {
        "swagger-ui.css",
        "swagger-ui-standalone-preset.js",
        "swagger-ui-bundle.js",
    }
    for asset in assets:
        with client.get(asset) as response:  # a file response: closed, not left to the collector
            assert response.status_code == 200, asset
            assert len(response.get_data()) > 1000
    assert '"/openapi.json"' in html


def test_models_show_the_registry(client):
    models = client.get("/models").get_json()["models"]

    assert [m["name"] for m in models] == sorted(MODELS)
    for shown in models:
        model = MODELS[shown["name"]]
        assert shown["engine"] == model.engine
        assert shown["location"] == model.location.value
        assert shown["content_types"] == sorted(model.content_types)
    by_name = {m["name"]: m for m in models}
    echo = by_name["echo"]["options"]
    assert echo["properties"]["delay_ms"] == {
        "type": "number",
        "minimum": 0,
        "description": "Sleep this long per page (a form feed separates pages).",
    }
    assert echo["additionalProperties"] is True
    tesseract = by_name["tesseract"]["options"]
    assert tesseract["properties"]["psm"]["maximum"] == 13
    assert tesseract["additionalProperties"] is False
    for engine in ("tesseract", "paddleocr"):
        options = by_name[engine]["options"]["properties"]
        assert options["rotate_pages"]["type"] == options["deskew"]["type"] == "boolean"
        assert options["rotate_pages_threshold"]["type"] == "number"
        assert "14.0" in options["rotate_pages_threshold"]["description"]
        assert options["orientation"]["enum"] == ["auto", "osd"]


def test_a_result_page_documents_its_geometry_and_each_line_its_words(spec):
    schemas = spec["components"]["schemas"]
    page_ref = schemas["Result"]["properties"]["pages"]["items"]["$ref"]
    page = schemas[page_ref.rsplit("/", 1)[1]]["properties"]
    assert page["rotation"]["enum"] == [0, 90, 180, 270] and page["skew"]["type"] == "number"
    assert page["orientation_by"]["enum"] == ["classifier", "osd", None] and page["orientation_by"]["nullable"] is True
    line = schemas[page["lines"]["items"]["$ref"].rsplit("/", 1)[1]]["properties"]
    word = schemas[line["words"]["items"]["$ref"].rsplit("/", 1)[1]]["properties"]
    assert set(word) == {"text", "confidence", "bbox"}


def test_a_document_that_breaks_its_schema_fails_the_check(app):
    document = Document(app)

    document.check_document("GET", "/healthz", 200, b'{"status": "ok"}')
    with pytest.raises(FailureGroup) as refused:
        document.check_document("GET", "/healthz", 200, b'{"state": "ok"}')
    assert {type(failure).__name__ for failure in refused.value.exceptions} == {"JsonSchemaError"}


def test_every_job_error_code_field_refers_to_the_catalogue(spec):
    """A client learns every code a job can end with from /openapi.json, from one enum and nothing else."""
    schemas = spec["components"]["schemas"]
    found = {
        (name, field): prop
        for name, schema in schemas.items()
        for field, prop in schema.get("properties", {}).items()
        if field in ("error_code", "last_error_code") and name != "Event"  # an event's may be a webhook's
    }

    assert {name for name, _ in found} == {
        "JobSummary",
        "SingleJobView",
        "ChildSummary",
        "ParentView",
        "MergedChild",
        "Problem",
    }
    for prop in found.values():
        assert prop["allOf"] == [{"$ref": "#/components/schemas/ErrorCode"}] and prop["nullable"] is True
    catalogue = schemas["ErrorCode"]
    assert catalogue["enum"] == list(JOB_ERROR_CODES)
    assert all(f"`{code}`" in catalogue["description"] for code in JOB_ERROR_CODES)
    # An event's is its job's, or its webhook attempt's.
    assert schemas["Event"]["properties"]["error_code"]["anyOf"] == [
        {"$ref": "#/components/schemas/ErrorCode"},
        {"$ref": "#/components/schemas/WebhookErrorCode"},
    ]
    assert schemas["WebhookErrorCode"]["enum"] == [code.value for code in WebhookErrorCode]


TAG_NAMES = {"jobs", "groups", "results", "usage", "models", "health"}


def test_every_operation_has_a_unique_operation_id_and_one_known_tag(spec):
    ids = [operation.get("operationId") for _, _, operation in operations(spec)]

    assert all(ids) and len(set(ids)) == len(ids), ids
    for path, method, operation in operations(spec):
        assert len(operation["tags"]) == 1 and operation["tags"][0] in TAG_NAMES, f"{method} {path}"
    assert [tag["name"] for tag in spec["tags"]] == ["jobs", "groups", "results", "usage", "models", "health"]
    assert all(tag["description"] for tag in spec["tags"])
    by_route = {(method, path): operation["operationId"] for path, method, operation in operations(spec)}
    assert by_route[("POST", "/jobs")] == "createJob"
    assert by_route[("GET", "/jobs/{job_id}")] == "getJob"
    assert by_route[("GET", "/healthz")] == "getHealth"


def test_the_document_is_valid_openapi(spec):
    validate(spec)


def test_the_webhook_is_a_callback_of_the_submission_wherever_its_url_is_given(spec):
    callbacks = spec["paths"]["/jobs"]["post"]["callbacks"]

    assert set(callbacks["jobTerminal"]) == {
        "{$request.body#/callback_url}",
        "{$request.body#/fanout/callback_url}",
        "{$request.query.callback_url}",
    }
    for webhook in callbacks["jobTerminal"].values():
        post = webhook["post"]
        assert post["requestBody"]["content"]["application/json"]["schema"] == {
            "oneOf": [{"$ref": "#/components/schemas/SingleJobView"}, {"$ref": "#/components/schemas/ParentView"}]
        }
        assert set(post["responses"]) == {"2XX", "default"}
        assert post["security"] == []
    # Each place a callback_url is given is in the submission's schemas.
    schemas = spec["components"]["schemas"]
    assert "callback_url" in schemas["Job"]["properties"]
    assert "callback_url" in schemas["Fanout"]["properties"]
    assert "callback_url" in {p["name"] for p in spec["paths"]["/jobs"]["post"]["parameters"] if p["in"] == "query"}


def test_the_webhook_documents_the_headers_the_deliverer_sends(spec):
    webhook = spec["paths"]["/jobs"]["post"]["callbacks"]["jobTerminal"]["{$request.body#/callback_url}"]["post"]
    documented = {p["name"].lower(): p["required"] for p in webhook["parameters"] if p["in"] == "header"}

    signed = delivery.headers(b"{}", 1, "whsec_" + "A" * 40, 1_700_000_000, "msg_x_0")
    unsigned = delivery.headers(b"{}", 1, "", 1_700_000_000, "msg_x_0")
    described = set(signed) - {"Content-Type", "User-Agent"}
    assert set(documented) == {name.lower() for name in described}
    assert {name for name, required in documented.items() if required} == {
        name.lower() for name in described & set(unsigned)
    }
