"""The static-site builder: a pure function of (index, templates, config) -> a folder of files.
One idea: the site's pages, each rendered and written only when its inputs changed.

Every page is rendered from a search-layer query through Jinja2 (autoescaped), written only
when its bytes changed, and recorded in ``.archive-site.json``; a build whose inputs (index
generation, templates, config) are unchanged is skipped outright, and an article page or a
browse list's page whose own inputs are unchanged is not rendered again.
"""

from __future__ import annotations

import calendar
import hashlib
import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import jinja2

from archive import analysis, processes, render, store
from archive.query import Filters
from archive.search import Archive, FacetCount, Hit, Listed, ResultsPage
from archive.site import chart, listings_cache, related_cache, state, urls
from archive.site import search as site_search
from archive.site.files import OutputFolder, Record

PAGES_CACHE = ".archive-pages.json"
FACETS = ("source", "place", "topic")
FACET_TITLES = {"source": "Sources", "place": "Places", "topic": "Topics"}


@dataclass(frozen=True)
class SiteConfig:
    """What a user may set for a build (``archive site`` options).

    ``base_url`` is the address the site will be published at. Left empty, every link is
    relative and what needs an absolute address is left out (canonical links, the sitemap,
    robots.txt's Sitemap line) or named without one (``urn:uuid:`` ids in the feeds): a
    site must never point readers at a guessed address such as the preview server's.

    A page of articles holds 20 everywhere (the home page, a browse page, a feed), as news
    sites and feed readers commonly show: a day's new and edited articles rewrite every
    browse page and feed they appear on whole, so a smaller page keeps a publish small.
    """

    base_url: str = ""
    title: str = "News archive"
    language: str = "en"
    page_size: int = 20
    feed_size: int = 20
    home_size: int = 20
    related: int = 5

    def __post_init__(self) -> None:
        if self.base_url:  # frozen: the checked form (ending in "/") is set once, here
            object.__setattr__(self, "base_url", urls.check_base_url(self.base_url))


@dataclass
class BuildReport:
    """What a site build did, for the summary line and ``--json``."""

    pages: int = 0          # files the build produced (pages, feeds, search bundle)
    written: int = 0        # files whose bytes changed on disk: added + changed
    added: int = 0          # files that were not there before
    changed: int = 0        # files there before, replaced by other bytes
    unchanged: int = 0      # files rendered to the bytes already there (left untouched)
    removed: int = 0        # files of an earlier build that no page produces any more
    bytes: int = 0          # the output folder's size
    bytes_written: int = 0  # the bytes of the written files (what a publish step uploads)
    articles: int = 0
    skipped: bool = False   # nothing changed since the last build: nothing was rendered
    seconds: float = 0.0
    search: dict[str, Any] = field(default_factory=dict)  # the search bundle's BundleReport
    #: the index was analysed by an older analyzer than the browser client's (which
    #: analyses as ``news_analyzer``): its search may miss some words until a rebuild
    older_analysis: bool = False
    #: ``A path`` / ``M path`` / ``D path`` per file added, modified, deleted (not in JSON)
    changes: list[str] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        found = asdict(self)
        del found["changes"]
        return found


Progress = Callable[[int, int], None]


