"""The query language: what a query string means, as a Whoosh query.

The language is Whoosh's: words are ANDed, with ``OR``, ``NOT``, parentheses, ``"phrases"``,
``"phrase"~N``, wildcards, ``word~`` fuzzy terms, ``field:value`` and date ranges
(``date:2017``, ``date:[2017-08-01 to 2017-08-31]``, ``date:>2017-01-01``). This module owns
the parser and its plugins, the limits that keep a query answerable, the dates people type,
the any-word relaxation, the filters the CLI and the site add on top, the free-text form that
``archive eval`` ranks and the spelling suggestion. ``archive.search.Archive`` runs what it
builds; nothing here reads results.
"""

from __future__ import annotations

import calendar
import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from whoosh import matching, qparser, query as wq, sorting
from whoosh.qparser.dateparse import DateParserPlugin

from archive.expansions import StemmedFuzzyTerm, blend_expansions, fielded_expansions
from archive.words import FieldedWord, fielded_words

SEARCH_FIELDS = ("title", "body", "captions")
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


def valid_unicode(text: str) -> str:
    """Lone surrogates (undecodable bytes in argv arrive as such) become U+FFFD, so the query
    can be echoed back and written out as UTF-8."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def shown(text: str, limit: int = 60) -> str:
    """A query quoted for an error message: escaped (one line) and cut short."""
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f"... ({len(text):,} characters)"


# -- parsing ---------------------------------------------------------------------------------

class _FuzzyTermPlugin(qparser.FuzzyTermPlugin):
    class FuzzyTermNode(qparser.FuzzyTermPlugin.FuzzyTermNode):
        qclass = StemmedFuzzyTerm


def make_parser(schema: Any) -> qparser.QueryParser:
    """Whoosh's parser set up for the archive's language (see the module docstring)."""
    parser = qparser.MultifieldParser(list(SEARCH_FIELDS), schema, group=qparser.AndGroup)
    parser.remove_plugin_class(qparser.FieldsPlugin)
    parser.add_plugin(qparser.FieldsPlugin(remove_unknown=False))
    # -word excludes (only at the start of a word, so "al-assad" stays one word). No
    # +word: Whoosh would make every unmarked word optional, and words are ANDed here.
    parser.add_plugin(qparser.PlusMinusPlugin(plusexpr=r"(?!)",
                                              minusexpr=r"(?:^|(?<=[\s(]))-(?=\S)"))
    parser.add_plugin(_FuzzyTermPlugin())
    parser.add_plugin(qparser.GtLtPlugin())
    parser.add_plugin(DateParserPlugin(callback=_bad_date))
    return parser


def _bad_date(text: str) -> None:
    raise QueryError(f"cannot read {shown(text)} as a date: use e.g. date:2017, date:2017-08, "
                     "date:[2017-08-01 to 2017-08-31] or date:>2017-01-01")


def parse(parser: qparser.QueryParser, text: str) -> wq.Query:
    """Parse a user query with ``make_parser``'s parser; raise QueryError with a one-line
    reason if it cannot run."""
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"query too long ({len(text):,} characters; the limit is "
                         f"{MAX_QUERY_CHARS:,})")
    if not text.strip():
        return wq.Every()
    try:
        parsed = parser.parse(normalise_dates(text))
        _check(parsed, text)
        blended = blend_expansions(_keyword_phrases_as_terms(parsed))
        return _checked_exclusions(fielded_words(fielded_expansions(blended, SEARCH_FIELDS),
                                                 SEARCH_FIELDS))
    except QueryError:
        raise
    except Exception as exc:  # Whoosh raises assorted types (RecursionError too)
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise QueryError(f"cannot parse query {shown(text)}: {reason}") from None


def _check(parsed: wq.Query, text: str) -> None:
    for leaf in parsed.leaves() if parsed.children() else [parsed]:
        name = getattr(leaf, "fieldname", None)
        if name and name not in QUERY_FIELDS and not name.startswith("spell_"):
            known = ", ".join(QUERY_FIELDS)
            raise QueryError(f"unknown field {name!r} in query {shown(text)} "
                             f"(fields: {known})")
        if type(leaf).__name__ == "ErrorQuery":
            raise QueryError(f"cannot parse query {shown(text)}")
        if isinstance(leaf, wq.FuzzyTerm) and leaf.maxdist > MAX_FUZZY_DISTANCE:
            raise QueryError(f"fuzzy distance ~{leaf.maxdist} is too large in "
                             f"{shown(text)}: use ~1 or ~{MAX_FUZZY_DISTANCE}")


def _keyword_phrases_as_terms(q: wq.Query) -> wq.Query:
    """``place:"el salvador"`` means the one keyword, not a positional phrase."""
    if isinstance(q, wq.Phrase) and q.fieldname in ("source", "place", "topic", "author"):
        return wq.Term(q.fieldname, " ".join(q.words))
    if q.children():
        return q.apply(_keyword_phrases_as_terms)
    return q


class _CheckedAndNotMatcher(matching.AndNotMatcher):
    """Whoosh's AndNotMatcher, with a segment's first match checked like every other.

    Whoosh's checks the first positive document against the excluded ones only when both
    start on the same document; when the excluded word's first document comes earlier, the
    first positive one is listed even if it holds the excluded word (``oil -prices`` listed
    an article about both). Its ``_find_next`` skips the excluded side forward first, so
    running it from the start is right in every case."""

    def _find_first(self) -> None:
        if self.a.is_active() and self.b.is_active():
            self._find_next()


class Exclusion(wq.AndNot):
    """``a -b`` / ``a AND NOT b``: Whoosh's AndNot, matched by ``_CheckedAndNotMatcher``."""

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        scored = self.a.matcher(searcher, context)
        excluded = self.b.matcher(searcher, searcher.boolean_context())
        return _CheckedAndNotMatcher(scored, excluded)


