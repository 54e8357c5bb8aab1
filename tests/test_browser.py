"""End-to-end tests of the built site in a real headless Chromium (issues 4 and 7).

One module-scoped archive is built in a temp folder (the repo's seed plus eight small fixture
articles), indexed and turned into a site through the CLI, and served on loopback by the
preview server (``archive.serve.make_server``, port 0). Playwright drives Debian's Chromium
(``/usr/bin/chromium``; no browser is ever downloaded) over HTTP and straight from disk
(``file://``). Every page visited must log no console error and throw no uncaught exception.

Skipped, with the reason, where Chromium or the ``playwright`` package is missing.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from click.testing import CliRunner

from archive.cli import main
from archive.site import urls

try:
    from playwright.sync_api import Browser, ConsoleMessage, Page
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    HAVE_PLAYWRIGHT = False
else:
    HAVE_PLAYWRIGHT = True

REPO = Path(__file__).resolve().parent.parent
SEEDS = REPO / "seeds"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not HAVE_PLAYWRIGHT,
                       reason="needs the playwright package (pip install playwright)"),
    pytest.mark.skipif(not CHROMIUM.exists(),
                       reason=f"needs Debian's Chromium at {CHROMIUM} (apt-get install chromium)"),
]

#: Playwright's auto-waiting assertions give up after this long (ms): a search over this tiny
#: bundle takes a few milliseconds, so anything slower is a hang, not a slow machine.
WAIT_MS = 5_000

# --- the fixture archive ----------------------------------------------------------------------

#: Eight short articles, in topic folders (the folder becomes the topic), from four sources,
#: with distinct inferred dates from 2014 to 2019 and places found in their leads.
#: "Hezbollah" is in the seed (Reuters), hezbollah-border (Reuters) and beirut-port (BBC News);
#: the phrase "Islamic State" is in the seed (Reuters) and mosul (AP), while saudi-oil (Reuters)
#: has both words apart; "cocoa" is in cocoa-ivory-coast (Reuters) and ghana (AP).
ARTICLES: dict[str, str] = {
    "commodities/cocoa-ivory-coast.txt": """\
Cocoa prices climb as rains fail

ABIDJAN (Reuters) - Cocoa prices rose on April 9, 2015 as rains failed in Ivory Coast, the \
world's top grower.

Traders said the cocoa crop could be the smallest in five years.
""",
    "world/ghana-cocoa-farmers.txt": """\
Ghana farmers seek higher cocoa price

Cocoa farmers in Ghana asked the government on May 14, 2016 for a higher farm-gate price for \
their beans.

The cocoa board said it would answer within a month.

AP
""",
    "world/beirut-port.txt": """\
Beirut port reopens after repairs

The port of Beirut in Lebanon reopened on October 2, 2018 after months of repairs, officials \
said, with Hezbollah lawmakers attending the ceremony.

Ships queued outside the harbour for the first berths.

BBC News
""",
    "world/hezbollah-border.txt": """\
Hezbollah fighters cross into Syria

BEIRUT (Reuters) - Hezbollah fighters crossed from Lebanon into Syria on June 10, 2014 to \
support government forces near the border, a security source said.

The group has sent thousands of fighters to Syria since the start of the war.
""",
    "world/mosul-offensive.txt": """\
Iraqi forces advance on Mosul

Iraqi forces pushed towards Mosul in Iraq on November 20, 2016, taking villages held by \
Islamic State, the army said.

Thousands of families fled the fighting.

AP
""",
    "commodities/saudi-oil.txt": """\
Saudi state oil company plans bond sale

RIYADH (Reuters) - Saudi Arabia's state oil company plans an Islamic bond sale on March 1, \
2017, bankers said.

The sukuk would be the company's first.
""",
    "culture/hostile-markup.txt": """\
Festival poster stirs debate

PARIS (AFP) - A festival poster shown in France on January 15, 2019 carried the text \
<script>alert('xss')</script> and <img src=x onerror=alert(2)> as part of an art work.

