"""The archive's one analyzer: its stop list, token pattern and chain, and a fast path.

Every indexed field, every query and the static site's browser client analyse text alike:
``news_analyzer`` is the chain Whoosh runs; ``FastText`` computes exactly what that chain
gives, in one regex pass with each distinct word analysed once, for the two whole-corpus
passes (the index writer's postings, the search bundle's word pairs). It is built from the
analyzer's own (unpickled) parts, so it follows their settings, and it refuses any other
shape of chain; tests compare it with Whoosh's chain.
"""

from __future__ import annotations

from typing import Any

from whoosh import fields, formats
from whoosh.analysis import (LowercaseFilter, PyStemmerFilter, RegexTokenizer, StopFilter,
                             SubstitutionFilter)
from whoosh.analysis.analyzers import Analyzer, CompositeAnalyzer
from whoosh.compat import dumps
from whoosh.system import pack_uint

#: The Snowball English stop list (the one Lucene, Xapian and NLTK also ship), fuller than
#: Whoosh's 37 words, plus the single letters a-z: once dotted abbreviations are joined (see
#: TOKEN_PATTERN) a lone letter is an initial or a stray, and Whoosh's own analyzers and bm25s
#: drop one-letter tokens too (chosen by leave-one-collection-out: bench/README.md, analyzers).
#: "us" is deliberately absent: after lower-casing it is also the country.
STOP_WORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't
doing don't down during each few for from further had hadn't has hasn't have haven't having he
he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if
in into is isn't it it's its itself let's me more most mustn't my myself no nor not of off on
once only or other ought our ours ourselves out over own same shan't she she'd she'll she's
should shouldn't so some such than that that's the their theirs them themselves then there
there's these they they'd they'll they're they've this those through to too under until up
very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's
which while who who's whom why why's will with won't would wouldn't you you'd you'll you're
you've your yours yourself yourselves
""".split()) | frozenset("abcdefghijklmnopqrstuvwxyz")

#: Words: a dotted abbreviation whole ("U.S.", "e.g.": single letters joined by dots, the
#: dots then removed, so "U.S." and "US" are one word), else runs of letters and digits,
#: keeping in-word apostrophes so the stop list sees "don't" whole and the stemmer can drop a
#: possessive "'s". Deliberately simple: the static site's browser client must tokenise
#: exactly alike. ``[^\W\d_]`` is a letter (a word character, not a digit or "_").
TOKEN_PATTERN = r"[^\W\d_](?:\.[^\W\d_])+(?!\w)\.?|\w+(?:['\u2019]\w+)*"

def news_analyzer() -> Analyzer:
    """Tokenise, lower-case, drop stop words, Snowball-stem (the C PyStemmer, cached)."""
    return (RegexTokenizer(TOKEN_PATTERN) | LowercaseFilter()
            | SubstitutionFilter("\u2019", "'")
            | SubstitutionFilter(r"\.", "")
            | StopFilter(stoplist=STOP_WORDS, minsize=1)
            | PyStemmerFilter("english", cachesize=100_000))



#: Text on which every change of the analyzer so far shows (dotted abbreviations, lone
#: letters, curly apostrophes, stop words, stemming): see ``analyses_alike``.
PROBE = "The U.S. and J. K. Rowling\u2019s e.g. running vitamin C, don't 3.5"


def analyses_alike(analyzer: Any) -> bool:
    """Whether ``analyzer`` (an index's, unpickled from its schema) gives what
    ``news_analyzer`` gives now: an index made by an older one keeps it, and its own searches
    stay consistent, but the static site's browser client analyses as ``news_analyzer``."""
    try:
        return [t.text for t in analyzer(PROBE)] == [t.text for t in news_analyzer()(PROBE)]
    except Exception:  # noqa: BLE001 - any other analyzer is simply not alike
        return False


_STOPPED = ()  # the cache entry of a word the stop list removes


class FastText:
    """Whoosh's ``field.index(value)`` and ``field.spellable_words(value)`` for a TEXT field
    analysed by exactly the chain ``news_analyzer`` builds, computed in one pass.

    Built from the field's own (unpickled) analyzer parts, so it follows their settings;
    ``for_field`` returns None for any other field shape, which then takes Whoosh's path.
    """

    #: distinct raw words remembered; the cache is emptied when it grows past this
    CACHE_LIMIT = 300_000

    def __init__(self, tokenizer: RegexTokenizer, substitutions: list[SubstitutionFilter],
                 stop: StopFilter, stemmer: PyStemmerFilter, field_boost: float):
        expression = tokenizer.expression
        self._words = expression.findall if expression.groups == 0 else \
            (lambda text: [m.group(0) for m in expression.finditer(text)])
        self._substitutions = [(s.pattern.sub, s.replacement) for s in substitutions]
        self._stops = stop.stops
        self._min, self._max = stop.min, stop.max
        self._renumber = stop.renumber
        self._stem = stemmer._stem
        self._ignore = stemmer.ignore
        self._boost = field_boost
        self._cache: dict[str, tuple[str, str] | tuple[()]] = {}

    @classmethod
    def for_field(cls, field: fields.FieldType) -> FastText | None:
        if type(field) is not fields.TEXT or type(field.format) is not formats.Positions \
                or field.vector:
            return None
        return cls.for_analyzer(getattr(field, "analyzer", None), field.format.field_boost)

    @classmethod
    def for_analyzer(cls, analyzer: Any, field_boost: float = 1.0) -> FastText | None:
        """The fast path for an analyzer built as ``news_analyzer`` builds it, else None. Any
        number of substitutions may stand between lower-casing and the stop list, so an index
        made before the dotted-abbreviation substitution keeps its fast path."""
        if type(analyzer) is not CompositeAnalyzer:
            return None
        items = analyzer.items
        kinds = [type(item) for item in items]
        if kinds[:2] != [RegexTokenizer, LowercaseFilter] \
                or kinds[-2:] != [StopFilter, PyStemmerFilter] \
                or any(kind is not SubstitutionFilter for kind in kinds[2:-2]):
            return None
        tokenizer, stop, stemmer = items[0], items[-2], items[-1]
        if tokenizer.gaps:
            return None
        return cls(tokenizer, list(items[2:-2]), stop, stemmer, field_boost)

    @property
    def renumbers(self) -> bool:
        """Whether stop words leave no gap in positions (adjacent tokens: a phrase's words)."""
        return bool(self._renumber)

    def tokens(self, text: str) -> list[str]:
        """The indexed terms of ``text`` in order, stop words left out."""
        cache = self._cache
        if len(cache) > self.CACHE_LIMIT:
            cache.clear()
        analyse = self._analyse
        out = []
        for raw in self._words(text):
            entry = cache.get(raw)
            if entry is None:
                entry = cache[raw] = analyse(raw)
            if entry:
                out.append(entry[0])
        return out

    def _analyse(self, raw: str) -> tuple[str, str] | tuple[()]:
        """(indexed term, spelling word) of one token, or _STOPPED."""
        text = raw.lower()
        for sub, replacement in self._substitutions:
            text = sub(replacement, text)
        if len(text) < self._min or (self._max is not None and len(text) > self._max) \
                or text in self._stops:
            return _STOPPED
        return (text if text in self._ignore else self._stem(text)), text

    def postings(self, value: str) -> tuple[list[tuple[bytes, int, float, bytes]], list[str]]:
        """``list(field.index(value))`` and ``list(field.spellable_words(value))``."""
        cache = self._cache
        if len(cache) > self.CACHE_LIMIT:
            cache.clear()
        analyse = self._analyse
        renumber = self._renumber
        poses: dict[str, list[int]] = {}
        spell: set[str] = set()
        pos = None
        for i, raw in enumerate(self._words(value)):
            entry = cache.get(raw)
            if entry is None:
                entry = cache[raw] = analyse(raw)
            if not entry:
                continue
            term, word = entry
            if renumber:
                pos = i if pos is None else pos + 1
            else:
                pos = i
            found = poses.get(term)
            if found is None:
                poses[term] = [pos]
            else:
                found.append(pos)
            spell.add(word)
        boost = self._boost
        items = []
        for term, found in poses.items():
            deltas, base = [], 0
            for p in found:
                deltas.append(p - base)
                base = p
            # Positions.word_values: a weight is the sum of the tokens' boosts (1.0 each)
            items.append((term.encode("utf-8"), len(found), float(len(found)) * boost,
                          pack_uint(len(deltas)) + dumps(deltas, 2)))
        return items, sorted(spell)
