"""The browser app in a real browser: Debian's headless Chromium driven by Selenium through
/usr/bin/chromedriver (nothing downloaded). Tabs, a council asked and followed live, Stop, hostile
model text that must stay inert and load nothing, and Sign in with Slack against the fake Slack.

Skipped where chromium is not installed, unless REQUIRE_ALL_TEST_STACKS=1 (CI: .ci/run installs
the `chromium` and `chromium-driver` packages)."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import AsyncExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from core.models import Platform
from core.service import CouncilService
from tests.conftest import MEMBERS, make_settings
from tests.llm_server import ByStage, Hang, Reply, ScriptedLLMServer, council_member, ranking_review
from tests.optional import needs
from tests.slack_fake import FakeSlack
from tests.test_web import council
from tests.web_app import ThreadedWeb

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
_missing = None
if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    _missing = "chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"
elif shutil.which("chromium") is None:
    _missing = "chromium is not on PATH"
pytestmark = [needs(_missing), pytest.mark.slow]

webdriver = pytest.importorskip("selenium.webdriver") if _missing is None else None
if webdriver is not None:
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait


class Sentinel:
    """A loopback HTTP server that counts every request: hostile text must make none."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        sentinel = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                sentinel.requests.append(self.path)
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def hostile(url: str) -> str:
    return f"""Read this carefully.

<script>fetch('{url}/script')</script>
<img src="{url}/img-onerror" onerror="fetch('{url}/onerror')">
[click me](javascript:fetch('{url}/javascript'))
![tracker]({url}/markdown-image.png?leak=secret)
<iframe src="{url}/iframe"></iframe>
<div style="background-image: url({url}/css-url)">styled</div>
<svg onload="fetch('{url}/svg')"></svg>
"""


@pytest.fixture
def browser() -> Iterator[object]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.fixture
def sentinel() -> Iterator[Sentinel]:
    server = Sentinel()
    yield server
    server.close()


def served(tmp_path: Path, scripts: dict[str, object] | None = None, **settings: str) -> ThreadedWeb:
    async def start(stack: AsyncExitStack) -> CouncilService:
        llm = await stack.enter_async_context(ScriptedLLMServer())
        for name in MEMBERS:
            llm.script(name, (scripts or {}).get(name) or council_member(f"{name} says: 42.", synthesis="Final: 42."))
        return await CouncilService.open(make_settings(llm, tmp_path, **settings))

    return ThreadedWeb(start)


@pytest.fixture
def app(tmp_path) -> Iterator[ThreadedWeb]:
    web = served(tmp_path)
    web.start()
    yield web
    web.stop()


def wait(driver, seconds: float = 20):  # type: ignore[no-untyped-def]
    return WebDriverWait(driver, seconds)


def test_each_stage_tab_shows_its_panel_alone_and_arrow_keys_move_between_tabs(app, browser):
    app.run(app.service.storage.save_result(council("c0ffee0000000001")))
    browser.get(f"{app.url}/c/c0ffee0000000001")
    for stage, labels in (("stage1-h", ["m-a", "m-b", "m-c", "m-down"]), ("stage2-h", ["m-a", "m-b", "m-c", "m-x"])):
        tablist = browser.find_element(By.CSS_SELECTOR, f'[role="tablist"][aria-labelledby="{stage}"]')
        tabs = tablist.find_elements(By.CSS_SELECTOR, '[role="tab"]')
        assert [tab.text for tab in tabs] == labels
        for tab in tabs:
            tab.click()
            assert tab.get_attribute("aria-selected") == "true"
            panels = browser.find_elements(By.CSS_SELECTOR, f'[aria-labelledby="{stage}"] ~ .panel, #{stage} ~ .panel')
            shown = [p for p in panels if p.is_displayed()]
            assert [p.get_attribute("id") for p in shown] == [tab.get_attribute("aria-controls")]
        tabs[0].click()
        tabs[0].send_keys(Keys.ARROW_RIGHT)
        assert tabs[1].get_attribute("aria-selected") == "true" and browser.switch_to.active_element == tabs[1]
    review = browser.find_element(By.ID, "review-1")
    browser.find_element(By.ID, "review-1-tab").click()
    assert "Extracted ballot: 1. m-b 2. m-c" in review.text


