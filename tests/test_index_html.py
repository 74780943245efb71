"""The registry's index.html in headless Chromium, served by nginx from a built registry:
search, keyboard, a shim opened and fetched, hostile text kept text, no external URL."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from atipkit.cli import cli
from atipkit.registry import layout
from atipkit.registry.page import embed_json
from tests.servers import Nginx, nginx, require
from tests.test_registry_build import CURL, EPOCH, make_shim, put

HOSTILE = '<img src=x onerror="window.__pwned=1"> </script><script>window.__pwned=2</script>'
MANY = 2000


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("page")
    src = base / "src"
    put(src, CURL.name, CURL.read_bytes())
    for i in range(MANY):
        hex_, data = make_shim(f"tool{i:04d}", "1.0", "linux-amd64", description=f"Tool {i}")
        put(src, f"{hex_}.json", data)
    for version in ("1.6", "1.7.1"):
        hex_, data = make_shim(
            "jq",
            version,
            "linux-amd64",
            description="Command-line JSON processor",
            homepage="https://jqlang.org",
        )
        put(src, f"{hex_}.json", data)
    hex_, data = make_shim("evil", "6.6.6", description=HOSTILE)
    put(src, f"{hex_}.json", data)
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH}
    result = CliRunner(env=env).invoke(cli, ["registry", "build", str(src), str(base / "site")])
    assert result.exit_code == 0, result.output
    return base / "site"


@pytest.fixture(scope="module")
def server(site, tmp_path_factory) -> Iterator[Nginx]:
    with nginx(site, tmp_path_factory.mktemp("nginx")) as running:
        yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium = require("chromium", "apt-get install chromium; .ci/run does")
    chromedriver = require("chromedriver", "apt-get install chromium-driver; .ci/run does")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,900",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def page(browser, server):
    browser.get(server.url + "/")
    return browser


def wait(driver, condition, timeout: float = 5):
    """Until `condition` holds; an element the page replaced while it was read (a stale
    reference: the page renders the detail anew) is read again, not a failure."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    ignored = (StaleElementReferenceException,)
    return WebDriverWait(driver, timeout, ignored_exceptions=ignored).until(condition)


def result_names(driver) -> list[str]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#results a'), a => a.dataset.name)"
    )


def search(driver, text: str) -> None:
    from selenium.webdriver.common.by import By

    box = driver.find_element(By.ID, "q")
    box.clear()
    box.send_keys(text)
    wait(driver, lambda d: d.find_element(By.ID, "count").text and len(result_names(d)) <= MANY)


# -- the file itself -------------------------------------------------------------------------


def test_one_self_contained_file(site):
    text = (site / layout.INDEX_HTML).read_text("utf-8")
    assert not re.search(r"""(?:src|href|action|srcset)\s*=\s*["']?\s*(?:https?:)?//""", text, re.I)
    assert not re.search(r"url\(\s*['\"]?\s*(?:https?:)?//", text, re.I)
    assert "@import" not in text
    assert re.findall(r"<link\b[^>]*>", text) == ['<link rel="icon" href="data:,">']
    assert re.findall(r"<script\b[^>]*>", text) == [
        '<script type="application/json" id="atip-data">',
        "<script>",
    ]
    assert text.count("</script>") == 2  # the hostile description did not close one
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', text)
    assert csp is not None
    assert "default-src 'none'" in csp.group(1)
    assert "connect-src 'self'" in csp.group(1)
    data = re.search(r'id="atip-data">(.*?)</script>', text, re.S)
    assert data is not None
    embedded = json.loads(data.group(1))
    assert embedded["catalog"] == json.loads((site / layout.CATALOG).read_bytes())


def test_embedded_json_is_inert_in_html():
    text = embed_json({"d": "</script><!-- & \u2028"})
    assert "<" not in text
    assert ">" not in text
    assert "&" not in text
    assert json.loads(text) == {"d": "</script><!-- & \u2028"}


# -- in the browser --------------------------------------------------------------------------


def test_search_filters_and_a_shim_opens(page, server, site):
    from selenium.webdriver.common.by import By

    assert (
        page.find_element(By.ID, "stats").text
        == f"{MANY + 3:,} tools · {MANY + 4:,} shims · updated 2026-01-15 00:00:00 UTC"
    )
    assert len(result_names(page)) == 200  # the first 200 of 2,003, fast
    assert (
        page.find_element(By.ID, "count").text
        == f"Showing 200 of {MANY + 3:,} tools; type to narrow."
    )
    search(page, "jq")
    assert result_names(page) == ["jq"]
    search(page, "json processor")  # the description is searched too
    assert result_names(page) == ["jq"]
    page.find_element(By.CSS_SELECTOR, '#results a[data-name="jq"]').click()
    wait(page, lambda d: d.find_element(By.CSS_SELECTOR, "#detail h2").text == "jq")
    rows = page.find_elements(By.CSS_SELECTOR, "#detail tbody tr")
    assert [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows] == ["1.7.1", "1.6"]
    homepage = page.find_element(By.CSS_SELECTOR, '#detail a[href="https://jqlang.org"]')
    assert homepage.get_attribute("rel") == "noopener noreferrer nofollow"

    hex_ = make_shim("jq", "1.7.1", "linux-amd64")[0]
    rows[0].find_element(By.CSS_SELECTOR, "td.hash a").click()
    wait(page, lambda d: d.find_elements(By.ID, "shim-json"))
    assert page.find_element(By.ID, "shim-hash").text == hex_
    commands = page.find_element(By.CSS_SELECTOR, "#detail .commands").text
    assert "Run jq on a file" in commands
    assert "Push jq results to a server" in commands
    assert "destructive" in commands
    shown = json.loads(page.find_element(By.ID, "shim-json").text)
    assert shown == json.loads((site / "shims" / "sha256" / f"{hex_}.json").read_bytes())
    raw = page.find_element(By.ID, "shim-raw").get_attribute("href")
    assert raw == f"{server.url}/shims/sha256/{hex_}.json"
    assert f"GET /shims/sha256/{hex_}.json HTTP/1.1 200" in server.requests()
    assert page.execute_script("return location.hash") == f"#shim/{hex_}"