Organisers said the work was about the web.
""",
    "culture/film-festival.txt": """\
Film festival opens in Cannes

CANNES (AFP) - The film festival opened in France on May 20, 2017 with a drama about a \
family in Lebanon.

Critics welcomed the opening film.
""",
}

#: Article pages by the slug part of their permalink (``YYYY/MM/DD/<slug>-<id>/``).
SEED = "the-syrian-army-and-hezbollah-have-prepared-to-transport"
BEIRUT = "beirut-port-reopens-after-repairs"
BORDER = "hezbollah-fighters-cross-into-syria"
MOSUL = "iraqi-forces-advance-on-mosul"
SAUDI = "saudi-state-oil-company-plans-bond-sale"
IVORY = "cocoa-prices-climb-as-rains-fail"
GHANA = "ghana-farmers-seek-higher-cocoa-price"
HOSTILE = "festival-poster-stirs-debate"
SEED_HEADLINE = "The Syrian army and Hezbollah have prepared to transport Islamic State fighters"
TOTAL = 1 + len(ARTICLES)


def run_cli(*args: Any) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, (args, result.output)
    return result.output


@dataclass
class SiteUnderTest:
    folder: Path        # the built site
    index: Path
    base: str           # http://127.0.0.1:PORT/

    def url(self, path: str = "") -> str:
        return self.base + path

    def file_url(self, path: str) -> str:
        return (self.folder / path).as_uri()

    def cli_search(self, query: str) -> list[str]:
        """Slugs of ``archive search QUERY``'s hits (the CLI is the reference)."""
        data = json.loads(run_cli("search", query, "--index", self.index, "--json",
                                  "--limit", 50))
        return [slug_of(urls.article_path(h["id"], h["title"],
                                          datetime.fromisoformat(h["date"]) if h["date"] else None))
                for h in data["hits"]]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SiteUnderTest]:
    from archive.serve import make_server

    base = tmp_path_factory.mktemp("browser-site")
    news = base / "news"
    for name, text in ARTICLES.items():
        (news / name).parent.mkdir(parents=True, exist_ok=True)
        (news / name).write_text(text, "utf-8")
    seeds = base / "seeds"
    shutil.copytree(SEEDS, seeds)
    index, out = base / "index", base / "site"
    run_cli("index", seeds, news, "--index", index, "--no-progress")
    # The server needs the index; the site needs the port (for --base-url): bind first.
    server = make_server(out, index, "127.0.0.1", 0)
    host, port = server.server_address[:2]
    root = f"http://{host}:{port}/"
    run_cli("site", "--index", index, "--out", out, "--base-url", root, "--no-progress")
    assert (out / "index.html").is_file() and (out / "search" / "index.html").is_file()
    thread = threading.Thread(target=server.serve_forever, name="preview-server", daemon=True)
    thread.start()
    try:
        yield SiteUnderTest(out, index, root)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
        handler = getattr(server.RequestHandlerClass, "func", None)  # functools.partial
        if handler is not None and hasattr(handler, "archive"):
            handler.archive.close()


# --- the browser ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                              args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@dataclass
class Console:
    """Console errors, uncaught exceptions and dialogs of one page, by the URL they came from."""

    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                where = message.location.get("url", "") if message.location else ""
                self.errors.append(f"console.error on {page.url}: {message.text} ({where})")

        def on_dialog(dialog: Any) -> None:
            self.dialogs.append(f"{dialog.type}: {dialog.message}")
            dialog.dismiss()

        page.on("console", on_console)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught on {page.url}: {exc}"))
        page.on("dialog", on_dialog)

    def assert_clean(self, ignore: Callable[[str], bool] = lambda _: False) -> None:
        errors = [e for e in self.errors if not ignore(e) and not _browser_favicon(e)]
        assert not errors, "pages logged errors:\n" + "\n".join(errors)
        assert not self.dialogs, f"a page opened dialogs (script ran?): {self.dialogs}"