def test_a_council_asked_in_the_browser_shows_its_stages_as_they_arrive_and_can_be_stopped(tmp_path, browser):
    slow = ByStage(Hang(), Reply(ranking_review(None)), Reply("Final."))  # gamma never answers
    scripts = {
        "alpha": council_member("Alpha's answer arrives first.", latency_s=0.2),
        "beta": council_member("Beta's answer arrives second.", latency_s=1.5),
        "gamma": slow,
    }
    web = served(tmp_path, scripts, COUNCIL_TIMEOUT_S="120", COUNCIL_GRACE_S="100")
    web.start()
    try:
        browser.get(f"{web.url}/ask")
        browser.find_element(By.ID, "question").send_keys("Which answer arrives first?")
        browser.find_element(By.CSS_SELECTOR, "form.ask button").click()
        wait(browser).until(seen.url_matches(r"/c/[0-9a-f]{16}$"))
        stage1 = browser.find_element(By.CSS_SELECTOR, "#live-stage1 .live-items")
        wait(browser).until(lambda d: "Alpha's answer arrives first." in stage1.text)
        assert "Beta's answer" not in stage1.text and "answering…" in stage1.text  # beta and gamma still out
        wait(browser).until(lambda d: "Beta's answer arrives second." in stage1.text)
        assert "gamma" in stage1.text and "answering…" in stage1.text
        synthesize = browser.find_element(By.CSS_SELECTOR, 'button[value="synthesize"]')
        stop = browser.find_element(By.CSS_SELECTOR, 'button[value="stop"]')
        assert "danger" in stop.get_attribute("class") and "danger" not in synthesize.get_attribute("class")
        assert "elapsed" in browser.find_element(By.CSS_SELECTOR, ".elapsed").text
        tops = browser.execute_script(  # on a wide screen the stages stand side by side: all in view at once
            "return ['#live-stage1', '#live-stage2', '#live-stage3'].map(s => document.querySelector(s)"
            ".getBoundingClientRect()).map(r => [Math.round(r.top), Math.round(r.left)])"
        )
        assert len({top for top, _ in tops}) == 1 and tops[0][1] < tops[1][1] < tops[2][1], tops
        stop.click()  # Stop asks first: the council goes on until it is confirmed
        wait(browser).until(lambda d: d.find_elements(By.ID, "confirm-stop"))
        assert "without a final answer" in browser.find_element(By.TAG_NAME, "main").text
        browser.find_element(By.ID, "confirm-stop").click()
        wait(browser, 30).until(lambda d: d.find_elements(By.ID, "final-h"))
        assert "cancelled" in browser.find_element(By.CSS_SELECTOR, ".final").text
    finally:
        web.stop()


def test_hostile_model_text_renders_inert_and_makes_no_request(app, browser, sentinel):
    app.run(app.service.storage.save_result(council("dead000000000001", answer=hostile(sentinel.url))))
    browser.get(f"{app.url}/c/dead000000000001")
    answer = browser.find_element(By.CSS_SELECTOR, ".final .answer")
    assert "<script>" in answer.text and "<iframe" in answer.text  # shown as text, never as markup
    assert answer.find_elements(By.CSS_SELECTOR, "script, img, iframe, svg, [style], [onerror]") == []
    assert answer.find_elements(By.CSS_SELECTOR, 'a[href^="javascript"]') == []
    image_link = answer.find_element(By.CSS_SELECTOR, "a.image-link")
    assert image_link.get_attribute("href").startswith(sentinel.url) and "(image)" in image_link.text
    for tab in browser.find_elements(By.CSS_SELECTOR, '[role="tab"]'):
        tab.click()
    browser.refresh()
    assert browser.execute_script("return document.readyState") == "complete"
    assert sentinel.requests == []


def test_hostile_answers_followed_live_stay_inert(tmp_path, browser, sentinel):
    scripts = {name: council_member(hostile(sentinel.url), synthesis=hostile(sentinel.url)) for name in MEMBERS}
    web = served(tmp_path, scripts)
    web.start()
    try:
        browser.get(f"{web.url}/ask")
        browser.find_element(By.ID, "question").send_keys("Say something dangerous.")
        browser.find_element(By.CSS_SELECTOR, "form.ask button").click()
        wait(browser, 30).until(lambda d: d.find_elements(By.ID, "final-h"))  # followed to the stored page
        assert browser.find_elements(By.CSS_SELECTOR, "main script, main img, main iframe, main [style]") == []
        assert sentinel.requests == []
    finally:
        web.stop()


