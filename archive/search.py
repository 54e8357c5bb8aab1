"""The search layer: a query string in, a plain-data ResultsPage out. One idea: ``Archive``,
an open index and every question the CLI, the site and the server ask of it, with the result
types it answers in; it runs a little over the module size rule rather than be cut in half.

Everything that shows results (the CLI, the static site, the preview server) goes through
``Archive.search``; none of them touches Whoosh. What a query string means is
``archive.query``'s; this module runs it against an open index and shapes what comes back:
ranking, wire copies shown once, facet counts, snippets with the matches marked, the site's
lists, single articles and their related ones.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import operator
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

from whoosh import collectors, highlight, query as wq, searching as whoosh_searching, sorting

from archive import columns, query, ranking, related, store
from archive._tables import Tables
from archive.store import statistics
from archive.article import Article, web_url
from archive.query import Filters, QueryError

Sort = Literal["relevance", "newest", "oldest"]
SORTS: tuple[str, ...] = ("relevance", "newest", "oldest")
#: list hits kept for reuse by ``browse`` (bounds its memory on a large archive)
LISTED_CACHE = 200_000
LISTED_SNIPPET = 240  # characters of lead a browse list shows
#: mapped index pages a searching process keeps resident before a search hands them back
PAGES_LIMIT_MB = 1024
FACET_FIELDS = ("source", "year", "place", "topic")


@dataclass(frozen=True)
class Segment:
    """A piece of a snippet; ``match`` marks a query term to highlight."""

    text: str
    match: bool = False


@dataclass(frozen=True)
class Hit:
    id: str
    title: str
    date: datetime | None
    date_source: str
    source: str
    url: str
    places: tuple[str, ...]
    topics: tuple[str, ...]
    snippet: tuple[Segment, ...]
    score: float | None
    rank: int
    cluster: str = ""
    copies: int = 0  # other articles in the same wire-copy cluster

    @property
    def snippet_text(self) -> str:
        return "".join(s.text for s in self.snippet)


@dataclass(frozen=True)
class Matches:
    """Every article a query lists, as document numbers in ranked order (see ``matching``)."""

    query: str
    docnums: tuple[int, ...]
    suggestion: str | None = None
    relaxed: bool = False


@dataclass(frozen=True)
class FacetCount:
    value: str   # the display value, e.g. "Reuters"
    key: str     # the indexed term, usable in a query: source:reuters
    count: int


@dataclass(frozen=True)
class ResultsPage:
    query: str
    total: int
    page: int
    page_size: int
    sort: str
    hits: tuple[Hit, ...]
    facets: dict[str, tuple[FacetCount, ...]] = field(default_factory=dict)
    suggestion: str | None = None
    relaxed: bool = False  # no article had every word: these have some (``query.relax``)
    unsearched: tuple[str, ...] = ()  # the query's words no search looks for (``the``, ``c``)

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.page_size)) if self.page_size else 1


@dataclass(frozen=True)
class Listed:
    """What a site build needs of a live article to tell whether its pages changed, read
    for every article in one pass (``Archive.listings``) instead of loading each one."""

    id: str
    title: str
    date: datetime | None
    content_hash: str
    date_source: str
    cluster: str
    digest: str   # of every stored field: what the article's own page is made from
    shown: str    # ``listed_digest``: of all a list shows of it (a page's key names it)


def _score_of(hit: Any) -> float | None:
    """A hit's relevance score; a relaxed search's sort key is (missing words, -score)."""
    score = hit.score
    if isinstance(score, tuple):
        score = -score[-1]
    return round(score, 4) if score is not None else None


class _SegmentFormatter(highlight.Formatter):
    """Formats Whoosh highlight fragments as Segments, leaving markup to the renderers."""

    between = "\u2026"

    def format_fragment(self, fragment, replace=False):  # noqa: ANN001 (Whoosh API)
        out: list[Segment] = []
        index, text = fragment.startchar, fragment.text
        for token in sorted(fragment.matches, key=lambda t: (t.startchar, t.startchar - t.endchar)):
            if token.startchar is None or token.startchar < index:
                continue
            if token.startchar > index:
                out.append(Segment(_flat(text[index:token.startchar])))
            out.append(Segment(text[token.startchar:token.endchar], True))
            index = token.endchar
        out.append(Segment(_flat(text[index:fragment.endchar])))
        return out

    def format(self, fragments, replace=False):  # noqa: ANN001 (Whoosh API)
        out: list[Segment] = []
        for number, fragment in enumerate(fragments):
            if number:
                out.append(Segment(" \u2026 "))
            out.extend(self.format_fragment(fragment))
        return out


class _HitHighlighter(highlight.Highlighter):
    """Marks in a hit's snippet the terms that hit matched.

    Re-tokenising a body, Whoosh's highlighter marks every term that any hit of the results
    matched (``results.matched_terms()``): a word one article matched (a wildcard's or
    fuzzy word's other expansion) was marked in another's snippet, and which words depended
    on how many hits had been collected (every match on the Whoosh path, the page's on the
    columns).
    """

    def highlight_hit(self, hitobj, fieldname, text=None, top=3, minscore=1,  # noqa: ANN001
                      strict_phrase=False):  # noqa: ANN001 (Whoosh API)
        results = hitobj.results
        if strict_phrase or self.can_load_chars(results, fieldname):
            return super().highlight_hit(hitobj, fieldname, text, top, minscore, strict_phrase)
        field = results.searcher.schema[fieldname]
        if text is None:
            text = hitobj[fieldname]
        words = frozenset(field.from_bytes(term) for name, term in hitobj.matched_terms()
                          if name == fieldname)
        tokens = field.analyzer(text, positions=True, chars=True, mode="index",
                                removestops=False)
        tokens = self._merge_matched_tokens(highlight.set_matched_filter(tokens, words))
        fragments = highlight.top_fragments(self.fragmenter.fragment_tokens(text, tokens),
                                            top, self.scorer, self.order, minscore=minscore)
        return self.formatter.format(fragments)


def _snippet_highlighter(snippet_chars: int) -> _HitHighlighter:
    return _HitHighlighter(
        fragmenter=highlight.ContextFragmenter(maxchars=snippet_chars, surround=60),
        formatter=_SegmentFormatter())


class _MatchingTermsCollector(collectors.TermsCollector):
    """Records, per match, the terms of the branches of the query that match it.

    Whoosh's own TermsCollector records every term whose posting list stands at the
    match, including the words of a phrase that did not match in that field (a headline's
    phrase whose words also occur apart in the body had the body's words marked). The
    matcher tree's own ``matching_terms`` skips a branch that is not at the match: the
    terms the columnar path records, and the ones a snippet should mark.
    """

    def collect(self, sub_docnum: int) -> None:
        child = self.child
        child.collect(sub_docnum)
        global_docnum = child.offset + sub_docnum
        for term in child.matcher.matching_terms(sub_docnum):
            self.termdocs[term].append(global_docnum)
            self.docterms[global_docnum].append(term)


class Archive:
    """An open index to search; use as a context manager (it holds a Whoosh searcher).

    Searches run on the columnar sidecars (``archive.columns``) when every segment has its
    own and the query's form is one they answer, else on Whoosh: the same results either
    way. ``use_columns=False`` (or ``ARCHIVE_COLUMNS=0``) always uses Whoosh.
    """

    def __init__(self, folder: Path | str, *, mmap: bool = True,
                 use_columns: bool | None = None):
        self.folder = folder = Path(folder)
        self.use_columns = columns.enabled() if use_columns is None else use_columns
        self._columns: columns.ColumnIndex | None | bool = None  # False: stale, not used
        self.index = store.open_index(folder, mmap=mmap)
        self.searcher = self.index.searcher(weighting=ranking.weighting())
        self.parser = query.make_parser(self.index.schema)
        self._tables = Tables(self.searcher)
        self._listed: dict[tuple[int, str], Hit] = {}
        self._related_stats: list[statistics.CollectionStats | None] = []  # read on first use

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.searcher.close()

    # -- queries -----------------------------------------------------------------------------

    def parse(self, text: str) -> wq.Query:
        """Parse a user query; raise QueryError with a one-line reason if it cannot run."""
        return query.parse(self.parser, text)

    # -- searching ---------------------------------------------------------------------------

    def search(self, text: str = "", *, sort: str = "relevance", page: int = 1,
               page_size: int = 10, filters: Filters | None = None,
               facets: bool = True, snippet_chars: int = 240,
               all_copies: bool = False) -> ResultsPage:
        """One page of results. Wire copies of a story show once (the best-ranked copy, with
        a count of the others) unless ``all_copies`` is set."""
        if sort not in SORTS:
            raise QueryError(f"unknown sort {sort!r}: use one of {', '.join(SORTS)}")
        if page < 1 or page_size < 1:
            raise QueryError("page and limit must be 1 or more")
        text = query.valid_unicode(text)
        self._hand_back_pages()
        answer = self._column_results(text, sort, filters)
        if answer is not None:
            try:
                return self._column_page(answer, page, page_size, all_copies, facets,
                                         snippet_chars)
            except OSError:  # as in _column_results: the sidecars went, Whoosh answers
                self._columns = False
        results, suggestion, relaxed = self._results(text, sort, filters)
        results.highlighter = _snippet_highlighter(snippet_chars)
        ranked = results.top_n if all_copies else self._one_per_story(results.top_n)
        start = (page - 1) * page_size
        hits = tuple(
            self._with_copies(self._hit(whoosh_searching.Hit(results, docnum, n, key),
                                        n + 1, sort, snippet_chars))
            for n, (key, docnum) in enumerate(ranked[start:start + page_size], start))
        return ResultsPage(
            query=text, total=len(ranked), page=page, page_size=page_size, sort=sort,
            hits=hits, facets=self._facets(sorted(results.docs())) if facets else {},
            suggestion=suggestion, relaxed=relaxed,
            unsearched=query.unsearched(self.index.schema, text))

    def matching(self, text: str = "", *, filters: Filters | None = None,
                 all_copies: bool = False) -> Matches:
        """Every article ``search`` would list for ``text`` (all pages), in its order.

        The same query, filters, any-word relaxation and wire-copy collapse as ``search``
        with its default sort, so what is counted from here (a timeline) adds up to the
        search's total.
        """
        text = query.valid_unicode(text)
        self._hand_back_pages()
        answer = self._column_results(text, "relevance", filters)
        if answer is not None:
            found = answer.ranked
            try:
                order = found.top(found.total) if all_copies else \
                    found.top_stories(found.story_count())
                return Matches(query=text, docnums=tuple(d for _, d in found.entries(order)),
                               suggestion=answer.suggestion, relaxed=answer.relaxed)
            except OSError:  # as in search: the sidecars went, Whoosh answers
                self._columns = False
        results, suggestion, relaxed = self._results(text, "relevance", filters)
        ranked = results.top_n if all_copies else self._one_per_story(results.top_n)
        return Matches(query=text, docnums=tuple(docnum for _, docnum in ranked),
                       suggestion=suggestion, relaxed=relaxed)

    def _hand_back_pages(self) -> None:
        """Every query maps more pages of the sidecars and segments into this process, and a
        mapped page stays resident until it is handed back: a long-lived searcher (``archive
        serve``, a query process) would grow to the size of the index. Above
        ``PAGES_LIMIT_MB`` they are handed back (``store.pages``: they stay in the page cache,
        and a page read again is mapped again)."""
        if store.file_pages_mb() <= PAGES_LIMIT_MB:
            return
        if isinstance(self._columns, columns.ColumnIndex):
            store.release_mappings(self._columns.mappings())
        store.release(leaf for leaf, _ in self.searcher.reader().leaf_readers())

    def _results(self, text: str, sort: str,
                 filters: Filters | None) -> tuple[Any, str | None, bool]:
        """Whoosh's results for a query, relaxed to any word when every word finds nothing."""
        parsed = self.parse(text)
        filter_query = (filters or Filters()).query()
        sortedby = None if sort == "relevance" else sorting.MultiFacet([
            sorting.FieldFacet("dated", reverse=True),
            sorting.FieldFacet("date", reverse=sort == "newest")])
        results = self._collect(parsed, text, sortedby, filter_query)
        if sortedby is None:
            results.top_n = self._ties_newest_first(results.top_n)
        suggestion, relaxed = None, False
        if results.is_empty() and text.strip():
            suggestion = query.suggest(self.searcher, self.index.schema, text)
            any_word = query.relax(parsed, text)
            if any_word is not None:
                order = sortedby or query.most_words_first(self.searcher, any_word)
                results = self._collect(any_word, text, order, filter_query)
                relaxed = not results.is_empty()
        return results, suggestion, relaxed

    def _ties_newest_first(self, ranked: list[tuple[float, int]]) -> list[tuple[float, int]]:
        """Whoosh's ranking with equal scores newest first (dated first, then by date, then by
        document number: the "newest" sort), as the columns and the site's search order
        them; Whoosh's collector leaves them by document number. Only the runs of equal
        scores are reordered."""
        runs = [list(run) for _, run in itertools.groupby(ranked, key=operator.itemgetter(0))]
        tied = sum(len(run) for run in runs if len(run) > 1)
        if not tied:
            return ranked
        key = self._tables.newest_keys(tied)

        def newest(item: tuple[float, int]) -> tuple[int, int, int]:
            return (*key(item[1]), item[1])
        return [item for run in runs
                for item in (sorted(run, key=newest) if len(run) > 1 else run)]

    def column_index(self) -> columns.ColumnIndex | None:
        """The open index's columns, or None when they are off or a segment lacks its
        sidecar (an index changed since its last ``archive index``: Whoosh answers)."""
        if self._columns is None:
            opened = columns.ColumnIndex.open(self.folder, self.searcher) \
                if self.use_columns else None
            self._columns = opened if opened is not None else False
        return self._columns or None

    def search_path(self, text: str = "", *, filters: Filters | None = None) -> str:
        """Which path ``search`` takes for this query: "columns" or "whoosh" (the fallback
        for forms the columns do not answer, ``columns.FALLBACK_FORMS``, or missing
        sidecars). Results are the same either way; this says where the time goes."""
        text = query.valid_unicode(text)
        return "columns" if self._column_results(text, "relevance", filters) else "whoosh"

    def _column_results(self, text: str, sort: str,
                        filters: Filters | None) -> _ColumnAnswer | None:
        """``_results`` on the columns; None when they cannot answer (Whoosh will)."""
        found_in = self.column_index()
        if found_in is None:
            return None
        parsed = self.parse(text)
        filter_query = (filters or Filters()).query()
        try:
            found = found_in.match(parsed, filter_query)
            suggestion, relaxed, missing, ran = None, False, None, parsed
            if not len(found.docs) and text.strip():
                suggestion = query.suggest(self.searcher, self.index.schema, text)
                any_word = query.relax(parsed, text)
                if any_word is not None:
                    found = found_in.match(any_word, filter_query)
                    if sort == "relevance":
                        missing = found_in.words_missing(list(any_word.subqueries),
                                                         found.docs)
                    relaxed, ran = bool(len(found.docs)), any_word
        except columns.Unsupported:
            return None
        except OSError:  # a later run's sync removed this searcher's sidecars: use Whoosh
            self._columns = False
            return None
        return _ColumnAnswer(found_in.rank(found, sort, missing), ran, suggestion, relaxed,
                             sort, text)

    def _column_page(self, answer: _ColumnAnswer, page: int, page_size: int,
                     all_copies: bool, facets: bool, snippet_chars: int) -> ResultsPage:
        """``search``'s page from a columnar answer: only the shown hits are loaded and
        highlighted (by Whoosh, with the terms each one matched)."""
        ranked, start = answer.ranked, (page - 1) * page_size
        if all_copies:
            total, shown = ranked.total, ranked.top(start + page_size)[start:]
        else:
            total, shown = ranked.story_count(), ranked.top_stories(start + page_size)[start:]
        entries = ranked.entries(shown)
        results = whoosh_searching.Results(self.searcher, answer.query, entries)
        results.docterms = {d: ranked.matched_terms(d) for _, d in entries}
        results.termdocs = {}
        for docnum, terms in results.docterms.items():
            for term in terms:
                results.termdocs.setdefault(term, set()).add(docnum)
        results.highlighter = _snippet_highlighter(snippet_chars)
        hits = tuple(
            self._with_copies(self._hit(whoosh_searching.Hit(results, docnum, n, score),
                                        n + 1, answer.sort, snippet_chars))
            for n, (score, docnum) in enumerate(entries, start))
        counts = {name: ranked.columns.facet_counts(name, ranked.found.docs)
                  for name in FACET_FIELDS} if facets else {}
        return ResultsPage(
            query=answer.text, total=total, page=page, page_size=page_size, sort=answer.sort,
            hits=hits, facets=self._facet_page(counts) if facets else {},
            suggestion=answer.suggestion, relaxed=answer.relaxed,
            unsearched=query.unsearched(self.index.schema, answer.text))

    def _one_per_story(self, ranked: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
        """Collapse wire copies: the first (best-ranked) article of each cluster."""
        clusters = self._tables.clusters()
        seen: set[str] = set()
        kept = []
        for key, docnum in ranked:
            cluster = clusters[docnum]
            if cluster not in seen:
                seen.add(cluster)
                kept.append((key, docnum))
        return kept

    def _collect(self, q: wq.Query, text: str, sortedby: Any,
                 filter_query: wq.Query | None) -> Any:
        """Every match, scored (or sort-keyed) and ranked, in one pass.

        One unlimited pass is about twice as fast here as Whoosh's top-N collector with
        block skipping: the page needs the total and the facets need every match anyway,
        which that collector would get with a second pass over the postings. Collapsing
        wire copies is then a walk down the ranked list (``_one_per_story``).
        """
        collector: Any = _MatchingTermsCollector(
            self.searcher.collector(limit=None, sortedby=sortedby))
        if filter_query is not None:  # filtering wraps last, as in Searcher.collector
            collector = collectors.FilterCollector(collector, filter_query, None)
        try:
            self.searcher.search_with_collector(q, collector)
            return collector.results()
        except Exception as exc:  # e.g. a phrase on a field without positions
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise QueryError(f"cannot run query {query.shown(text)}: {reason}") from None

    def _hit(self, hit: Any, rank: int, sort: str, snippet_chars: int) -> Hit:
        stored = hit.fields()
        matched = hit.results.has_matched_terms() and hit.matched_terms()
        snippet = hit.highlights("body", top=2) if matched and stored.get("body") else []
        if not snippet:
            snippet = [Segment(_lead(stored.get("body", ""), snippet_chars))]
        return _stored_hit(stored, tuple(snippet), rank,
                           _score_of(hit) if sort == "relevance" else None)

    def _with_copies(self, hit: Hit) -> Hit:
        if not hit.cluster:
            return hit
        members = self._tables.cluster_size(hit.cluster)
        return replace(hit, copies=members - 1) if members > 1 else hit

    def _facets(self, matched: list[int]) -> dict[str, tuple[FacetCount, ...]]:
        """Counts per source, year, place and topic over every match (not just this page).

        Whoosh's own grouping rebuilds a docnum -> values table for each query; the table is
        built once per open Archive here, so a site build or a server pays for it once.
        """
        by_name: dict[str, dict[str, int]] = {}
        for name in FACET_FIELDS:
            values = self._tables.facet_table(name)
            counts: dict[str, int] = {}
            by_name[name] = counts
            for docnum in matched:
                for key in values.get(docnum, ()):
                    counts[key] = counts.get(key, 0) + 1
        return self._facet_page(by_name)

    def _facet_page(self, by_name: dict[str, dict[str, int]]
                    ) -> dict[str, tuple[FacetCount, ...]]:
        """Facet counts as a page shows them: most common first, then by term."""
        out: dict[str, tuple[FacetCount, ...]] = {}
        for name, counts in by_name.items():
            ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            out[name] = tuple(FacetCount(self._tables.display(name, key), key, count)
                              for key, count in ranked)
        return out

    # -- free-text ranking (``archive eval``) -------------------------------------------------

    def free_text_query(self, text: str) -> wq.Query | None:
        """``archive.query.free_text_query`` over this index's schema."""
        return query.free_text_query(self.index.schema, text)

    def rank(self, text: str, limit: int = 1000) -> list[tuple[str, float]]:
        """The top ``limit`` articles for free ``text`` as (doc key, score), best first.

        The doc key is the article's ``external_id`` (a JSON Lines / CSV record's own ``id``)
        when it has one, else the archive's id: the ids relevance judgments use.
        """
        q = self.free_text_query(text)
        if q is None:
            return []
        results = self.searcher.search(q, limit=limit)
        return [(self._tables.doc_key(results.docnum(n)), results.score(n))
                for n in range(results.scored_length())]

    # -- single articles -----------------------------------------------------------------------

    def article(self, article_id: str) -> Article | None:
        docnum = self._tables.docnum_of(article_id)
        return None if docnum is None else self.article_at(docnum)

    def article_at(self, docnum: int) -> Article:
        """The article a document number holds (a caller that walks the documents, such as
        a site build, needs no lookup by id)."""
        return store.from_stored(self.searcher.stored_fields(docnum))

    def browse(self, filters: Filters | None = None, page_size: int = 50,
               sort: str = "newest") -> Iterator[ResultsPage]:
        """Every article passing ``filters`` as consecutive pages (the site's lists).

        The site asks for hundreds of lists (each source, place, topic, month); sorting the
        whole archive for each one costs a pass over every article per list. All articles
        are sorted once per open Archive, and a list is its filter's matches taken in that
        order: the order the sorted search under the filter gives (ties by document number
        in both).
        """
        docnums = self.browse_order(filters, sort)
        total = len(docnums)
        pages = max(1, math.ceil(total / page_size))
        for number in range(1, pages + 1):
            start = (number - 1) * page_size
            yield ResultsPage(query="", total=total, page=number, page_size=page_size,
                              sort=sort, hits=self.listed_hits(docnums, start, page_size, sort))

    def browse_order(self, filters: Filters | None = None, sort: str = "newest") -> list[int]:
        """The document numbers ``browse`` lists, in its order (a caller that shows only
        some of its pages, such as a site update, loads only those pages' hits)."""
        _results, order, position = self._tables.sorted_all(sort)
        if filters is None or filters.query() is None:
            return order
        matched = self._tables.matching(filters)
        return [order[p] for p in sorted(position[d] for d in matched if d in position)]

    def listed_hits(self, docnums: list[int], start: int, count: int,
                    sort: str = "newest") -> tuple[Hit, ...]:
        """The hits of ``docnums[start:start + count]`` (a ``browse_order``) as ``browse``
        shows them."""
        results = self._tables.sorted_all(sort)[0]
        return tuple(self._listed_hit(results, docnum, start + n, sort)
                     for n, docnum in enumerate(docnums[start:start + count]))

    def listings(self, remembered: Mapping[str, Listed] | None = None) -> dict[int, Listed]:
        """Every live document's ``Listed`` record, by document number.

        ``remembered`` holds records read before, by ``document_keys``: a segment's stored
        fields never change, so a site update reads only the documents new since."""
        out = {}
        for leaf, offset, segid in self._leaves():
            if remembered and any(f"{segid}:{local}" in remembered
                                  for local in leaf.all_doc_ids()):
                for local in leaf.all_doc_ids():
                    listed = remembered.get(f"{segid}:{local}")
                    out[offset + local] = listed if listed is not None else \
                        _listed(leaf.stored_fields(local))
            else:
                for local, stored in leaf.iter_docs():
                    out[offset + local] = _listed(stored)
        return out

    def document_keys(self) -> dict[int, str]:
        """Each live document's key, its segment's id and its number in that segment: what
        ``listings`` remembers a record under."""
        return {offset + local: f"{segid}:{local}" for leaf, offset, segid in self._leaves()
                for local in leaf.all_doc_ids()}

    def _leaves(self) -> Iterator[tuple[Any, int, str]]:
        """(segment reader, its first document number, its segment id) per segment (an empty
        index's one reader has no segment)."""
        for leaf, offset in self.searcher.reader().leaf_readers():
            segment = leaf.segment()
            if segment is not None:
                yield leaf, offset, segment.segment_id()

    def _listed_hit(self, results: Any, docnum: int, position: int, sort: str) -> Hit:
        """An article as a list shows it; one article is in many lists (its month, source,
        places, topics), so its hit is made once and only its rank changes."""
        key = (docnum, sort)
        hit = self._listed.get(key)
        if hit is None:
            if len(self._listed) >= LISTED_CACHE:
                self._listed.clear()
            hit = self._listed[key] = self._hit(whoosh_searching.Hit(results, docnum, position),
                                                position + 1, sort, LISTED_SNIPPET)
        return hit if hit.rank == position + 1 else replace(hit, rank=position + 1)

    def iter_articles(self, text: str = "", sort: str = "oldest") -> Iterator[Article]:
        """Every article matching ``text`` (all of them for an empty query), streamed.

        Only document numbers are collected up front; each article is loaded as it is yielded,
        so exporting a large archive does not hold its text in memory.
        """
        parsed = self.parse(text)
        sortedby = None if sort == "relevance" else sorting.MultiFacet([
            sorting.FieldFacet("dated", reverse=True),
            sorting.FieldFacet("date", reverse=sort == "newest")])
        results = self.searcher.search(parsed, limit=None, sortedby=sortedby)
        for docnum in list(results.docs()) if sortedby is None else results.docs():
            yield store.from_stored(self.searcher.stored_fields(docnum))

    def related_ids(self, article_id: str, limit: int = 5) -> list[str]:
        """Ids of the articles most like this one (Whoosh ``more_like_this`` on the body),
        leaving out other copies of the same wire story."""
        docnum = self._tables.docnum_of(article_id)
        if docnum is None:
            return []
        stored = self.searcher.stored_fields(docnum)
        if not stored.get("body"):
            return []   # Whoosh's more_like fails on a missing stored body; nothing to match
        cluster = stored.get("cluster", "")
        results = self.searcher.more_like(docnum, "body", top=limit + 5, numterms=10)
        ids = [h["id"] for h in results if not cluster or h.get("cluster") != cluster]
        return ids[:limit]

    def related_lists(self, article_ids: Iterable[str], limit: int = 5) -> dict[str, list[str]]:
        """``related_ids`` of many articles, computed together in one pass over the postings
        (``archive.related``), weighed by ``related_statistics``: while those are the index's
        own (no snapshot, or one just taken), the same lists, without a search per article."""
        numbers: dict[int, str] = {}
        for article_id in article_ids:
            docnum = self._tables.docnum_of(article_id)
            if docnum is not None:
                numbers[docnum] = article_id
        return self.related_by_number(numbers, limit)

    def related_by_number(self, numbers: Mapping[int, str], limit: int = 5
                          ) -> dict[str, list[str]]:
        """``related_lists`` of articles already known by document number (``numbers``: number
        -> id, as ``listings`` gives them), which spares looking each id up in the index."""
        return self.related_ranked(numbers, limit)[0]

    def related_ranked(self, numbers: Mapping[int, str], limit: int = 5,
                       previous: Mapping[int, related.Ranked] | None = None,
                       changed: Iterable[int] = (), known: related.KeyTerms | None = None
                       ) -> tuple[dict[str, list[str]], dict[int, related.Ranked],
                                  related.KeyTerms]:
        """``related_by_number``'s lists, and each article's ranked candidates and key terms
        for a later call to merge into and take: given ``previous`` (an earlier call's
        candidates of articles unchanged since, by their current document numbers,
        candidates changed or gone since taken out), ``changed`` (the numbers of the
        articles new or changed since) and ``known`` (the earlier call's key terms of the
        unchanged articles), only the other articles are ranked against every article
        (``related.ranked_table``). The lists are the same. Without a statistics snapshot
        every change moves every weight, so neither is used."""
        stats = self.related_statistics()
        ranked, keys = related.ranked_table(
            self.searcher, numbers, limit, self.column_index(), stats,
            previous if stats is not None else None, changed,
            known if stats is not None else None)
        table = related.related_lists(ranked, self._tables.clusters(), limit)
        ids: dict[int, str] = dict(numbers)

        def id_of(docnum: int) -> str:
            if docnum not in ids:
                ids[docnum] = self.searcher.stored_fields(docnum)["id"]
            return ids[docnum]

        return {numbers[d]: [id_of(r) for r in found] for d, found in table.items()}, ranked, \
            keys

    def related_statistics(self) -> statistics.CollectionStats | None:
        """The collection statistics ``related_lists`` weighs by: the index's snapshot
        (``store.statistics``), or None when it has none and the index's own are used."""
        if not self._related_stats:
            self._related_stats.append(statistics.read(self.folder))
        return self._related_stats[0]

    def copies(self, article: Article | Listed) -> list[Hit]:
        """Other articles in the same wire-copy cluster."""
        if not article.cluster or self._tables.cluster_size(article.cluster) < 2:
            return []
        results = self.searcher.search(wq.Term("cluster", article.cluster), limit=None)
        return [self._hit(h, n + 1, "relevance", 200) for n, h in enumerate(results)
                if h["id"] != article.id]

    def copy_numbers(self, article: Article | Listed, docnum: int) -> list[int]:
        """The document numbers of the other articles ``copies`` lists, in document number
        order, without a search: a site update tells from their listings whether an
        article page's copies changed."""
        if not article.cluster:
            return []
        return [d for d in self._tables.copy_members().get(article.cluster, ()) if d != docnum]

    def day_table(self) -> list[date | None]:
        """Each document number's day (None when undated or deleted): a timeline counts
        every match's period from it."""
        return self._tables.days()

    def cluster_of(self, docnum: int) -> str:
        """The wire-copy cluster a document belongs to (its own id's when held once)."""
        return self._tables.clusters()[docnum]

    def dates(self) -> list[date]:
        """Every live article's day (undated ones left out), from the day table."""
        return [day for day in self._tables.days() if day is not None]

    def stats(self) -> dict[str, Any]:
        page = self.search("", page_size=1, all_copies=True)
        return {
            "articles": page.total,
            "by_source": {f.value: f.count for f in page.facets["source"]},
            "by_year": dict(sorted((f.value, f.count) for f in page.facets["year"])),
            "index": str(self.folder.resolve()),
            "bytes": store.index_bytes(self.folder),
        }


@dataclass
class _ColumnAnswer:
    """A query answered on the columns: its ranking and what the page says about it."""

    ranked: columns.Ranked
    query: wq.Query  # the query that ran (the any-word form when relaxed)
    suggestion: str | None
    relaxed: bool
    sort: str
    text: str


#: The stored fields a hit is made from, besides the body its snippet comes from
HIT_FIELDS = ("id", "title", "date", "date_source", "source", "url", "place", "topic", "cluster")


def _stored_hit(stored: dict[str, Any], snippet: tuple[Segment, ...], rank: int,
                score: float | None) -> Hit:
    """An article's stored fields as a result shows them; it reads only ``HIT_FIELDS``
    (``listed_digest`` relies on it)."""
    fields = {name: stored[name] for name in HIT_FIELDS if name in stored}
    return Hit(
        id=fields["id"], title=fields.get("title", ""), date=fields.get("date"),
        date_source=fields.get("date_source", "unknown"), source=fields.get("source", ""),
        url=web_url(fields.get("url", "")),  # an index from before addresses were checked
        places=store.split_list(fields.get("place")),
        topics=store.split_list(fields.get("topic")), snippet=snippet,
        score=score, rank=rank, cluster=fields.get("cluster", ""))


def _listed(stored: dict[str, Any]) -> Listed:
    digest = hashlib.sha256(repr(sorted(stored.items())).encode(
        "utf-8", "surrogatepass")).hexdigest()
    return Listed(stored["id"], stored.get("title", ""), stored.get("date"),
                  stored.get("content_hash", ""), stored.get("date_source", "unknown"),
                  stored.get("cluster", ""), digest, listed_digest(stored))


def listed_digest(stored: dict[str, Any]) -> str:
    """A digest of everything a browse list (or feed, or related list) can show of an
    article: what its hit in ``Archive.listed_hits`` is made from (``HIT_FIELDS`` and the
    lead), so an edit a list cannot show (a sentence past the lead) leaves it unchanged."""
    made_from: list[Any] = [(name, stored[name]) for name in HIT_FIELDS if name in stored]
    made_from.append(_lead(stored.get("body", ""), LISTED_SNIPPET))
    return hashlib.sha256(repr(made_from).encode("utf-8", "surrogatepass")).hexdigest()


def _flat(text: str) -> str:
    """Paragraph breaks read as plain spaces inside a one-line snippet: every run of
    whitespace as one space (as a regular expression would, but ``str.split`` is
    quicker)."""
    words = " ".join(text.split())
    if not words:
        return " " if text else ""
    return (" " if text[0].isspace() else "") + words + (" " if text[-1].isspace() else "")


def _lead(body: str, limit: int) -> str:
    """The first ``limit`` characters of the flattened body, cut at a word.

    Only a prefix is flattened (flattening a prefix gives a prefix of the flattened whole),
    long enough to hold ``limit + 1`` flattened characters: a list shows the leads of
    hundreds of long articles."""
    end = 2 * limit + 2
    flat = _flat(body[:end])
    while end < len(body) and len(flat) <= limit:
        end *= 2
        flat = _flat(body[:end])
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0] + "\u2026"


def page_to_dict(page: ResultsPage) -> dict[str, Any]:
    """The stable ``--json`` shape of a results page (documented in the README)."""
    return {
        "query": page.query, "total": page.total, "page": page.page, "pages": page.pages,
        "limit": page.page_size, "sort": page.sort,
        "hits": [hit_to_dict(h) for h in page.hits],
        "facets": {name: [asdict(f) for f in counts] for name, counts in page.facets.items()},
        "suggestion": page.suggestion, "relaxed": page.relaxed,
        "unsearched": list(page.unsearched),
    }


def hit_to_dict(hit: Hit) -> dict[str, Any]:
    return {
        "rank": hit.rank, "id": hit.id, "title": hit.title,
        "date": hit.date.date().isoformat() if hit.date else None,
        "date_source": hit.date_source, "source": hit.source, "url": hit.url,
        "places": list(hit.places), "topics": list(hit.topics),
        "snippet": "".join(f"[{s.text}]" if s.match else s.text for s in hit.snippet),
        "highlights": [s.text for s in hit.snippet if s.match],
        "score": hit.score, "cluster": hit.cluster, "copies": hit.copies,
    }