def _browser_favicon(error: str) -> bool:
    """Chromium's own request for ``/favicon.ico`` (no page asks for it; the site declares no
    icon, so the server's 404 is logged once per browser context). Not the page's error."""
    return error.endswith("/favicon.ico)") and "status of 404" in error


@pytest.fixture()
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1000, "height": 900}, locale="en-GB")
    context.set_default_timeout(WAIT_MS)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture()
def console(page: Page) -> Console:
    """What ``page`` logs, watched from before its first navigation."""
    watcher = Console()
    watcher.attach(page)
    return watcher


# --- helpers ----------------------------------------------------------------------------------

def slug_of(href: str) -> str:
    """``.../2017/08/27/the-syrian-army-...-d028d0/index.html`` -> ``the-syrian-army-...``."""
    folder = [p for p in urlsplit(href).path.split("/") if p and p != "index.html"][-1]
    return folder.rsplit("-", 1)[0]


def assert_screenshot(path: Path) -> None:
    assert path.is_file(), path
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert len(data) > 10_000, f"{path} is only {len(data)} bytes: a blank page?"


class SearchPage:
    """The static search page's controls, as ui.js and ``archive.site.search.page_markup`` make them."""

    def __init__(self, page: Page):
        self.page = page
        self.box = page.locator("#archive-search")
        self.input = self.box.locator("input[name=q]")
        self.sort = self.box.locator("#search-sort")
        self.status = self.box.locator(".search-status")
        self.results = self.box.locator("ol.search-results > li")
        self.links = self.box.locator("ol.search-results > li h2 a")

    def search(self, query: str) -> None:
        """Type the query into the box like a user and submit it with Enter."""
        self.input.click()
        self.input.fill("")
        self.input.press_sequentially(query)
        self.input.press("Enter")

    def wait_for(self, count: int) -> None:
        """Until ``count`` hits are shown and the status gives the exact total.

        Submitting or changing a control sets the status to "Searching..." at once, so a
        stale list from the previous search cannot satisfy this.
        """
        expect(self.results).to_have_count(count)
        if count:
            expect(self.status).to_have_text(
                re.compile(rf"^{count} results?\b"), timeout=WAIT_MS)
        else:
            expect(self.status).to_have_text("No results.")

    def slugs(self) -> list[str]:
        return [slug_of(h) for h in self.links.evaluate_all("els => els.map(e => e.href)")]

    def dates(self) -> list[str]:
        return self.results.evaluate_all(
            "lis => lis.map(li => li.querySelector('.search-meta time')"
            "?.getAttribute('datetime') || '')")

    def excerpt_marks(self, slug: str) -> list[str]:
        item = self.results.filter(has=self.page.locator(f"h2 a[href*='/{slug}-']"))
        return item.locator(".search-excerpt mark").all_inner_texts()

    def query_params(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.page.url).query)


# --- issue 4: browse, read, screenshot ---------------------------------------------------------

