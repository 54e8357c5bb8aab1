"""Search a site built by the installed ``archive`` in headless Chromium, as a reader would.

Usage: python -I .ci/installed_check.py SITE_FOLDER [QUERY [EXPECTED_TITLE_WORD]]

``.ci/run`` builds SITE_FOLDER with the wheel's ``archive site`` outside the checkout; this
serves it on loopback, types QUERY into the search page's box, presses Enter and waits for a
hit whose title holds EXPECTED_TITLE_WORD. It imports nothing from the checkout (run it with
``-I`` so neither the script's folder nor the working folder is on ``sys.path``): only the
standard library and playwright, driving Debian's Chromium; no browser is downloaded.
"""

from __future__ import annotations

import shutil
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

DEFAULT_QUERY = 'Hezbollah AND "Islamic State"'
DEFAULT_WORD = "Hezbollah"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
#: A search over the seed's one-article bundle takes milliseconds; longer is a hang.
WAIT_MS = 15_000


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves the site without a log line per request."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - base signature
        pass


def chromium_path() -> str:
    """Debian's Chromium, which ``.ci/run`` installs when it is missing."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise SystemExit("installed check: no chromium on PATH")
    return found


def search_in_browser(site: Path, query: str, word: str) -> str:
    """The first hit's title for ``query`` on the site's search page; fails on any page error."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    errors: list[str] = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(),
                                                 headless=True, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                page.set_default_timeout(WAIT_MS)
                page.on("pageerror", lambda exc: errors.append(f"uncaught: {exc}"))
                page.on("console", lambda m: errors.append(f"console.error: {m.text}")
                        if m.type == "error" and "favicon.ico" not in (m.location or {}).get(
                            "url", "") else None)
                port = server.server_address[1]
                page.goto(f"http://127.0.0.1:{port}/search/index.html")
                box = page.locator("#archive-search input[name=q]")
                box.fill(query)
                box.press("Enter")
                hits = page.locator("#archive-search ol.search-results > li h2 a")
                expect(hits.first).to_contain_text(word, timeout=WAIT_MS)
                title = hits.first.inner_text()
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
    if errors:
        raise SystemExit("installed check: the search page logged errors:\n" + "\n".join(errors))
    return title


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 3:
        print(__doc__, file=sys.stderr)
        return 2
    site = Path(argv[0])
    if not (site / "search" / "index.html").is_file():
        print(f"installed check: {site} has no search/index.html", file=sys.stderr)
        return 1
    query = argv[1] if len(argv) > 1 else DEFAULT_QUERY
    word = argv[2] if len(argv) > 2 else DEFAULT_WORD
    title = search_in_browser(site, query, word)
    print(f"installed check: the site's search for {query} found: {title}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
