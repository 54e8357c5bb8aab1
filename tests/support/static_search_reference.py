"""A Python reader of the static search bundle: the specification the browser client must meet.

It parses the site's query language exactly as ``engine.js`` does and answers from the bundle
files alone, reading every posting list in full (no early termination), so it gives the exact
answer the browser's early-terminating search must reproduce: same hits, same order. Tests and
the bench compare it with ``Archive.search`` (the CLI) too.

Query language (the CLI's): words are ANDed; ``OR``; ``NOT x`` and ``-x``; parentheses;
``"phrases"``; ``source:``, ``place:``, ``topic:`` (quoted for several words); ``date:2017``,
``date:2017-08``, ``date:2017-08-27``, ``date:[2017-01 to 2017-06]``, ``date:>2017-01-01``,
``date:<2017``, ``year:2017``. Precedence as Whoosh: ``NOT`` binds tightest, then ``AND``,
then ``OR``, then the implicit AND between terms. Wildcards, fuzzy terms, proximity and boosts
are refused with a clear message rather than answered wrongly.
"""

from __future__ import annotations

import base64
import calendar
import math
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archive import analysis
from archive.site.search.format import (FACETS, decode_fielded, facet_file,
                                        key_hash, page_path, parse_script, read_varints,
                                        tail_name)

SORTS = ("relevance", "newest", "oldest")


class QueryError(ValueError):
    """A query the site search cannot run; the message is one line, fit for a visitor."""


# --- parsing (engine.js's parse() mirrors this function for function) ------------------------

_FIELD = re.compile(r"([A-Za-z_]+):")
_WORD_END = re.compile(r"[\s()\"]")
_DATE = re.compile(r"^(\d{4})(?:[-/.]?(\d{1,2})(?:[-/.]?(\d{1,2}))?)?$")
SUPPORTED_FIELDS = ("source", "place", "topic", "date", "year")


@dataclass
class Token:
    kind: str          # ( ) phrase field word op neg
    text: str = ""
    name: str = ""


def tokenize_query(text: str) -> list[Token]:
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "()":
            tokens.append(Token(c))
            i += 1
        elif c == '"':
            end = text.find('"', i + 1)
            end = n if end < 0 else end
            tokens.append(Token("phrase", text[i + 1:end]))
            i = end + 1
            if i < n and text[i] == "~":
                raise QueryError("proximity searches (\"...\"~N) are not supported here; "
                                 "use a plain \"phrase\"")
        elif c in "-+" and i + 1 < n and not text[i + 1].isspace():
            if c == "-":
                tokens.append(Token("neg"))
            i += 1
        else:
            m = _FIELD.match(text, i)
            if m and m.end() < n and not text[m.end()].isspace():
                i = _field_token(text, m, tokens)
            else:
                end = _WORD_END.search(text, i)
                j = n if end is None else end.start()
                word = text[i:j]
                i = j
                tokens.append(Token("op", word) if word in ("AND", "OR", "NOT")
                              else Token("word", _check_word(word)))
    return tokens


def _field_token(text: str, m: re.Match[str], tokens: list[Token]) -> int:
    name, i, n = m.group(1).lower(), m.end(), len(text)
    if text[i] == '"':
        end = text.find('"', i + 1)
        end = n if end < 0 else end
        value, i = text[i + 1:end], end + 1
    elif text[i] == "[":
        end = text.find("]", i)
        end = n if end < 0 else end
        value, i = text[i:end + 1], end + 1
    else:
        end = _WORD_END.search(text, i)
        j = n if end is None else end.start()
        value, i = text[i:j], j
    if name not in SUPPORTED_FIELDS:
        raise QueryError(f"the site search has no {name}: field; use source:, place:, "
                         "topic: or date:")
    tokens.append(Token("field", value, name))
    return i


def _check_word(word: str) -> str:
    if "*" in word or "?" in word:
        raise QueryError(f"wildcards ({word}) are not supported here; type whole words")
    if re.search(r"~\d*$", word):
        raise QueryError(f"fuzzy terms ({word}) are not supported here; check the spelling")
    if "^" in word:
        raise QueryError(f"boosts ({word}) are not supported here")
    return word