@pytest.fixture
def slack_app(tmp_path) -> Iterator[tuple[ThreadedWeb, FakeSlack]]:
    fake = FakeSlack()
    fake.register_app("web-client", "web-secret")
    fake.add_user("U1", "Ada")

    async def start(stack: AsyncExitStack) -> CouncilService:
        await fake.start()
        stack.push_async_callback(fake.close)
        llm = await stack.enter_async_context(ScriptedLLMServer())
        settings = make_settings(
            llm, tmp_path, SLACK_API_URL=fake.api_url, SLACK_CLIENT_ID="web-client", SLACK_CLIENT_SECRET="web-secret"
        )
        service = await CouncilService.open(settings)
        for result in (
            council("0a1c000000000001", user="U1", question="Ada asked this in T1"),
            council("0b0b000000000001", user="U2", channel="C2", question="Bob asked this in T1"),
            council("07e2000000000001", workspace="T2", user="U1", question="Asked in another workspace"),
            council("0a01000000000001", platform=Platform.API, workspace=None, channel="k", user="k", question="API"),
        ):
            await service.storage.save_result(result)
        return service

    web = ThreadedWeb(start)
    web.start()
    yield web, fake
    web.stop()


def test_sign_in_with_slack_shows_your_workspaces_councils_and_another_workspaces_is_404(slack_app, browser):
    web, fake = slack_app
    browser.get(web.url + "/")
    wait(browser).until(seen.url_to_be(web.url + "/signin"))
    browser.find_element(By.LINK_TEXT, "Sign in with Slack").click()
    wait(browser).until(seen.url_to_be(web.url + "/"))
    questions = [a.text for a in browser.find_elements(By.CSS_SELECTOR, ".council-row .question")]
    assert questions == ["Ada asked this in T1"]
    assert "Ada" in browser.find_element(By.CSS_SELECTOR, ".who").text
    browser.get(web.url + "/c/07e2000000000001")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Not found"
    assert "Asked in another workspace" not in browser.page_source
    assert [call.method for call in fake.calls if "openid" in call.method] == [
        "openid/connect/authorize",
        "openid.connect.token",
        "openid.connect.userInfo",
    ]


def test_without_javascript_every_panel_is_a_section_of_its_own(app):
    app.run(app.service.storage.save_result(council("c0ffee0000000001")))
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get(f"{app.url}/c/c0ffee0000000001")
        assert driver.find_elements(By.CSS_SELECTOR, '[role="tablist"]') == []  # the script did not run
        panels = driver.find_elements(By.CSS_SELECTOR, ".panel")
        assert len(panels) == 8 and all(panel.is_displayed() for panel in panels)
        headings = [panel.find_element(By.TAG_NAME, "h3").text for panel in panels]
        assert headings[0].startswith("m-a") and headings[4] == "Review by m-a"
    finally:
        driver.quit()


def test_pages_fit_a_phone_and_follow_the_systems_dark_theme(app, browser):
    app.run(app.service.storage.save_result(council("c0ffee0000000001", answer="x" * 400)))
    browser.set_window_size(390, 844)
    for path in ("/", "/c/c0ffee0000000001", "/leaderboard", "/ask"):
        browser.get(app.url + path)
        width = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], (path, width)  # nothing wider than the screen: no sideways scrolling
    background = "return getComputedStyle(document.body).backgroundColor"
    light = browser.execute_script(background)
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}
    )
    assert browser.execute_script(background) != light


def test_a_key_a_model_quotes_never_reaches_the_live_page(tmp_path, browser):
    from tests.test_text_and_redaction import QUOTED_KEY, _quoting_member

    scripts = {
        "alpha": _quoting_member("alpha"),
        "beta": _quoting_member("beta"),
        "gamma": ByStage(Hang(), Reply(ranking_review(None)), Reply("Final.")),  # keeps the council live
    }
    web = served(tmp_path, scripts, LLM_API_KEY=QUOTED_KEY, COUNCIL_TIMEOUT_S="120", COUNCIL_GRACE_S="100")
    web.start()
    try:
        browser.get(f"{web.url}/ask")
        browser.find_element(By.ID, "question").send_keys("What is your key?")
        browser.find_element(By.CSS_SELECTOR, "form.ask button").click()
        wait(browser).until(seen.url_matches(r"/c/[0-9a-f]{16}$"))
        stage1 = browser.find_element(By.CSS_SELECTOR, "#live-stage1 .live-items")
        wait(browser).until(lambda d: stage1.text.count("The key in my request is") == 2)
        assert "[redacted]" in stage1.text and QUOTED_KEY not in browser.page_source
        browser.find_element(By.CSS_SELECTOR, 'button[value="synthesize"]').click()
        wait(browser, 30).until(lambda d: d.find_elements(By.ID, "final-h"))
        assert "The chairman's synthesis." in browser.find_element(By.CSS_SELECTOR, ".final").text
        assert QUOTED_KEY not in browser.page_source and "[redacted]" in browser.page_source
    finally:
        web.stop()


