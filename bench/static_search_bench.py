"""Bench the static site search side by side with Pagefind on the same pages: build cost, bundle
size, bytes per query, and agreement with the CLI.

    python bench/static_search_bench.py NAME=INDEX [NAME=INDEX ...] [--queries 200]
        [--browser-queries 50] [--pagefind-timeout 1800] [--keep DIR] [--no-pagefind]
        [--no-browser] [--json bench/results/static_search.json]

e.g. ``bbc=/tmp/bbc-index reuters=/tmp/reuters-index`` (build them with ``archive index``).

Per corpus, in one run:

1. **The site's article pages**, rendered with the site's own ``article.html`` template (the
   same markup ``archive site`` writes; the related/copies lists, outside the indexed region,
   are left empty, so 100k pages render in minutes rather than hours) into ``NAME/site/``.
   The Pagefind copy ``NAME/pagefind-site/`` holds the same pages with ``data-pagefind-body``
   added next to ``data-search-body`` on the article body div, so Pagefind indexes only the
   article body (titles still come from the page's ``<h1>``, as Pagefind's default meta).
2. **Builds**, each in its own measuring child process (wall time, CPU time and peak RSS of the
   build process from ``getrusage(RUSAGE_CHILDREN)`` in a wrapper that runs only that build):
   the archive's ``build_bundle`` into ``NAME/site/``, and ``pagefind --site
   NAME/pagefind-site`` (killed after ``--pagefind-timeout`` seconds; reported, not hidden).
3. **Transfers in a real browser** (Debian's Chromium driven by Playwright, pages served by a
   local ``http.server`` on 127.0.0.1) for ``--browser-queries`` queries, both clients the same
   way: every response is recorded and sized as its file gzipped (level 6) or as is when that
   is smaller (Pagefind's index files are gzip already). *First* = a fresh browser context
   (empty cache) opens the search page and runs the query until the network is quiet: client
   code included, the HTML page itself not. The archive page is the site's search markup
   (``page_markup``): its UI shows the first ten results with excerpts; exact totals and filter
   counts (and their code, ``counts.js``) load only when a visitor opens the filter panel, which
   the *+counts* node column measures. The Pagefind page imports ``pagefind/pagefind.js`` and runs
   ``pagefind.search(q)`` and ``data()`` of the top ten results (a fragment each), i.e. what
   a results list of ten needs (Pagefind's own UI shows five first). *Later* = the next query
   in the same page after the earlier ones: only what it newly fetched.
4. **Transfers under node** for the archive over the whole query set (``--queries``): the real
   engine.js against the bundle, with a split the browser cannot see: *first (results)* is what
   the first page of ten needs, *+counts* adds exact totals and filter counts.
5. **Overlap@10** with ``archive search`` (the CLI): the archive bundle through its Python
   reference reader on the whole query set; Pagefind's top ten from the browser run, for
   context only (it indexes bodies only and has no OR/NOT: its query is the words with the
   operators dropped, phrases kept in quotes).

Results go to ``--json`` (default ``bench/results/static_search.json``) and a markdown table
is printed.
"""

from __future__ import annotations

import importlib.util

import argparse
import gzip
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results" / "static_search.json"
CHROMIUM = Path("/usr/bin/chromium")
MARKER = "data-search-body"
PAGEFIND_MARKER = "data-search-body data-pagefind-body"
SHOWN = 10   # results shown per query, both clients

