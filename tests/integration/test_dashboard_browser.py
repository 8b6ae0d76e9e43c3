"""The dashboard in a real browser (headless Chromium) against the real stack.

A group's page is opened while the group runs and must fill its grid as the
children finish, without a reload; a child clicked shows its text; a second
group is cancelled with the page's button; the list finds both through its
filters.  A group's redrive and cap controls are used for real (a refusal
shown, a failed group run again); a real PDF is uploaded through the form,
split, read by Tesseract, its timeline drawn from the children's recorded
times and its result downloaded in every format; a form changed after a
send whose answer was lost goes as a new submission; the workers page shows
the live worker and the queues.  And where the API wants a key, the page asks
for one and its script sends it.  Every wait is on what the page shows
(element classes and text) or on the store, never a fixed sleep.
Screenshots are kept under the test's tmp dir and in test-artifacts/.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pikepdf
import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select

from gateway import create_app
from jobs.api_keys import parse_plain_keys
from jobs.config import Settings
from jobs.store import JobStore
from tests.harness import wait_until
from tests.integration.browser_support import downloaded, keep_screenshot, script_errors, start_chromium, wait
from tests.integration.fanout_support import echo_child, submit_group
from tests.integration.polling import TERMINAL, wait_for_job
from tests.pdfs import image_pdf
from tests.unit.documents.markup_support import alto_pages, alto_words, hocr_pages, hocr_words

pytestmark = pytest.mark.integration


@pytest.fixture
def downloads(tmp_path) -> Path:
    """Where the browser saves what the pages download."""
    directory = tmp_path / "downloads"
    directory.mkdir()
    return directory


@pytest.fixture
def browser(tmp_path, downloads):
    driver = start_chromium(tmp_path / "chromedriver.log", downloads=downloads)
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


def group_status(browser) -> str | None:
    # Read in one script call: the page redraws as its live stream moves, so an element found by one
    # call may be gone by the next.
    return browser.execute_script(
        "const status = document.querySelector('#group [data-field=\"status\"] .status');"
        "return status ? status.innerText : null"
    )


def shown(browser, css: str) -> str | None:
    """The text of the element, once it is displayed."""
    element = browser.find_element(By.CSS_SELECTOR, css)
    return element.text if element.is_displayed() else None


def stream_state(browser) -> str | None:
    """Where the job page's live stream is: opening, open, ended, unavailable (then the page polls)."""
    return browser.execute_script("return document.body.dataset.stream || null")


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
    # The page followed the group's live stream to its end, rather than polling.
    wait(browser, lambda b: stream_state(b) == "ended", "the group's stream ended")
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


# -- the controls, the downloads, the form, the timeline, the workers -----------------------------------------


def state_text(browser, element_id: str) -> str:
    return browser.find_element(By.ID, element_id).text


