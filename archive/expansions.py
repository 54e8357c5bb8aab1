"""Words a query expands to: fuzzy words (``blair~``), wildcards (``bla?r``) and prefixes
(``blair*``), matched against the stemmed terms and scored as Lucene scores them.

Whoosh scores each word an expansion reaches as a term of its own, so a rare variant, with
its higher idf, outranks the word typed; and its wildcards and prefixes score every match
alike. Here every word of an expansion takes the idf of the most common of them (Lucene's
blended document frequency) and is weighed by how much of it the user typed; over several
text fields (an unfielded ``blair~``) each word is one BM25F term over them, as a plain word
is (``FieldedExpansion``, ``archive.words``).
"""

from __future__ import annotations

from typing import Any

from whoosh import matching, query as wq
from whoosh.util import make_binary_tree

from archive.words import regrouped, word_matcher


class StemmedFuzzyTerm(wq.FuzzyTerm):
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


class _BlendedWeighting:
    """The searcher's weighting with one idf for every word of an expansion."""

    def __init__(self, base: Any, idf: float):
        self.base, self.idf = base, idf

    def scorer(self, searcher: Any, fieldname: str, text: bytes, qf: float = 1) -> Any:
        scorer = self.base.scorer(searcher, fieldname, text, qf=qf)
        if hasattr(scorer, "idf"):  # Whoosh's BM25 scorers read it at each score
            scorer.idf = self.idf
        return scorer

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)


class _Blended:
    """Scores a fuzzy word, wildcard or prefix as Lucene does: every word it expands to
    takes the idf of the most common of them (Lucene's blended document frequency), and a
    word is weighed by how much of it the user typed (the word as typed 1, another word
    at most 0.9, so a variant as long as the typed word still comes after it). Scored
    apart, as Whoosh does, a rare variant outranks the word typed (``blair~``: "Claire"
    above Tony Blair), and Whoosh's wildcards and prefixes score every match alike."""

    text: str  # the word or pattern as typed (every Whoosh expansion query has it)

    def typed(self) -> str:
        """The part of ``text`` the user typed as letters (a wildcard's marks left out)."""
        return self.text

    def word_boost(self, word: str) -> float:
        typed = self.typed()
        if word == typed:
            return 1.0
        return min(len(typed), len(word)) / max(len(typed), len(word), 1) * 0.9

    def scored_words(self, reader: Any, parent: Any) -> tuple[list[tuple[Any, float]], int]:
        """The words this query reaches in ``reader`` (Whoosh asks each segment's reader
        apart, so they are that segment's words), each with the boost it is scored with,
        and the document frequency whose idf every one of them takes: the most common
        one's, counted over the whole index (``parent``)."""
        fieldname = self.field()
        words = [w for w in self._btexts(reader) if w]  # type: ignore[attr-defined]
        if not words:
            return [], 0
        frequency = max(parent.doc_frequency(fieldname, w) for w in words)
        boost: float = self.boost  # type: ignore[attr-defined]
        return [(w, boost * self.word_boost(w.decode("utf-8") if isinstance(w, bytes) else w))
                for w in words], frequency

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        from whoosh.searching import SearchContext

        fieldname = self.field()
        weighting = context.weighting if context is not None else searcher.weighting
        parent = searcher.get_parent()
        words, frequency = self.scored_words(searcher.reader(), parent)
        if not words or weighting is None or not hasattr(weighting, "idf_of"):
            return super().matcher(searcher, context)  # type: ignore[misc]
        blended = _BlendedWeighting(weighting, weighting.idf_of(parent.doc_count_all(),
                                                                frequency))
        context = context.set(weighting=blended) if context is not None \
            else SearchContext(weighting=blended)
        terms = [wq.Term(fieldname, w, boost=boost) for w, boost in words]
        return (terms[0] if len(terms) == 1 else wq.Or(terms)).matcher(searcher, context)


class _BlendedFuzzy(_Blended, StemmedFuzzyTerm):
    pass


class _BlendedWildcard(_Blended, wq.Wildcard):
    def typed(self) -> str:
        return self.text.replace("*", "").replace("?", "")