NODE_SCRIPT = r"""
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const vm = require("node:vm");
const zlib = require("node:zlib");
const [site, queriesFile] = process.argv.slice(1); // node -e: no script path
for (const f of ["search.js", "counts.js"]) {  // ui.js (in search.js) stands aside without a DOM
  vm.runInThisContext(readFileSync(join(site, "assets/search", f), "utf-8"));
}
const { Engine } = globalThis.ArchiveSearch;
const base = join(site, "search/bundle");
const sizes = new Map();
const gz = (name) => {
  if (!sizes.has(name)) sizes.set(name, zlib.gzipSync(readFileSync(join(base, name + ".js")), { level: 6 }).length);
  return sizes.get(name);
};
const gzFile = (f) => zlib.gzipSync(readFileSync(join(site, "assets/search", f)), { level: 6 }).length;
// What the page loads up front; counts.js comes only with the filter panel (the +counts column).
const clientBytes = gzFile("search.js");
const countsCode = gzFile("counts.js");
const loader = async (name) => {
  let got;
  new Function("__archiveBundle", readFileSync(join(base, name + ".js"), "utf-8"))((n, d) => { got = d; });
  return got;
};
const bytesOf = (names) => names.reduce((a, n) => a + gz(n), 0);
async function page(engine, q, complete) {
  const r = await engine.search(q, { complete });
  await Promise.all(r.hits.map((h) => engine.article(h.n)));
  return r;
}
(async () => {
  const out = [];
  const warm = new Engine(loader);
  for (const q of JSON.parse(readFileSync(queriesFile, "utf-8"))) {
    const cold = new Engine(loader);
    const r = await page(cold, q, false);
    const firstNames = [...cold.load.requests];
    await page(cold, q, true);
    const before = warm.load.requests.length;
    await page(warm, q, false);
    out.push({
      q, exact: r.exact,
      first: clientBytes + bytesOf(firstNames), firstRequests: firstNames.length + 3,
      counts: clientBytes + countsCode + bytesOf(cold.load.requests),
      later: bytesOf(warm.load.requests.slice(before)), laterRequests: warm.load.requests.length - before,
    });
  }
  console.log(JSON.stringify({ clientBytes, queries: out }));
})();
"""

# Runs one command and reports its own wall time, CPU time and peak RSS (the children's
# rusage of this wrapper is that command's alone); kills the command's group on timeout.
MEASURE_SCRIPT = r"""
import json, os, resource, signal, subprocess, sys, time
report, timeout, cmd = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
started = time.perf_counter()
child = subprocess.Popen(cmd, start_new_session=True)
timed_out = False
try:
    child.wait(timeout=timeout)
except subprocess.TimeoutExpired:
    timed_out = True
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
use = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(report, "w") as f:
    json.dump({"returncode": child.returncode, "timed_out": timed_out,
               "wall_s": round(time.perf_counter() - started, 1),
               "cpu_s": round(use.ru_utime + use.ru_stime, 1),
               "peak_rss_mb": round(use.ru_maxrss / 1024, 1)}, f)
"""

PAGEFIND_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pagefind search</title>
<link rel="icon" href="data:,"></head><body>
<script type="module">
window.runQuery = async (q, shown) => {
  const pagefind = await import("./pagefind/pagefind.js");
  const found = await pagefind.search(q);
  const results = found ? found.results : [];
  const data = await Promise.all(results.slice(0, shown).map((r) => r.data()));
  return { total: results.length, urls: data.map((d) => d.url) };
};
window.pagefindPageReady = true;
</script></body></html>
"""


# --- building ------------------------------------------------------------------------------------

def build(index: Path, site: Path, procs: int | None = None) -> dict:
    """Build the archive's bundle in this (child) process and return the report; ``procs`` as
    ``build_bundle`` takes it (None: its own choice, as ``archive site`` makes it)."""
    from archive.search import Archive
    from archive.site.files import OutputFolder
    from archive.site.search import build_bundle
    with Archive(index) as archive:  # as `archive site` opens it
        return build_bundle(archive, OutputFolder(site), procs=procs).to_dict()


def measured(cmd: list[str], timeout: float, log: Path) -> dict:
    """Run ``cmd`` in a measuring wrapper; its output goes to ``log``."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        report = Path(f.name)
    try:
        with open(log, "w") as out:
            subprocess.run([sys.executable, "-c", MEASURE_SCRIPT, str(report), str(timeout),
                            *cmd], stdout=out, stderr=subprocess.STDOUT, check=True)
        return json.loads(report.read_text())
    finally:
        report.unlink(missing_ok=True)


def pagefind_binary() -> Path | None:
    try:
        from pagefind_bin import get_executable
        return Path(get_executable())
    except Exception:  # noqa: BLE001 - not installed, or no binary for this platform
        found = shutil.which("pagefind")
        return Path(found) if found else None


