"""The search layer: a query string in, a plain-data ResultsPage out.

Everything that shows results (the CLI, the static site, the preview server) goes through
``Archive.search``; none of them touches Whoosh. The query language is Whoosh's: words are
ANDed, with ``OR``, ``NOT``, parentheses, ``"phrases"``, ``"phrase"~N``, wildcards, ``word~``
fuzzy terms, ``field:value`` and date ranges (``date:2017``, ``date:[2017-08-01 to 2017-08-31]``,
``date:>2017-01-01``).
"""

from __future__ import annotations

import calendar
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from whoosh import highlight, qparser, query as wq, searching as whoosh_searching, sorting
from whoosh.qparser.dateparse import DateParserPlugin

from archive import ranking, related, store
from archive.article import Article, web_url

Sort = Literal["relevance", "newest", "oldest"]
SORTS: tuple[str, ...] = ("relevance", "newest", "oldest")
SEARCH_FIELDS = ("title", "body", "captions")
#: single id lookups before ``Archive`` reads the whole id table instead
ID_LOOKUPS_BEFORE_TABLE = 256
#: list hits kept for reuse by ``browse`` (bounds its memory on a large archive)
LISTED_CACHE = 200_000
FACET_FIELDS = ("source", "year", "place", "topic")
#: Field names a query may use (``place:lebanon``); the rest of the schema is internal.
QUERY_FIELDS = ("title", "body", "captions", "source", "place", "topic", "author", "date",
                "year", "id", "url", "language", "cluster", "external_id")


class QueryError(Exception):
    """A query the archive cannot run; the message is one line, fit for a user."""


#: Longest query accepted: far beyond any typed query, short enough to answer in well under
#: a second (Whoosh's parser and spelling suggester are superlinear in the worst case).
MAX_QUERY_CHARS = 2000
#: Largest edit distance of a fuzzy term (``word~N``): beyond 2 nearly every word matches
#: and Whoosh's automaton takes seconds.
MAX_FUZZY_DISTANCE = 2
#: Words longer than this get no spelling suggestion (the suggester is quadratic in length).
_MAX_SUGGEST_WORD = 40
_SUGGEST_WORD = re.compile(r"(?<![\w:~*?])[^\W\d_]{3,}(?![\w:~*?(])")


def _valid_unicode(text: str) -> str:
    """Lone surrogates (undecodable bytes in argv arrive as such) become U+FFFD, so the query
    can be echoed back and written out as UTF-8."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _shown(text: str, limit: int = 60) -> str:
    """A query quoted for an error message: escaped (one line) and cut short."""
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f"... ({len(text):,} characters)"


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
    relaxed: bool = False  # no article had every word: these have some (see ``relax``)

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.page_size)) if self.page_size else 1


def _score_of(hit: Any) -> float | None:
    """A hit's relevance score; a relaxed search's sort key is (missing words, -score)."""
    score = hit.score
    if isinstance(score, tuple):
        score = -score[-1]
    return round(score, 4) if score is not None else None


def _is_plain_word(query: wq.Query) -> bool:
    """A bare word as the parser expands it: one term ORed over the default text fields."""
    return (isinstance(query, wq.Or)
            and all(isinstance(sub, wq.Term) for sub in query.subqueries)
            and sorted(sub.fieldname for sub in query.subqueries) == sorted(SEARCH_FIELDS)
            and len({sub.text for sub in query.subqueries}) == 1)


_QUERY_SYNTAX = re.compile(r"""["():*?~\[\]{}^<>=+]|(?:^|\s)-|\b(?:AND|OR|NOT)\b""")