def test_home_to_seed_article_with_screenshots(site: SiteUnderTest, page: Page,
                                               console: Console, tmp_path: Path) -> None:
    response = page.goto(site.url())
    assert response is not None and response.status == 200
    expect(page).to_have_title("News archive")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator("main .totals")).to_contain_text(f"{TOTAL} articles")
    expect(page.locator("main svg.chart")).to_be_visible()  # drawn by chart.js
    home_png = tmp_path / "home.png"
    page.screenshot(path=str(home_png), full_page=True)

    page.locator("main ol.articles a", has_text=SEED_HEADLINE).click()
    page.wait_for_url(re.compile(rf"/2017/08/27/{SEED}-[0-9a-f]+/(index\.html)?$"))
    expect(page.locator("main h1")).to_contain_text(SEED_HEADLINE)
    meta = page.locator("article header .meta")
    expect(meta.locator("time")).to_have_attribute("datetime", "2017-08-27")
    expect(meta.locator("time")).to_have_text("27 August 2017")
    expect(meta).to_contain_text("(date inferred)")
    expect(meta.get_by_role("link", name="Reuters")).to_be_visible()
    expect(page.locator("ul.tags")).to_contain_text("Lebanon")
    expect(page.locator("article .body p").first).to_contain_text(
        "The Syrian army and Hezbollah have prepared")
    expect(page.locator("link[rel=canonical]")).to_have_attribute(
        "href", re.compile(re.escape(site.base) + rf"2017/08/27/{SEED}-[0-9a-f]+/$"))
    article_png = tmp_path / "article.png"
    page.screenshot(path=str(article_png), full_page=True)

    # The article's source link leads to the source's list, which holds the seed.
    meta.get_by_role("link", name="Reuters").click()
    page.wait_for_url(re.compile(r"/sources/reuters/(index\.html)?$"))
    expect(page.locator("main h1")).to_have_text("Source: Reuters")
    expect(page.locator("main ol.articles > li")).to_have_count(4)

    assert_screenshot(home_png)
    assert_screenshot(article_png)
    console.assert_clean()


def test_markup_in_an_article_shows_as_text(site: SiteUnderTest, page: Page,
                                            console: Console) -> None:
    page.goto(site.url())
    page.locator("main ol.articles a", has_text="Festival poster stirs debate").click()
    page.wait_for_url(re.compile(rf"/{HOSTILE}-"))
    body = page.locator("article .body")
    expect(body).to_contain_text("<script>alert('xss')</script>")
    expect(body).to_contain_text("<img src=x onerror=alert(2)>")
    assert body.locator("script, img").count() == 0
    assert page.evaluate("() => document.querySelectorAll('script').length") == 0

    # The header's search box (on every page) leads to the search page, whose results put
    # the same text in as text too.
    quick = page.locator("header form[role=search] input[name=q]")
    quick.fill("poster")
    quick.press("Enter")
    page.wait_for_url(re.compile(r"/search/index\.html\?q=poster$"))
    search = SearchPage(page)
    search.wait_for(1)
    assert search.slugs() == [HOSTILE]
    expect(search.links.first.locator("mark")).to_have_text("poster")
    excerpt = search.results.first.locator(".search-excerpt")
    expect(excerpt).to_contain_text("<script>alert('xss')</script>")
    expect(excerpt).to_contain_text("<img src=x onerror=alert(2)>")
    assert search.box.locator(".search-results script, .search-results img").count() == 0
    console.assert_clean()  # also: no alert() dialog was opened


def test_missing_page_gets_the_sites_404(site: SiteUnderTest, page: Page,
                                         console: Console) -> None:
    response = page.goto(site.url("no/such/page/"))
    assert response is not None and response.status == 404
    expect(page.locator("main h1")).to_have_text("Page not found")
    # The browser reports the 404 itself; nothing else may complain.
    console.assert_clean(ignore=lambda e: "status of 404" in e)


# --- issue 4: /live on the preview server -------------------------------------------------------

def test_live_search_speaks_the_full_query_syntax(site: SiteUnderTest, page: Page,
                                                  console: Console) -> None:
    response = page.goto(site.url("live?q=" + quote("hezbol*")))
    assert response is not None and response.status == 200
    expect(page.locator("main [role=status]")).to_contain_text("3 articles match")
    links = page.locator("main ol.articles > li > a")
    expect(links).to_have_count(3)
    assert sorted(slug_of(h) for h in links.evaluate_all("els => els.map(e => e.href)")) == \
        sorted([SEED, BEIRUT, BORDER])
    expect(page.locator("#live-q")).to_have_value("hezbol*")

    # Phrase + field and a date range: what the static search cannot all do, /live can.
    page.goto(site.url("live?q=" + quote('"islamic state" source:reuters')))
    expect(links).to_have_count(1)
    expect(links.first).to_contain_text(SEED_HEADLINE)
    page.goto(site.url("live?sort=oldest&q=" + quote("date:[2015 to 2016]")))
    expect(links).to_have_count(3)
    assert [slug_of(h) for h in links.evaluate_all("els => els.map(e => e.href)")] == \
        [IVORY, GHANA, MOSUL]

    # Results link to the static article pages.
    links.first.click()
    page.wait_for_url(re.compile(rf"/{IVORY}-"))
    expect(page.locator("main h1")).to_have_text("Cocoa prices climb as rains fail")
    console.assert_clean()