def render_pages(index: Path, site: Path, pagefind_site: Path | None) -> dict[str, str]:
    """Every article's page, with the site's article template, into ``site`` (and the Pagefind
    copy, which differs only by ``data-pagefind-body``). Returns {page URL path: article id}."""
    from archive import render, store
    from archive.search import Archive
    from archive.site import urls
    from archive.site.builder import FACET_TITLES, SiteConfig
    config = SiteConfig()
    env = render.environment("site", None, html=True)
    template = env.get_template("article.html")
    pages: dict[str, str] = {}
    with Archive(index) as archive:
        for stored in archive.searcher.reader().all_stored_fields():
            article = store.from_stored(stored)
            path = urls.article_path(article.id, article.title, article.date)
            html = template.render(
                site=config, page_title=article.title, root=urls.root_prefix(path),
                canonical=urls.canonical(config.base_url, path), path=path,
                facet_titles=FACET_TITLES, url_of=lambda h: urls.article_path(h.id, h.title, h.date),
                article=article, related=[], copies=[], facet_url=urls.facet_path)
            if html.count(MARKER) != 1:
                raise RuntimeError(f"the article template must mark the body once with {MARKER}")
            _write(site / path, html)
            if pagefind_site is not None:
                _write(pagefind_site / path, html.replace(MARKER, PAGEFIND_MARKER))
            pages["/" + path[: -len("index.html")]] = article.id
    return pages


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


def search_page(site: Path) -> None:
    """A search page with the site's search markup (no site chrome) at ``search/index.html``."""
    from archive.site.search import page_markup
    _write(site / "search" / "index.html",
           '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Search</title>'
           '<link rel="icon" href="data:,"></head><body>\n'
           f"{page_markup('../')}\n</body></html>\n")


def folder_size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def med_p95_kb(values: list[float]) -> tuple[float, float] | None:
    if not values:
        return None
    return (round(percentile(values, 50) / 1024, 1), round(percentile(values, 95) / 1024, 1))


def pagefind_query(q: str) -> str:
    """The bench query as Pagefind can take it: words and quoted phrases, operators dropped."""
    return " ".join(w for w in q.split() if w not in ("OR", "NOT", "AND"))


def node_transfers(site: Path, queries: list[str], qfile: Path) -> dict:
    """What each query fetches from the bundle in ``site`` under node, the real engine.js
    (``NODE_SCRIPT``): ``{"clientBytes": ..., "queries": [{"q", "first", "counts", ...}]}``;
    the query list is written to ``qfile`` for node to read."""
    qfile.write_text(json.dumps(queries), "utf-8")
    node = subprocess.run(["node", "-e", NODE_SCRIPT, str(site), str(qfile)],
                          capture_output=True, text=True, check=True)
    return json.loads(node.stdout)


# --- the browser ---------------------------------------------------------------------------------

class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # noqa: D102
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "max-age=3600")  # a later query reuses what it has
        super().end_headers()


class Sizer:
    """Bytes on the wire for a served file: gzip level 6, or as is when that is smaller."""

    def __init__(self, root: Path):
        self.root, self.cache = root, {}

    def __call__(self, url: str) -> int:
        path = unquote(urlsplit(url).path).lstrip("/")
        if path not in self.cache:
            file = self.root / path
            if file.is_dir():
                file = file / "index.html"
            data = file.read_bytes() if file.is_file() else b""
            self.cache[path] = min(len(data), len(gzip.compress(data, 6))) if data else 0
        return self.cache[path]


class Browser:
    """Chromium through Playwright, pages served from ``root`` on 127.0.0.1."""

    def __init__(self, root: Path):
        from playwright.sync_api import sync_playwright
        self.server = ThreadingHTTPServer(("127.0.0.1", 0),
                                          partial(_Quiet, directory=str(root)))
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.size = Sizer(root)
        self.pw = sync_playwright().start()
        self.chromium = self.pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True,
            args=["--no-sandbox", "--disable-background-networking"])

    def close(self) -> None:
        self.chromium.close()
        self.pw.stop()
        self.server.shutdown()
        self.server.server_close()

    def context(self) -> tuple[Any, list[tuple[str, int]], list[int]]:
        """A fresh context (empty cache) recording (url, status) of every response."""
        ctx = self.chromium.new_context()
        seen: list[tuple[str, int]] = []
        pending = [0]
        ctx.on("request", lambda r: pending.__setitem__(0, pending[0] + 1))
        ctx.on("requestfinished", lambda r: pending.__setitem__(0, pending[0] - 1))
        ctx.on("requestfailed", lambda r: pending.__setitem__(0, pending[0] - 1))
        ctx.on("response", lambda r: seen.append((r.url, r.status, r.from_service_worker)))
        return ctx, seen, pending

    @staticmethod
    def settle(page: Any, pending: list[int], quiet: float = 0.3, limit: float = 60) -> None:
        """Wait until no request has been in flight for ``quiet`` seconds."""
        deadline, still = time.monotonic() + limit, None
        while time.monotonic() < deadline:
            page.wait_for_timeout(50)
            if pending[0] > 0:
                still = None
            elif still is None:
                still = time.monotonic()
            elif time.monotonic() - still >= quiet:
                return

    def fetched(self, seen: list[tuple[str, int, bool]], skip: str) -> list[str]:
        """The fetched responses' URLs, less the HTML page at ``skip``."""
        return [u for u, status, _ in seen if status == 200 and not u.startswith("data:")
                and urlsplit(u).path != urlsplit(skip).path]

    def bytes_of(self, seen: list[tuple[str, int, bool]], skip: str) -> tuple[int, int]:
        """(bytes, requests) of the fetched responses, less the HTML page at ``skip``."""
        got = self.fetched(seen, skip)
        return sum(self.size(u) for u in got), len(got)


