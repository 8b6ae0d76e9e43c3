"""The dashboard in a real browser (headless Chromium) against the real stack.

A group's page is opened while the group runs and must fill its grid as the
children finish, without a reload; a child clicked shows its text; a second
group is cancelled with the page's button; the list finds both through its
filters.  And where the API wants a key, the page asks for one and its
script sends it.  Every wait is on what the page shows (element classes and text),
never a fixed sleep.  Screenshots are kept under the test's tmp dir and in
test-artifacts/.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select

from gateway import create_app
from jobs.api_keys import parse_plain_keys
from jobs.config import Settings
from jobs.store import JobStore
from tests.integration.browser_support import keep_screenshot, script_errors, start_chromium, wait
from tests.integration.fanout_support import echo_child, submit_group
from tests.integration.polling import TERMINAL, wait_for_job

pytestmark = pytest.mark.integration


@pytest.fixture
def browser(tmp_path):
    driver = start_chromium(tmp_path / "chromedriver.log")
    try:
        yield driver
        assert script_errors(driver) == []
    finally:
        driver.quit()


def paged_child(text: str, pages: int, delay_ms: int) -> dict:
    """An echo child of ``pages`` pages, ``delay_ms`` each: it runs until they are done, or it is cancelled."""
    document = "\f".join(f"{text} page {i}" for i in range(1, pages + 1))
    return echo_child(document, delay_ms=delay_ms, doc_hash=f"doc-{text}", pages=pages)


def cell_statuses(browser) -> list[str]:
    classes = [cell.get_attribute("class").split() for cell in browser.find_elements(By.CSS_SELECTOR, "#grid .cell")]
    return [next(c.removeprefix("status-") for c in names if c.startswith("status-")) for names in classes]


def group_status(browser) -> str:
    return browser.find_element(By.CSS_SELECTOR, '#group [data-field="status"] .status').text


def shown(browser, css: str) -> str | None:
    """The text of the element, once it is displayed."""
    element = browser.find_element(By.CSS_SELECTOR, css)
    return element.text if element.is_displayed() else None


def listed(browser) -> list[str]:
    return [row.get_attribute("data-id") for row in browser.find_elements(By.CSS_SELECTOR, "#job-rows tr.job")]


def test_a_groups_grid_fills_as_its_children_finish_and_a_child_shows_its_text(gateway, browser, tmp_path):
    # Child 0 holds one of the two slots for 60 pages while the others pass through the second.
    children = [paged_child("slow", pages=60, delay_ms=100)]
    children += [echo_child(f"child-{i} says hello", delay_ms=300) for i in range(1, 6)]
    parent_id = submit_group(gateway, children, max_parallel=2).json()["id"]

    browser.get(f"{gateway.base_url}/ui/jobs/{parent_id}")
    browser.execute_script("window.sameLoad = true")  # gone if the page were reloaded

    def part_done(b):
        statuses = cell_statuses(b)
        return statuses if "completed" in statuses and any(s not in TERMINAL for s in statuses) else None

    part_done_statuses = wait(browser, part_done, "a grid with children completed and children still to finish")
    assert len(part_done_statuses) == 6
    assert group_status(browser) == "processing"

    browser.find_element(By.ID, "child-1").click()
    wait(browser, lambda b: shown(b, "#child-text") == "child-1 says hello", "child 1's text")
    assert browser.find_element(By.CSS_SELECTOR, "#child-status .status").text == "completed"
    assert browser.current_url.endswith(f"/ui/jobs/{parent_id}")  # shown in the page, not followed

    wait(browser, lambda b: cell_statuses(b) == ["completed"] * 6, "every child completed")
    wait(browser, lambda b: group_status(b) == "completed", "the group completed")
    assert browser.execute_script("return window.sameLoad") is True
    assert browser.find_element(By.CSS_SELECTOR, '[data-count="completed"]').text == "6"
    assert "6 of 6 ended (100%)" in browser.find_element(By.CSS_SELECTOR, '[data-field="ended"]').text
    wait(browser, lambda b: "group" in b.find_element(By.CSS_SELECTOR, "#event-rows tr").text, "the group's event")
    events = [row.text for row in browser.find_elements(By.CSS_SELECTOR, "#event-rows tr")]
    assert len(events) == 7 and "job group completed" in events[0]
    assert not browser.find_element(By.ID, "cancel-group").is_displayed()
    keep_screenshot(browser, tmp_path, "dashboard-group.png")


def test_a_group_cancelled_with_its_pages_button_ends_cancelled_and_the_list_filters_find_it(
    gateway, browser, tmp_path
):
    browser.get(f"{gateway.base_url}/ui")
    wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, "#job-rows tr.empty").text == "No jobs.", "no jobs")
    browser.execute_script("window.sameLoad = true")
    single = gateway.post_json(echo_child("just one")).json()["id"]
    # Child 0 must still run once the browser is on the group's page (every child ends cancelled): 100 pages
    # of 500 ms leave a slow machine ample time, and the cancel stops it at its next page.
    children = [paged_child(f"c{i}", pages=100, delay_ms=500) for i in range(3)]
    parent_id = submit_group(gateway, children, max_parallel=1).json()["id"]
    wait(browser, lambda b: listed(b) == [parent_id, single], "the new jobs in the list, newest first")
    assert browser.execute_script("return window.sameLoad") is True

    browser.find_element(By.LINK_TEXT, parent_id).click()
    wait(browser, lambda b: b.current_url.endswith(f"/ui/jobs/{parent_id}"), "the group's page")
    wait(browser, lambda b: b.find_element(By.ID, "cancel-group").is_displayed(), "the cancel button")
    wait(browser, lambda b: cell_statuses(b)[0] == "processing", "child 0 running")
    browser.find_element(By.ID, "cancel-group").click()
    confirm = wait(browser, expected_conditions.alert_is_present(), "the confirmation")
    assert parent_id in confirm.text
    confirm.accept()

    wait(browser, lambda b: group_status(b) == "cancelled", "the group cancelled")
    wait(browser, lambda b: cell_statuses(b) == ["cancelled"] * 3, "every child cancelled")
    wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, ".cancel-state").text == "Ended cancelled.", "the end")
    assert not browser.find_element(By.ID, "cancel-group").is_displayed()
    assert gateway.job(parent_id)["status"] == "cancelled"
    keep_screenshot(browser, tmp_path, "dashboard-cancelled.png")

    wait_for_job(gateway.job, single, timeout=60)
    browser.get(f"{gateway.base_url}/ui")
    assert listed(browser) == [parent_id, single]
    Select(browser.find_element(By.NAME, "status")).select_by_value("cancelled")
    browser.find_element(By.CSS_SELECTOR, ".filters button").click()
    wait(browser, lambda b: "status=cancelled" in b.current_url and listed(b) == [parent_id], "the cancelled group")
    Select(browser.find_element(By.NAME, "status")).select_by_value("")
    Select(browser.find_element(By.NAME, "kind")).select_by_value("single")
    browser.find_element(By.CSS_SELECTOR, ".filters button").click()
    wait(browser, lambda b: "kind=single" in b.current_url and listed(b) == [single], "the single job")
    keep_screenshot(browser, tmp_path, "dashboard-list.png")


def test_a_large_groups_grid_reads_every_page_of_children(gateway, browser):
    # The server renders the first page of 200; the script reads the others through /children.
    children = [echo_child(f"n{i}") for i in range(450)]
    parent_id = submit_group(gateway, children, max_parallel=0).json()["id"]

    browser.get(f"{gateway.base_url}/ui/jobs/{parent_id}")

    wait(browser, lambda b: cell_statuses(b) == ["completed"] * 450, "450 completed children")
    indexes = [c.get_attribute("data-index") for c in browser.find_elements(By.CSS_SELECTOR, "#grid .cell")]
    assert indexes == [str(i) for i in range(450)]
    wait(browser, lambda b: group_status(b) == "completed", "the group completed")
    wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#event-rows tr")) == 100, "the latest 100 events")
    browser.find_element(By.ID, "child-449").click()
    wait(browser, lambda b: shown(b, "#child-text") == "n449", "the last child's text")


# -- a gateway that wants API keys --------------------------------------------------------------------------

KEY = "a-key-for-the-dashboard"


@pytest.fixture
def keyed_gateway(procs):
    """A gateway (in a thread of this process) with one API key, ``KEY``, as OCRGW_API_KEYS gives it.

    Jobs are stored on a database of the test's own and never dispatched: the pages only need to read them.
    """
    from werkzeug.serving import make_server

    settings = Settings(redis_url=procs.url(procs.fresh_db()), plain_api_keys=parse_plain_keys(f"acme:{KEY}"))
    app = create_app(settings, JobStore.from_settings(settings), publish=lambda dispatches: len(dispatches))

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()


def test_where_the_api_wants_a_key_the_page_asks_for_one_and_sends_it(keyed_gateway, browser):
    http = requests.Session()
    http.trust_env = False
    headers = {"Authorization": f"Bearer {KEY}"}
    group: dict[str, Any] = {"fanout": {"max_parallel": 1, "children": [echo_child("a"), echo_child("b")]}}
    parent_id = http.post(f"{keyed_gateway}/jobs", json=group, headers=headers, timeout=30).json()["id"]
    single = http.post(f"{keyed_gateway}/jobs", json=echo_child("c"), headers=headers, timeout=30).json()["id"]

    browser.get(f"{keyed_gateway}/ui")
    wait(browser, lambda b: b.find_element(By.ID, "needs-key").is_displayed(), "that a key is needed")
    assert listed(browser) == []
    browser.find_element(By.ID, "api-key").send_keys(KEY)
    browser.find_element(By.CSS_SELECTOR, "#key-form button[type=submit]").click()
    wait(browser, lambda b: listed(b) == [single, parent_id], "the jobs, read with the key")
    assert not browser.find_element(By.ID, "needs-key").is_displayed()
    assert browser.find_element(By.ID, "key-state").text == "key set"

    browser.get(f"{keyed_gateway}/ui/jobs/{parent_id}")  # the key stays with the tab
    wait(browser, lambda b: cell_statuses(b) == ["queued", "held"], "the group's grid, read with the key")
    assert group_status(browser) == "queued"
    browser.find_element(By.ID, "forget-key").click()
    wait(browser, lambda b: b.find_element(By.ID, "needs-key").is_displayed(), "that a key is needed again")
    assert browser.execute_script("return sessionStorage.length") == 0
