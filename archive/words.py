"""A word searched in several text fields at once, scored as one BM25F term.

The parser turns a bare word into one ``Term`` per text field, ORed; Whoosh would score each
field's term apart and add the scores. ``FieldedWord`` is that ``Or`` with the archive's
scoring (``archive.ranking``): each field's term frequency over its length normalisation,
weighed by the field, summed into one term frequency per article, saturated once, times the
word's idf (from its largest document frequency over the fields). Anything that walks a
query tree sees an ``Or`` of ``Term`` s, so highlighting, the any-word relaxation and the
columns' matched terms read it as before; only the score differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from whoosh import matching, query as wq, scoring
from whoosh.util import make_binary_tree


class _FieldTfScorer(scoring.WeightLengthScorer):
    """A posting's share of its word's combined term frequency (Whoosh's block bounds read
    ``_score`` at a block's highest weight and shortest length: it grows with the one and
    falls with the other, so the bound holds)."""

    def __init__(self, searcher: Any, fieldname: str, text: bytes, tf: Any):
        self._tf = tf
        self.setup(searcher, fieldname, text)

    def _score(self, weight: float, length: float) -> float:
        return self._tf(weight, length)


class _FieldTf:
    """A weighting whose scorers give the field's term frequency share (``_FieldTfScorer``)."""

    def __init__(self, weighting: Any):
        self.weighting = weighting

    def scorer(self, searcher: Any, fieldname: str, text: bytes, qf: float = 1) -> Any:
        tf = self.weighting.field_tf_function(searcher, fieldname)
        return _FieldTfScorer(searcher, fieldname, text, tf)


class _Saturated(matching.WrappingMatcher):
    """The union of a word's field matchers, its summed term frequency saturated and scaled
    by the word's idf and boost. Saturation only grows, so Whoosh's quality bounds pass
    through it, and a quality asked of this matcher is turned back into the term frequency
    its child must reach (``NewsBM25F.unsaturated``)."""

    def __init__(self, child: Any, weighting: Any, scale: float):
        super().__init__(child)
        self.weighting, self.scale = weighting, scale

    def copy(self) -> _Saturated:
        return _Saturated(self.child.copy(), self.weighting, self.scale)

    def _replacement(self, newchild: Any) -> _Saturated:
        return _Saturated(newchild, self.weighting, self.scale)

    def _quality(self, tf: float) -> float:
        return self.scale * self.weighting.saturated(tf)

    def _child_quality(self, quality: float) -> float:
        return self.weighting.unsaturated(quality / self.scale)

    def replace(self, minquality: float = 0) -> Any:
        r = self.child.replace(self._child_quality(minquality) if minquality else 0)
        if not r.is_active():
            return matching.NullMatcher()
        return self if r is self.child else self._replacement(r)

    def supports_block_quality(self) -> bool:
        return self.scale > 0 and self.child.supports_block_quality()

    def skip_to_quality(self, minquality: float) -> Any:
        return self.child.skip_to_quality(self._child_quality(minquality))

    def max_quality(self) -> float:
        return self._quality(self.child.max_quality())

    def block_quality(self) -> float:
        return self._quality(self.child.block_quality())

    def weight(self) -> float:
        return self.child.weight()

    def score(self) -> float:
        return self._quality(self.child.score())


class FieldedWord(wq.Or):
    """One word (a ``Term`` per text field, ORed), scored as one BM25F term; its boost
    multiplies the word's score (a free-text query's repeated word)."""

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        weighting = context.weighting if context is not None else searcher.weighting
        if weighting is None or not hasattr(weighting, "field_tf_function"):
            return super().matcher(searcher, context)   # unscored, or another weighting
        parent = searcher.get_parent()
        schema = searcher.schema
        frequencies, terms = [], []
        for term in self.subqueries:
            if term.fieldname not in schema:
                continue
            try:
                text = schema[term.fieldname].to_bytes(term.text)
            except ValueError:
                continue
            frequencies.append(parent.doc_frequency(term.fieldname, text))
            terms.append((term.fieldname, text))
        idf = weighting.word_idf(parent.doc_count_all(), frequencies) if frequencies else 0.0
        return word_matcher(searcher, weighting, terms, idf * self.boost)


def word_matcher(searcher: Any, weighting: Any, terms: list[tuple[str, bytes]],
                 scale: float) -> Any:
    """One word's matcher over its ``(field, word)`` terms: the fields' term frequency
    shares summed, saturated once, times ``scale`` (the word's idf and boost)."""
    tf = _FieldTf(weighting)
    reader = searcher.reader()
    matchers = [searcher.postings(fieldname, text, weighting=tf)
                for fieldname, text in terms if (fieldname, text) in reader]
    if not matchers:
        return matching.NullMatcher()
    return _Saturated(make_binary_tree(matching.UnionMatcher, matchers), weighting, scale)


def _is_field_term(q: Any, fields: tuple[str, ...]) -> bool:
    return type(q) is wq.Term and q.boost == 1.0 and q.fieldname in fields


def regrouped(q: wq.Or, key: Callable[[Any], Any], combine: Callable[[list[Any]], wq.Query],
              field_of: Callable[[Any], str]) -> wq.Query:
    """``q`` (an ``Or``) with the subqueries that share a ``key`` (None: none), each in
    another field (``field_of``), replaced by ``combine`` of them at the place of the first:
    how one word's per-field parts, which the parser flattens into one ``Or`` with the other
    words' (``oil OR wheat`` is one ``Or`` of six terms), become that word's one query."""
    groups: dict[Any, list[Any]] = {}
    for sub in q.subqueries:
        found = key(sub)
        if found is not None:
            groups.setdefault(found, []).append(sub)
    groups = {k: subs for k, subs in groups.items()
              if len(subs) > 1 and len({field_of(s) for s in subs}) == len(subs)}
    if not groups:
        return q
    out: list[wq.Query] = []
    for sub in q.subqueries:
        subs = groups.get(key(sub))
        if subs is None:
            out.append(sub)
        elif sub is subs[0]:
            out.append(combine(subs))
    if len(out) == 1:
        return out[0].with_boost(out[0].boost * q.boost)
    return wq.Or(out, boost=q.boost, minmatch=q.minmatch, scale=q.scale)


def fielded_words(q: Any, fields: tuple[str, ...]) -> Any:
    """``q`` with every word over several of ``fields`` made a ``FieldedWord``."""
    if q.children():
        q = q.apply(lambda sub: fielded_words(sub, fields))
    if type(q) is not wq.Or:
        return q
    return regrouped(q, lambda sub: sub.text if _is_field_term(sub, fields) else None,
                     FieldedWord, lambda term: term.fieldname)