_FINAL_STATUS = ("() => { const s = document.querySelector('.search-status');"
                 " return s && s.textContent && !s.textContent.startsWith('Searching'); }")


def browse_archive(browser: Browser, page_url: str, queries: list[str]) -> list[dict]:
    """The archive's UI: each query cold in a fresh context, and all in one page as later."""
    from urllib.parse import quote
    rows = []
    for q in queries:
        ctx, seen, pending = browser.context()
        page = ctx.new_page()
        url = f"{page_url}?q={quote(q)}"
        page.goto(url)
        page.wait_for_function(_FINAL_STATUS, timeout=120_000)
        browser.settle(page, pending)
        first, first_requests = browser.bytes_of(seen, url)
        shown = page.eval_on_selector_all(".search-results li", "els => els.length")
        rows.append({"q": q, "first": first, "first_requests": first_requests, "shown": shown,
                     "files": [urlsplit(u).path for u in browser.fetched(seen, url)]})
        ctx.close()
    ctx, seen, pending = browser.context()
    page = ctx.new_page()
    page.goto(page_url)
    browser.settle(page, pending)
    for row in rows:
        before = len(seen)
        page.evaluate("() => { document.querySelector('.search-status').textContent = ''; }")
        page.fill("#search-q", row["q"])
        page.press("#search-q", "Enter")
        page.wait_for_function(_FINAL_STATUS, timeout=120_000)
        browser.settle(page, pending)
        row["later"], row["later_requests"] = browser.bytes_of(seen[before:], page_url)
    ctx.close()
    return rows


def browse_pagefind(browser: Browser, page_url: str, queries: list[str]) -> list[dict]:
    """Pagefind's JS API: search, then data() of the top results; cold and later as above."""
    rows = []
    for q in queries:
        ctx, seen, pending = browser.context()
        page = ctx.new_page()
        page.goto(page_url)
        page.wait_for_function("() => window.pagefindPageReady === true")
        got = page.evaluate("([q, n]) => window.runQuery(q, n)", [pagefind_query(q), SHOWN])
        browser.settle(page, pending)
        first, first_requests = browser.bytes_of(seen, page_url)
        rows.append({"q": q, "first": first, "first_requests": first_requests,
                     "shown": len(got["urls"]), "urls": got["urls"], "total": got["total"],
                     "files": [urlsplit(u).path for u in browser.fetched(seen, page_url)]})
        ctx.close()
    ctx, seen, pending = browser.context()
    page = ctx.new_page()
    page.goto(page_url)
    page.wait_for_function("() => window.pagefindPageReady === true")
    browser.settle(page, pending)
    for row in rows:
        before = len(seen)
        page.evaluate("([q, n]) => window.runQuery(q, n)", [pagefind_query(row["q"]), SHOWN])
        browser.settle(page, pending)
        row["later"], row["later_requests"] = browser.bytes_of(seen[before:], page_url)
    ctx.close()
    return rows


def sample(queries: list[str], count: int) -> list[str]:
    """``count`` queries spread evenly over the list (its kinds are drawn at random)."""
    if count >= len(queries):
        return list(queries)
    step = len(queries) / count
    return [queries[int(i * step)] for i in range(count)]


PARTS = (("client code", re.compile(r"/assets/search/|/pagefind/[^/]+\.(js|pagefind)$")),
         ("meta", re.compile(r"/bundle/(meta|d/\d+)\.js$|pagefind-entry\.json$|\.pf_meta$")),
         ("postings", re.compile(r"/bundle/s/[^/]+/[tp]/|\.pf_index$")),
         ("filters/counts", re.compile(r"/bundle/([cf]/|facets\.js$)|\.pf_filter$")),
         ("shown results", re.compile(r"/bundle/a/|\.pf_fragment$")))


