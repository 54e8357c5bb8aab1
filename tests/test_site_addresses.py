"""Addresses in the built site: only http(s) links from inputs, and no preview-server address.

Inputs are indexed and the site built through the CLI, as a user would; the produced HTML and
XML are then parsed, so the assertions are about what a browser or feed reader would follow.
"""

from __future__ import annotations

import json
import threading
import urllib.request
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote, urlsplit

import feedparser
import pytest
from click.testing import CliRunner

from archive import render
from archive.article import Article, web_url
from archive.cli import main

ATOM = "{http://www.w3.org/2005/Atom}"
SITEMAP_LOC = "{http://www.sitemaps.org/schemas/sitemap/0.9}loc"

#: Addresses a third party could put in front matter or a feed item. ``\x01`` and the tab are
#: ignored by browsers, so each of these would run as ``javascript:`` if linked.
HOSTILE = (
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    " \x01 javascript:alert(3)",
    "java\tscript:alert(4)",
    "data:text/html,<script>alert(5)</script>",
    "vbscript:msgbox(6)",
    "//evil.example/protocol-relative",
)
GOOD = "http://ok.example/a?b=<c>"
FEED_GOOD = "https://feed.example/story?x=1&y=2"

#: The one non-web href the built-in theme writes itself: an empty favicon, so that browsers
#: do not ask the server for /favicon.ico. It is a constant, never anything from an input.
OWN_DATA_ICON = ("link", "href", "data:,")


def markdown(title: str, url: str) -> str:
    return (f"---\ntitle: {title}\ndate: 2021-05-04\nsource: Wire\nurl: {json.dumps(url)}\n"
            f"---\n\nThe story of {title.lower()} goes on for a while.\n")


def rss(links: tuple[str, ...]) -> str:
    items = "".join(
        f"<item><title>Feed story {n}</title><link><![CDATA[{link}]]></link>"
        f"<pubDate>Tue, 04 May 2021 10:00:00 GMT</pubDate>"
        f"<description>Feed story {n} text.</description></item>\n"
        for n, link in enumerate(links))
    return ('<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
            f"<title>Hostile Feed</title><link>https://feed.example/</link>\n{items}"
            "</channel></rss>\n")


def run(*args: str | Path) -> None:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output


@pytest.fixture()
def hostile_index(tmp_path: Path) -> Path:
    news = tmp_path / "news"
    news.mkdir()
    for number, url in enumerate((*HOSTILE, GOOD)):
        (news / f"story-{number}.md").write_text(markdown(f"Story {number}", url), "utf-8")
    (news / "items.rss").write_text(rss((*HOSTILE, FEED_GOOD)), "utf-8")
    index = tmp_path / "index"
    run("index", news, "--index", index)
    return index


class _Links(HTMLParser):
    """Every (tag, attribute, value) of a page that a browser would follow or load."""

    ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "poster", "srcset"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [(tag, name, value or "") for name, value in attrs
                       if name in self.ATTRIBUTES]


def followed_addresses(out: Path) -> list[tuple[str, str, str]]:
    """(file, attribute, value) of every link in the site's HTML pages and XML files."""
    found: list[tuple[str, str, str]] = []
    for path in sorted(out.rglob("*")):
        relative = path.relative_to(out).as_posix()
        if path.suffix == ".html":
            parser = _Links()
            parser.feed(path.read_text("utf-8"))
            found += [(relative, name, value) for tag, name, value in parser.found
                      if (tag, name, value) != OWN_DATA_ICON]
        elif path.suffix == ".xml":
            for element in ET.parse(path).iter():
                found += [(relative, "href", v) for k, v in element.attrib.items() if k == "href"]
                text = element.text or ""
                if element.tag == f"{ATOM}id" and text.startswith("urn:uuid:"):
                    continue  # a name for the entry, not an address (sites with no base URL)
                if element.tag in (f"{ATOM}id", SITEMAP_LOC):
                    found.append((relative, element.tag, text))
    return found


def non_web(value: str) -> bool:
    """True for an address a browser would read with a scheme other than http(s), or as
    protocol-relative (a relative path is fine)."""
    cleaned = "".join(c for c in value.strip("".join(map(chr, range(0x21))))
                      if c not in "\t\n\r")
    scheme = urlsplit(cleaned).scheme.lower()
    return cleaned.startswith("//") or scheme not in ("", "http", "https")