def test_a_groups_cap_is_changed_and_a_failed_group_redriven_from_its_page(gateway, browser, tmp_path):
    # Child 0 fails until a moment after child 1 can have ended (60 pages of 300 ms); child 1 holds the only slot
    # meanwhile, so the group still runs when the page's redrive is refused, and has failed when it is sent.
    fails_until = time.time() + 18
    children = [
        echo_child("failing at first", options={"fail_until": fails_until}),
        paged_child("slow", pages=60, delay_ms=300),
        echo_child("quick"),
    ]
    parent_id = submit_group(gateway, children, max_parallel=1).json()["id"]
    browser.get(f"{gateway.base_url}/ui/jobs/{parent_id}")
    wait(browser, lambda b: cell_statuses(b)[:2] == ["failed", "processing"], "child 0 failed while child 1 runs")
    wait(browser, lambda b: b.find_element(By.ID, "redrive-group").is_displayed(), "the group's controls")

    browser.find_element(By.ID, "redrive-group").click()
    wait(browser, expected_conditions.alert_is_present(), "the redrive's confirmation").accept()
    refused = wait(browser, lambda b: state_text(b, "redrive-state"), "the redrive's answer")
    assert "group_not_finished" in refused, refused
    assert "refused" in browser.find_element(By.ID, "redrive-state").get_attribute("class")

    cap = browser.find_element(By.ID, "cap-input")
    assert cap.get_attribute("value") == "1"
    cap.clear()
    cap.send_keys("2")
    assert cap.get_attribute("value") == "2"  # the page's polls leave a field the user is in alone
    browser.find_element(By.CSS_SELECTOR, "#cap-form button").click()
    wait(browser, lambda b: state_text(b, "cap-state") == "The API reports max parallel 2.", "the new cap")
    assert gateway.job(parent_id)["max_parallel"] == 2
    wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, '[data-field="max_parallel"]').text == "2", "cap 2")
    keep_screenshot(browser, tmp_path, "dashboard-controls.png")

    wait(browser, lambda b: group_status(b) == "failed", "the group failed", timeout=180)
    wait(browser, lambda b: cell_statuses(b) == ["failed", "completed", "completed"], "child 0 failed, the others not")
    wait_until(lambda: time.time() > fails_until, 60, 0.2, "child 0 still set to fail")
    browser.find_element(By.ID, "redrive-group").click()
    wait(browser, expected_conditions.alert_is_present(), "the redrive's confirmation").accept()
    wait(browser, lambda b: state_text(b, "redrive-state").startswith("Redriven:"), "the redrive accepted")

    wait(browser, lambda b: group_status(b) == "completed", "the group completed after its redrive")
    wait(browser, lambda b: cell_statuses(b) == ["completed"] * 3, "every child completed")
    view = gateway.job(parent_id)
    assert view["status"] == "completed" and view["redrives"] == 1
    assert [run["outcome"] for run in view["children"][0]["runs"]] == ["failed", "completed"]
    # The timeline draws both runs of child 0 under its bar.
    marks = browser.find_elements(By.CSS_SELECTOR, '#timeline .lane[data-index="0"] .run')
    assert len(marks) == 2
    keep_screenshot(browser, tmp_path, "dashboard-redriven.png")


def expected_positions(children: list[dict[str, Any]]) -> dict[int, tuple[float, float]]:
    """Each child's bar as the timeline must place it: (left, width) in percent of the group's time axis, from
    the recorded times (the axis runs from the first start to the last end, over every run)."""

    def ms(value: str) -> float:
        return datetime.fromisoformat(value).timestamp() * 1000

    starts = [ms(c["started_at"]) for c in children] + [ms(r["started_at"]) for c in children for r in c["runs"]]
    ends = [ms(c["finished_at"]) for c in children] + [ms(r["finished_at"]) for c in children for r in c["runs"]]
    first, last = min(starts), max(ends)
    span = last - first
    return {
        c["index"]: (
            (ms(c["started_at"]) - first) / span * 100,
            (ms(c["finished_at"]) - ms(c["started_at"])) / span * 100,
        )
        for c in children
    }


def drawn_positions(browser) -> dict[int, tuple[float, float]]:
    bars = browser.find_elements(By.CSS_SELECTOR, "#timeline .interval")
    return {
        int(bar.get_attribute("data-index")): (
            float(bar.value_of_css_property("left").removesuffix("px")),
            float(bar.value_of_css_property("width").removesuffix("px")),
        )
        for bar in bars
    }


def tesseract_model(gateway) -> dict[str, Any]:
    return next(m for m in gateway.get("/models")["models"] if m["name"] == "tesseract")