def breakdown(rows: list[dict], size: Any) -> dict[str, float]:
    """Median KB of a first query by kind of file (the medians need not add up to the total)."""
    out: dict[str, float] = {}
    for part, pattern in PARTS:
        values = [sum(size(f) for f in r["files"] if pattern.search(f)) for r in rows]
        out[part] = round(statistics.median(values) / 1024, 1) if values else 0.0
    return out


def summary(rows: list[dict], size: Any = None) -> dict:
    """Medians and p95s; *later* leaves out the session's first query (it starts cold)."""
    later = rows[1:]
    return {
        "first_parts_kb": breakdown(rows, size) if size else None,
        "queries": len(rows),
        "first_kb": med_p95_kb([r["first"] for r in rows]),
        "later_kb": med_p95_kb([r["later"] for r in later]),
        "first_requests": statistics.median(r["first_requests"] for r in rows) if rows else None,
        "later_requests": statistics.median(r["later_requests"] for r in later) if later else None,
    }


# --- one corpus ----------------------------------------------------------------------------------

def bench(name: str, index: Path, args: argparse.Namespace, work: Path) -> dict:
    from archive.search import Archive
    from tests.support import static_search_reference as ref
    base = work / name
    shutil.rmtree(base, ignore_errors=True)
    site, pf_site = base / "site", base / "pagefind-site"
    binary = None if args.no_pagefind else pagefind_binary()
    log = lambda text: print(f"[{name}] {text}", file=sys.stderr, flush=True)  # noqa: E731

    started = time.perf_counter()
    pages = render_pages(index, site, pf_site if binary else None)
    log(f"rendered {len(pages):,} article pages in {time.perf_counter() - started:.0f} s")

    # The archive's bundle, built in a measured child.
    report_file = base / "archive-build.json"
    archive_build = measured([sys.executable, __file__, "--build", str(index), str(site),
                              str(report_file)], args.archive_timeout, base / "archive-build.log")
    if archive_build["returncode"] != 0:
        raise RuntimeError(f"archive bundle build failed: see {base / 'archive-build.log'}")
    report = json.loads(report_file.read_text())
    search_page(site)
    files, size = folder_size(site / "search" / "bundle")
    client_files, client_size = folder_size(site / "assets" / "search")
    archive: dict[str, Any] = {
        "build": archive_build, "report": report,
        "bundle_mb": round((size + client_size) / 2 ** 20, 1), "files": files + client_files,
    }
    log(f"archive bundle: {archive_build}")

    # Pagefind on the same pages, body region only.
    pagefind: dict[str, Any] = {"ran": False}
    if binary:
        pf_build = measured([str(binary), "--site", str(pf_site), "--output-subdir", "pagefind",
                             "--logfile", str(base / "pagefind.log")], args.pagefind_timeout,
                            base / "pagefind-build.log")
        pagefind = {"ran": True, "build": pf_build, "version": _pagefind_version(binary),
                    "finished": pf_build["returncode"] == 0 and not pf_build["timed_out"]}
        if pagefind["finished"]:
            files, size = folder_size(pf_site / "pagefind")
            pagefind.update(bundle_mb=round(size / 2 ** 20, 1), files=files)
            _write(pf_site / "pf.html", PAGEFIND_PAGE)
        log(f"pagefind: {pf_build}")

    # Queries and agreement with the CLI (the archive bundle through the reference reader).
    reader = ref.BundleReader(site / "search" / "bundle")
    cli_top: dict[str, list[str]] = {}
    with Archive(index) as arch:
        titles = [s.get("title", "") for s in arch.searcher.reader().all_stored_fields()]
        queries = ref.headline_queries(titles, args.queries)
        overlaps = []
        for q in queries:
            found = arch.search(q, page_size=SHOWN, facets=False)
            cli_top[q] = [h.id for h in found.hits]
            if not found.total:
                continue
            got = ref.search(reader, q, facets=False)
            overlaps.append(ref.overlap_at(SHOWN, cli_top[q], [h["id"] for h in got.hits]))
    archive["overlap10"] = round(sum(overlaps) / len(overlaps), 3) if overlaps else None
    archive["compared"] = len(overlaps)

    # Transfers under node, the whole query set.
    transfers = node_transfers(site, queries, base / "queries.json")
    rows = transfers["queries"]
    archive["node"] = {
        "queries": len(rows), "client_kb": round(transfers["clientBytes"] / 1024, 1),
        "first_kb": med_p95_kb([r["first"] for r in rows]),
        "first_requests": statistics.median(r["firstRequests"] for r in rows),
        "counts_kb": med_p95_kb([r["counts"] for r in rows]),
        "later_kb": med_p95_kb([r["later"] for r in rows]),
        "early_stop": round(sum(not r["exact"] for r in rows) / len(rows), 2),
    }
    log(f"node: {archive['node']}")

    # Transfers in Chromium, both clients the same way.
    if not args.no_browser and browser_available():
        chosen = sample(queries, args.browser_queries)
        browser = Browser(base)
        try:
            a_rows = browse_archive(browser, browser.base + "site/search/index.html", chosen)
            archive["browser"] = summary(a_rows, browser.size)
            archive["browser"]["shown_median"] = statistics.median(r["shown"] for r in a_rows)
            log(f"archive in chromium: {archive['browser']}")
            if pagefind.get("finished"):
                p_rows = browse_pagefind(browser, browser.base + "pagefind-site/pf.html", chosen)
                pagefind["browser"] = summary(p_rows, browser.size)
                served = "/pagefind-site"   # the server's root is the corpus folder
                pf_overlaps = [ref.overlap_at(SHOWN, cli_top[r["q"]],
                                              [pages.get(u.removeprefix(served), u)
                                               for u in r["urls"]])
                               for r in p_rows if cli_top.get(r["q"])]
                pagefind["overlap10"] = (round(sum(pf_overlaps) / len(pf_overlaps), 3)
                                         if pf_overlaps else None)
                pagefind["compared"] = len(pf_overlaps)
                pagefind["wasm_js_kb"] = round(sum(browser.size(browser.base + "pagefind-site/"
                                                                + p.relative_to(pf_site).as_posix())
                                                   for p in (pf_site / "pagefind").glob("*")
                                                   if p.name in ("pagefind.js", "wasm.en.pagefind",
                                                                 "pagefind-entry.json"))
                                               / 1024, 1)
                log(f"pagefind in chromium: {pagefind['browser']}")
            (base / "browser-queries.json").write_text(json.dumps(
                {"archive": a_rows, "pagefind": p_rows if pagefind.get("finished") else []}))
        finally:
            browser.close()
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return {"corpus": name, "articles": report["articles"], "archive": archive,
            "pagefind": pagefind}