def build_site(index_dir: Path, out: Path, config: SiteConfig = SiteConfig(),
               templates: Path | None = None, progress: Progress | None = None,
               force: bool = False, procs: int | None = None,
               cluster: Any = None) -> BuildReport:
    """Build (or bring up to date) the static site for the index at ``index_dir`` in ``out``.

    With two processes (``procs``; by default when a second process pays, see
    ``processes.second_process_pays``) a forked child writes the article pages while this
    process builds the search bundle (itself on two processes), and the first of the two to
    be free writes the browse lists; the files are the same either way.
    With ``cluster`` (a Dask client) the search bundle is built by its workers while this
    process writes the pages (``archive.distributed.site``); the files are the same again.
    """
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    env = render.environment("site", templates, html=True)
    theme = state.theme_fingerprint(env, config)
    fingerprint = state.fingerprint(index_dir, theme)
    previous = state.read_state(out)
    if not force and previous.get("fingerprint") == fingerprint and \
            all((out / p).is_file() for p in previous.get("files", [])):
        return BuildReport(skipped=True, pages=len(previous["files"]),
                           unchanged=len(previous["files"]),
                           seconds=time.perf_counter() - started)
    folder = OutputFolder(out)
    with Archive(index_dir) as archive:
        site = _Site(archive, env, folder, config, progress, theme=theme, force=force)
        bundle = None
        if cluster is not None:
            from archive.distributed.site import DistributedBundle  # only a Dask build needs it
            bundle = DistributedBundle(cluster, archive, index_dir)
        site.build(procs or (2 if processes.second_process_pays() else 1), bundle)
        report = BuildReport(articles=site.articles, search=site.search_report,
                             older_analysis=not analysis.analyses_alike(
                                 archive.searcher.schema["body"].analyzer))
    report.removed = folder.remove_stale(set(previous.get("files", [])))
    report.pages, report.written = len(folder.produced), folder.written
    report.added, report.changed = folder.added, folder.changed
    report.unchanged, report.bytes = folder.unchanged, folder.bytes_total
    report.bytes_written, report.changes = folder.bytes_written, folder.change_lines()
    state.write_state(out, fingerprint, folder.produced)
    report.seconds = time.perf_counter() - started
    return report


# --- the pages ------------------------------------------------------------------------------

@dataclass
class _Written:
    """What the pages process hands back: its files (``OutputFolder.record``), the page keys
    and sitemap addresses of what it wrote."""

    record: Record
    next_pages: dict[str, Any]
    sitemap: list[str]


def _content_key(theme: str, path: str, digest: str, related: list[str],
                 copies: list[str]) -> str:
    """Everything an article page is rendered from: the theme, its address, the article
    (the digest of its stored fields, ``Listed.digest``), the related articles it lists
    and the other copies of its story, each as a list shows it (``Listed.shown``, which
    names its id too), the copies in document number order (the order a search for the
    story lists them in: they score alike). So a kept page loads no article and makes no
    search."""
    data = "\x00".join([theme, path, digest, repr(related), repr(copies)])
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