def test_a_pdf_uploaded_through_the_form_is_split_read_drawn_on_a_timeline_and_downloaded(
    gateway, browser, tmp_path, downloads
):
    texts = ("FIRST PAGE OF THE UPLOAD", "SECOND PAGE OF THE UPLOAD", "THIRD PAGE OF THE UPLOAD")
    document = tmp_path / "upload.pdf"
    document.write_bytes(image_pdf(*texts))

    # The form offers the languages the live workers reported (the test's store was emptied: they report again).
    wait_until(lambda: "eng" in tesseract_model(gateway)["languages"], 90, 0.5, "no worker reported its languages")

    browser.get(f"{gateway.base_url}/ui/new")
    wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#submit-model option")) >= 2, "the models")
    browser.find_element(By.ID, "submit-file").send_keys(str(document))
    wait(browser, lambda b: b.find_element(By.ID, "split").is_displayed(), "the split fields of a PDF")
    Select(browser.find_element(By.ID, "submit-model")).select_by_value("tesseract")
    wait(browser, lambda b: b.find_element(By.ID, "languages-field").is_displayed(), "the workers' languages")
    Select(browser.find_element(By.ID, "submit-languages")).select_by_value("eng")
    Select(browser.find_element(By.CSS_SELECTOR, '[data-option="text_layer"]')).select_by_value("ignore")
    browser.find_element(By.ID, "submit-split").send_keys("1")
    browser.find_element(By.ID, "submit-max-parallel").send_keys("2")
    keep_screenshot(browser, tmp_path, "dashboard-new-job.png")
    browser.find_element(By.ID, "submit-button").click()

    wait(browser, lambda b: "/ui/jobs/" in b.current_url, "the new job's page")
    parent_id = browser.current_url.rsplit("/", 1)[1]
    view = gateway.job(parent_id)
    assert (view["kind"], view["total"], view["max_parallel"], view["model"]) == ("parent", 3, 2, "tesseract")
    wait(browser, lambda b: group_status(b) == "completed", "the upload read", timeout=300)
    # The grid and the timeline are drawn together, once the children are read.
    wait(browser, lambda b: cell_statuses(b) == ["completed"] * 3, "every child completed")

    # One bar per child, placed on the shared axis as the recorded times say.
    children = gateway.get(f"/jobs/{parent_id}/children", {"limit": 200})["children"]
    wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#timeline .interval")) == 3, "three intervals")
    track_width = browser.find_element(By.CSS_SELECTOR, "#timeline .track").size["width"]
    drawn = drawn_positions(browser)
    for index, (left, width) in expected_positions(children).items():
        assert drawn[index][0] == pytest.approx(left / 100 * track_width, abs=1.5), index
        assert drawn[index][1] == pytest.approx(max(width / 100 * track_width, 2), abs=1.5), index
    for bar, child in zip(browser.find_elements(By.CSS_SELECTOR, "#timeline .interval"), children, strict=True):
        assert bar.get_attribute("data-start") == child["started_at"]
        assert bar.get_attribute("data-end") == child["finished_at"]
        assert "status-completed" in bar.get_attribute("class").split()
    keep_screenshot(browser, tmp_path, "dashboard-timeline.png")

    result = gateway.get(f"/jobs/{parent_id}/result")
    saved = {}
    formats = (("text", "txt"), ("json", "json"), ("pdf", "pdf"), ("hocr", "hocr"), ("alto", "xml"), ("md", "md"))
    for format, name in formats:
        browser.find_element(By.CSS_SELECTOR, f'#group .downloads button[data-format="{format}"]').click()
        filename = f"{parent_id}.{name}"
        saved[format] = wait(browser, lambda b, f=filename: downloaded(downloads, f), f"{filename} saved", timeout=180)
        assert browser.find_element(By.CSS_SELECTOR, "#group .download-state").text == f"Saved {filename}."
    assert saved["text"].read_text() == result["text"]
    assert all(text.split()[0] in result["text"] for text in texts)
    assert json.loads(saved["json"].read_text()) == result
    assert saved["pdf"].read_bytes().startswith(b"%PDF-")
    with pikepdf.open(saved["pdf"]) as pdf:
        assert len(pdf.pages) == 3
    # The documents parse as what they are, a page each, and carry the result's words.
    words = [page["text"].split() for page in result["pages"]]
    hocr_read = [[w.text for line in hocr_words(page) for w in line] for page in hocr_pages(saved["hocr"].read_text())]
    alto_read = [[w.text for line in alto_words(page) for w in line] for page in alto_pages(saved["alto"].read_text())]
    assert hocr_read == words and alto_read == words
    markdown = gateway.http.get(f"{gateway.base_url}/jobs/{parent_id}/result.md", timeout=30)
    assert saved["md"].read_bytes() == markdown.content
    keep_screenshot(browser, tmp_path, "dashboard-downloads.png")

    # A child's page saves the child's own result.
    child = children[1]
    browser.get(f"{gateway.base_url}/ui/jobs/{child['id']}")
    button = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, '#single .downloads button[data-format="text"]'),
                  "the child's downloads")  # fmt: skip
    wait(browser, lambda b: button.is_displayed(), "the child's downloads shown")
    button.click()
    child_text = wait(browser, lambda b: downloaded(downloads, f"{child['id']}.txt"), "the child's text saved")
    assert child_text.read_text() == gateway.get(f"/jobs/{child['id']}/result")["text"]
    assert "SECOND" in child_text.read_text()


