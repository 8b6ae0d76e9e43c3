"""The gateway's pages under their Content-Security-Policy in a real browser (headless Chromium), against the
real stack: Swagger UI and the manual still run their scripts, and an hOCR opened in the browser shows its
words but runs no script, on no origin of the gateway's (where the dashboard keeps its key).

The dashboard's own pages run under their policy in ``test_dashboard_browser``, whose every test fails on
any script error, a refusal by the policy included.
"""

from __future__ import annotations

import pytest
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By

from tests.integration.browser_support import script_errors, start_chromium, wait
from tests.integration.fanout_support import echo_child
from tests.integration.live import ECHO_TIMEOUT
from tests.integration.polling import wait_for_job
from tests.integration.test_manual import built_manual  # noqa: F401 - the fixture, used below

pytestmark = pytest.mark.integration

#: What Chromium logs when a sandboxed document's script is not run.
SANDBOX_REFUSAL = "sandboxed and the 'allow-scripts' permission is not set"


@pytest.fixture
def browser(tmp_path):
    driver = start_chromium(tmp_path / "chromedriver.log")
    try:
        yield driver
    finally:
        driver.quit()


def test_swagger_ui_renders_the_api_under_its_policy(gateway, browser):
    browser.get(f"{gateway.base_url}/docs")

    operations = wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, ".opblock"), "the API's operations")

    assert len(operations) >= 10
    assert script_errors(browser) == []


def test_the_manual_runs_its_theme_and_its_own_inline_scripts_under_its_policy(gateway, browser, built_manual):  # noqa: F811
    browser.get(f"{gateway.base_url}/manual/security/browsers/")

    wait(browser, lambda b: b.execute_script("return typeof __md_get === 'function'"), "the theme's inline script run")
    # The theme's bundle (a file of the site) runs too, and its search worker: a query finds pages.
    query = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, "[data-md-component=search-query]"), "search")
    wait(browser, lambda b: query.is_displayed(), "the search box")
    query.click()
    query.send_keys("allowed hosts")
    found = wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, ".md-search-result__item"), "search results")
    assert found
    assert script_errors(browser) == []


def test_an_hocr_opened_in_the_browser_runs_no_script_on_the_gateways_origin(gateway, browser):
    # Given a tab of the gateway's origin that holds a key, as the dashboard keeps it
    browser.get(f"{gateway.base_url}/ui")
    browser.execute_script("sessionStorage.setItem('probe', 'the key')")
    answer = gateway.post_json(echo_child("hocr <script>words</script>"))
    assert answer.status_code == 202, answer.text
    job_id = answer.json()["id"]
    assert wait_for_job(gateway.job, job_id, timeout=ECHO_TIMEOUT)["status"] == "completed"

    # When the tab opens the job's hOCR
    browser.get(f"{gateway.base_url}/jobs/{job_id}/result.hocr")

    # Then its words show, as text
    assert "hocr <script>words</script>" in browser.find_element(By.TAG_NAME, "body").text
    # and it is on an origin of its own, which reaches nothing of the gateway's
    assert browser.execute_script("return window.origin") == "null"
    with pytest.raises(WebDriverException, match="sessionStorage.*sandboxed"):
        browser.execute_script("return sessionStorage.getItem('probe')")
    # and a script in it does not run
    browser.execute_script(
        "const s = document.createElementNS('http://www.w3.org/1999/xhtml', 'script');"
        "s.textContent = 'document.title = \"ran\"'; document.body.appendChild(s);"
    )
    assert browser.title != "ran"
    assert all(SANDBOX_REFUSAL in error for error in script_errors(browser))