def test_after_signing_out_the_old_session_cookie_signs_nobody_in(slack_app, browser):
    web, _ = slack_app
    browser.get(web.url + "/signin")
    browser.find_element(By.LINK_TEXT, "Sign in with Slack").click()
    wait(browser).until(seen.url_to_be(web.url + "/"))
    old = browser.get_cookie("council_session")
    browser.find_element(By.CSS_SELECTOR, ".who button").click()  # Sign out
    wait(browser).until(seen.url_to_be(web.url + "/signin"))
    browser.delete_all_cookies()
    browser.add_cookie({"name": old["name"], "value": old["value"], "path": "/"})  # the old cookie, replayed
    browser.get(web.url + "/")
    assert browser.current_url == web.url + "/signin"
    assert "Ada asked this in T1" not in browser.page_source


def test_a_deep_link_opened_signed_out_lands_on_its_page_after_signing_in(slack_app, browser):
    web, _ = slack_app
    browser.get(web.url + "/c/0a1c000000000001")
    wait(browser).until(seen.url_to_be(web.url + "/signin"))
    browser.find_element(By.LINK_TEXT, "Sign in with Slack").click()
    wait(browser).until(seen.url_to_be(web.url + "/c/0a1c000000000001"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Ada asked this in T1"


def test_at_a_phones_width_the_timeline_and_ratings_fit_with_readable_text(app, browser):
    app.run(app.service.storage.save_result(council("c0ffee0000000001")))
    browser.set_window_size(390, 844)
    for path, chart in (
        ("/c/c0ffee0000000001", "section[aria-labelledby=timeline-h] svg.chart"),
        ("/leaderboard", "svg.chart"),
    ):
        browser.get(app.url + path)
        svg = browser.find_element(By.CSS_SELECTOR, chart)
        fits = browser.execute_script(
            "const s = arguments[0], p = s.parentElement;"
            "return [s.getBoundingClientRect().width, p.clientWidth, p.scrollWidth,"
            " document.documentElement.scrollWidth, window.innerWidth];",
            svg,
        )
        assert fits[0] <= fits[1] + 1 and fits[2] <= fits[1] and fits[3] <= fits[4], (path, fits)
        sizes = browser.execute_script(
            "return Array.from(arguments[0].querySelectorAll('text')).map(t => t.getBoundingClientRect().height)", svg
        )
        assert sizes and min(sizes) >= 10, (path, sizes)  # about 12 px text, not shrunk to 5 px
        boxes = browser.execute_script(
            "return Array.from(arguments[0].querySelectorAll('text[x=\"0\"]')).map(t => {"
            " const r = t.getBoundingClientRect(); return [r.top, r.bottom]; })",
            svg,
        )
        bars = browser.execute_script(
            "return Array.from(arguments[0].querySelectorAll('rect, line')).map(b => {"
            " const r = b.getBoundingClientRect(); return [r.top, r.bottom]; })",
            svg,
        )
        overlaps = [(t, b) for t in boxes for b in bars if t[0] < b[1] - 1 and b[0] < t[1] - 1]
        assert not overlaps, (path, overlaps)  # a label never sits on a bar


def test_at_a_laptops_width_the_leaderboards_tables_are_whole(app, browser):
    from tests.factories import make_result

    models = ("openrouter:openai/gpt-5.1-codex-max", "openrouter:anthropic/claude-sonnet-4.5", "local:gemma3-270m")
    app.run(app.service.storage.save_result(make_result(order=models)))
    browser.set_window_size(1280, 900)
    browser.get(app.url + "/leaderboard")
    cut = browser.execute_script(
        "return Array.from(document.querySelectorAll('.table-wrap')).map(w => w.scrollWidth - w.clientWidth)"
    )
    assert cut and max(cut) <= 0, cut  # every column shows, "Cost/council" too
