"""The static-site builder: page set, permalinks, escaping, pagination, feeds, themes,
and incremental rebuilds, on real indexes built in temp folders."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import feedparser
import pytest
from click.testing import CliRunner

from archive.cli import main
from archive.site import urls
from archive.site.builder import SiteConfig, build_site
from archive.site.files import OutputFolder, UnsafePath

ATOM = "{http://www.w3.org/2005/Atom}"

ARTICLES = {
    "volcano.txt": "Volcano erupts near village\n\nA volcano erupted on March 3, 2015, "
                   "forcing villagers to flee.\n\nAP",
    "cocoa.txt": "Cocoa prices climb\n\nCocoa prices rose on April 9, 2015 as rains "
                 "failed in the Ivory Coast.\n\nReuters",
    "hostile.txt": "Alert <script>alert(1)</script> headline\n\nThe body mentions "
                   "<img src=x onerror=alert(2)> and a \"quoted\" & ampersand on "
                   "May 1, 2015.\n\nReuters",
    "undated.txt": "Timeless story\n\nNothing in this text says when it was written.\n\nAP",
}


def index_folder(tmp_path: Path, articles: dict[str, str]) -> Path:
    news = tmp_path / "news"
    news.mkdir(exist_ok=True)
    for name, text in articles.items():
        (news / name).write_text(text, "utf-8")
    index = tmp_path / "index"
    result = CliRunner().invoke(main, ["index", str(news), "--index", str(index)])
    assert result.exit_code == 0, result.output
    return index


@pytest.fixture()
def built(tmp_path: Path) -> tuple[Path, Path]:
    index = index_folder(tmp_path, ARTICLES)
    out = tmp_path / "site"
    build_site(index, out, SiteConfig(page_size=2, base_url="https://news.example/"))
    return index, out


def article_pages(out: Path) -> list[Path]:
    """Pages at YYYY/MM/DD/slug/ or undated/slug/ (not the dates/ browse pages)."""
    return [p for p in out.rglob("index.html")
            if p.relative_to(out).parts[0].isdigit() or p.relative_to(out).parts[0] == "undated"]


def test_every_article_has_a_permalink_page(built: tuple[Path, Path]) -> None:
    _, out = built
    page = out / "2015/03/03"
    [volcano] = list(page.glob("volcano-erupts-near-village-*/index.html"))
    html = volcano.read_text("utf-8")
    assert "<h1>Volcano erupts near village</h1>" in html
    assert "3 March 2015" in html and "(date inferred)" in html
    assert len(article_pages(out)) == 4
    assert list((out / "undated").glob("timeless-story-*/index.html"))


def test_browse_pages_exist_with_titles_and_canonical_urls(built: tuple[Path, Path]) -> None:
    _, out = built
    for path in ("index.html", "dates/index.html", "dates/2015/index.html",
                 "dates/2015/03/index.html", "sources/index.html", "sources/reuters/index.html",
                 "sources/ap/index.html", "places/index.html", "topics/index.html",
                 "search/index.html", "404.html", "dates/undated/index.html"):
        html = (out / path).read_text("utf-8")
        assert "<title>" in html and 'lang="en"' in html, path
    home = (out / "index.html").read_text("utf-8")
    assert '<link rel="canonical" href="https://news.example/">' in home
    # the per-month chart: its counts as JSON for chart.js, and a summary without scripts
    assert "data-chart='[[\"2015-" in home and "assets/search/chart.js" in home
    assert "<noscript><p>2015-" in home
    assert (out / "robots.txt").read_text().strip().endswith("https://news.example/sitemap.xml")


def test_article_text_is_escaped(built: tuple[Path, Path]) -> None:
    _, out = built
    [page] = list(out.glob("2015/05/01/*/index.html"))
    html = page.read_text("utf-8")
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x onerror" not in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html


def test_lists_are_newest_first(built: tuple[Path, Path]) -> None:
    _, out = built
    reuters = (out / "sources/reuters/index.html").read_text("utf-8")
    assert "2 articles" in reuters
    assert reuters.index("Alert") < reuters.index("Cocoa prices climb")  # May before April
    month = (out / "dates/2015/05/index.html").read_text("utf-8")
    assert "Alert" in month and "Cocoa" not in month


def test_pagination_links(tmp_path: Path) -> None:
    many = {f"story{n}.txt": f"Story number {n}\n\nIt happened on June {n}, 2016.\n\nAP"
            for n in range(1, 6)}
    index = index_folder(tmp_path, many)
    out = tmp_path / "site"
    build_site(index, out, SiteConfig(page_size=2))
    # the landing page: the newest two, then the numbered page holding the third newest
    landing = (out / "sources/ap/index.html").read_text("utf-8")
    assert "5 articles" in landing and 'rel="prev"' not in landing
    assert landing.index("Story number 5") < landing.index("Story number 4")
    assert 'rel="next" href="../../sources/ap/page/2/index.html"' in landing
    # numbered from the oldest: page 1 holds stories 1 and 2, page 3 story 5 alone
    first = (out / "sources/ap/page/1/index.html").read_text("utf-8")
    assert "Story number 1" in first and "Story number 2" in first and 'rel="next"' not in first
    assert 'rel="prev" href="../../../../sources/ap/page/2/index.html"' in first
    third = (out / "sources/ap/page/3/index.html").read_text("utf-8")
    assert "Story number 5" in third and "Story number 4" not in third
    assert 'rel="prev" href="../../../../sources/ap/index.html"' in third
    assert "5 articles" not in first + third  # nothing that moves as the list grows


def test_a_newer_article_leaves_older_list_pages_untouched(tmp_path: Path) -> None:
    """Browse pages numbered from the oldest: adding the newest article rewrites the landing
    page and the last numbered page, never the pages before."""
    many = {f"story{n}.txt": f"Story number {n}\n\nIt happened on June {n}, 2016.\n\nAP"
            for n in range(1, 6)}
    index = index_folder(tmp_path, many)
    out = tmp_path / "site"
    config = SiteConfig(page_size=2)
    build_site(index, out, config)
    lists = sorted(p.relative_to(out).as_posix() for p in (out / "sources/ap").rglob("*.html"))
    before = {p: (out / p).read_bytes() for p in lists}
    index_folder(tmp_path, {"story6.txt": "Story number 6\n\nIt happened on June 6, 2016."
                                          "\n\nAP"})
    report = build_site(index, out, config)
    after = {p: (out / p).read_bytes() for p in lists}
    changed = {p for p in lists if before[p] != after[p]}
    assert changed == {"sources/ap/index.html", "sources/ap/page/3/index.html"}
    assert "M sources/ap/page/3/index.html" in report.changes
    assert "A sources/ap/page/1/index.html" not in report.changes
    assert report.added + report.changed == report.written


def test_feeds_are_valid_atom(built: tuple[Path, Path]) -> None:
    _, out = built
    for feed_path in ("feed.xml", "sources/reuters/feed.xml"):
        root = ET.parse(out / feed_path).getroot()
        assert root.tag == f"{ATOM}feed"
        for name in ("id", "title", "updated"):
            assert root.find(f"{ATOM}{name}") is not None
        entries = root.findall(f"{ATOM}entry")
        assert entries
        for entry in entries:
            for name in ("id", "title", "updated"):
                assert entry.find(f"{ATOM}{name}").text, name
        parsed = feedparser.parse((out / feed_path).read_bytes())
        assert not parsed.bozo, parsed.get("bozo_exception")
    titles = [e.title for e in feedparser.parse((out / "feed.xml").read_bytes()).entries]
    assert "Alert <script>alert(1)</script> headline" in titles  # escaped in XML, intact text


def test_sitemap_lists_articles(built: tuple[Path, Path]) -> None:
    _, out = built
    root = ET.parse(out / "sitemap.xml").getroot()
    locs = [e.text for e in root.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    assert any("/2015/03/03/volcano-erupts-near-village-" in loc for loc in locs)
    assert all(loc.startswith("https://news.example/") for loc in locs)


def test_unchanged_rebuild_rewrites_nothing(built: tuple[Path, Path]) -> None:
    index, out = built
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    report = build_site(index, out, SiteConfig(page_size=2, base_url="https://news.example/"))
    assert report.skipped and report.written == 0
    after = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    assert after == before


def test_forced_rebuild_of_unchanged_index_writes_no_file(built: tuple[Path, Path]) -> None:
    index, out = built
    report = build_site(index, out, SiteConfig(page_size=2, base_url="https://news.example/"),
                        force=True)
    assert not report.skipped and report.written == 0 and report.unchanged == report.pages


def test_added_article_rewrites_only_pages_it_appears_on(tmp_path: Path) -> None:
    index = index_folder(tmp_path, ARTICLES)
    out = tmp_path / "site"
    config = SiteConfig(page_size=50)
    build_site(index, out, config)
    volcano = next(out.glob("2015/03/03/*/index.html"))
    untouched = volcano.stat().st_mtime_ns
    index_folder(tmp_path, {"flood.txt": "Floods hit the coast\n\nHeavy rain on "
                                         "January 5, 2014 flooded towns.\n\nBBC"})
    report = build_site(index, out, config)
    assert list(out.glob("2014/01/05/floods-hit-the-coast-*/index.html"))
    assert (out / "sources/bbc/index.html").is_file()
    assert 0 < report.written < report.pages
    assert volcano.stat().st_mtime_ns == untouched


def test_removed_article_page_is_deleted(tmp_path: Path) -> None:
    index = index_folder(tmp_path, ARTICLES)
    out = tmp_path / "site"
    build_site(index, out)
    assert list(out.glob("2015/03/03/*/index.html"))
    (tmp_path / "news" / "volcano.txt").unlink()
    index_folder(tmp_path, {})
    report = build_site(index, out)
    assert report.removed >= 1
    assert not list(out.glob("2015/03/03/*/index.html"))


def test_user_theme_overrides_a_template_by_name(tmp_path: Path) -> None:
    index = index_folder(tmp_path, ARTICLES)
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / "404.html").write_text('{% extends "base.html" %}{% block main %}'
                                    "<h1>Lost at sea</h1>{% endblock %}", "utf-8")
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["site", "--index", str(index), "--out", str(out),
                                       "--templates", str(theme)])
    assert result.exit_code == 0, result.output
    assert "Lost at sea" in (out / "404.html").read_text("utf-8")
    assert "Volcano" in (out / "index.html").read_text("utf-8")  # the rest is built in


def test_user_theme_restyles_the_search_form(tmp_path: Path) -> None:
    """The search form is a template too: a theme's ``_search_form.html`` replaces it, with
    the same paths to the bundle and the client given to it."""
    index = index_folder(tmp_path, ARTICLES)
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / "_search_form.html").write_text(
        '<div id="archive-search" class="my-search" data-bundle="{{ bundle }}" '
        'data-root="{{ root }}"></div>\n<script src="{{ script }}" defer></script>\n', "utf-8")
    out = tmp_path / "site"
    build_site(index, out, templates=theme)
    html = (out / "search" / "index.html").read_text("utf-8")
    assert '<div id="archive-search" class="my-search" data-bundle="../search/bundle/" ' \
           'data-root="../"></div>' in html
    assert '<script src="../assets/search/search.js" defer></script>' in html
    assert "Sort by" not in html   # the built-in form is gone


def test_output_folder_refuses_paths_outside_it(tmp_path: Path) -> None:
    folder = OutputFolder(tmp_path / "site")
    for bad in ("../escape.html", "/etc/passwd", "a/../../b", ""):
        with pytest.raises(UnsafePath):
            folder.write(bad, "x")
    assert not (tmp_path / "escape.html").exists()


def test_permalinks_are_safe_for_any_title() -> None:
    from datetime import datetime
    path = urls.article_path("x-../../etc-abc123", "../../etc/passwd <b>", datetime(2020, 1, 2))
    assert urls.is_safe(path) and ".." not in path
    assert path.startswith("2020/01/02/etc-passwd-b-")


def test_site_command_without_index_says_so(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["site", "--index", str(tmp_path / "none"),
                                       "--out", str(tmp_path / "site")])
    assert result.exit_code == 1
    assert "archive index" in result.output


def test_site_builds_over_articles_with_no_body(tmp_path: Path) -> None:
    """A record with a title and no body (as in many Reuters-21578 stories) gets a page,
    and the related-articles step passes over it instead of failing."""
    records = tmp_path / "records"
    records.mkdir()
    (records / "wire.jsonl").write_text(
        '{"id": "a", "title": "Cocoa prices climb in Ivory Coast", "body": ""}\n'
        '{"id": "b", "title": "Cocoa output falls", "body": "Cocoa output fell as rains '
        'failed in the Ivory Coast this season."}\n'
        '{"id": "c", "title": "Gold steady", "body": "Gold prices were steady on Monday '
        'as cocoa and coffee eased."}\n', "utf-8")
    index = tmp_path / "index"
    assert CliRunner().invoke(main, ["index", str(records), "--index", str(index)]).exit_code == 0
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["site", "--index", str(index), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.exception is None
    titles = [p.read_text("utf-8") for p in article_pages(out)]
    assert len(titles) == 3
    assert any("Cocoa prices climb in Ivory Coast" in t for t in titles)
    # a list shows no empty lead for it (an empty paragraph is bytes for nothing)
    home = (out / "index.html").read_text("utf-8")
    assert home.count('<p class="snippet">') == 2
    assert '<p class="snippet"></p>' not in home


def assert_same_files(one: Path, two: Path) -> list[str]:
    """Two output folders hold the same files, byte for byte, the builder's own state files
    included; their paths."""
    files = sorted(p.relative_to(one).as_posix() for p in one.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(two).as_posix() for p in two.rglob("*") if p.is_file())
    for name in files:
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    return files


def test_pages_written_by_a_second_process_are_the_same_files(tmp_path: Path) -> None:
    """With two processes a forked child writes the pages while the parent builds the search
    bundle; the site is the one a single process builds, file for file."""
    index = index_folder(tmp_path, ARTICLES)
    one, two = tmp_path / "one", tmp_path / "two"
    report_one = build_site(index, one, SiteConfig(page_size=2), procs=1)
    report_two = build_site(index, two, SiteConfig(page_size=2), procs=2)
    assert len(assert_same_files(one, two)) > 20
    assert (report_one.pages, report_one.written, report_one.bytes) == \
        (report_two.pages, report_two.written, report_two.bytes)


@pytest.mark.parametrize("slower", ["write_articles", "write_search"])
def test_the_lists_go_to_the_process_free_first_and_the_files_stay_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slower: str) -> None:
    """The browse lists, home page and feed are written by whichever of the two processes
    is free first: the pages process when the bundle is slower (a full build), the bundle's
    process when the article pages are (a day's update). Either way the site is the one a
    single process builds, byte for byte."""
    import os
    import time

    from archive.site import builder
    index = index_folder(tmp_path, ARTICLES)
    one, two = tmp_path / "one", tmp_path / "two"
    build_site(index, one, SiteConfig(page_size=2), procs=1)
    parent, writers = os.getpid(), tmp_path / "writers"
    slowed, write_lists = getattr(builder._Site, slower), builder._Site.write_lists

    def slow(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        time.sleep(3)
        return slowed(self, *args, **kwargs)

    def noted(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        with writers.open("a") as out:
            out.write(f"{os.getpid()}\n")
        return write_lists(self, *args, **kwargs)
    monkeypatch.setattr(builder._Site, slower, slow)
    monkeypatch.setattr(builder._Site, "write_lists", noted)
    build_site(index, two, SiteConfig(page_size=2), procs=2)
    taken_by = [int(line) for line in writers.read_text().split()]
    assert len(taken_by) == 1
    assert (taken_by[0] == parent) == (slower == "write_articles")
    assert_same_files(one, two)


def test_a_failing_page_process_is_one_line_not_a_traceback(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from archive.site import builder

    index = index_folder(tmp_path, ARTICLES)

    def broken(self, docnum, listed):  # noqa: ANN001, ANN202 (stands in for _Site.write_article)
        raise OSError("disk full")

    monkeypatch.setattr(builder._Site, "write_article", broken)
    monkeypatch.setattr(builder.processes, "usable_cores", lambda: 2)
    result = CliRunner().invoke(main, ["site", "--index", str(index), "--out",
                                       str(tmp_path / "site")])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert result.output.strip().splitlines() == [
        "Error: the process writing the site's pages failed: OSError: disk full"]


def test_site_command_lists_what_it_added_changed_and_removed(tmp_path: Path) -> None:
    """``archive site --changes FILE``: every file added (A), modified (M) or deleted (D), and
    the summary line counts them; a file left as it was is not listed."""
    index = index_folder(tmp_path, ARTICLES)
    out, changes = tmp_path / "site", tmp_path / "changes.txt"
    args = ["site", "--index", str(index), "--out", str(out), "--changes", str(changes)]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    lines = changes.read_text("utf-8").splitlines()
    assert lines and all(line.startswith("A ") for line in lines)
    assert {line[2:] for line in lines} == {p.relative_to(out).as_posix()
                                            for p in out.rglob("*") if p.is_file()
                                            and not p.name.startswith(".archive-")}
    volcano = next(out.glob("2015/03/03/*/index.html")).relative_to(out).as_posix()
    (tmp_path / "news" / "volcano.txt").unlink()
    index_folder(tmp_path, {"flood.txt": "Floods hit the coast\n\nHeavy rain on "
                                         "January 5, 2014 flooded towns.\n\nBBC"})
    second = CliRunner().invoke(main, args)
    assert second.exit_code == 0, second.output
    lines = changes.read_text("utf-8").splitlines()
    kinds = {line[2:]: line[0] for line in lines}
    assert kinds[volcano] == "D" and not (out / volcano).exists()
    assert kinds["sources/bbc/index.html"] == "A" and kinds["index.html"] == "M"
    cocoa = next(out.glob("2015/04/09/*/index.html")).relative_to(out).as_posix()
    assert cocoa not in kinds or kinds[cocoa] == "M"   # its related list may name the flood
    counts = {k: sum(1 for v in kinds.values() if v == k) for k in "AMD"}
    assert f"{counts['A']} new, {counts['M']} changed, {counts['D']} removed" in second.output
    for line in lines:
        assert line[0] == "D" or (out / line[2:]).is_file()
    again = CliRunner().invoke(main, args)   # nothing changed: nothing to publish
    assert again.exit_code == 0 and changes.read_text("utf-8") == ""


def site_files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*")
            if p.is_file() and not p.name.startswith(".archive-")}


def assert_same_pages(updated: Path, fresh: Path) -> None:
    """An updated site holds the files a fresh build wrote, byte for byte (the builder's
    own state files aside)."""
    ours, theirs = site_files(updated), site_files(fresh)
    assert sorted(ours) == sorted(theirs)
    assert [p for p in ours if ours[p] != theirs[p]] == []


def test_an_updated_site_is_a_fresh_build_of_the_same_index(tmp_path: Path) -> None:
    """Bring a site up to date after articles are added, edited and removed: every file
    (pages, related lists, feeds, search bundle) is byte for byte what a fresh build of the
    same index writes into an empty folder."""
    index = index_folder(tmp_path, ARTICLES)
    config = SiteConfig(page_size=2, base_url="https://news.example/")
    build_site(index, tmp_path / "updated", config)
    (tmp_path / "news" / "hostile.txt").unlink()
    index_folder(tmp_path, {
        "flood.txt": "Floods hit the coast\n\nHeavy rain on January 5, 2014 flooded towns "
                     "near the volcano.\n\nBBC",
        "cocoa2.txt": "Cocoa prices fall\n\nCocoa prices fell on June 9, 2015 as rains came "
                      "to the Ivory Coast.\n\nReuters",
        "cocoa.txt": ARTICLES["cocoa.txt"].replace("rose", "rose sharply"),
    })
    report = build_site(index, tmp_path / "updated", config)
    assert report.added and report.changed and report.removed
    build_site(index, tmp_path / "fresh", config)
    updated, fresh = site_files(tmp_path / "updated"), site_files(tmp_path / "fresh")
    assert sorted(updated) == sorted(fresh)
    assert [p for p in updated if updated[p] != fresh[p]] == []


def rendered_pages(monkeypatch: pytest.MonkeyPatch, template: str) -> list[str]:
    """The paths of the pages the site builder renders from ``template`` from now on (a page
    kept from the last build is not rendered)."""
    from archive.site import builder
    rendered: list[str] = []
    page = builder._Site.page

    def counted(self, path: str, name: str, *args, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        if name == template:
            rendered.append(path)
        page(self, path, name, *args, **kwargs)
    monkeypatch.setattr(builder._Site, "page", counted)
    return rendered


def test_an_article_page_is_rendered_again_only_when_what_it_shows_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build remembers what each article page was rendered from (the article, its related
    articles and copies, the theme); a later build renders only pages whose inputs changed,
    and the site is still byte for byte a fresh build's."""
    rendered = rendered_pages(monkeypatch, "article.html")
    articles = {**ARTICLES, "cocoa2.txt": "Cocoa prices fall\n\nCocoa prices fell on June 9, "
                "2015 as rains came to the Ivory Coast.\n\nReuters"}
    index = index_folder(tmp_path, articles)
    config = SiteConfig(page_size=2, base_url="https://news.example/")
    out = tmp_path / "site"
    build_site(index, out, config, procs=1)
    assert len(rendered) == 5
    rendered.clear()
    index_folder(tmp_path, {"chess.txt": "Champion keeps chess crown\n\nThe grandmaster won "
                                         "the final game on July 2, 2015.\n\nAP"})
    report = build_site(index, out, config, procs=1)
    written = {line[2:] for line in report.changes if line[0] in "AM"}
    assert rendered and set(rendered) <= written and len(rendered) < 6
    assert any("champion-keeps-chess-crown" in p for p in rendered)
    rendered.clear()
    index_folder(tmp_path, {"cocoa.txt": ARTICLES["cocoa.txt"].replace(
        "Cocoa prices climb", "Cocoa prices soar")})
    report = build_site(index, out, config, procs=1)
    fall = next(p for p in rendered if "cocoa-prices-fall" in p)   # lists the edited one
    assert "Cocoa prices soar" in (out / fall).read_text("utf-8")
    # a page rendered again is one whose bytes changed (here: related lists re-ranked)
    assert set(rendered) <= {line[2:] for line in report.changes if line[0] in "AM"}
    build_site(index, tmp_path / "fresh", config, procs=1)
    assert_same_pages(out, tmp_path / "fresh")


def test_a_list_page_is_rendered_again_only_when_its_articles_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Numbered list pages count from the oldest article, so a newer article leaves the
    pages before the last one as they were: a build neither loads nor renders them again,
    and an edit renders again the pages that list the edited article."""
    from archive.site import urls
    rendered = rendered_pages(monkeypatch, "list.html")
    months = ["January", "February", "March", "April", "May", "June"]
    stories = {f"story{n}.txt": f"Harbour story {n}\n\nShips came in on {month} 3, 2015 "
               f"after a storm number {n}.\n\nReuters" for n, month in enumerate(months)}
    index = index_folder(tmp_path, stories)
    config = SiteConfig(page_size=2)
    out = tmp_path / "site"
    build_site(index, out, config, procs=1)
    reuters = [urls.facet_path("source", "Reuters", n) for n in (None, 1, 2, 3)]
    assert set(reuters) <= set(rendered)
    rendered.clear()
    index_folder(tmp_path, {"story6.txt": "Harbour story 6\n\nShips came in on July 3, "
                                          "2015 after a storm number 6.\n\nReuters"})
    report = build_site(index, out, config, procs=1)
    written = {line[2:] for line in report.changes if line[0] in "AM"}
    assert set(rendered) <= written
    assert urls.facet_path("source", "Reuters", 4) in rendered   # the new one's page
    assert urls.facet_path("source", "Reuters") in rendered      # the landing page
    # the last full page gains its "Newer" link; the ones before it do not change
    assert urls.facet_path("source", "Reuters", 3) in rendered
    assert not {urls.facet_path("source", "Reuters", n) for n in (1, 2)} & set(rendered)
    rendered.clear()
    index_folder(tmp_path, {"story0.txt": stories["story0.txt"].replace(
        "Harbour story 0", "Harbour story zero")})
    build_site(index, out, config, procs=1)
    first = urls.facet_path("source", "Reuters", 1)
    assert first in rendered and "Harbour story zero" in (out / first).read_text("utf-8")
    assert urls.facet_path("source", "Reuters", 2) not in rendered
    build_site(index, tmp_path / "fresh", config, procs=1)
    assert_same_pages(out, tmp_path / "fresh")


def test_an_edit_no_list_shows_renders_no_list_page_nor_feed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A list page, a feed and a related list show an article's hit (title, date, source,
    lead...): a sentence added past the lead renders the article's own page again and no
    list page or feed; a new title renders the lists and feeds that show it. The site is a
    fresh build's either way."""
    from archive.site import builder
    rendered: list[str] = []
    keep_or_render = builder._Site._render_unless_kept

    def counted(self, path: str, key: str, render, in_sitemap: bool = True) -> None:  # noqa: ANN001
        def counted_render() -> bool:
            rendered.append(path)
            return render()
        keep_or_render(self, path, key, counted_render, in_sitemap)
    monkeypatch.setattr(builder._Site, "_render_unless_kept", counted)
    cargo = [["coal", "grain", "timber", "copper"], ["wine", "wool", "salt", "tea"],
             ["oil", "steel", "cotton", "rice"]]
    stories = {f"story{n}.txt": f"Harbour story {n}\n\nShips came in on {month} 3, 2015. " +
               " ".join(f"Crane {k} of dock {n} lifted {w} crates of {w}." for k in range(4)
                        for w in cargo[n]) + "\n\nReuters"
               for n, month in enumerate(["May", "June", "July"])}
    index = index_folder(tmp_path, stories)
    config = SiteConfig(page_size=2)
    out = tmp_path / "site"
    build_site(index, out, config, procs=1)
    feed = urls.facet_feed_path("source", "Reuters")
    assert feed in rendered and urls.facet_path("source", "Reuters", 1) in rendered

    def is_list(path: str) -> bool:
        return path.endswith(".xml") or path.split("/")[0] in ("sources", "dates")

    rendered.clear()
    index_folder(tmp_path, {"story1.txt": stories["story1.txt"].replace(
        "\n\nReuters", " A late ship came in too.\n\nReuters")})
    build_site(index, out, config, procs=1)
    assert any("harbour-story-1" in p for p in rendered)
    assert [p for p in rendered if is_list(p)] == []
    rendered.clear()
    index_folder(tmp_path, {"story1.txt": stories["story1.txt"].replace(
        "Harbour story 1", "Harbour story one")})
    build_site(index, out, config, procs=1)
    assert feed in rendered and "Harbour story one" in (out / feed).read_text("utf-8")
    assert urls.facet_path("source", "Reuters") in rendered
    build_site(index, tmp_path / "fresh", config, procs=1)
    assert_same_pages(out, tmp_path / "fresh")


def test_copies_are_keyed_in_the_order_a_search_lists_them_and_a_new_copy_renders_the_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An article page's copies of its story are told apart by the copies' listings in
    document number order, without a search (``Archive.copy_numbers``): that is the order
    ``Archive.copies`` lists them in, before and after an edit moves a copy to a new
    number; a new copy, or a copy's new headline, renders the pages of the others again,
    and the site stays a fresh build's."""
    from archive.search import Archive
    rendered = rendered_pages(monkeypatch, "article.html")
    wire = ("Port strike ends\n\nDock workers at the northern port returned to work on "
            "March 4, 2015 after a strike over pay that lasted nine days and stopped grain "
            "shipments, union leaders said.\n\n{}")
    index = index_folder(tmp_path, {**ARTICLES, **{f"copy{n}.txt": wire.format(source)
                                                   for n, source in enumerate(["AP", "AFP"])}})

    def check_order() -> None:
        with Archive(index) as archive:
            listings = archive.listings()
            for docnum, listed in listings.items():
                numbers = archive.copy_numbers(listed, docnum)
                assert [h.id for h in archive.copies(listed)] == \
                    [listings[d].id for d in numbers]
            assert sum(1 for d, l in listings.items() if archive.copy_numbers(l, d)) >= 2

    check_order()
    config = SiteConfig(page_size=2)
    out = tmp_path / "site"
    build_site(index, out, config, procs=1)
    rendered.clear()
    index_folder(tmp_path, {"copy2.txt": wire.format("Reuters")})
    build_site(index, out, config, procs=1)
    assert sum("port-strike-ends" in p for p in rendered) == 3
    check_order()
    rendered.clear()
    index_folder(tmp_path, {"copy0.txt": wire.format("AP").replace(
        "Port strike ends", "Port strike is over")})
    build_site(index, out, config, procs=1)
    check_order()
    assert sum("port-strike-ends" in p for p in rendered) == 2
    page = next(p for p in rendered if "port-strike-ends" in p)
    assert "Port strike is over" in (out / page).read_text("utf-8")
    build_site(index, tmp_path / "fresh", config, procs=1)
    assert_same_pages(out, tmp_path / "fresh")


def test_a_site_update_reads_the_records_of_new_documents_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every live article's ``Listed`` record is read from its stored fields once; a later
    build takes the others from ``.archive-listings.json`` (a segment's stored documents
    never change), and the records are those a fresh read gives."""
    from archive import search
    from archive.site import listings_cache

    index = index_folder(tmp_path, ARTICLES)
    config = SiteConfig(page_size=2)
    out = tmp_path / "site"
    build_site(index, out, config)
    read: list[str] = []
    listed = search._listed

    def counted(stored: dict) -> search.Listed:  # noqa: ANN401
        read.append(stored["id"])
        return listed(stored)
    monkeypatch.setattr(search, "_listed", counted)
    index_folder(tmp_path, {
        "chess.txt": "Champion keeps chess crown\n\nThe grandmaster won on July 2, 2015.\n\nAP",
        "cocoa.txt": ARTICLES["cocoa.txt"].replace("rose", "rose sharply")})
    build_site(index, out, config)
    assert len(read) == 2 and any("chess" in i for i in read) and any("cocoa" in i for i in read)
    with search.Archive(index) as archive:
        remembered = listings_cache.read(out)
        assert set(remembered) == set(archive.document_keys().values())
        read.clear()
        assert archive.listings(remembered) == archive.listings() and len(read) == 5
    build_site(index, tmp_path / "fresh", config)
    updated, fresh = site_files(out), site_files(tmp_path / "fresh")
    assert [p for p in updated if updated[p] != fresh.get(p)] == []


def test_undated_articles_come_after_the_dated_ones_on_a_list_page(
        built: tuple[Path, Path]) -> None:
    _, out = built
    ap = (out / "sources/ap/index.html").read_text("utf-8")
    assert ap.index("Volcano erupts") < ap.index("Timeless story")


def test_site_warns_when_the_index_was_analysed_by_an_older_analyzer(tmp_path: Path) -> None:
    """An index keeps the analyzer it was made with (its schema holds it) and searches alike;
    the site's browser client analyses as the archive does now, so the build says a rebuild
    would bring the index up to date, and still builds."""
    from unittest import mock

    from whoosh.analysis import (LowercaseFilter, PyStemmerFilter, RegexTokenizer, StopFilter,
                                 SubstitutionFilter)

    from archive import analysis
    from archive.store import schema

    def older() -> object:  # before "U.S." was one word and lone letters stop words
        return (RegexTokenizer(r"\w+(?:['\u2019]\w+)*") | LowercaseFilter()
                | SubstitutionFilter("\u2019", "'")
                | StopFilter(stoplist=analysis.STOP_WORDS - set("bcdefghjklmnopqrstuvwxyz"),
                             minsize=1)
                | PyStemmerFilter("english", cachesize=100_000))

    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    with mock.patch.object(schema, "news_analyzer", older):
        old_index = index_folder(tmp_path / "old", ARTICLES)
    new_index = index_folder(tmp_path / "new", ARTICLES)
    runner = CliRunner()
    for index, warned in ((old_index, True), (new_index, False)):
        result = runner.invoke(main, ["site", "--index", str(index), "--out",
                                      str(index.parent / "site")])
        assert result.exit_code == 0, result.output
        assert ("indexed by an older version" in result.stderr) is warned
        assert "--rebuild" in result.stderr if warned else result.stderr == ""
        as_json = runner.invoke(main, ["site", "--index", str(index), "--out",
                                       str(index.parent / "site2"), "--json"])
        assert json.loads(as_json.stdout)["older_analysis"] is warned