def test_live_search_bad_query_is_a_friendly_400(site: SiteUnderTest, page: Page,
                                                 console: Console) -> None:
    response = page.goto(site.url("live?q=" + quote("foo:bar")))
    assert response is not None and response.status == 400
    alert = page.locator("main [role=alert]")
    expect(alert).to_contain_text("unknown field 'foo'")
    expect(page.locator("main h1")).to_have_text("Search the archive")
    expect(page.locator("#live-q")).to_have_value("foo:bar")  # kept, so it can be corrected
    assert "Traceback" not in page.content()
    console.assert_clean(ignore=lambda e: "status of 400" in e)
    # And not a 500 for other malformed input either.
    for query in ('"unclosed', "date:[2017 to", "(((", "source:", "*"):
        try:
            with urllib.request.urlopen(site.url("live?q=" + quote(query)), timeout=10) as r:
                status = r.status
        except urllib.error.HTTPError as exc:
            status = exc.code
        assert status in (200, 400), (query, status)


# --- issue 4: the static search page ------------------------------------------------------------

def test_search_hezbollah_filter_by_source_and_share_the_url(
        site: SiteUnderTest, page: Page, console: Console, tmp_path: Path) -> None:
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(site.url())
    page.locator("nav").get_by_role("link", name="Search").click()
    page.wait_for_url(re.compile(r"/search/(index\.html)?$"))
    search = SearchPage(page)
    expect(search.input).to_be_visible()

    search.search("Hezbollah")
    search.wait_for(3)
    assert sorted(search.slugs()) == sorted([SEED, BEIRUT, BORDER])
    marks = search.excerpt_marks(SEED)
    assert marks and all(m.lower() == "hezbollah" for m in marks), marks
    assert search.query_params()["q"] == ["Hezbollah"]
    # Filters and their counts load only when the panel opens (a first query stays small).
    expect(page.locator("#search-source")).not_to_be_attached()
    assert not [u for u in requested if "/bundle/c/" in u or u.endswith("counts.js")], requested
    page.locator(".search-filters summary").click()
    expect(page.locator("#search-source")).to_be_attached()
    page.screenshot(path=str(tmp_path / "search.png"), full_page=True)
    assert_screenshot(tmp_path / "search.png")

    # Source filter with counts (filled in once the exact totals are known).
    source = page.locator("#search-source")
    expect(source.locator("option[value=reuters]")).to_have_text("Reuters (2)")
    expect(source.locator("option[value='bbc news']")).to_have_text("BBC News (1)")
    source.select_option("reuters")
    search.wait_for(2)
    assert sorted(search.slugs()) == sorted([SEED, BORDER])
    metas = search.results.locator(".search-meta").all_inner_texts()
    assert all("Reuters" in m for m in metas), metas
    params = search.query_params()
    assert params["q"] == ["Hezbollah"] and params["source"] == ["reuters"], page.url
    shown = search.slugs()

    # The URL is the state: reloading it (or opening it fresh) runs the same search.
    page.reload()
    search.wait_for(2)
    assert search.slugs() == shown
    expect(search.input).to_have_value("Hezbollah")
    expect(page.locator("#search-source")).to_have_value("reuters")

    # Back to the unfiltered results through the history.
    page.go_back()
    search.wait_for(3)
    console.assert_clean()