class _Site:
    """One build: renders every page into the output folder."""

    def __init__(self, archive: Archive, env: jinja2.Environment, folder: OutputFolder,
                 config: SiteConfig, progress: Progress | None, *, theme: str, force: bool):
        self.archive, self.env, self.folder = archive, env, folder
        self.config, self.progress = config, progress
        self.theme = theme   # state.theme_fingerprint: what every page depends on
        # article and list pages by path -> [what they were rendered from, their size]; not read
        # (nothing rendered is skipped) when forced
        self.page_cache: dict[str, Any] = {} if force else \
            state.read_json(folder.root / PAGES_CACHE)
        self.next_pages: dict[str, Any] = {}
        self.articles = 0
        self.search_report: dict[str, Any] = {}
        self.sitemap: list[str] = []
        self.built_at = datetime.now(timezone.utc).replace(microsecond=0)
        self.next_related: dict[str, Any] = {}
        self.fresh_related: dict[str, list[str]] | None = None
        self.live_by_id: dict[str, int] = {}  # every live article's number, with fresh_related
        self.listings: dict[int, Listed] | None = None  # read when first needed
        self.listing_keys: dict[int, str] | None = None  # when the listings cache is stale
        self.force = force

    def build(self, procs: int, bundle: Any = None) -> None:
        """With two processes a forked child writes the article pages while this process
        builds the search bundle; the browse lists, home page and feed go to whichever of
        the two is free first (on a day's update the bundle is quick and the related lists
        are not). With ``bundle`` (a ``DistributedBundle``) its tasks are submitted first, so
        a cluster's workers build the search bundle while this process writes the pages."""
        everything = self.archive.search("", sort="newest", page_size=1, all_copies=True)
        self.articles = everything.total
        self.facets = everything.facets
        self.read_listings()  # both processes need them: read once, before the fork
        if bundle is not None:
            bundle.submit()
        lists = processes.Token()
        pages = processes.Child.start(lambda: self.write_pages(everything, lists),
                                      "the process writing the site's pages") \
            if procs > 1 and bundle is None else None
        try:
            if pages is None:
                self.write_pages(everything, lists)
            self.write_search(procs, bundle, everything.total)
            if lists.take():
                self.write_lists(everything)
            # a fact about the index, good whatever the rest of the build does; here, since
            # the pages process is the one with more to do
            if self.listings is not None and self.listing_keys is not None:
                listings_cache.remember(self.folder.root, self.listing_keys, self.listings)
            if pages is not None:
                self.merge(pages.result())
                if self.progress:
                    self.progress(everything.total, everything.total)
            self.write_static()
            # in path order: the same file whichever process wrote which pages
            state.write_json(self.folder.root / PAGES_CACHE, dict(sorted(self.next_pages.items())))
        finally:
            lists.close()
            if pages is not None:
                pages.stop()
            if bundle is not None:
                bundle.release()

    def write_pages(self, everything: ResultsPage, lists: processes.Token) -> _Written:
        """Every article page, and the lists if this process takes them first; what was
        written and remembered, for another process's ``merge``. The related lists are
        remembered here, by the process that has them (the cache holds facts about the
        index, good whatever the rest of the build does)."""
        self.write_articles(everything.total)
        if lists.take():
            self.write_lists(everything)
        state.write_json(self.folder.root / related_cache.RELATED_CACHE, self.next_related)
        return _Written(self.folder.record(), self.next_pages, self.sitemap)

    def write_lists(self, everything: ResultsPage) -> None:
        """The home page, the browse lists (dates and facets) and the site's feed."""
        self.write_home(everything)
        self.write_dates()
        for name in FACETS:
            self.write_facet(name, everything.facets[name])
        self.write_feed("feed.xml", self.config.title, Filters())

    def merge(self, written: _Written) -> None:
        """Take in what the pages process wrote and remembered."""
        self.folder.merge(written.record)
        self.next_pages.update(written.next_pages)
        self.sitemap.extend(written.sitemap)

    # -- rendering helpers --

    def page(self, path: str, template: str, title: str, *, in_sitemap: bool = True,
             **context: Any) -> None:
        html = self.env.get_template(template).render(
            site=self.config, page_title=title, root=urls.root_prefix(path),
            canonical=urls.canonical(self.config.base_url, path), path=path,
            facet_titles=FACET_TITLES, url_of=self.url_of, **context)
        self.folder.write(path, html)
        if in_sitemap and self.config.base_url:
            self.sitemap.append(urls.canonical(self.config.base_url, path))

    @staticmethod
    def url_of(hit: Hit | Listed | Any) -> str:
        return urls.article_path(hit.id, hit.title, hit.date)

    # -- articles --

    def write_articles(self, total: int) -> None:
        listings = self.read_listings()
        pages = store.MappedPages.of_reader(self.archive.searcher.reader())
        for done, docnum in enumerate(self.archive.browse_order(Filters()), 1):
            pages.step()
            self.write_article(docnum, listings[docnum])
            if self.progress:
                self.progress(done, total)

    def write_article(self, docnum: int, listed: Listed) -> None:
        """An article's page; one whose inputs are unchanged is kept without loading the
        article or the ones it lists."""
        related_ids = self.related_ids(listed.id)
        related = [self.live_by_id[i] for i in related_ids if i in self.live_by_id]
        path = self.url_of(listed)
        listings = self.read_listings()
        copies = self.archive.copy_numbers(listed, docnum)
        key = _content_key(self.theme, path, listed.digest,
                           [listings[d].shown for d in related],
                           [listings[d].shown for d in copies])

        def render() -> bool:
            article = self.archive.article_at(docnum)
            # the copies as ``Archive.copies`` lists them, without its search
            self.page(path, "article.html", article.title, article=article,
                      related=self.archive.listed_hits(related, 0, len(related)),
                      copies=self.archive.listed_hits(copies, 0, len(copies)),
                      facet_url=urls.facet_path)
            return True

        self._render_unless_kept(path, key, render)

    def read_listings(self) -> dict[int, Listed]:
        """Every live article's ``Listed`` record, read once per build: only those of the
        documents new since the last build (``listings_cache``)."""
        if self.listings is None:
            remembered = {} if self.force else listings_cache.read(self.folder.root)
            self.listings = self.archive.listings(remembered)
            keys = self.archive.document_keys()
            if set(keys.values()) != remembered.keys():
                self.listing_keys = keys
        return self.listings

    def _render_unless_kept(self, path: str, key: str, render: Callable[[], bool],
                            in_sitemap: bool = True) -> None:
        """Keep the page the last build left for ``key``, or call ``render`` and remember the
        key for the next build (``render`` says False when there was nothing to render)."""
        if self._kept(path, key, in_sitemap):
            return
        if render():
            self.next_pages[path] = [key, self.folder.size_of(path)]

    def _kept(self, path: str, key: str, in_sitemap: bool) -> bool:
        """A page rendered by the last build from the same content and theme, its file
        still as that build left it: counted as produced, not rendered again."""
        cached = self.page_cache.get(path)
        if not isinstance(cached, list) or len(cached) != 2 or cached[0] != key \
                or not self.folder.keep(path, cached[1]):
            return False
        self.next_pages[path] = cached
        if in_sitemap and self.config.base_url:
            self.sitemap.append(urls.canonical(self.config.base_url, path))
        return True

    def related_ids(self, article_id: str) -> list[str]:
        """Ids of the related articles, weighed by the index's statistics snapshot.

        A build remembers every article's ranked candidates (``related_cache``); the next
        one ranks only the articles new or changed since, and those whose candidates
        changed, against every article, and merges the new and changed ones into the
        others' candidates, all in one pass over the postings. So a site brought up to date
        is the site a fresh build of the same index gives, and a forced rebuild over an
        unchanged index makes no pass at all.
        """
        if self.fresh_related is None:
            self.fresh_related = self._all_related()
        ids = self.fresh_related.get(article_id)
        if ids is None:
            ids = self.archive.related_ids(article_id, self.config.related)
        return ids

    def _all_related(self) -> dict[str, list[str]]:
        """Every article's related ids: the cache's when the collection is unchanged, else
        ranked again, merging what changed into the cache's candidates where it can."""
        listings = self.read_listings()
        self.live_by_id = {listed.id: docnum for docnum, listed in listings.items()}
        stats = self.archive.related_statistics()
        basis = [related_cache.FORMAT, self.config.related, stats.fingerprint if stats else ""]
        key = related_cache.collection_key(self.config.related, basis[2], listings)
        # read here, by the process that ranks (the other never needs it)
        cache = state.read_json(self.folder.root / related_cache.RELATED_CACHE)
        earlier = related_cache.earlier(cache, key, basis, listings)
        if earlier.lists is not None:
            self.next_related = cache
            return earlier.lists
        lists, ranked, keys = self.archive.related_ranked(
            {number: listed.id for number, listed in listings.items()}, self.config.related,
            earlier.previous, earlier.changed, earlier.keys)
        self.next_related = related_cache.remember(key, basis, listings, lists, ranked, keys)
        return lists

    # -- browse pages --

    def write_home(self, everything: ResultsPage) -> None:
        latest = self.archive.search("", sort="newest", page_size=self.config.home_size,
                                     facets=False, all_copies=True)
        self.page(urls.HOME, "home.html", self.config.title, latest=latest.hits,
                  total=everything.total, facets=everything.facets,
                  chart=chart.monthly_rows(self.archive.dates()), chart_summary=chart.summary,
                  facet_index=urls.facet_index_path)

    def write_dates(self) -> None:
        months = Counter((d.year, d.month) for d in self.archive.dates())
        years = sorted({y for y, _ in months}, reverse=True)
        undated = self.archive.search("", page_size=1, facets=False, all_copies=True,
                                      filters=Filters(undated=True)).total
        self.page("dates/index.html", "dates.html", "Articles by date", years=years,
                  months=months, undated=undated, year_url=urls.year_path,
                  month_url=urls.month_path, undated_url=urls.undated_path())
        for year in years:
            self.page(urls.year_path(year), "year.html", f"Articles from {year}", year=year,
                      months=sorted(((m, n) for (y, m), n in months.items() if y == year),
                                    reverse=True), month_url=urls.month_path)
            for (y, month), _count in months.items():
                if y == year:
                    self.write_month(year, month)
        if undated:
            self.write_list(urls.undated_path, "Undated articles",
                            Filters(undated=True))

    def write_month(self, year: int, month: int) -> None:
        start = datetime(year, month, 1)
        # the month's last instant, not the next month's first minus a tick: December 9999
        # has no next month
        last_day = calendar.monthrange(year, month)[1]
        end = datetime(year, month, last_day) + (timedelta(days=1) - _TICK)
        title = f"Articles from {start:%B %Y}"
        self.write_list(lambda n: urls.month_path(year, month, n), title,
                        Filters(since=start, until=end))

    def write_facet(self, name: str, counts: tuple[FacetCount, ...]) -> None:
        self.page(urls.facet_index_path(name), "facets.html", FACET_TITLES[name], field=name,
                  counts=counts, facet_url=urls.facet_path)
        for facet in counts:
            filters = Filters(**{name: facet.key})
            self.write_list(lambda n, f=facet: urls.facet_path(name, f.value, n),
                            f"{FACET_TITLES[name][:-1]}: {facet.value}", filters,
                            feed=urls.facet_feed_path(name, facet.value))
            self.write_feed(urls.facet_feed_path(name, facet.value),
                            f"{self.config.title}: {facet.value}", filters)

    def write_list(self, path_of: Callable[[int | None], str], title: str, filters: Filters,
                   feed: str | None = None) -> None:
        """A browse list: a landing page with its newest articles, and (when they do not fit
        on it) numbered pages counted from the oldest article.

        Numbered from the oldest, a page's articles stay the same when newer ones are added:
        a day's new articles change the landing page and the last numbered page (or add one),
        and no other page of the list. So numbered pages show nothing that depends on the
        list's length (no total, no "of N pages"); the landing page shows the total.
        """
        size = self.config.page_size
        docnums = self.archive.browse_order(filters, sort="oldest")
        total, pages = len(docnums), max(1, math.ceil(len(docnums) / size))
        days = self.archive.day_table()
        dated = [days[d] is not None for d in docnums]
        shown = newest_first(list(range(total)), dated)
        older = shown[size] // size + 1 if total > size else None  # has the next one
        self.list_page(path_of(None), title, [docnums[p] for p in shown[:size]],
                       total=total, page_number=None,
                       pager={"previous": None, "next": older and path_of(older)},
                       feed=feed, heading=title)
        if total <= size:
            return
        for number in range(1, pages + 1):
            start = (number - 1) * size
            pager = {"previous": path_of(number + 1 if number < pages else None),
                     "next": path_of(number - 1) if number > 1 else None}
            positions = newest_first(list(range(start, min(start + size, total))), dated)
            self.list_page(path_of(number), f"{title} (page {number})",
                           [docnums[p] for p in positions], total=None, page_number=number,
                           first=start + 1, last=min(start + size, total), pager=pager,
                           feed=feed, heading=title)

    def list_page(self, path: str, title: str, docnums: list[int], **context: Any) -> None:
        """One page of a browse list, rendered only when what it shows changed (the
        articles' ``Listed.shown`` and the page's own context: a day's update leaves most
        numbered pages as they were, and their articles are not even loaded)."""
        key = self._list_key(path, "list.html", title, repr(sorted(context.items())), docnums)

        def render() -> bool:
            hits = self.archive.listed_hits(docnums, 0, len(docnums), sort="oldest")
            self.page(path, "list.html", title, hits=list(hits), **context)
            return True

        self._render_unless_kept(path, key, render)

    def _list_key(self, path: str, template: str, title: str, context: str,
                  docnums: list[int]) -> str:
        """What a page listing ``docnums`` is rendered from: the theme, the page's own
        address, template, title and context, and all it can show of each article, in
        order (``Listed.shown``)."""
        listings = self.read_listings()
        shown = [listings[d].shown for d in docnums]
        return hashlib.sha256("\x00".join([self.theme, path, template, title, context, *shown])
                              .encode("utf-8", "surrogatepass")).hexdigest()

    # -- search, feeds, crawlers --

    def write_search(self, procs: int, bundle: Any = None, pages: int = 0) -> None:
        if bundle is None:
            self.search_report = site_search.build(self.archive, self.folder, procs)
        else:
            def tasks_done(done: int, total: int) -> None:
                if self.progress:  # the bar goes on from the pages to the bundle's tasks
                    self.progress(pages + done, pages + total)
            self.search_report = {**bundle.finish(self.folder, tasks_done).to_dict(),
                                  "dask": bundle.summary()}
        markup = site_search.page_markup(urls.root_prefix(urls.SEARCH), env=self.env)
        self.page(urls.SEARCH, "search.html", "Search", in_sitemap=False,
                  search_markup=markup, facets=self.facets)

    def write_feed(self, path: str, title: str, filters: Filters) -> None:
        """A feed of the newest articles under ``filters``; like a list page, rendered only
        when what it shows changed (it shows nothing but its articles and the config)."""
        docnums = self.archive.browse_order(filters)[:self.config.feed_size]
        key = self._list_key(path, "feed.xml", title, "", docnums)

        def render() -> bool:
            hits = self.archive.listed_hits(docnums, 0, len(docnums))
            updated = max((h.date for h in hits if h.date), default=None)
            base, site_title = self.config.base_url, self.config.title

            def id_of(hit: Hit) -> str:
                return urls.canonical(base, self.url_of(hit)) or \
                    urls.stable_id(site_title, hit.id)

            xml = self.env.get_template("feed.xml").render(
                site=self.config, feed_title=title, hits=hits,
                feed_id=urls.canonical(base, path) or urls.stable_id(site_title, path),
                feed_url=urls.link(base, path, path), home=urls.link(base, path, urls.HOME),
                updated=updated or datetime(1970, 1, 1), id_of=id_of,
                link_of=lambda h: urls.link(base, path, self.url_of(h)))
            self.folder.write(path, xml)
            return True

        self._render_unless_kept(path, key, render, in_sitemap=False)

    def write_static(self) -> None:
        self.page("404.html", "404.html", "Page not found", in_sitemap=False)
        if self.config.base_url:  # a sitemap lists absolute addresses only
            self.folder.write("sitemap.xml", self.env.get_template("sitemap.xml").render(
                urls=sorted(self.sitemap)))
        self.folder.write("robots.txt", self.env.get_template("robots.txt").render(
            sitemap=urls.canonical(self.config.base_url, "sitemap.xml")))
        for relative, data in theme_assets(self.env).items():
            self.folder.write("assets/" + relative, data)


def newest_first(positions: list[int], dated: list[bool]) -> list[int]:
    """Positions in a list in date order (oldest first, undated last) as a page shows them:
    the dated newest first, then the undated, as every list of the site does."""
    return [p for p in reversed(positions) if dated[p]] + \
        [p for p in positions if not dated[p]]


#: ``assets/search/`` belongs to the search package (its client, ``search.js`` and
#: ``counts.js``): a theme's files there are not copied over it.
SEARCH_SOURCES = "search/"


def theme_assets(env: jinja2.Environment) -> dict[str, bytes]:
    """Files under ``assets/`` of the theme folders; a user's theme overrides by name."""
    loader = env.loader
    assert isinstance(loader, jinja2.FileSystemLoader)
    found: dict[str, bytes] = {}
    for folder in reversed(loader.searchpath):  # built-in first, the user's theme last
        assets = Path(folder) / "assets"
        for path in sorted(assets.rglob("*")) if assets.is_dir() else []:
            relative = path.relative_to(assets).as_posix()
            if path.is_file() and not relative.startswith(SEARCH_SOURCES):
                found[relative] = path.read_bytes()
    return found


_TICK = datetime(2000, 1, 1, 0, 0, 0, 1) - datetime(2000, 1, 1)
