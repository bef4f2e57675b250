"""The documentation site works with no internet: built with `mkdocs build --strict`, its pages
reference no script, style sheet, font or image on another host, and "How a council works",
opened in Debian's headless Chromium with every other host unreachable, draws its sequence
diagram (Mermaid shipped with the site by scripts/mkdocs_offline.py) and requests nothing but
the site itself."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.optional import needs

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
_missing = None
if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    _missing = "chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"
pytestmark = pytest.mark.slow

# What a page loads: scripts, style sheets, icons, images, frames, and a style sheet's url()/@import.
_LOADED = re.compile(r"""<(?:script|img|iframe|source)\b[^>]*\bsrc=["']([^"']+)|<link\b[^>]*\bhref=["']([^"']+)""")
_CSS_URL = re.compile(r"""url\(\s*["']?([^"')]+)|@import\s+["']([^"']+)""")


DRAWN = """return [...document.querySelectorAll('div.mermaid')].some(e => e.getBoundingClientRect().height > 150)"""


def _external(reference: str) -> bool:
    return bool(re.match(r"^(?:[a-z][a-z0-9+.-]*:)?//", reference, re.IGNORECASE))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(target)],
        cwd=ROOT,
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    return target


def test_no_page_or_style_sheet_loads_anything_from_another_host(site):
    found = []
    for page in site.rglob("*.html"):
        for match in _LOADED.finditer(page.read_text(encoding="utf-8")):
            reference = match.group(1) or match.group(2)
            if _external(reference):
                found.append(f"{page.relative_to(site)}: {reference}")
    for sheet in site.rglob("*.css"):
        for match in _CSS_URL.finditer(sheet.read_text(encoding="utf-8")):
            reference = match.group(1) or match.group(2)
            if _external(reference):
                found.append(f"{sheet.relative_to(site)}: {reference}")
    assert found == []
    assert (site / "assets" / "javascripts" / "mermaid.min.js").stat().st_size > 1_000_000


@pytest.fixture
def served(site) -> Iterator[str]:
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@needs(_missing)
def test_the_sequence_diagram_draws_offline(served):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        # As on a server with no internet: every name but loopback fails to resolve.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.set_page_load_timeout(30)
        driver.get(f"{served}/council/")
        # Material draws each diagram into a closed shadow root of a `div.mermaid` that replaces
        # the `pre.mermaid` holding its source: drawn means replaced, and as tall as a diagram.
        WebDriverWait(driver, 30).until(lambda d: d.execute_script(DRAWN))
        assert not driver.find_elements(By.CSS_SELECTOR, "pre.mermaid")
        loaded = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        if os.environ.get("DOCS_SCREENSHOT"):
            driver.save_screenshot(os.environ["DOCS_SCREENSHOT"])
    finally:
        driver.quit()
    assert [url for url in loaded if not url.startswith(served)] == []
    assert any(url.endswith("mermaid.min.js") for url in loaded)