def test_search_page_keyboard_and_screen_reader_smoke(site: SiteUnderTest, page: Page,
                                                      console: Console) -> None:
    page.goto(site.url("search/index.html"))
    search = SearchPage(page)
    expect(search.status).to_have_attribute("aria-live", re.compile("polite|assertive"))
    expect(search.input).to_have_attribute("id", "search-q")
    expect(page.locator("label[for=search-q]")).to_have_text("Search the archive")

    # Plain Tab from the start of the page reaches the search box within a few presses.
    for _ in range(12):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement && document.activeElement.id") == "search-q":
            break
    else:
        pytest.fail("the search box is not reachable with 12 Tab presses")
    # ...with a visible focus ring.
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("", "none"), outline

    # The skip link is the short way: Tab, Enter, Tab.
    page.goto(site.url("search/index.html"))
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.className") == "skip"
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.id") == "search-q"

    # Type and submit with the keyboard only; the live region announces the outcome.
    page.keyboard.type("cocoa")
    page.keyboard.press("Enter")
    search.wait_for(2)
    expect(search.status).to_have_text(re.compile(r"^2 results"))
    console.assert_clean()


# --- issue 7: the CLI's query language in the browser, over HTTP and file:// ---------------------

@pytest.mark.parametrize("scheme", ["http", "file"])
def test_boolean_phrase_filter_sort_and_follow(site: SiteUnderTest, page: Page,
                                               console: Console, scheme: str) -> None:
    def search_url(query: str) -> str:
        path = "search/index.html"
        base = site.url(path) if scheme == "http" else site.file_url(path)
        return f"{base}?q={quote(query)}"

    # Opening a shared URL runs its search.
    page.goto(search_url('"islamic state" source:reuters'))
    search = SearchPage(page)
    search.wait_for(1)
    assert search.slugs() == [SEED] == site.cli_search('"islamic state" source:reuters')
    marks = [m.lower() for m in search.excerpt_marks(SEED)]
    assert "islamic" in marks and "state" in marks, marks
    # The words apart (saudi-oil) or the phrase from another source (mosul) do not match:
    search.search("islamic state")
    search.wait_for(3)
    assert sorted(search.slugs()) == sorted([SEED, SAUDI, MOSUL])

    # OR, typed into the box.
    search.search("hezbollah OR cocoa")
    search.wait_for(5)
    expected = {SEED, BEIRUT, BORDER, IVORY, GHANA}
    assert set(search.slugs()) == expected == set(site.cli_search("hezbollah OR cocoa"))
    assert search.excerpt_marks(IVORY) and search.excerpt_marks(BEIRUT)
    assert {m.lower() for m in search.excerpt_marks(IVORY)} == {"cocoa"}

    # NOT and -word: without the Ghana story / the Iraq story.
    search.search("cocoa NOT ghana")
    search.wait_for(1)
    assert search.slugs() == [IVORY]
    search.search("syria -iraq")
    search.wait_for(2)
    assert sorted(search.slugs()) == sorted([SEED, BORDER])

    # Sort: newest first, then oldest first; the URL follows.
    search.search("hezbollah OR cocoa")
    search.wait_for(5)
    search.sort.select_option("newest")
    search.wait_for(5)
    expect(search.links.first).to_have_attribute("href", re.compile(rf"/{BEIRUT}-"))
    assert search.slugs() == [BEIRUT, SEED, GHANA, IVORY, BORDER]
    assert search.dates() == sorted(search.dates(), reverse=True)
    assert search.query_params().get("sort") == ["newest"]
    search.sort.select_option("oldest")
    search.wait_for(5)
    expect(search.links.first).to_have_attribute("href", re.compile(rf"/{BORDER}-"))
    assert search.slugs() == [BORDER, IVORY, GHANA, SEED, BEIRUT]
    assert search.dates() == sorted(search.dates())

    # A date range in the query language.
    search.search("date:[2015 to 2016] cocoa")
    search.wait_for(2)
    assert search.slugs() == [IVORY, GHANA]  # sort stays "oldest"

    # A query of words no search looks for says so, as the CLI does.
    search.search("the C")
    expect(search.status).to_have_text("Only common words and single letters, which no search "
                                       "looks for: add a more specific word.")
    expect(search.results).to_have_count(0)

    # What the static search cannot run gets a clear message, not wrong results.
    search.search("hezbol*")
    expect(search.status).to_contain_text("wildcard")
    expect(search.results).to_have_count(0)

    # Follow a result to its article page.
    search.search("cocoa")
    search.wait_for(2)
    first = search.links.first
    title = first.inner_text()
    first.click()
    page.wait_for_url(re.compile(rf"/{IVORY}-[0-9a-f]+/index\.html$"))
    expect(page.locator("main h1")).to_have_text(title)
    expect(page.locator("article header .meta")).to_contain_text("Reuters")
    console.assert_clean()


