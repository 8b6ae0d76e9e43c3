"""The manual at /manual: the built docs site, open to anyone, where every problem's type points."""

from __future__ import annotations

import base64
import hashlib

import pytest

from gateway import create_app, manual

from .keyed import keyed_settings
from .support import assert_problem

#: What the file beside the site holds, which no answer of the manual may ever carry.
OUTSIDE_SECRET = b"secret = 'outside the site'\n"


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A built site of two pages and a file, laid out as mkdocs does it, for the apps made after it,
    and a file beside it (``../pyproject.toml`` from the site) that must stay out of reach."""
    (tmp_path / "pyproject.toml").write_bytes(OUTSIDE_SECRET)
    site = tmp_path / "site"
    (site / "problems" / "job_not_found").mkdir(parents=True)
    (site / "index.html").write_text("<h1>ocrgw</h1>")
    (site / "problems" / "job_not_found" / "index.html").write_text("<h1>job_not_found</h1>")
    (site / "style.css").write_text("h1 {}")
    monkeypatch.setattr(manual, "SITE_DIR", site)
    return site


def make_app(settings, store):
    return create_app(settings, store, lambda dispatches: len(dispatches))


def fetch(client, path: str):
    """The answer to ``GET path``, read whole and closed (a file's answer streams it)."""
    response = client.get(path)
    response.get_data()
    response.close()
    return response


def test_a_problem_type_is_its_page_in_the_manual_served_without_a_key(site, settings, store, tmp_path):
    client = make_app(keyed_settings(settings, tmp_path), store).test_client()
    problem = assert_problem(client.get("/jobs/nope", headers={"Authorization": "Bearer x"}), 401, "invalid_api_key")
    assert problem["type"] == "/manual/problems/invalid_api_key/"

    page = fetch(client, "/manual/problems/job_not_found/")

    assert page.status_code == 200 and page.mimetype == "text/html"
    assert b"job_not_found" in page.data


def test_a_directory_without_its_slash_is_redirected_to_it(site, settings, store):
    client = make_app(settings, store).test_client()

    assert client.get("/manual").headers["Location"].endswith("/manual/")
    assert client.get("/manual/problems/job_not_found").headers["Location"] == "/manual/problems/job_not_found/"
    assert fetch(client, "/manual/").data == b"<h1>ocrgw</h1>"
    assert fetch(client, "/manual/style.css").mimetype == "text/css"


def test_what_the_site_lacks_is_a_plain_404_problem(site, settings, store):
    client = make_app(settings, store).test_client()

    assert_problem(client.get("/manual/problems/no_such_code/"), 404, "not_found")
    assert_problem(client.get("/manual/no_such_file.css"), 404, "not_found")


@pytest.mark.parametrize(
    "path",
    ["/manual/../pyproject.toml", "/manual/%2e%2e/pyproject.toml", "/manual/..%2fpyproject.toml"],
)
def test_a_path_out_of_the_site_reaches_nothing_beside_it(site, settings, store, path):
    client = make_app(settings, store).test_client()

    answer = fetch(client, path)

    assert OUTSIDE_SECRET not in answer.data
    assert_problem(client.get(path), 404, "not_found")


def test_a_raw_path_out_of_the_site_reaches_nothing_beside_it(site, settings, store):
    """``..`` as the server hands it over, past any normalising of the URL by a client."""
    client = make_app(settings, store).test_client()
    raw = {"PATH_INFO": "/manual/../pyproject.toml"}

    answer = client.get("/manual/", environ_overrides=raw)
    answer.get_data()
    answer.close()

    assert OUTSIDE_SECRET not in answer.data
    assert_problem(client.get("/manual/", environ_overrides=raw), 404, "not_found")


def test_a_gateway_whose_manual_was_never_built_says_how_to_build_it(tmp_path, monkeypatch, settings, store):
    monkeypatch.setattr(manual, "SITE_DIR", tmp_path / "never-built")
    client = make_app(settings, store).test_client()

    problem = assert_problem(client.get("/manual/problems/job_not_found/"), 404, "manual_not_built")

    assert "make docs" in problem["detail"]
    assert problem["type"] == "/manual/problems/manual_not_built/"


def test_the_manual_is_outside_the_api_document(settings, store):
    spec = make_app(settings, store).test_client().get("/openapi.json").get_json()

    assert not [path for path in spec["paths"] if path.startswith("/manual")]


def test_a_symlink_out_of_the_site_is_not_found(site, settings, store, tmp_path):
    (site / "leak.toml").symlink_to(tmp_path / "pyproject.toml")
    (site / "outside").symlink_to(tmp_path, target_is_directory=True)
    client = make_app(settings, store).test_client()

    for path in ("/manual/leak.toml", "/manual/outside/pyproject.toml", "/manual/outside", "/manual/outside/"):
        answer = fetch(client, path)
        assert OUTSIDE_SECRET not in answer.data, path
        assert_problem(client.get(path), 404, "not_found")


def test_a_symlink_within_the_site_is_served(site, settings, store):
    (site / "also.css").symlink_to(site / "style.css")
    client = make_app(settings, store).test_client()

    assert fetch(client, "/manual/also.css").data == b"h1 {}"


def test_a_page_allows_its_own_inline_scripts_by_hash_and_no_other(site, settings, store):
    (site / "index.html").write_text("<h1>ocrgw</h1><script>var a = 1;</script><script src='x.js'></script>")
    client = make_app(settings, store).test_client()

    policy = fetch(client, "/manual/").headers["Content-Security-Policy"]

    digest = base64.b64encode(hashlib.sha256(b"var a = 1;").digest()).decode()
    assert f"script-src 'self' 'sha256-{digest}';" in policy
    assert "frame-ancestors 'none'" in policy
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