def test_a_refused_upload_shows_the_apis_problem(gateway, browser, tmp_path):
    document = tmp_path / "empty.txt"
    document.write_bytes(b"")
    browser.get(f"{gateway.base_url}/ui/new")
    wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#submit-model option")) >= 2, "the models")
    browser.find_element(By.ID, "submit-file").send_keys(str(document))
    # Only echo reads text/plain: it is chosen, and its options drawn.
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, '[data-option="delay_ms"]'), "echo's options")
    assert Select(browser.find_element(By.ID, "submit-model")).first_selected_option.text == "echo"
    browser.find_element(By.ID, "submit-button").click()
    wait(browser, lambda b: "(empty_document)" in state_text(b, "submit-state"), "the API's refusal")
    assert browser.current_url.endswith("/ui/new")
    assert gateway.get("/jobs")["jobs"] == []


# The next POST the page sends reaches the API, but its answer is lost on the way back (as a dropped connection).
LOSE_THE_NEXT_ANSWER = """
const realFetch = window.fetch;
window.fetch = async (url, init) => {
  if (!init || init.method !== "POST") return realFetch(url, init);
  window.fetch = realFetch;
  await realFetch(url, init);
  throw new TypeError("the answer was lost");
};
"""


def test_a_form_changed_after_a_send_with_no_answer_is_sent_as_a_new_submission(gateway, browser, tmp_path):
    document = tmp_path / "note.txt"
    document.write_text("words to read")
    browser.get(f"{gateway.base_url}/ui/new")
    wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#submit-model option")) >= 2, "the models")
    browser.find_element(By.ID, "submit-file").send_keys(str(document))
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, '[data-option="delay_ms"]'), "echo's options")

    browser.execute_script(LOSE_THE_NEXT_ANSWER)
    browser.find_element(By.ID, "submit-button").click()
    wait(browser, lambda b: "No answer" in state_text(b, "submit-state"), "the send with no answer")
    [first] = [job["id"] for job in gateway.get("/jobs")["jobs"]]
    # Sent again as it was, it would be replayed; changed, it is another submission, with a key of its own
    # (the same key with another body is 422 idempotency_key_reused).
    Select(browser.find_element(By.ID, "submit-priority")).select_by_value("interactive")
    browser.find_element(By.ID, "submit-button").click()

    wait(browser, lambda b: "/ui/jobs/" in b.current_url, "the new job's page")
    second = browser.current_url.rsplit("/", 1)[1]
    assert second != first
    assert sorted(job["id"] for job in gateway.get("/jobs")["jobs"]) == sorted([first, second])