def _checked_exclusions(q: wq.Query) -> wq.Query:
    if type(q) is wq.AndNot:
        return Exclusion(_checked_exclusions(q.a), _checked_exclusions(q.b))
    if q.children():
        return q.apply(_checked_exclusions)
    return q


# -- dates -----------------------------------------------------------------------------------

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


# -- filters ---------------------------------------------------------------------------------

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


# -- the any-word relaxation -----------------------------------------------------------------

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


def most_words_first(searcher: Any, any_word: wq.Query) -> sorting.MultiFacet:
    """Order for a relaxed query: articles with more of the words first, then by score."""
    word_docs = [frozenset(searcher.docs_for_query(word)) for word in any_word.subqueries]

    def missing_words(searcher: Any, docnum: int) -> int:
        return sum(docnum not in docs for docs in word_docs)

    return sorting.MultiFacet([sorting.FunctionFacet(missing_words), sorting.ScoreFacet()])


# -- free text and suggestions ---------------------------------------------------------------

def free_text_query(schema: Any, text: str) -> wq.Query | None:
    """The words of ``text`` ORed over the text fields, built from analysed terms.

    The text is never parsed as query syntax (a CISI query with ``(``, ``:`` or ``NOT`` in
    it means those words, not operators): it goes through the fields' own analyzer, and
    each distinct term becomes a ``FieldedWord`` over the text fields (boosted by how often
    the word occurs in the query), all ORed, so a document matching more (and rarer) words
    scores higher under BM25F. None when no term survives analysis (e.g. only stop words).
    """
    analyzer = schema[SEARCH_FIELDS[0]].analyzer
    counts = Counter(t.text for t in analyzer(text))
    if not counts:
        return None
    # a word said k times weighs k (textbook BM25's query term frequency)
    return wq.Or([FieldedWord([wq.Term(name, term) for name in SEARCH_FIELDS], boost=float(k))
                  for term, k in counts.items()])


#: The query language's operator words, as typed (upper case): never a word to look for
_OPERATORS = ("AND", "OR", "NOT", "TO")

#: A query's bare words as typed: runs without space, brackets or quotes (``unsearched``
#: takes a leading + or - and a trailing comma off)
_TYPED_WORD = re.compile(r"[^\s()\"]+")


def unsearched(schema: Any, text: str) -> tuple[str, ...]:
    """The query's bare words the index does not search, as typed: words the analyzer leaves
    out whole (common words, single letters). A search for only such words finds nothing, and
    a reader should be told why. Operators, fields, wildcards and fuzzy words are not bare."""
    analyzer = schema[SEARCH_FIELDS[0]].analyzer
    out: dict[str, None] = {}
    for match in _TYPED_WORD.finditer(text):
        word = match.group(0).lstrip("+-").rstrip(",")
        if word in _OPERATORS or not re.search(r"\w", word) \
                or any(c in word for c in ":*?~^[]{}"):
            continue
        if not any(True for _ in analyzer(word)):
            out.setdefault(word)
    return tuple(out)


def suggest(searcher: Any, schema: Any, text: str) -> str | None:
    """The query with each unknown word replaced by the closest title word, if any.

    Whoosh's ``correct_query`` corrects the *analysed* terms, which are stems here
    ("goverment" -> "gover"), so its suggestions are words near the stem ("move").
    The words as typed are corrected instead, against the unstemmed title words
    (``spelling=True``), and only those that match no article.
    """
    if any(len(word) > _MAX_SUGGEST_WORD for word in text.split()):
        return None
    try:
        corrector = searcher.corrector("title")
    except Exception:  # an index without spelling words; suggestions are a courtesy
        return None
    analyzer = schema["body"].analyzer

    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        if word in _OPERATORS or match.start() and \
                text[match.start() - 1] == ":":
            return word
        terms = [t.text for t in analyzer(word)]
        if not terms or any(searcher.doc_frequency(name, term)
                            for term in terms for name in SEARCH_FIELDS):
            return word
        found = corrector.suggest(word.lower(), limit=1, maxdist=2)
        return found[0] if found else word

    fixed = _SUGGEST_WORD.sub(fix, text)
    return fixed if fixed != text else None