class _Parser:
    """Recursive descent with Whoosh's precedence: NOT > AND > OR > adjacency."""

    def __init__(self, tokens: list[Token]):
        self.tokens, self.pos = tokens, 0

    def peek(self) -> Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> Token:
        self.pos += 1
        return self.tokens[self.pos - 1]

    def sequence(self, nested: bool) -> dict | None:
        kids = []
        while (t := self.peek()) is not None:
            if t.kind == ")":
                if nested:
                    break
                self.take()          # a stray ")" is ignored
                continue
            if t.kind == "op" and t.text in ("AND", "OR"):
                self.take()          # a dangling operator is ignored
                continue
            kids.append(self.disjunction())
        return _group("and", kids)

    def disjunction(self) -> dict | None:
        kids = [self.conjunction()]
        while self._op("OR"):
            kids.append(self.conjunction())
        return _group("or", kids)

    def conjunction(self) -> dict | None:
        kids = [self.unary()]
        while self._op("AND"):
            kids.append(self.unary())
        return _group("and", kids)

    def _op(self, name: str) -> bool:
        t = self.peek()
        nxt = self.tokens[self.pos + 1] if self.pos + 1 < len(self.tokens) else None
        if t is not None and t.kind == "op" and t.text == name and nxt is not None \
                and nxt.kind != ")" and not (nxt.kind == "op" and nxt.text in ("AND", "OR")):
            self.take()
            return True
        return False

    def unary(self) -> dict | None:
        t = self.peek()
        if t is None:
            return None
        if t.kind == "neg" or (t.kind == "op" and t.text == "NOT"):
            self.take()
            kid = self.unary()
            return {"op": "not", "kid": kid} if kid is not None else None
        return self.primary()

    def primary(self) -> dict | None:
        t = self.take()
        if t.kind == "(":
            inner = self.sequence(nested=True)
            if self.peek() is not None and self.peek().kind == ")":
                self.take()
            return inner
        if t.kind == "phrase":
            return _phrase(t.text)
        if t.kind == "field":
            return _field(t.name, t.text)
        if t.kind == "word":
            return _group("and", [{"op": "term", "key": s} for s in _analyze(t.text)])
        return None   # a lone "NOT"/operator at the end


def _group(op: str, kids: list[dict | None]) -> dict | None:
    kept = [k for k in kids if k is not None]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else {"op": op, "kids": kept}


_ANALYZER = analysis.news_analyzer()


def _analyze(text: str) -> list[str]:
    return [t.text for t in _ANALYZER(text)]


def _phrase(text: str) -> dict | None:
    stems = _analyze(text)
    if not stems:
        return None
    if len(stems) == 1:
        return {"op": "term", "key": stems[0]}
    return {"op": "phrase", "keys": [f"{a} {b}" for a, b in zip(stems, stems[1:])]}


def _field(name: str, value: str) -> dict:
    if name in ("date", "year"):
        lo, hi = parse_date_range(value)
        return {"op": "date", "lo": lo, "hi": hi}
    return {"op": "facet", "facet": name, "key": value.strip().lower()}


def _day(text: str, end: bool) -> int:
    """``2017`` / ``2017-08`` / ``2017-08-27`` (or 201708...) -> first or last day, YYYYMMDD."""
    m = _DATE.match(text.strip())
    if not m:
        raise QueryError(f"cannot read {text!r} as a date: use e.g. date:2017, date:2017-08, "
                         "date:[2017-08-01 to 2017-08-31] or date:>2017-01-01")
    year, month, day = int(m.group(1)), m.group(2), m.group(3)
    if month is None:
        return year * 10000 + (1231 if end else 101)
    mo = int(month)
    if not 1 <= mo <= 12:
        raise QueryError(f"bad month in date {text!r}")
    if day is None:
        return year * 10000 + mo * 100 + (calendar.monthrange(year, mo)[1] if end else 1)
    d = int(day)
    if not 1 <= d <= calendar.monthrange(year, mo)[1]:
        raise QueryError(f"bad day in date {text!r}")
    return year * 10000 + mo * 100 + d


def parse_date_range(value: str) -> tuple[int, int]:
    """A date expression -> inclusive (first day, last day); open ends are 0 / 99999999.

    As in the CLI, ``>X`` and ``>=X`` both start at the beginning of X, ``<X`` and ``<=X`` both
    run to its end.
    """
    value = value.strip()
    if value.startswith("["):
        inner = value.strip("[]")
        parts = re.split(r"\s+to\s+|^to\s+|\s+to$", inner.strip(), flags=re.I)
        if len(parts) != 2:
            raise QueryError(f"cannot read date range {value!r}: use [2017-01 to 2017-06]")
        lo = _day(parts[0], False) if parts[0].strip() else 0
        hi = _day(parts[1], True) if parts[1].strip() else 99999999
        return lo, hi
    if value.startswith(">"):
        return _day(value.lstrip(">="), False), 99999999
    if value.startswith("<"):
        return 0, _day(value.lstrip("<="), True)
    return _day(value, False), _day(value, True)