def test_the_workers_page_shows_the_live_worker_and_the_queues(gateway, browser, db, tmp_path):
    children = [paged_child(f"busy{i}", pages=100, delay_ms=300) for i in range(4)]
    parent_id = submit_group(gateway, children, max_parallel=1).json()["id"]
    try:
        browser.get(f"{gateway.base_url}/ui/workers")
        wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#worker-rows tr.worker"), "a live worker")
        names = {n.decode() for n in db.zrange("ocrgw:{workers}", 0, -1)}
        rows = browser.find_elements(By.CSS_SELECTOR, "#worker-rows tr.worker")
        assert {row.get_attribute("data-name") for row in rows} <= names
        assert "eng" in rows[0].text

        def echo_counts(b) -> dict[str, int] | None:
            cells = b.find_elements(By.CSS_SELECTOR, '#queue-rows tr[data-model="echo"] td[data-count]')
            counts = {c.get_attribute("data-count"): int(c.text) for c in cells}
            return counts if counts.get("held") == 3 and counts.get("processing") == 1 else None

        # One child runs and three wait for the group's only slot, once the coordinator has counted them.
        wait(browser, echo_counts, "the echo queue's figures")
        assert "Counted at" in state_text(browser, "queues-sampled")
        assert not browser.find_element(By.ID, "queues-stale").is_displayed()
        models = [row.get_attribute("data-model") for row in browser.find_elements(By.CSS_SELECTOR, "#queue-rows tr")]
        assert {"echo", "tesseract"} <= set(models)
        keep_screenshot(browser, tmp_path, "dashboard-workers.png")
    finally:
        gateway.http.delete(f"{gateway.base_url}/jobs/{parent_id}", timeout=30)
        wait_for_job(gateway.job, parent_id)


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
    # Its live stream too, the key sent as a header (never in the URL).
    wait(browser, lambda b: stream_state(b) == "open", "the group's stream, opened with the key")
    browser.find_element(By.ID, "forget-key").click()
    wait(browser, lambda b: b.find_element(By.ID, "needs-key").is_displayed(), "that a key is needed again")
    assert browser.execute_script("return sessionStorage.length") == 0


def give_key(browser) -> None:
    browser.find_element(By.ID, "api-key").send_keys(KEY)
    browser.find_element(By.CSS_SELECTOR, "#key-form button[type=submit]").click()


def test_where_the_api_wants_a_key_the_controls_the_form_and_the_workers_page_send_it(keyed_gateway, browser):
    http = requests.Session()
    http.trust_env = False
    headers = {"Authorization": f"Bearer {KEY}"}
    group: dict[str, Any] = {"fanout": {"max_parallel": 1, "children": [echo_child("a"), echo_child("b")]}}
    parent_id = http.post(f"{keyed_gateway}/jobs", json=group, headers=headers, timeout=30).json()["id"]

    browser.get(f"{keyed_gateway}/ui/workers")
    wait(browser, lambda b: b.find_element(By.ID, "needs-key").is_displayed(), "that a key is needed")
    give_key(browser)
    # This gateway's store has no worker and no coordinator: the overview, read with the key, says so.
    wait(browser, lambda b: shown(b, "#worker-rows") == "No worker has reported.", "the overview")
    assert state_text(browser, "queues-sampled").startswith("Not counted yet")

    browser.get(f"{keyed_gateway}/ui/new")  # the key stays with the tab
    wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#submit-model option")) >= 2, "the models")

    browser.get(f"{keyed_gateway}/ui/jobs/{parent_id}")
    wait(browser, lambda b: b.find_element(By.ID, "cap-input").get_attribute("value") == "1", "the group's cap")
    cap = browser.find_element(By.ID, "cap-input")
    cap.clear()
    cap.send_keys("3")
    browser.find_element(By.CSS_SELECTOR, "#cap-form button").click()
    wait(browser, lambda b: state_text(b, "cap-state") == "The API reports max parallel 3.", "the new cap")
    view = http.get(f"{keyed_gateway}/jobs/{parent_id}", headers=headers, timeout=30).json()
    assert view["max_parallel"] == 3
