"""Headless Chromium for the dashboard's browser test: the Debian ``chromium`` and ``chromium-driver``.

Both are found on PATH (scripts/setup.sh installs them), and both paths are
given to selenium, so it never tries to download a browser or a driver.
Without them the test is skipped on a laptop and fails under CI, as a
missing redis-server is (tests/conftest.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.harness import ROOT, in_ci

#: Where screenshots are kept for people to look at, besides the test's own tmp dir (git-ignored).
ARTIFACTS = ROOT / "test-artifacts"
#: How long a page may take to reach a state; bounds a hang, asserts no speed.
PAGE_TIMEOUT = 90.0
CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000")


def start_chromium(log_path: Path, downloads: Path | None = None) -> webdriver.Chrome:
    """``downloads``: where the pages' downloads are saved, without asking (none: the browser's default)."""
    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if browser is None or driver is None:
        why = "chromium and chromedriver are not installed (scripts/setup.sh installs them)"
        if in_ci():
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    if downloads is not None:
        options.add_experimental_option(
            "prefs", {"download.default_directory": str(downloads), "download.prompt_for_download": False}
        )
    chrome = webdriver.Chrome(options=options, service=Service(driver, log_output=str(log_path)))
    if downloads is not None:
        # Headless Chromium saves downloads only where it is told to through the DevTools protocol.
        chrome.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    return chrome


def downloaded(directory: Path, name: str) -> Path | None:
    """The file ``name`` once Chromium has finished saving it into ``directory`` (no ``.crdownload`` left)."""
    path = directory / name
    if not path.exists() or any(directory.glob("*.crdownload")):
        return None
    return path


def wait(browser: WebDriver, condition, what: str, timeout: float = PAGE_TIMEOUT):
    """Waits until ``condition(browser)`` is truthy; the page redraws, so a vanished element means "not yet"."""
    ignored = (NoSuchElementException, StaleElementReferenceException)
    return WebDriverWait(browser, timeout, poll_frequency=0.1, ignored_exceptions=ignored).until(
        condition, message=f"the page never showed {what}"
    )


def keep_screenshot(browser: WebDriver, tmp_path: Path, name: str) -> Path:
    """Saves a screenshot under the test's tmp dir and copies it to test-artifacts/."""
    shot = tmp_path / name
    assert browser.save_screenshot(str(shot)), f"no screenshot {name}"
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copyfile(shot, ARTIFACTS / name)
    return shot


def script_errors(browser: webdriver.Chrome) -> list[str]:
    """What the pages' scripts raised or logged as errors since the last call.

    The browser also logs every answer that is not a success ("Failed to load
    resource"), which a page may meet on purpose (a 401 before a key is typed).
    """
    return [
        entry["message"]
        for entry in browser.get_log("browser")
        if entry["level"] == "SEVERE" and "Failed to load resource" not in entry["message"]
    ]