def parse_query(text: str) -> dict | None:
    """The query tree; None when nothing is left to search (e.g. only stop words)."""
    if not text.strip():
        return {"op": "all"}
    return _Parser(tokenize_query(text)).sequence(nested=False)


# --- reading the bundle -------------------------------------------------------------------------

def idf_of(meta: dict[str, Any], df: int) -> float:
    """The weighting's idf (``archive.ranking``'s Lucene idf, the only one a bundle is built
    with) from the collection's count in ``meta``."""
    assert meta["w"]["idf"] == "lucene", meta["w"]
    n = meta["N"]
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def fielded_score(meta: dict[str, Any], idf: list[float], fields: tuple[tuple[int, ...], ...],
                  first: int = 0) -> float:
    """A posting's BM25F score as engine.js computes it. A word (one weight per field): its
    fields as one term (``archive.words``), each field's weight over the field's length
    normalisation, times the field's weight, summed, saturated once, times the idf of the
    word's largest document frequency over the fields (``idf`` per field: the largest idf is
    that of the smallest frequency, so the word's is the smallest). A pair: per field holding
    it, each word's weighted BM25 from word ``first`` on (a phrase's later pairs score their
    second word only), summed left to right."""
    w = meta["w"]
    nfields = len(fields)
    if all(len(values) <= 2 for values in fields):
        combined = 0.0
        for f, values in enumerate(fields):
            if values:
                B = w["b"][f]
                combined += w["fw"][f] * values[0] / ((1 - B) + B * values[1] / meta["avg"][f])
        K1 = w["k1"]
        return min(idf) * combined * (K1 + 1) / (combined + K1)
    score = 0.0
    for f, values in enumerate(fields):
        if not values:
            continue
        length = values[-1]
        for i, weight in enumerate(values[:-1]):
            if i >= first:
                score += w["fw"][f] * bm25(idf[i * nfields + f], weight, length,
                                           meta["avg"][f], w["b"][f], w["k1"])
    return score


def bm25(idf: float, tf: float, fl: float, avgfl: float, B: float, K1: float) -> float:
    return idf * ((tf * (K1 + 1)) / (tf + K1 * ((1 - B) + B * fl / avgfl)))