class _BlendedPrefix(_Blended, wq.Prefix):
    pass


class FieldedExpansion(wq.Or):
    """One fuzzy word, wildcard or prefix over several text fields (the parser's ``Or`` of it
    per field): every word it reaches is scored as one BM25F term over the fields
    (``archive.words``), weighed by how much of it the user typed, all with the idf of the
    most common word it reaches in any of them, so ``blair~`` scores Blair as ``blair``
    does, and its variants below."""

    def reached(self, reader: Any, parent: Any) -> tuple[list[tuple[Any, float]], int]:
        """The words reached in one segment's ``reader`` over the fields, each with its
        boost, and the document frequency (whole index) of the idf they share."""
        boosts: dict[Any, float] = {}
        frequency = 0
        for sub in self.subqueries:
            words, found = sub.scored_words(reader, parent)
            frequency = max(frequency, found)
            for word, boost in words:
                boosts.setdefault(word, boost * self.boost)
        return sorted(boosts.items()), frequency

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        weighting = context.weighting if context is not None else searcher.weighting
        if weighting is None or not hasattr(weighting, "field_tf_function"):
            return super().matcher(searcher, context)
        parent = searcher.get_parent()
        reached, frequency = self.reached(searcher.reader(), parent)
        if not reached:
            return matching.NullMatcher()
        idf = weighting.idf_of(parent.doc_count_all(), frequency)
        fields = [sub.field() for sub in self.subqueries]
        matchers = [word_matcher(searcher, weighting, [(f, word) for f in fields], idf * boost)
                    for word, boost in reached]
        matchers = [m for m in matchers if m.is_active()]
        if not matchers:
            return matching.NullMatcher()
        return make_binary_tree(matching.UnionMatcher, matchers)


def _expansion_key(q: Any, fields: tuple[str, ...]) -> tuple[Any, ...] | None:
    if not isinstance(q, _Blended) or q.field() not in fields:
        return None
    return (type(q), q.text, q.boost, getattr(q, "maxdist", None),
            getattr(q, "prefixlength", None))


def fielded_expansions(q: wq.Query, fields: tuple[str, ...]) -> wq.Query:
    """``q`` with each expansion ORed over several of ``fields`` (the parser's form of an
    unfielded ``blair~``, also inside a flattened ``blair~ OR brown~``) made one
    ``FieldedExpansion``, at the place of its first field's."""
    if q.children():
        q = q.apply(lambda sub: fielded_expansions(sub, fields))
    if type(q) is not wq.Or:
        return q
    return regrouped(q, lambda sub: _expansion_key(sub, fields), FieldedExpansion,
                     lambda sub: sub.field())


def is_expansion(q: wq.Query) -> bool:
    """Whether ``q`` is a fuzzy word, wildcard or prefix as the archive scores them."""
    return isinstance(q, _Blended)


def expansion_words(q: wq.Query, reader: Any, parent: Any
                    ) -> tuple[list[tuple[Any, float]], int] | None:
    """For a fuzzy word, wildcard or prefix of a parsed query: the words it reaches in one
    segment's ``reader``, each with its boost, and the document frequency of the idf they
    share (``_Blended.scored_words``), so another matching core can score them exactly as
    its matcher does; None for any other query."""
    if not isinstance(q, _Blended):
        return None
    return q.scored_words(reader, parent)


def blend_expansions(q: wq.Query) -> wq.Query:
    """Every fuzzy word, wildcard and prefix of a parsed query as a ``_Blended`` one."""
    if isinstance(q, _Blended):
        return q
    if isinstance(q, wq.FuzzyTerm):
        return _BlendedFuzzy(q.fieldname, q.text, boost=q.boost, maxdist=q.maxdist,
                             prefixlength=q.prefixlength, constantscore=False)
    if isinstance(q, wq.Prefix):
        return _BlendedPrefix(q.fieldname, q.text, boost=q.boost, constantscore=False)
    if isinstance(q, wq.Wildcard):
        return _BlendedWildcard(q.fieldname, q.text, boost=q.boost, constantscore=False)
    if q.children():
        return q.apply(blend_expansions)
    return q