@pytest.mark.parametrize("base_url", [None, "https://news.example/"])
def test_only_web_addresses_from_inputs_become_links(hostile_index: Path, tmp_path: Path,
                                                     base_url: str | None) -> None:
    out = tmp_path / "site"
    run("site", "--index", hostile_index, "--out", out, "--no-progress",
        *(["--base-url", base_url] if base_url else []))
    pages = [p for p in out.glob("2021/05/04/*/index.html")]
    assert len(pages) == 2 * (len(HOSTILE) + 1)  # every hostile article still has its page
    addresses = followed_addresses(out)
    assert [a for a in addresses if non_web(a[2])] == []
    assert len([a for a in addresses if a[2] == GOOD]) == 1  # the Markdown file's, escaped
    assert len([a for a in addresses if a[2] == FEED_GOOD]) == 1  # the feed item's
    assert sum('href="http://ok.example/a?b=&lt;c&gt;"' in p.read_text("utf-8")
               for p in pages) == 1
    everything = "\n".join(p.read_text("utf-8") for p in out.rglob("*.html"))
    assert "alert(" not in everything and "vbscript" not in everything.lower()
    assert "evil.example" not in everything


def test_index_keeps_only_web_addresses(hostile_index: Path) -> None:
    result = CliRunner().invoke(main, ["search", "story", "--index", str(hostile_index),
                                       "--json", "--limit", "50"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)["hits"]
    assert len(hits) == 2 * (len(HOSTILE) + 1)
    assert {h["url"] for h in hits} == {"", FEED_GOOD, GOOD}


@pytest.mark.parametrize("address", HOSTILE)
def test_an_article_drops_a_non_web_address(address: str) -> None:
    assert web_url(address) == ""
    assert Article(id="a", title="t", body="b", path="p", url=address).url == ""


def test_web_addresses_are_kept_as_a_browser_reads_them() -> None:
    assert web_url(GOOD) == GOOD
    assert web_url("  HTTPS://Ok.example/x\n") == "HTTPS://Ok.example/x"
    assert web_url("http:no-host") == "" and web_url("http://[broken") == ""


def test_article_template_links_only_web_addresses() -> None:
    """The template's own guard, for a record that did not pass through Article (a theme's
    data, an index written before addresses were checked): a non-web address is not linked."""
    fields = {name: getattr(Article(id="a-1", title="Hostile", body="Text.", path="a.md"), name)
              for name in Article.__dataclass_fields__}
    record = SimpleNamespace(**{**fields, "url": "javascript:alert(1)"})
    html = render.environment("site", html=True).get_template("article.html").render(
        site=SimpleNamespace(title="T", language="en", base_url=""), page_title="Hostile",
        root="", canonical="", path="a/index.html", facet_titles={}, url_of=lambda h: "",
        article=record, related=[], copies=[], facet_url=lambda *a: "")
    assert "<h1>Hostile</h1>" in html and "javascript" not in html


def test_live_search_links_only_web_addresses(hostile_index: Path, tmp_path: Path) -> None:
    from archive.serve import make_server
    out = tmp_path / "site"
    run("site", "--index", hostile_index, "--out", out, "--no-progress")
    server = make_server(out, hostile_index, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/live?q={quote('story')}",
                                    timeout=10) as response:
            html = response.read().decode("utf-8")
    finally:
        server.shutdown()
        server.server_close()
    parser = _Links()
    parser.feed(html)
    assert "Story 1" in html
    assert [f for f in parser.found if f != OWN_DATA_ICON and non_web(f[2])] == []


# --- the site's own address --------------------------------------------------------------------

def build(index: Path, out: Path, *options: str) -> None:
    run("site", "--index", index, "--out", out, "--no-progress", *options)


def test_a_site_without_base_url_names_no_server_and_links_relatively(hostile_index: Path,
                                                                      tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(hostile_index, out)
    for path in (p for p in out.rglob("*") if p.is_file()):
        data = path.read_bytes()
        assert b"127.0.0.1" not in data and b"localhost" not in data, path
    assert not (out / "sitemap.xml").exists()
    assert "Sitemap" not in (out / "robots.txt").read_text("utf-8")
    for page in out.rglob("*.html"):
        html = page.read_text("utf-8")
        assert 'rel="canonical"' not in html and "sitemap.xml" not in html, page
    for relative, _name, value in followed_addresses(out):
        if value in (GOOD, FEED_GOOD):
            continue  # the articles' original addresses, not the site's own
        assert not urlsplit(value).scheme and not value.startswith("/"), (relative, value)

    feed = out / "sources/hostile-feed/feed.xml"
    parsed = feedparser.parse(feed.read_bytes())
    assert not parsed.bozo and len(parsed.entries) == len(HOSTILE) + 1
    root = ET.parse(feed).getroot()
    ids = [e.text or "" for e in root.iter(f"{ATOM}id")]
    assert all(i.startswith("urn:uuid:") for i in ids) and len(set(ids)) == len(ids)
    for entry in root.iter(f"{ATOM}entry"):
        [link] = entry.iter(f"{ATOM}link")
        assert (feed.parent / link.attrib["href"] / "index.html").is_file()
    build(hostile_index, out, "--force")
    assert [e.text for e in ET.parse(feed).getroot().iter(f"{ATOM}id")] == ids  # permanent


def test_a_site_with_base_url_gives_absolute_addresses(hostile_index: Path,
                                                       tmp_path: Path) -> None:
    out = tmp_path / "site"
    base = "https://example.org/news/"
    build(hostile_index, out, "--base-url", base.rstrip("/"))  # the slash is added
    assert f'<link rel="canonical" href="{base}">' in (out / "index.html").read_text("utf-8")
    page = next(out.glob("2021/05/04/story-1-*/index.html"))
    folder = page.parent.relative_to(out).as_posix()
    assert f'<link rel="canonical" href="{base}{folder}/">' in page.read_text("utf-8")
    assert (out / "robots.txt").read_text("utf-8").rstrip().endswith(f"Sitemap: {base}sitemap.xml")
    locs = [e.text or "" for e in ET.parse(out / "sitemap.xml").getroot().iter(SITEMAP_LOC)]
    assert f"{base}{folder}/" in locs and f"{base}" in locs
    for loc in locs:
        assert loc.startswith(base) and (out / loc[len(base):] / "index.html").is_file(), loc
    root = ET.parse(out / "feed.xml").getroot()
    assert root.find(f"{ATOM}id").text == f"{base}feed.xml"  # type: ignore[union-attr]
    links = {link.attrib["rel"]: link.attrib["href"] for link in root.findall(f"{ATOM}link")}
    assert links == {"self": f"{base}feed.xml", "alternate": base}
    entries = root.findall(f"{ATOM}entry")
    assert len(entries) == 2 * (len(HOSTILE) + 1)
    for entry in entries:
        href = entry.find(f"{ATOM}link").attrib["href"]  # type: ignore[union-attr]
        assert entry.find(f"{ATOM}id").text == href  # type: ignore[union-attr]
        assert href.startswith(base) and (out / href[len(base):] / "index.html").is_file()


def test_changing_the_base_url_rebuilds_the_site(hostile_index: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(hostile_index, out, "--base-url", "https://example.org/")
    assert (out / "sitemap.xml").is_file()
    build(hostile_index, out)
    assert not (out / "sitemap.xml").exists()
    assert 'rel="canonical"' not in (out / "index.html").read_text("utf-8")


@pytest.mark.parametrize("bad", ["javascript:alert(1)", "example.org/news", "/news/",
                                 "ftp://example.org/", "https://example.org/?page=1",
                                 "https://exa mple.org/", "http://[::1"])
def test_a_bad_base_url_is_a_one_line_usage_error(tmp_path: Path, bad: str) -> None:
    result = CliRunner().invoke(main, ["site", "--index", str(tmp_path / "index"), "--out",
                                       str(tmp_path / "site"), "--base-url", bad])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "https://example.org/news/" in result.output
    assert not (tmp_path / "site").exists()


def test_site_help_says_what_the_base_url_is_for() -> None:
    result = CliRunner().invoke(main, ["site", "--help"])
    assert "published at" in result.output and "relative" in result.output
    assert "127.0.0.1" not in result.output