def test_keyboard_only(page):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    page.find_element(By.TAG_NAME, "body").click()
    ActionChains(page).send_keys("/").perform()
    assert page.switch_to.active_element.get_attribute("id") == "q"
    ActionChains(page).send_keys("tool000").perform()
    wait(page, lambda d: len(result_names(d)) == 10)
    ActionChains(page).send_keys(Keys.ARROW_DOWN, Keys.ARROW_DOWN).perform()
    assert page.switch_to.active_element.get_attribute("data-name") == "tool0001"
    ActionChains(page).send_keys(Keys.ENTER).perform()
    wait(page, lambda d: d.execute_script("return location.hash") == "#tool/tool0001")
    # the detail renders after the hash changes: wait for it rather than race it
    wait(page, lambda d: d.find_element(By.CSS_SELECTOR, "#detail h2").text == "tool0001")
    ActionChains(page).send_keys(Keys.ESCAPE).perform()
    wait(page, lambda d: d.execute_script("return location.hash") == "")


def test_a_hostile_description_stays_text(page, site):
    from selenium.webdriver.common.by import By

    search(page, "evil")
    assert result_names(page) == ["evil"]
    assert page.find_element(By.CSS_SELECTOR, "#results .desc").text == HOSTILE
    page.find_element(By.CSS_SELECTOR, '#results a[data-name="evil"]').click()
    wait(page, lambda d: d.find_element(By.CSS_SELECTOR, "#detail h2").text == "evil")
    assert page.find_element(By.CSS_SELECTOR, "#detail .lead").text == HOSTILE
    page.find_element(By.CSS_SELECTOR, "#detail td.hash a").click()
    wait(page, lambda d: d.find_elements(By.ID, "shim-json"))
    assert HOSTILE in page.find_element(By.CSS_SELECTOR, "#detail dl.facts").text
    assert page.find_elements(By.TAG_NAME, "img") == []
    assert len(page.find_elements(By.TAG_NAME, "script")) == 2
    assert page.execute_script("return window.__pwned") is None


def test_filtering_thousands_is_fast(page):
    elapsed = page.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const input = document.getElementById("q");
        const start = performance.now();
        input.value = "tool1";
        input.dispatchEvent(new Event("input"));
        requestAnimationFrame(() => setTimeout(() => done(performance.now() - start)));
        """
    )
    assert result_names(page)[:2] == ["tool1000", "tool1001"]
    assert len(result_names(page)) == 200
    assert elapsed < 500, f"filtering {MANY} tools took {elapsed:.0f} ms"


def rendered(driver) -> str:
    """The detail pane's text as a reader sees it."""
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, "detail").text


def test_what_a_tool_has_not_is_left_out_of_the_text_not_shown_as_null(page):
    from selenium.webdriver.common.by import By

    page.get(page.current_url.split("#")[0] + "#tool/tool0001")
    wait(page, lambda d: d.find_element(By.CSS_SELECTOR, "#detail h2").text == "tool0001")
    hex_ = make_shim("tool0001", "1.0", "linux-amd64", description="Tool 1")[0]
    assert (
        rendered(page).splitlines()
        == [
            "All tools",
            "tool0001",
            "Tool 1",  # no homepage: nothing under the description, not "null"
            "1 shim",
            "VERSION PLATFORM BINARY SHA256 SIGNATURE",  # as the style sets headers
            f"1.0 linux-amd64 {hex_[:12]}… unsigned",
        ]
    )
    views = ["#tool/jq", f"#shim/{hex_}", "#tool/no-such-tool", ""]
    for view in views:
        page.execute_script("location.hash = arguments[0]", view)
        wait(page, lambda d, view=view: d.execute_script("return location.hash") == view)
        wait(page, lambda d: d.find_elements(By.CSS_SELECTOR, "#detail h2"))
        prose = page.execute_script(  # the shim's JSON shown as it is has its own nulls
            "const d = document.getElementById('detail').cloneNode(true);"
            "d.querySelectorAll('pre').forEach((p) => p.remove()); return d.innerText"
        )
        assert not set(prose.split()) & {"null", "undefined", "false"}, (view, prose)