def browser_available() -> bool:
    if importlib.util.find_spec("playwright") is None:
        return False
    return CHROMIUM.exists()


def _pagefind_version(binary: Path) -> str:
    done = subprocess.run([str(binary), "--version"], capture_output=True, text=True)
    return done.stdout.strip()


# --- the table -----------------------------------------------------------------------------------

def _pair(value: Any) -> str:
    return "%.1f / %.1f" % tuple(value) if value else "–"


def table(results: list[dict]) -> str:
    head = ("corpus", "system", "build s (CPU s)", "peak RSS MB", "bundle MB", "files",
            "first query KB med / p95", "later query KB med / p95", "requests first / later",
            "node: results / +counts KB (med / p95)", "overlap@10 vs CLI")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        a, p = r["archive"], r["pagefind"]
        ab, nb = a.get("browser", {}), a["node"]
        lines.append("| " + " | ".join(str(v) for v in (
            f"{r['corpus']} ({r['articles']:,})", "archive bundle",
            f"{a['build']['wall_s']} ({a['build']['cpu_s']})", a["build"]["peak_rss_mb"],
            a["bundle_mb"], f"{a['files']:,}", _pair(ab.get("first_kb")),
            _pair(ab.get("later_kb")),
            f"{ab.get('first_requests', '–')} / {ab.get('later_requests', '–')}",
            f"{_pair(nb['first_kb'])} · {_pair(nb['counts_kb'])}",
            f"{a['overlap10']} ({a['compared']} q)")) + " |")
        if not p.get("ran"):
            lines.append(f"| {r['corpus']} | Pagefind | not run |" + " |" * (len(head) - 3))
            continue
        b = p["build"]
        if not p["finished"]:
            why = (f"timed out after {b['wall_s']} s" if b["timed_out"]
                   else f"failed (exit {b['returncode']})")
            lines.append("| " + " | ".join(str(v) for v in (
                f"{r['corpus']} ({r['articles']:,})", p.get("version", "Pagefind"),
                f"{why} ({b['cpu_s']})", b["peak_rss_mb"], "–", "–", "–", "–", "–", "–",
                "–")) + " |")
            continue
        pb = p.get("browser", {})
        version = p.get("version", "Pagefind")
        if p.get("when"):   # carried over from an earlier run (this one used --no-pagefind)
            version += f" (run {p['when'][:10]})"
        lines.append("| " + " | ".join(str(v) for v in (
            f"{r['corpus']} ({r['articles']:,})", version,
            f"{b['wall_s']} ({b['cpu_s']})", b["peak_rss_mb"], p["bundle_mb"],
            f"{p['files']:,}", _pair(pb.get("first_kb")), _pair(pb.get("later_kb")),
            f"{pb.get('first_requests', '–')} / {pb.get('later_requests', '–')}", "–",
            f"{p.get('overlap10', '–')} ({p.get('compared', 0)} q, body only)")) + " |")
    return "\n".join(lines)