def relax(parsed: wq.Query, text: str) -> wq.Query | None:
    """The any-word form of a query of two or more bare words, else None.

    Words are ANDed, which is what news searchers expect of a short query. When no article
    has every word, the search runs again with the words ORed, ranked by how many of the
    words an article holds, then by score (so among equals the rarer words win); the page
    says so (``relaxed``). Queries with operators, fields, phrases or exclusions are taken
    as written and never relaxed.
    """
    if _QUERY_SYNTAX.search(text):
        return None
    if not isinstance(parsed, wq.And) or len(parsed.subqueries) < 2:
        return None
    if not all(_is_plain_word(sub) for sub in parsed.subqueries):
        return None
    return wq.Or(list(parsed.subqueries))


@dataclass(frozen=True)
class Filters:
    """Restrictions applied on top of the query (CLI options, site facets)."""

    source: str | None = None
    place: str | None = None
    topic: str | None = None
    year: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    undated: bool = False

    def query(self) -> wq.Query | None:
        parts: list[wq.Query] = []
        if self.undated:
            parts.append(wq.NumericRange("dated", 0, 0))
        for name in ("source", "place", "topic"):
            value = getattr(self, name)
            if value:
                parts.append(wq.Term(name, value.strip().lower()))
        if self.year:
            parts.append(wq.Term("year", self.year))
        if self.since or self.until:
            parts.append(wq.DateRange("date", self.since, self.until))
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else wq.And(parts)


class _StemmedFuzzyTerm(wq.FuzzyTerm):
    """``word~`` matched against the field's own (stemmed) terms.

    Whoosh's segment reader looks fuzzy candidates up in the field's separate spelling list,
    which for a stemmed field with ``spelling=True`` holds unstemmed words, then searches the
    stemmed field for them: ``symphny~`` found nothing although "symphony" is indexed.
    """

    def _btexts(self, ixreader):  # noqa: ANN001 (Whoosh API)
        codec = getattr(ixreader, "_codec", None)
        if codec is None:  # not a segment reader: the generic scan reads the field's own terms
            return ixreader.terms_within(self.fieldname, self.text, self.maxdist,
                                         prefix=self.prefixlength)
        automata = codec.automata(ixreader._storage, ixreader._segment)
        return automata.terms_within(ixreader.cursor(self.fieldname), self.text, self.maxdist,
                                     self.prefixlength)


class _FuzzyTermPlugin(qparser.FuzzyTermPlugin):
    class FuzzyTermNode(qparser.FuzzyTermPlugin.FuzzyTermNode):
        qclass = _StemmedFuzzyTerm


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


def _parse_date_option(text: str, end: bool = False) -> datetime:
    """``2017``, ``2017-08`` or ``2017-08-27`` -> the first (or, for ``end``, last) moment."""
    text = text.strip()
    try:
        parts = [int(p) for p in text.split("-")]
        # the last day itself, not the next period's start: 9999-12-31 has no next day
        if len(parts) == 1:
            start, last_day = datetime(parts[0], 1, 1), datetime(parts[0], 12, 31)
        elif len(parts) == 2:
            start = datetime(parts[0], parts[1], 1)
            last_day = start.replace(day=calendar.monthrange(parts[0], parts[1])[1])
        elif len(parts) == 3:
            start = last_day = datetime(*parts)
        else:
            raise ValueError(text)
    except ValueError:
        raise QueryError(f"bad date {text!r}: use YYYY, YYYY-MM or YYYY-MM-DD") from None
    return last_day + (timedelta(days=1) - timedelta(microseconds=1)) if end else start


def parse_date_option(text: str | None, end: bool = False) -> datetime | None:
    return _parse_date_option(text, end) if text else None


