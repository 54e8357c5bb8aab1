"""The site's chart of matches per period (issue 16, site half), in a real headless Chromium.

A Reuters-21578 slice (three SGML files, February-March and October 1987) is indexed and built
into a site through the CLI, as a user would. The search page counts a query's matches per
period in the browser from the bundle; ``archive timeline --all-copies`` is the reference (the
site lists every copy of a wire story). The same chart.js draws the home page's chart from the
counts the build embeds, and /live's from ``archive.timeline``.

Skipped where the shared corpora, Chromium or playwright are missing.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from archive import timeline
from archive.site import search as site_search
from conftest import CORPORA
from test_browser import CHROMIUM, CHROMIUM_ARGS, HAVE_PLAYWRIGHT, WAIT_MS, Console, \
    assert_screenshot, run_cli

if HAVE_PLAYWRIGHT:
    from playwright.sync_api import Browser, Page, expect, sync_playwright

pytestmark = [
    pytest.mark.browser,
    pytest.mark.corpus,
    pytest.mark.skipif(not HAVE_PLAYWRIGHT,
                       reason="needs the playwright package (pip install playwright)"),
    pytest.mark.skipif(not CHROMIUM.exists(),
                       reason=f"needs Debian's Chromium at {CHROMIUM} (apt-get install chromium)"),
]

#: Files far apart in time, so queries get month charts (words in several files) and day
#: charts (words of one file).
FILES = ("reut2-000.sgm", "reut2-010.sgm", "reut2-020.sgm")
QUERIES = 20
#: What the chart adds to a first query's code, gzipped: chart.js, fetched after the first
#: results, and the few lines engine.js and ui.js gained. search.js gzipped to this many bytes
#: before the chart (commit 18715a7).
CHART_BUDGET = 5 * 1024
SEARCH_JS_BEFORE_CHART = 10_332


@dataclass
class ReutersSite:
    folder: Path
    index: Path
    news: Path
    base: str

    def search_url(self, query: str) -> str:
        return (self.folder / "search" / "index.html").as_uri() + "?q=" + quote(query)

    def cli_timeline(self, query: str, by: str) -> dict[str, Any]:
        return json.loads(run_cli("timeline", query, "--all-copies", "--by", by, "--json",
                                  "--index", self.index))


@pytest.fixture(scope="module")
def reuters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReutersSite]:
    from archive.serve import make_server

    base = tmp_path_factory.mktemp("chart-site")
    news = base / "news"
    news.mkdir()
    for name in FILES:
        shutil.copy(CORPORA / "reuters21578" / name, news / name)
    index, out = base / "index", base / "site"
    run_cli("index", news, "--index", index, "--no-progress")
    run_cli("site", "--index", index, "--out", out, "--no-progress")
    server = make_server(out, index, "127.0.0.1", 0)
    host, port = server.server_address[:2]
    thread = threading.Thread(target=server.serve_forever, name="chart-preview", daemon=True)
    thread.start()
    try:
        yield ReutersSite(out, index, news, f"http://{host}:{port}/")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
        handler = getattr(server.RequestHandlerClass, "func", None)
        if handler is not None and hasattr(handler, "archive"):
            handler.archive.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                              args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def new_page(browser: Browser, width: int, height: int = 900) -> tuple[Page, Console]:
    context = browser.new_context(viewport={"width": width, "height": height}, locale="en-GB")
    context.set_default_timeout(WAIT_MS * 2)
    page = context.new_page()
    console = Console()
    console.attach(page)
    return page, console


@pytest.fixture()
def page(browser: Browser) -> Iterator[tuple[Page, Console]]:
    page, console = new_page(browser, 1000)
    try:
        yield page, console
    finally:
        page.context.close()


def headline_queries(news: Path) -> list[str]:
    """Words and adjacent word pairs of the slice's headlines, common and rare alike (picked
    evenly down the frequency list, so the run is the same every time)."""
    titles = [t.lower() for f in sorted(news.iterdir())
              for t in re.findall(r"<TITLE>(.*?)</TITLE>", f.read_text("latin-1"), re.S)]
    words: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    for title in titles:
        found = re.findall(r"[a-z]{5,}", title)
        words.update(set(found))
        pairs.update({f"{a} {b}" for a, b in zip(found, found[1:])})
    ranked_words = [w for w, _ in sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))]
    ranked_pairs = [p for p, _ in sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0]))]
    def evenly(ranked: list[str], count: int) -> list[str]:
        return [ranked[i * len(ranked) // count] for i in range(count)]

    return [q for both in zip(evenly(ranked_words, 15), evenly(ranked_pairs, 15)) for q in both]


def chart_of(page: Page, scope: str) -> dict[str, Any]:
    """The drawn chart: its period, bars (label, count, height, has a title) and sizes."""
    svg = page.locator(f"{scope} svg.chart")
    expect(svg).to_be_visible()
    return svg.evaluate("""s => ({
        by: s.dataset.by,
        bars: [...s.querySelectorAll('rect.bar')].map(r => ({
            label: r.dataset.label, count: +r.dataset.count, height: +r.getAttribute('height'),
            title: r.querySelector('title')?.textContent || '',
            peak: r.classList.contains('peak')})),
        width: s.getBoundingClientRect().width, right: s.getBoundingClientRect().right,
        viewport: document.documentElement.clientWidth, container: s.parentElement.clientWidth,
        texts: [...s.querySelectorAll('text')].map(t => t.textContent)})""")


def open_chart(page: Page) -> None:
    """Ask for the chart where the first page left it behind a button (its walk would fetch
    whole posting lists), then wait for the exact total the walk gives."""
    expect(page.locator(".search-status")).not_to_have_text(re.compile(r"^Searching"))
    button = page.locator(".search-chart button.search-chart-show")
    if button.count():
        button.click()
    expect(page.locator(".search-status")).to_have_text(re.compile(r"^\d[\d,]* results?\b"))


def site_chart(page: Page, site: ReutersSite, query: str) -> dict[str, Any]:
    page.goto(site.search_url(query))
    open_chart(page)
    return chart_of(page, ".search-chart")


# --- the CLI and the site count alike ----------------------------------------------------------

def test_site_chart_counts_equal_archive_timeline_all_copies(
        reuters: ReutersSite, page: tuple[Page, Console]) -> None:
    tab, console = page
    compared, periods = 0, Counter()
    for query in headline_queries(reuters.news):
        if compared == QUERIES:
            break
        probe = reuters.cli_timeline(query, "day")
        if not probe["total"] or probe["relaxed"]:
            continue  # the site has no any-word relaxation
        chart = site_chart(tab, reuters, query)
        cli = reuters.cli_timeline(query, chart["by"])
        site_rows = [[b["label"], b["count"]] for b in chart["bars"]]
        cli_rows = [[p["start"], p["count"]] for p in cli["periods"]]
        assert site_rows == cli_rows, (query, chart["by"])
        busy = [date.fromisoformat(p["start"]) for p in probe["periods"] if p["count"]]
        assert chart["by"] == timeline.auto_period(busy[0], busy[-1]), query
        assert sum(c for _, c in site_rows) == cli["total"] - cli["undated"], query
        compared += 1
        periods[chart["by"]] += 1
    assert compared == QUERIES, compared
    assert periods["day"] and periods["month"], periods  # both kinds of chart were compared
    console.assert_clean()


def test_chart_picks_the_period_as_the_python_rule_does(
        reuters: ReutersSite, page: tuple[Page, Console]) -> None:
    """chart.js's autoPeriod and timeline.auto_period, over spans around each boundary (the
    Reuters slice is all 1987, so the year chart is met only here)."""
    tab, console = page
    tab.goto(reuters.search_url(""))
    tab.wait_for_function("() => window.ArchiveSearch")
    tab.add_script_tag(path=str(site_search.ASSET_FOLDER / site_search.CHART_SCRIPT))
    spans = [(date(1987, 3, 1), date(1987, 3, 1)), (date(1987, 2, 26), date(1987, 3, 31)),
             (date(1987, 2, 28), date(1987, 4, 1)), (date(1986, 12, 31), date(1987, 1, 1)),
             (date(1986, 12, 1), date(1987, 2, 1)), (date(1980, 1, 1), date(2000, 12, 31)),
             (date(1980, 12, 31), date(2001, 1, 1)), (date(1987, 1, 1), date(2017, 6, 1))]
    js = tab.evaluate("spans => spans.map(([a, b]) => ArchiveChart.autoPeriod(a, b))",
                      [[int(a.strftime("%Y%m%d")), int(b.strftime("%Y%m%d"))] for a, b in spans])
    assert js == [timeline.auto_period(a, b) for a, b in spans]
    assert set(js) == {"day", "month", "year"}
    console.assert_clean()


# --- readable in a narrow and a wide window -----------------------------------------------------

@pytest.mark.parametrize("width", [360, 1280])
def test_search_chart_is_readable_narrow_and_wide(reuters: ReutersSite, browser: Browser,
                                                   width: int, tmp_path: Path) -> None:
    tab, console = new_page(browser, width)
    try:
        chart = site_chart(tab, reuters, "oil")
        assert chart["width"] <= chart["viewport"] and chart["right"] <= chart["viewport"] + 0.5
        assert abs(chart["width"] - chart["container"]) < 1, chart  # fills its container
        cli = reuters.cli_timeline("oil", chart["by"])
        assert len(chart["bars"]) == len(cli["periods"])  # one bar per period
        for bar in chart["bars"]:
            assert re.fullmatch(rf"{bar['label']}: {bar['count']:,} articles?", bar["title"])
        peak = max(chart["bars"], key=lambda b: b["count"])
        assert peak["peak"] and peak["height"] == max(b["height"] for b in chart["bars"])
        assert any(peak["label"] in t for t in chart["texts"])  # the peak is named
        assert chart["bars"][0]["label"] in chart["texts"]       # first and last labels
        assert chart["bars"][-1]["label"] in chart["texts"]
        # the labels do not overlap or leave the chart
        boxes = tab.locator(".search-chart svg.chart text").evaluate_all(
            "ts => ts.map(t => { const r = t.getBoundingClientRect(); "
            "return [r.left, r.right, r.top]; })")
        svg_box = tab.locator(".search-chart svg.chart").bounding_box()
        assert svg_box is not None
        for left, right, _ in boxes:
            assert svg_box["x"] - 0.5 <= left and right <= svg_box["x"] + svg_box["width"] + 0.5
        bottom = sorted((b for b in boxes if b[2] > svg_box["y"] + svg_box["height"] / 2))
        assert all(a[1] < b[0] for a, b in zip(bottom, bottom[1:])), bottom
        shot = tmp_path / f"search-chart-{width}.png"
        tab.screenshot(path=str(shot), full_page=False)
        assert_screenshot(shot)
        console.assert_clean()
    finally:
        tab.context.close()


# --- a bar narrows the search ------------------------------------------------------------------

def test_clicking_a_bar_adds_its_date_to_the_query_and_url(
        reuters: ReutersSite, page: tuple[Page, Console]) -> None:
    tab, console = page
    chart = site_chart(tab, reuters, "oil")
    bar = max(chart["bars"], key=lambda b: b["count"])
    tab.locator(f".search-chart rect.bar[data-label='{bar['label']}']").click()
    expected = f"oil date:{bar['label']}"
    expect(tab.locator("#search-q")).to_have_value(expected)
    tab.wait_for_url(re.compile(r"\?q=oil"))
    assert parse_qs(urlsplit(tab.url).query)["q"] == [expected]
    # the narrowed query draws its own chart, and the address can be shared
    open_chart(tab)
    expect(tab.locator(".search-status")).to_have_text(
        re.compile(rf"^{bar['count']:,} results?\b"))
    narrowed = chart_of(tab, ".search-chart")
    assert sum(b["count"] for b in narrowed["bars"]) == bar["count"]
    tab.goto(tab.url)
    open_chart(tab)
    expect(tab.locator(".search-status")).to_have_text(
        re.compile(rf"^{bar['count']:,} results?\b"))
    console.assert_clean()


# --- one drawing code path: the home page and /live ---------------------------------------------

def test_home_chart_is_drawn_by_chart_js(reuters: ReutersSite,
                                         page: tuple[Page, Console]) -> None:
    tab, console = page
    html = (reuters.folder / "index.html").read_text("utf-8")
    assert "<svg" not in html and "data-chart=" in html and "<noscript>" in html
    tab.goto((reuters.folder / "index.html").as_uri())
    chart = chart_of(tab, "main .chart-box")
    assert chart["by"] == "month"
    everything = reuters.cli_timeline("", "month")  # every article, by month
    assert [[b["label"], b["count"]] for b in chart["bars"]] == \
        [[p["start"], p["count"]] for p in everything["periods"]]
    # the same element and class as the search page's chart, from the same script
    assert tab.locator("script[src$='assets/search/chart.js']").count() == 1
    search = site_chart(tab, reuters, "oil")
    assert search["bars"] and tab.locator(".search-chart svg.chart").count() == 1
    console.assert_clean()


def test_live_chart_is_drawn_by_chart_js_from_archive_timeline(
        reuters: ReutersSite, page: tuple[Page, Console]) -> None:
    tab, console = page
    tab.goto(reuters.base + "live?q=" + quote("cocoa"))
    chart = chart_of(tab, "main .chart-box")
    expected = reuters_timeline(reuters, "cocoa")
    assert chart["by"] == expected.by
    assert [[b["label"], b["count"]] for b in chart["bars"]] == timeline.chart_rows(expected)
    console.assert_clean()


def reuters_timeline(site: ReutersSite, query: str) -> timeline.Timeline:
    from archive.search import Archive
    archive = Archive(site.index)
    try:
        return timeline.auto_timeline(archive, query)
    finally:
        archive.close()


# --- the bytes a first query gains --------------------------------------------------------------

def test_a_first_query_fetches_the_chart_only_when_its_lists_are_whole(
        reuters: ReutersSite, page: tuple[Page, Console]) -> None:
    """A query whose lists the first page read to their end gets its chart at once; one that
    would need whole lists fetched gets a button, and no chart code or list tail is fetched
    until it is pressed."""
    tab, console = page
    fetched: list[str] = []
    tab.on("request", lambda request: fetched.append(request.url))
    rare = reuters.cli_timeline("cocoa", "month")
    assert 0 < rare["total"] <= 100  # within the head of its list
    tab.goto(reuters.search_url("cocoa"))
    chart_of(tab, ".search-chart")
    assert tab.locator(".search-chart button").count() == 0
    fetched.clear()
    tab.goto(reuters.search_url("said"))  # in most stories: its list runs past the head
    expect(tab.locator(".search-chart button.search-chart-show")).to_be_visible()
    assert not [u for u in fetched if u.endswith("/chart.js")]
    before = len(fetched)
    tab.locator(".search-chart button.search-chart-show").click()
    chart_of(tab, ".search-chart")
    assert [u for u in fetched[before:] if u.endswith("/chart.js")]
    console.assert_clean()


def test_chart_adds_under_five_kilobytes_gzipped_to_a_first_query(reuters: ReutersSite) -> None:
    built = reuters.folder / site_search.CLIENT_PREFIX
    chart = len(gzip.compress((built / site_search.CHART_SCRIPT).read_bytes(), 6))
    search = len(gzip.compress((built / site_search.CLIENT_SCRIPT).read_bytes(), 6))
    added = chart + max(0, search - SEARCH_JS_BEFORE_CHART)
    print(f"chart.js {chart} B gzip; search.js {search} B gzip "
          f"(+{search - SEARCH_JS_BEFORE_CHART}); added {added} B")
    assert added < CHART_BUDGET, added