def parts_table(results: list[dict]) -> str:
    """What a first query's bytes are (Chromium runs): median KB per kind of file."""
    names = [part for part, _ in PARTS]
    lines = ["| corpus | system | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 2)]
    for r in results:
        for system, data in (("archive bundle", r["archive"]), ("Pagefind", r["pagefind"])):
            parts = (data.get("browser") or {}).get("first_parts_kb")
            if parts:
                lines.append(f"| {r['corpus']} | {system} | "
                             + " | ".join(str(parts[n]) for n in names) + " |")
    return "\n".join(lines)


def machine() -> dict:
    return {"python": platform.python_version(), "cpus": os.cpu_count(),
            "load": os.getloadavg(), "when": time.strftime("%Y-%m-%d %H:%M:%S")}


def main(argv: list[str] | None = None) -> list[dict]:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 4 and argv[0] == "--build":
        report = build(Path(argv[1]), Path(argv[2]))
        Path(argv[3]).write_text(json.dumps(report))
        return []
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("indexes", nargs="+", help="NAME=INDEX_FOLDER")
    parser.add_argument("--queries", type=int, default=200, help="bench query set size")
    parser.add_argument("--browser-queries", type=int, default=50,
                        help="queries run in Chromium per client (a spread sample)")
    parser.add_argument("--pagefind-timeout", type=float, default=1800)
    parser.add_argument("--archive-timeout", type=float, default=7200)
    parser.add_argument("--keep", type=Path, help="build the sites here and keep them")
    parser.add_argument("--no-pagefind", action="store_true")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--json", type=Path, default=RESULTS, help="where to write the results")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="static-search-bench-"))
    earlier = previous_when(args.json)
    results: list[dict] = []
    try:
        for spec in args.indexes:
            name, _, folder = spec.partition("=")
            results.append(bench(name, Path(folder), args, work))
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)
            _save(args.json, results, earlier)   # after each corpus: a long run keeps it
        print(table(results))
        print()
        print(parts_table(results))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return results


def previous_when(path: Path) -> str | None:
    """When the results file at ``path`` was last written (its machine record)."""
    try:
        return json.loads(path.read_text())["machine"]["when"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _save(path: Path, results: list[dict], earlier: str | None = None) -> None:
    """Write ``results`` into ``path``, keeping other corpora's; ``earlier`` is when the file
    was written before this run (the date of a Pagefind row carried over)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    previous: dict[str, Any] = {}
    if path.is_file():
        try:
            previous = {r["corpus"]: r for r in json.loads(path.read_text())["corpora"]}
        except (ValueError, KeyError, TypeError):
            previous = {}
    for r in results:   # corpora benched in separate runs accumulate, newest wins
        old = previous.get(r["corpus"])
        if old and not r["pagefind"].get("ran") and old["pagefind"].get("ran"):
            # --no-pagefind: keep the earlier Pagefind figures, marked with their run date
            r = {**r, "pagefind": {"when": old.get("when") or earlier, **old["pagefind"]}}
        r.setdefault("when", time.strftime("%Y-%m-%d %H:%M:%S"))
        previous[r["corpus"]] = r
    path.write_text(json.dumps({"machine": machine(), "corpora": list(previous.values()),
                                "table": table(list(previous.values())),
                                "first_query_parts": parts_table(list(previous.values()))},
                               indent=1))


if __name__ == "__main__":
    main()