# --- issue 17: a site brought up to date searches like a fresh build ---------------------------

def test_an_updated_site_searches_like_a_fresh_build(tmp_path: Path, page: Page,
                                                     console: Console) -> None:
    """A day's update (two new articles in a new index segment, one article edited, its old
    copy deleted in its segment) brought into a built site: its search page, opened from
    disk, answers every query with the hits, in the order, of a fresh build of the same
    index, and the edited article shows once."""
    news = tmp_path / "news"
    for name, text in ARTICLES.items():
        (news / name).parent.mkdir(parents=True, exist_ok=True)
        (news / name).write_text(text, "utf-8")
    index, updated, fresh = tmp_path / "index", tmp_path / "updated", tmp_path / "fresh"
    run_cli("index", SEEDS, news, "--index", index, "--no-progress")
    run_cli("site", "--index", index, "--out", updated, "--no-progress")
    (news / "world" / "cocoa-zeppelin.txt").write_text(
        "Zeppelin carries cocoa to Lebanon\n\nA zeppelin landed in Beirut, Lebanon, on May 2, "
        "2020 with cocoa beans from Ghana.\n\nReuters\n", "utf-8")
    (news / "world" / "hezbollah-talks.txt").write_text(
        "Hezbollah joins cocoa talks\n\nHezbollah officials joined talks on cocoa imports in "
        "Lebanon on May 3, 2020.\n\nAP\n", "utf-8")
    ghana = news / "world" / "ghana-cocoa-farmers.txt"
    ghana.write_text(ghana.read_text("utf-8").replace("within a month.",
                                                      "within a month by zeppelin."), "utf-8")
    run_cli("index", SEEDS, news, "--index", index, "--no-progress")
    run_cli("site", "--index", index, "--out", updated, "--no-progress")
    run_cli("site", "--index", index, "--out", fresh, "--no-progress")
    from archive.site.search import parse_script
    _, meta = parse_script((updated / "search" / "bundle" / "meta.js").read_bytes())
    assert len(meta["segs"]) >= 2 and meta["x"], meta   # the old copy: a deletion list

    def answers(site: Path, query: str) -> list[str]:
        page.goto(f"{(site / 'search' / 'index.html').as_uri()}?q={quote(query)}")
        search = SearchPage(page)
        expect(search.status).not_to_have_text(re.compile("Searching"), timeout=WAIT_MS)
        expect(search.status).to_have_text(re.compile(r"results?\b|No results"),
                                           timeout=WAIT_MS)
        return search.slugs()

    for query in ("cocoa", "zeppelin", "hezbollah OR cocoa", '"islamic state"', "lebanon",
                  "cocoa -ghana", "date:2020", "source:reuters cocoa"):
        got = answers(updated, query)
        assert got == answers(fresh, query), query
        assert len(got) == len(set(got)), query   # no article twice
    assert len(answers(updated, "zeppelin")) == 2
    console.assert_clean()
