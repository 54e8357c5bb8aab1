"""Local preview server: the built site, plus ``/live?q=`` answered by the Whoosh search layer.

The static search speaks most of the query language; ``/live`` speaks all of it (wildcards,
fuzzy terms, any field) because it runs the same ``Archive.search`` as the CLI. It renders
through the site's own templates, so a theme applies to it too, and its chart of matches per
period is counted by ``archive.timeline`` (as ``archive timeline`` counts) and drawn by the
site's chart.js, as the search page's is. Binds to loopback by default.
"""

from __future__ import annotations

import threading
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import jinja2

from archive import render, timeline
from archive.query import QueryError
from archive.search import Archive, SORTS
from archive.site import urls

LIVE_PATH = "/live"


class PreviewHandler(SimpleHTTPRequestHandler):
    """Static files from the site folder; ``/live`` rendered per request."""

    archive: Archive
    env: jinja2.Environment
    lock: threading.Lock
    base_url: str = "http://127.0.0.1:8000/"

    def do_GET(self) -> None:  # noqa: N802 (http.server API)
        parts = urlsplit(self.path)
        if parts.path.rstrip("/") == LIVE_PATH:
            self.send_live(parse_qs(parts.query))
        else:
            super().do_GET()

    def send_live(self, params: dict[str, list[str]]) -> None:
        query = params.get("q", [""])[0][:2000]
        sort = params.get("sort", ["relevance"])[0]
        sort = sort if sort in SORTS else "relevance"
        try:
            page = max(1, int(params.get("page", ["1"])[0]))
        except ValueError:
            page = 1
        results, error, counts = None, None, None
        if query.strip():
            try:
                with self.lock:  # one Whoosh searcher, shared by the server's threads
                    results = self.archive.search(query, sort=sort, page=page)
                    counts = timeline.auto_timeline(self.archive, query)
            except QueryError as exc:
                error = str(exc)
        html = self.env.get_template("live.html").render(
            site=_SiteInfo(), page_title="Live search", root="/", path="live/",
            canonical=self.base_url.rstrip("/") + LIVE_PATH, query=query, sort=sort,
            results=results, error=error, facet_titles={},
            chart=timeline.chart_rows(counts) if counts else [], chart_by=counts and counts.by,
            url_of=lambda h: urls.article_path(h.id, h.title, h.date))
        body = html.encode("utf-8")
        self.send_response(HTTPStatus.BAD_REQUEST if error else HTTPStatus.OK)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """Serve the site's own 404 page for missing files."""
        page = Path(self.directory) / "404.html"
        if code == HTTPStatus.NOT_FOUND and page.is_file():
            body = page.read_bytes()
            self.send_response(code)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().send_error(code, message, explain)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        if getattr(self.server, "verbose", False):
            super().log_message(format, *args)


class _SiteInfo:
    title = "News archive"
    language = "en"
    base_url = ""  # the published address is the build's business; /live exists only here


def make_server(site_dir: Path, index_dir: Path, host: str = "127.0.0.1", port: int = 8000,
                templates: Path | None = None, verbose: bool = False) -> ThreadingHTTPServer:
    handler = type("Handler", (PreviewHandler,), {
        "archive": Archive(index_dir),
        "env": render.environment("site", templates, html=True),
        "lock": threading.Lock(),
        "base_url": f"http://{host}:{port}/",
    })
    server = ThreadingHTTPServer((host, port), partial(handler, directory=str(site_dir)))
    server.verbose = verbose  # type: ignore[attr-defined]
    return server