class BundleReader:
    """Loads bundle files by name (``meta``, ``t/12``, ``a/7``...), as the browser would."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.cache: dict[str, Any] = {}
        self.loaded: list[str] = []
        self.meta = self.load("meta")
        self.n: int = self.meta["n"]
        self.dated: int = self.meta["dated"]
        self.years = [y for y, _ in self.meta["years"]]
        self.year_firsts = [f for _, f in self.meta["years"]]

    def load(self, name: str) -> Any:
        if name not in self.cache:
            got, data = parse_script((self.folder / f"{name}.js").read_bytes())
            if got != name:
                raise ValueError(f"bundle file {name} names itself {got}")
            self.cache[name] = data
            self.loaded.append(name)
        return self.cache[name]

    def deleted(self, segid: str) -> set[int]:
        """The numbers a segment's lists hold for deleted copies (skipped there)."""
        data = self.meta["x"].get(segid)
        if not data:
            return set()
        raw = base64.b64decode(data)
        out, last, pos = set(), -1, 0
        while pos < len(raw):
            (d,), pos = read_varints(raw, 1, pos)
            last += d
            out.add(last)
        return out

    def postings(self, namespace: str, key: str, first: int = 0) -> dict[int, float]:
        """A term's or pair's full list over the live segments: article number -> BM25F
        score, computed from the postings' weights and lengths as engine.js does."""
        found = []
        for segid, tshards, pshards in self.meta["segs"]:
            shards = tshards if namespace == "t" else pshards
            space = f"s/{segid}/{namespace}"
            shard = key_hash(key) % shards
            for index, row in enumerate(self.load(f"{space}/{shard}")):
                if row[0] == key:
                    found.append((segid, space, shard, index, row))
        if not found:
            return {}
        arity = 1 if namespace == "t" else 2
        nfields = len(self.meta["avg"])
        dfs = [0] * (nfields * arity)
        for *_, row in found:
            dfs = [a + b for a, b in zip(dfs, row[1])]
        idf = [idf_of(self.meta, df) for df in dfs]
        out: dict[int, float] = {}
        for segid, space, shard, index, row in found:
            count, head = row[2], row[3]
            tiers = row[4] if len(row) > 4 else []
            parts = [(count - sum(c for c, _ in tiers), head)]
            parts += [(c, self.load(tail_name(space, shard, index, t)))
                      for t, (c, _) in enumerate(tiers)]
            skip = self.deleted(segid)
            for c, data in parts:
                for n, fields in decode_fielded(data, c, arity, nfields):
                    if n not in skip:
                        out[n] = fielded_score(self.meta, idf, fields, first)
        return out

    def facet_numbers(self, facet: str, key: str) -> list[int]:
        buckets = self.meta["fb"].get(facet)
        for k, count, data in self.load(facet_file(facet, key, buckets)) if buckets else []:
            if k == key:
                deltas, _ = read_varints(base64.b64decode(data), count)
                out, last = [], -1
                for d in deltas:
                    last += d
                    out.append(last)
                return out
        return []

    def first_from(self, day: int) -> int:
        """The first article number dated ``day`` (YYYYMMDD) or later (``dated`` if none).

        ``meta`` gives each year's first number; a day inside a year needs that year's day
        table (``d/YEAR``: mmdd and article count per day)."""
        if day % 10000 > 1231:              # the day after a year's last day
            day = (day // 10000 + 1) * 10000 + 101
        i = bisect_left(self.years, day // 10000)
        if i == len(self.years):
            return self.dated
        first = self.year_firsts[i]
        if self.years[i] > day // 10000 or day % 10000 <= 101:
            return first
        flat = self.load(f"d/{self.years[i]}")
        for k in range(0, len(flat), 2):
            if flat[k] >= day % 10000:
                return first
            first += flat[k + 1]
        return self.year_firsts[i + 1] if i + 1 < len(self.years) else self.dated

    def date_range(self, lo: int, hi: int) -> range:
        first = self.first_from(lo)
        return range(first, max(first, self.first_from(hi + 1)))

    def article(self, number: int) -> dict[str, Any]:
        """The article file's record, plus its ``id`` (from ``i/BLOCK``) and page ``path``."""
        record = dict(self.load(f"a/{number}"))
        record["id"] = self.load(f"i/{number // self.meta['block']}")[number % self.meta["block"]]
        record["path"] = page_path(record)
        return record

    def column(self, facet: str, number: int) -> list[int]:
        """Display-order value indexes of ``facet`` for one article."""
        block = number // self.meta["block"]
        name = f"c/{facet}/{block}"
        key = ("col", name)
        if key not in self.cache:
            data = base64.b64decode(self.load(name))
            rows, pos = [], 0
            while pos < len(data):
                (count,), pos = read_varints(data, 1, pos)
                ids, pos = read_varints(data, count, pos)
                rows.append(ids)
            self.cache[key] = rows
        return self.cache[key][number % self.meta["block"]]

    def year_of(self, number: int) -> int | None:
        if number >= self.dated:
            return None
        return self.years[bisect_right(self.year_firsts, number) - 1]


# --- answering ----------------------------------------------------------------------------------

@dataclass
class Answer:
    total: int
    hits: list[dict[str, Any]]
    facets: dict[str, list[list[Any]]] = field(default_factory=dict)


def evaluate(reader: BundleReader, node: dict) -> dict[int, float]:
    """Matched article number -> score; sums run left to right, as in engine.js."""
    op = node["op"]
    if op == "term":
        return reader.postings("t", node["key"])
    if op == "phrase":
        return _intersect([reader.postings("p", k, 1 if i else 0)
                           for i, k in enumerate(node["keys"])])
    if op == "facet":
        return dict.fromkeys(reader.facet_numbers(node["facet"], node["key"]), 0.0)
    if op == "date":
        return dict.fromkeys(reader.date_range(node["lo"], node["hi"]), 0.0)
    if op == "all":
        return dict.fromkeys(range(reader.n), 0.0)
    if op == "not":
        inner = evaluate(reader, node["kid"])
        return {n: 0.0 for n in range(reader.n) if n not in inner}
    kids = [evaluate(reader, k) for k in node["kids"]]
    if op == "and":
        return _intersect(kids)
    out: dict[int, float] = {}
    for n in sorted(set().union(*kids)):
        score = 0.0
        for kid in kids:
            if n in kid:
                score += kid[n]
        out[n] = score
    return out


def _intersect(kids: list[dict[int, float]]) -> dict[int, float]:
    smallest = min(kids, key=len)
    out: dict[int, float] = {}
    for n in smallest:
        if all(n in k for k in kids):
            score = 0.0
            for kid in kids:
                score += kid[n]
            out[n] = score
    return out


def order(matched: dict[int, float], sort: str, dated: int) -> list[int]:
    """Relevance ties (all of a filter-only query) go newest first, as a news reader expects."""
    def newest(n: int) -> tuple[int, int]:
        return (0, -n) if n < dated else (1, n)
    if sort == "relevance":
        return sorted(matched, key=lambda n: (-matched[n], *newest(n)))
    if sort == "newest":
        return sorted(matched, key=newest)
    return sorted(matched)


def filter_nodes(filters: dict[str, str] | None) -> list[dict]:
    """The filter controls (URL parameters) as query nodes ANDed after the query."""
    out = []
    for name, value in (filters or {}).items():
        if value:
            out.append(_field("date" if name == "year" else name, value))
    return out


def search(reader: BundleReader, text: str, *, sort: str = "relevance", page: int = 1,
           page_size: int = 10, filters: dict[str, str] | None = None,
           facets: bool = True) -> Answer:
    if sort not in SORTS:
        raise QueryError(f"unknown sort {sort!r}")
    node = parse_query(text)
    if node is None:
        return Answer(0, [], {})
    node = _group("and", [node] + filter_nodes(filters))
    matched = evaluate(reader, node)
    ranked = order(matched, sort, reader.dated)
    start = (page - 1) * page_size
    hits = []
    for n in ranked[start:start + page_size]:
        article = reader.article(n)
        hits.append({"n": n, "id": article["id"], "title": article["t"], "url": article["path"],
                     "date": article["d"], "score": matched[n]})
    return Answer(len(matched), hits, facet_counts(reader, matched) if facets else {})


def facet_counts(reader: BundleReader, matched: dict[int, float]) -> dict[str, list[list[Any]]]:
    """Per facet, [key, display, count] for values in the results, biggest first."""
    out: dict[str, list[list[Any]]] = {}
    for name in FACETS:
        values = reader.load("facets")[name]
        counts: dict[int, int] = {}
        for n in matched:
            for v in reader.column(name, n):
                counts[v] = counts.get(v, 0) + 1
        out[name] = _listing(values, counts)
    years = {y: i for i, (y, _, _) in enumerate(reader.load("facets")["year"])}
    ycounts: dict[int, int] = {}
    for n in matched:
        y = reader.year_of(n)
        if y is not None:
            ycounts[years[str(y)]] = ycounts.get(years[str(y)], 0) + 1
    out["year"] = _listing(reader.load("facets")["year"], ycounts)
    return out


def _listing(values: list[list[Any]], counts: dict[int, int]) -> list[list[Any]]:
    rows = [[values[v][0], values[v][1], c] for v, c in counts.items()]
    rows.sort(key=lambda r: (-r[2], r[0]))
    return rows


# --- query sets and agreement with the CLI (tests and bench) -----------------------------------

_HEADLINE_WORD = re.compile(r"[A-Za-z][A-Za-z']+")


def headline_queries(titles: list[str], count: int, seed: int = 7) -> list[str]:
    """Queries people might type, drawn from real headlines: 1-3 adjacent words, 2-word
    phrases, OR and NOT pairs. Only forms the CLI reads the same way (``NOT``, not ``-``)."""
    import random
    rng = random.Random(seed)
    out: list[str] = []
    pool = [t for t in titles if len(_HEADLINE_WORD.findall(t)) >= 2]
    while pool and len(out) < count:
        words = [w for w in _HEADLINE_WORD.findall(rng.choice(pool))
                 if w.lower() not in analysis.STOP_WORDS and w not in ("AND", "OR", "NOT")]
        if len(words) < 2:
            continue
        kind = rng.random()
        i = rng.randrange(len(words) - 1)
        if kind < 0.35:
            q = words[i]
        elif kind < 0.65:
            q = " ".join(words[i:i + rng.choice((2, 3))])
        elif kind < 0.8:
            q = f'"{words[i]} {words[i + 1]}"'
        elif kind < 0.9:
            q = f"{words[i]} OR {words[i + 1]}"
        else:
            q = f"{words[i]} NOT {words[i + 1]}"
        if q not in out:
            out.append(q)
    return out


def overlap_at(k: int, expected: list[str], got: list[str]) -> float:
    """|top-k of both| / min(k, |expected|): 1.0 when both agree on the first page."""
    if not expected:
        return 1.0 if not got else 0.0
    return len(set(expected[:k]) & set(got[:k])) / min(k, len(expected))