class Archive:
    """An open index to search; use as a context manager (it holds a Whoosh searcher)."""

    def __init__(self, folder: Path, *, mmap: bool = True):
        self.folder = folder
        self.index = store.open_index(folder, mmap=mmap)
        self.searcher = self.index.searcher(weighting=ranking.weighting())
        self.parser = self._make_parser()
        self._facet_tables: dict[str, dict[int, list[str]]] = {}
        self._clusters: list[str] | None = None
        self._cluster_sizes: Counter[str] | None = None  # live articles per cluster
        self._displays: dict[tuple[str, str], str] = {}
        self._sorted: dict[str, tuple[Any, list[int], dict[int, int]]] = {}  # browse's orders
        self._listed: dict[tuple[int, str], Hit] = {}
        self._id_table: dict[str, int] | None = None
        self._id_lookups = 0
        self._doc_keys: dict[int, str] = {}  # docnum -> external_id or id, for rank()
        self._days: list[date | None] | None = None

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.searcher.close()

    # -- queries -----------------------------------------------------------------------------

    def _make_parser(self) -> qparser.QueryParser:
        parser = qparser.MultifieldParser(list(SEARCH_FIELDS), self.index.schema,
                                          group=qparser.AndGroup)
        parser.remove_plugin_class(qparser.FieldsPlugin)
        parser.add_plugin(qparser.FieldsPlugin(remove_unknown=False))
        # -word excludes (only at the start of a word, so "al-assad" stays one word). No
        # +word: Whoosh would make every unmarked word optional, and words are ANDed here.
        parser.add_plugin(qparser.PlusMinusPlugin(plusexpr=r"(?!)",
                                                  minusexpr=r"(?:^|(?<=[\s(]))-(?=\S)"))
        parser.add_plugin(_FuzzyTermPlugin())
        parser.add_plugin(qparser.GtLtPlugin())
        parser.add_plugin(DateParserPlugin(callback=self._bad_date))
        return parser

    @staticmethod
    def _bad_date(text: str) -> None:
        raise QueryError(f"cannot read {_shown(text)} as a date: use e.g. date:2017, date:2017-08, "
                         "date:[2017-08-01 to 2017-08-31] or date:>2017-01-01")

    def parse(self, text: str) -> wq.Query:
        """Parse a user query; raise QueryError with a one-line reason if it cannot run."""
        if len(text) > MAX_QUERY_CHARS:
            raise QueryError(f"query too long ({len(text):,} characters; the limit is "
                             f"{MAX_QUERY_CHARS:,})")
        if not text.strip():
            return wq.Every()
        try:
            parsed = self.parser.parse(normalise_dates(text))
            self._check(parsed, text)
            return _keyword_phrases_as_terms(parsed)
        except QueryError:
            raise
        except Exception as exc:  # Whoosh raises assorted types (RecursionError too)
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise QueryError(f"cannot parse query {_shown(text)}: {reason}") from None

    def _check(self, parsed: wq.Query, text: str) -> None:
        for leaf in parsed.leaves() if parsed.children() else [parsed]:
            name = getattr(leaf, "fieldname", None)
            if name and name not in QUERY_FIELDS and not name.startswith("spell_"):
                known = ", ".join(QUERY_FIELDS)
                raise QueryError(f"unknown field {name!r} in query {_shown(text)} "
                                 f"(fields: {known})")
            if type(leaf).__name__ == "ErrorQuery":
                raise QueryError(f"cannot parse query {_shown(text)}")
            if isinstance(leaf, wq.FuzzyTerm) and leaf.maxdist > MAX_FUZZY_DISTANCE:
                raise QueryError(f"fuzzy distance ~{leaf.maxdist} is too large in "
                                 f"{_shown(text)}: use ~1 or ~{MAX_FUZZY_DISTANCE}")

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
        text = _valid_unicode(text)
        results, suggestion, relaxed = self._results(text, sort, filters)
        results.fragmenter = highlight.ContextFragmenter(maxchars=snippet_chars, surround=60)
        results.formatter = _SegmentFormatter()
        ranked = results.top_n if all_copies else self._one_per_story(results.top_n)
        start = (page - 1) * page_size
        hits = tuple(
            self._with_copies(self._hit(whoosh_searching.Hit(results, docnum, n, key),
                                        n + 1, sort, snippet_chars))
            for n, (key, docnum) in enumerate(ranked[start:start + page_size], start))
        return ResultsPage(
            query=text, total=len(ranked), page=page, page_size=page_size, sort=sort,
            hits=hits, facets=self._facets(sorted(results.docs())) if facets else {},
            suggestion=suggestion, relaxed=relaxed)

    def matching(self, text: str = "", *, filters: Filters | None = None,
                 all_copies: bool = False) -> Matches:
        """Every article ``search`` would list for ``text`` (all pages), in its order.

        The same query, filters, any-word relaxation and wire-copy collapse as ``search``
        with its default sort, so what is counted from here (a timeline) adds up to the
        search's total.
        """
        text = _valid_unicode(text)
        results, suggestion, relaxed = self._results(text, "relevance", filters)
        ranked = results.top_n if all_copies else self._one_per_story(results.top_n)
        return Matches(query=text, docnums=tuple(docnum for _, docnum in ranked),
                       suggestion=suggestion, relaxed=relaxed)

    def _results(self, text: str, sort: str,
                 filters: Filters | None) -> tuple[Any, str | None, bool]:
        """Whoosh's results for a query, relaxed to any word when every word finds nothing."""
        parsed = self.parse(text)
        filter_query = (filters or Filters()).query()
        sortedby = None if sort == "relevance" else sorting.MultiFacet([
            sorting.FieldFacet("dated", reverse=True),
            sorting.FieldFacet("date", reverse=sort == "newest")])
        results = self._collect(parsed, text, sortedby, filter_query)
        suggestion, relaxed = None, False
        if results.is_empty() and text.strip():
            suggestion = self._suggest(parsed, text)
            any_word = relax(parsed, text)
            if any_word is not None:
                results = self._collect(any_word, text,
                                        sortedby or self._most_words_first(any_word),
                                        filter_query)
                relaxed = not results.is_empty()
        return results, suggestion, relaxed

    def _one_per_story(self, ranked: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
        """Collapse wire copies: the first (best-ranked) article of each cluster."""
        clusters = self._cluster_table()
        seen: set[str] = set()
        kept = []
        for key, docnum in ranked:
            cluster = clusters[docnum]
            if cluster not in seen:
                seen.add(cluster)
                kept.append((key, docnum))
        return kept

    def _most_words_first(self, any_word: wq.Query) -> sorting.MultiFacet:
        """Order for a relaxed query: articles with more of the words first, then by score."""
        word_docs = [frozenset(self.searcher.docs_for_query(word))
                     for word in any_word.subqueries]

        def missing_words(searcher: Any, docnum: int) -> int:
            return sum(docnum not in docs for docs in word_docs)

        return sorting.MultiFacet([sorting.FunctionFacet(missing_words), sorting.ScoreFacet()])

    def _collect(self, query: wq.Query, text: str, sortedby: Any,
                 filter_query: wq.Query | None) -> Any:
        """Every match, scored (or sort-keyed) and ranked, in one pass.

        One unlimited pass is about twice as fast here as Whoosh's top-N collector with
        block skipping: the page needs the total and the facets need every match anyway,
        which that collector would get with a second pass over the postings. Collapsing
        wire copies is then a walk down the ranked list (``_one_per_story``).
        """
        try:
            return self.searcher.search(query, limit=None, sortedby=sortedby,
                                        filter=filter_query, terms=True)
        except Exception as exc:  # e.g. a phrase on a field without positions
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise QueryError(f"cannot run query {_shown(text)}: {reason}") from None

    def _hit(self, hit: Any, rank: int, sort: str, snippet_chars: int) -> Hit:
        stored = hit.fields()
        matched = hit.results.has_matched_terms() and hit.matched_terms()
        snippet = hit.highlights("body", top=2) if matched and stored.get("body") else []
        if not snippet:
            snippet = [Segment(_lead(stored.get("body", ""), snippet_chars))]
        return Hit(
            id=stored["id"], title=stored.get("title", ""), date=stored.get("date"),
            date_source=stored.get("date_source", "unknown"), source=stored.get("source", ""),
            url=web_url(stored.get("url", "")),  # an index from before addresses were checked
            places=store.split_list(stored.get("place")),
            topics=store.split_list(stored.get("topic")), snippet=tuple(snippet),
            score=_score_of(hit) if sort == "relevance" else None,
            rank=rank, cluster=stored.get("cluster", ""))

    def _with_copies(self, hit: Hit) -> Hit:
        if not hit.cluster:
            return hit
        members = self._cluster_size(hit.cluster)
        return replace(hit, copies=members - 1) if members > 1 else hit

    def _cluster_size(self, cluster: str) -> int:
        """How many live articles hold this wire story (1 for a story held once)."""
        if self._cluster_sizes is None:
            reader = self.searcher.reader()
            deletions = reader.has_deletions()
            self._cluster_sizes = Counter(
                cluster for docnum, cluster in enumerate(self._cluster_table())
                if not deletions or not reader.is_deleted(docnum))
        return self._cluster_sizes.get(cluster, 1)

    def _cluster_table(self) -> list[str]:
        if self._clusters is None:
            reader = self.searcher.reader()
            if reader.doc_count_all() == 0:
                self._clusters = []
            elif reader.has_column("cluster"):
                column = reader.column_reader("cluster")
                self._clusters = [column[d] for d in range(reader.doc_count_all())]
            else:  # an index written before cluster was a column
                self._clusters = [reader.stored_fields(d).get("cluster") or str(d)
                                  for d in range(reader.doc_count_all())]
        return self._clusters

    def _facets(self, matched: list[int]) -> dict[str, tuple[FacetCount, ...]]:
        """Counts per source, year, place and topic over every match (not just this page).

        Whoosh's own grouping rebuilds a docnum -> values table for each query; the table is
        built once per open Archive here, so a site build or a server pays for it once.
        """
        out: dict[str, tuple[FacetCount, ...]] = {}
        for name in FACET_FIELDS:
            values = self._facet_table(name)
            counts: dict[str, int] = {}
            for docnum in matched:
                for key in values.get(docnum, ()):
                    counts[key] = counts.get(key, 0) + 1
            ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            out[name] = tuple(FacetCount(self._display(name, key), key, count)
                              for key, count in ranked)
        return out

    def _facet_table(self, name: str) -> dict[int, list[str]]:
        """docnum -> the facet terms of that document, read once from the postings."""
        if name not in self._facet_tables:
            reader = self.searcher.reader()
            table: dict[int, list[str]] = {}
            for term in reader.lexicon(name):
                key = term.decode("utf-8")
                for docnum in reader.postings(name, term).all_ids():
                    table.setdefault(docnum, []).append(key)
            self._facet_tables[name] = table
        return self._facet_tables[name]

    def _display(self, name: str, key: str) -> str:
        """The stored spelling of a facet term ("Lebanon" for the term "lebanon")."""
        if (name, key) not in self._displays:
            self._displays[(name, key)] = key
            docnum = next(iter(self.searcher.docs_for_query(wq.Term(name, key))), None)
            stored = self.searcher.stored_fields(docnum).get(name, "") if docnum is not None \
                else ""
            for value in store.split_list(stored) if name != "year" else [stored]:
                if value.lower() == key:
                    self._displays[(name, key)] = value
                    break
        return self._displays[(name, key)]

    def _suggest(self, parsed: wq.Query, text: str) -> str | None:
        """The query with each unknown word replaced by the closest title word, if any.

        Whoosh's ``correct_query`` corrects the *analysed* terms, which are stems here
        ("goverment" -> "gover"), so its suggestions are words near the stem ("move").
        The words as typed are corrected instead, against the unstemmed title words
        (``spelling=True``), and only those that match no article.
        """
        if any(len(word) > _MAX_SUGGEST_WORD for word in text.split()):
            return None
        try:
            corrector = self.searcher.corrector("title")
        except Exception:  # an index without spelling words; suggestions are a courtesy
            return None
        analyzer = self.index.schema["body"].analyzer

        def fix(match: re.Match[str]) -> str:
            word = match.group(0)
            if word in ("AND", "OR", "NOT", "TO") or match.start() and \
                    text[match.start() - 1] == ":":
                return word
            terms = [t.text for t in analyzer(word)]
            if not terms or any(self.searcher.doc_frequency(name, term)
                                for term in terms for name in SEARCH_FIELDS):
                return word
            found = corrector.suggest(word.lower(), limit=1, maxdist=2)
            return found[0] if found else word

        fixed = _SUGGEST_WORD.sub(fix, text)
        return fixed if fixed != text else None

    # -- free-text ranking (``archive eval``) -------------------------------------------------

    def free_text_query(self, text: str) -> wq.Query | None:
        """The words of ``text`` ORed over the text fields, built from analysed terms.

        The text is never parsed as query syntax (a CISI query with ``(``, ``:`` or ``NOT`` in
        it means those words, not operators): it goes through the fields' own analyzer, and
        each distinct term becomes ``Term(field, term)`` for every text field, all ORed (boosted by
        how often the word occurs in the query), so a
        document matching more (and rarer) words scores higher under BM25F. None when no term
        survives analysis (e.g. only stop words).
        """
        analyzer = self.index.schema[SEARCH_FIELDS[0]].analyzer
        counts = Counter(t.text for t in analyzer(text))
        if not counts:
            return None
        # a word said k times weighs k (textbook BM25's query term frequency)
        return wq.Or([wq.Term(name, term, boost=float(k))
                      for term, k in counts.items() for name in SEARCH_FIELDS])

    def rank(self, text: str, limit: int = 1000) -> list[tuple[str, float]]:
        """The top ``limit`` articles for free ``text`` as (doc key, score), best first.

        The doc key is the article's ``external_id`` (a JSON Lines / CSV record's own ``id``)
        when it has one, else the archive's id: the ids relevance judgments use.
        """
        q = self.free_text_query(text)
        if q is None:
            return []
        results = self.searcher.search(q, limit=limit)
        keys = self._doc_keys
        out: list[tuple[str, float]] = []
        for n in range(results.scored_length()):
            docnum = results.docnum(n)
            key = keys.get(docnum)
            if key is None:
                stored = self.searcher.stored_fields(docnum)
                key = keys[docnum] = stored.get("external_id") or stored["id"]
            out.append((key, results.score(n)))
        return out

    # -- single articles -----------------------------------------------------------------------

    def article(self, article_id: str) -> Article | None:
        docnum = self._docnum_of(article_id)
        return None if docnum is None else store.from_stored(self.searcher.stored_fields(docnum))

    def _docnum_of(self, article_id: str) -> int | None:
        """The live document holding ``article_id``.

        One lookup probes each segment's term table; a caller that looks up many articles
        (a site build: every page and its related articles) gets the whole id table read in
        one pass instead, once it has asked for more than a few.
        """
        if self._id_table is None:
            self._id_lookups += 1
            if self._id_lookups <= ID_LOOKUPS_BEFORE_TABLE:
                return self.searcher.document_number(id=article_id)
            table: dict[str, int] = {}
            for leaf, offset in self.searcher.reader().leaf_readers():
                if "id" not in leaf.schema:
                    continue
                for word, _info, numbers, _weights in store.field_postings(leaf, "id"):
                    live = [int(n) for n in numbers if not leaf.is_deleted(int(n))]
                    if live:
                        table.setdefault(word.decode("utf-8"), offset + live[0])
            self._id_table = table
        return self._id_table.get(article_id)

    def browse(self, filters: Filters | None = None, page_size: int = 50,
               sort: str = "newest") -> Iterator[ResultsPage]:
        """Every article passing ``filters`` as consecutive pages (the site's lists).

        The site asks for hundreds of lists (each source, place, topic, month); sorting the
        whole archive for each one costs a pass over every article per list. All articles
        are sorted once per open Archive, and a list is its filter's matches taken in that
        order: the order the sorted search under the filter gives (ties by document number
        in both).
        """
        results, order, position = self._sorted_all(sort)
        filter_query = (filters or Filters()).query()
        if filter_query is None:
            docnums = order
        else:
            matched = self.searcher.docs_for_query(filter_query)
            docnums = [order[p] for p in sorted(position[d] for d in matched if d in position)]
        total = len(docnums)
        pages = max(1, math.ceil(total / page_size))
        for number in range(1, pages + 1):
            start = (number - 1) * page_size
            hits = tuple(self._listed_hit(results, docnum, start + n, sort)
                         for n, docnum in enumerate(docnums[start:start + page_size]))
            yield ResultsPage(query="", total=total, page=number, page_size=page_size,
                              sort=sort, hits=hits)

    def _listed_hit(self, results: Any, docnum: int, position: int, sort: str) -> Hit:
        """An article as a list shows it; one article is in many lists (its month, source,
        places, topics), so its hit is made once and only its rank changes."""
        key = (docnum, sort)
        hit = self._listed.get(key)
        if hit is None:
            if len(self._listed) >= LISTED_CACHE:
                self._listed.clear()
            hit = self._listed[key] = self._hit(whoosh_searching.Hit(results, docnum, position),
                                                position + 1, sort, 240)
        return hit if hit.rank == position + 1 else replace(hit, rank=position + 1)

    def _sorted_all(self, sort: str) -> tuple[Any, list[int], dict[int, int]]:
        """Every live article sorted by date (undated last): the results, their document
        numbers in order, and each one's place in it."""
        if sort not in self._sorted:
            sortedby = sorting.MultiFacet([sorting.FieldFacet("dated", reverse=True),
                                           sorting.FieldFacet("date", reverse=sort == "newest")])
            results = self.searcher.search(wq.Every(), limit=None, sortedby=sortedby)
            order = [docnum for _, docnum in results.top_n]
            self._sorted[sort] = (results, order, {d: p for p, d in enumerate(order)})
        return self._sorted[sort]

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
        docnum = self._docnum_of(article_id)
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
        (``archive.related``): the same lists, without a search per article."""
        numbers: dict[int, str] = {}
        for article_id in article_ids:
            docnum = self._docnum_of(article_id)
            if docnum is not None:
                numbers[docnum] = article_id
        table = related.related_table(self.searcher, numbers, limit, self._cluster_table())
        ids: dict[int, str] = dict(numbers)

        def id_of(docnum: int) -> str:
            if docnum not in ids:
                ids[docnum] = self.searcher.stored_fields(docnum)["id"]
            return ids[docnum]

        return {numbers[d]: [id_of(r) for r in found] for d, found in table.items()}

    def content_hashes(self) -> dict[str, str]:
        """Every live article's id and content hash (what a cached rendering depends on)."""
        return {stored["id"]: stored.get("content_hash", "")
                for _, stored in self.searcher.reader().iter_docs()}

    def copies(self, article: Article) -> list[Hit]:
        """Other articles in the same wire-copy cluster."""
        if not article.cluster or self._cluster_size(article.cluster) < 2:
            return []
        results = self.searcher.search(wq.Term("cluster", article.cluster), limit=None)
        return [self._hit(h, n + 1, "relevance", 200) for n, h in enumerate(results)
                if h["id"] != article.id]

    def day_table(self) -> list[date | None]:
        """Each document number's day (None when undated or deleted), read from the sortable
        date column once and kept: counting matches per period needs it for every match."""
        if self._days is None:
            reader = self.searcher.reader()
            days: list[date | None] = [None] * reader.doc_count_all()
            if days:  # an empty index's reader has no columns at all
                raw = reader.column_reader("date", translate=False)
                dated = reader.column_reader("dated", translate=True)
                to_datetime = self.index.schema["date"].from_column_value
                for docnum in reader.all_doc_ids():
                    if dated[docnum]:
                        days[docnum] = to_datetime(raw[docnum]).date()
            self._days = days
        return self._days

    def cluster_of(self, docnum: int) -> str:
        """The wire-copy cluster a document belongs to (its own id's when held once)."""
        return self._cluster_table()[docnum]

    def dates(self) -> list[datetime]:
        """Every live article's date (undated ones left out), read from the sortable column."""
        out: list[datetime] = []
        reader = self.searcher.reader()
        if reader.doc_count_all() == 0:  # an empty index's reader has no columns at all
            return out
        raw = reader.column_reader("date", translate=False)
        dated = reader.column_reader("dated", translate=True)
        to_datetime = self.index.schema["date"].from_column_value
        for docnum in reader.all_doc_ids():
            if dated[docnum]:
                out.append(to_datetime(raw[docnum]))
        return out

    def stats(self) -> dict[str, Any]:
        page = self.search("", page_size=1, all_copies=True)
        return {
            "articles": page.total,
            "by_source": {f.value: f.count for f in page.facets["source"]},
            "by_year": dict(sorted((f.value, f.count) for f in page.facets["year"])),
            "index": str(self.folder.resolve()),
            "bytes": store.index_bytes(self.folder),
        }


_DATE_EXPRESSION = re.compile(r"\bdate:(?:[<>]=?)?(?:\[[^\]]*\]|\S+)", re.I)
_ISO_DATE = re.compile(r"\b(\d{4})[-/.](\d{1,2})(?:[-/.](\d{1,2}))?\b")


def normalise_dates(text: str) -> str:
    """Rewrite ISO dates inside ``date:`` expressions into the compact forms Whoosh reads.

    Whoosh's English date parser understands ``20170827`` and ``201708`` (a whole month) but
    not ``2017-08-27`` or ``2017-08``, which is what people type.
    """
    def compact(m: re.Match[str]) -> str:
        year, month, day = m.group(1), int(m.group(2)), m.group(3)
        if not 1 <= month <= 12:
            raise QueryError(f"bad month in date {m.group(0)!r}")
        if day is None:
            return f"{year}{month:02d}"
        if not 1 <= int(day) <= calendar.monthrange(int(year), month)[1]:
            raise QueryError(f"bad day in date {m.group(0)!r}")
        return f"{year}{month:02d}{int(day):02d}"

    return _DATE_EXPRESSION.sub(lambda m: _ISO_DATE.sub(compact, m.group(0)), text)


def _flat(text: str) -> str:
    """Paragraph breaks read as plain spaces inside a one-line snippet."""
    return re.sub(r"\s+", " ", text)


def _lead(body: str, limit: int) -> str:
    body = _flat(body)
    if len(body) <= limit:
        return body
    return body[:limit].rsplit(" ", 1)[0] + "\u2026"


def _keyword_phrases_as_terms(q: wq.Query) -> wq.Query:
    """``place:"el salvador"`` means the one keyword, not a positional phrase."""
    if isinstance(q, wq.Phrase) and q.fieldname in ("source", "place", "topic", "author"):
        return wq.Term(q.fieldname, " ".join(q.words))
    if q.children():
        return q.apply(_keyword_phrases_as_terms)
    return q


def page_to_dict(page: ResultsPage) -> dict[str, Any]:
    """The stable ``--json`` shape of a results page (documented in the README)."""
    return {
        "query": page.query, "total": page.total, "page": page.page, "pages": page.pages,
        "limit": page.page_size, "sort": page.sort,
        "hits": [hit_to_dict(h) for h in page.hits],
        "facets": {name: [asdict(f) for f in counts] for name, counts in page.facets.items()},
        "suggestion": page.suggestion, "relaxed": page.relaxed,
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
