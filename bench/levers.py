"""Ranking levers chosen by leave-one-collection-out: ``python -m bench levers``.

Every lever is a parameter of the archive's one weighting (``archive.ranking.NewsBM25F``), so
the static site's bundle, which recomputes the same formula from term frequencies and lengths,
can follow whatever is chosen. ``form=bm25f`` (a true BM25F) is the product's form; ``sum``
(a BM25 per field, summed: Whoosh's) stays in the grid as the form it replaced:

* ``k1``; ``b`` (the body's and captions' length normalisation) and ``title_b`` (the title's);
* ``title`` -- the query-time multiplier on the title field's score (the index-time field boost
  of 2 stays: it is part of the indexed term frequency);
* ``idf`` -- ``lucene`` = log(1 + (N - df + 0.5) / (df + 0.5)), ``whoosh`` = log(N / (df + 1)) + 1;
* ``qtf`` -- a word said k times in the query weighs k, or 1;
* ``form`` -- ``sum``: a BM25 per field (its own tf saturation and length), weighed and summed
  over the fields (what Whoosh's ``BM25F`` does); ``bm25f``: a true BM25F (Robertson and
  Zaragoza), what ``NewsBM25F`` does for a word over several fields:
  each field's tf normalised by its own b and weighed by its field weight, summed over the
  fields into one tf, saturated once with k1, times the word's idf. In the sum form a word
  in title and body is saturated twice, so a match in both counts almost double; in BM25F
  the title's occurrences only add to the word's one saturated tf;
* ``df`` -- which document frequency a word's idf is computed from: ``field`` (each field's
  own, the sum form only: a word rare in titles gets a large idf there), ``max`` (its largest
  over the fields, Lucene's ``CombinedFieldQuery``) or ``any`` (articles holding it in any
  field: one idf per word, a blended idf).

Evaluating a few hundred settings through ``archive eval`` would mean a few hundred Whoosh
searches per query; none of these levers changes the index, so each collection's postings for
its queries' terms are read once from the index ``python -m bench relevance`` built, and every
setting is scored from them with numpy, by the same formula ``NewsBM25F`` applies, with
Whoosh's own (byte-quantised) field lengths and its tie order (document number). The chosen
setting is then confirmed through the real ``archive eval`` path (``relevance`` after the
defaults change; ``tests/test_levers.py`` checks on a real index that the grid ranks as the
archive does).

Criterion: on a set of collections a setting has, per collection, its MAP divided by the best
peer's MAP there (peers from the same ``relevance`` run), so every collection counts alike
whatever its absolute MAP. Settings are ranked by their worst collection's ratio, then by the
mean ratio (``standing``): the ranking's targets ask for every collection at or above the best
peer, and a mean alone lets gains on most collections pay for a loss on one (with the mean, the
pick held out was below the best peer on NPL, the collection unlike the others). For each
collection left out, the setting with the best standing on the others is picked and its MAP on
the left-out one reported; the default changes to the setting with the best standing on all of
them only if the picks beat the setting in use on the collections they were not picked on
(held-out worst and mean ratio above the setting in use's on all): a lever counts only if it
generalises.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from archive import ranking
from archive.evaluate import METRICS, Qrels, relevant_count

TEXT_FIELDS = ("title", "body", "captions")


@dataclass(frozen=True)
class Setting:
    """One point of the grid: the parameters of a ``NewsBM25F`` and the query-term weighting."""

    k1: float = ranking.K1
    b: float = ranking.B
    title_b: float = ranking.FIELD_B.get("title", ranking.B)
    title: float = ranking.FIELD_WEIGHTS.get("title", 1.0)
    idf: str = ranking.IDF
    qtf: bool = True
    form: str = ranking.FORM
    df: str = ranking.WORD_DF

    @property
    def label(self) -> str:
        return (f"{self.form} k1={self.k1:g} b={self.b:g} title_b={self.title_b:g} "
                f"title={self.title:g} idf={self.idf} df={self.df} "
                f"qtf={'yes' if self.qtf else 'no'}")

    @property
    def saturation(self) -> tuple[Any, ...]:
        """What the saturated term frequencies depend on: settings equal here share them (in
        BM25F the field weights act before the saturation, in the sum form after it)."""
        return (self.form, self.k1, self.b, self.title_b,
                self.title if self.form == "bm25f" else None)

    def field_b(self, name: str) -> float:
        return self.title_b if name == "title" else self.b

    def field_weight(self, name: str) -> float:
        return self.title if name == "title" else 1.0


def grid(k1: Iterable[float] = (0.6, 0.9, 1.2, 1.5), b: Iterable[float] = (0.5, 0.75, 0.9),
         title_b: Iterable[float] = (0.0, 0.3, 0.75),
         title: Iterable[float] = (0.0, 0.25, 0.5, 1.0),
         idf: Iterable[str] = ("lucene", "whoosh"), qtf: Iterable[bool] = (True, False)
         ) -> list[Setting]:
    """Every combination, without duplicates (``title_b`` means nothing when the title weighs
    0), in a fixed order: ties in the selection go to the earlier setting."""
    out: dict[Setting, None] = {}
    for values in itertools.product(k1, b, title_b, title, idf, qtf):
        setting = Setting(*values, form="sum", df="field")
        if setting.title == 0:
            setting = replace(setting, title_b=setting.b)
        out.setdefault(setting, None)
    return list(out)


def bm25f_grid(k1: Iterable[float] = (0.9, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0),
               b: Iterable[float] = (0.3, 0.5, 0.75, 0.9),
               title_b: Iterable[float] = (0.0, 0.3, 0.75),
               title: Iterable[float] = (0.25, 0.5, 1.0, 2.0), df: Iterable[str] = ("max", "any")
               ) -> list[Setting]:
    """The true BM25F settings, and the sum form with one idf per word (``df=any``).

    Lucene's idf and counting repeated query words were picked in every fold of the last
    selection, so they are held here. The title's weight multiplies its indexed tf, which
    holds the index-time boost of 2 already: 0.5 makes a title word count as one in the body.
    BM25F adds a word's fields into one tf before saturating, so a larger k1 than the sum
    form's has room to pay off: its k1 goes to 3 (a first run picked 2, then the grid's edge,
    with b 0.5 and title 1, also edges: so the grid reaches past them)."""
    out: dict[Setting, None] = {}
    for values in itertools.product(k1, b, title_b, title, df):
        k, bb, tb, t, d = values
        out.setdefault(Setting(k, bb, tb, t, "lucene", True, "bm25f", d), None)
    for values in itertools.product((0.6, 0.9, 1.2, 1.5), b, title_b, (0.25, 0.5, 1.0)):
        k, bb, tb, t = values
        out.setdefault(Setting(k, bb, tb, t, "lucene", True, "sum", "any"), None)
    return list(out)


@dataclass
class TermPostings:
    """One query term in one field: which articles hold it, with what indexed weight."""

    field: str
    text: str               # the analysed word
    count: int              # how often the term occurs in the query
    doc_frequency: int
    docs: np.ndarray        # document numbers
    weights: np.ndarray     # indexed term frequency (field boost folded in)


@dataclass
class CollectionPostings:
    """What scoring a collection's queries needs, read once from its index."""

    doc_count: int
    keys: list[str]                         # docnum -> the id the qrels use
    lengths: dict[str, np.ndarray]          # field -> Whoosh's stored length per docnum
    average: dict[str, float]               # field -> Whoosh's average field length
    queries: dict[str, list[TermPostings]]  # qid -> its terms' postings

    @classmethod
    def read(cls, index_dir: Path, queries: Mapping[str, str]) -> CollectionPostings:
        """The postings of every query's terms, from the archive index at ``index_dir``; the
        terms are those of the archive's own free-text query (``Archive.free_text_query``)."""
        from archive.search import Archive

        with Archive(index_dir) as archive:
            searcher = archive.searcher
            reader = searcher.reader()
            doc_count = reader.doc_count_all()
            stored = [searcher.stored_fields(n) for n in range(doc_count)]
            keys = [f.get("external_id") or f["id"] for f in stored]
            lengths = {name: np.array([reader.doc_field_length(n, name, 1)
                                       for n in range(doc_count)], dtype=float)
                       for name in TEXT_FIELDS}
            average = {name: searcher.avg_field_length(name) or 1 for name in TEXT_FIELDS}
            cache: dict[tuple[str, str], tuple[int, np.ndarray, np.ndarray]] = {}
            out: dict[str, list[TermPostings]] = {}
            for qid, text in queries.items():
                q = archive.free_text_query(text)
                terms = []
                for word in (q.subqueries if q is not None else ()):
                    for leaf in word.subqueries:   # a FieldedWord: a Term per text field
                        key = (leaf.fieldname, leaf.text)
                        if key not in cache:
                            cache[key] = _postings(reader, *key)
                        df, docs, weights = cache[key]
                        if df:
                            terms.append(TermPostings(leaf.fieldname, leaf.text,
                                                      int(word.boost), df, docs, weights))
                out[qid] = terms
        return cls(doc_count, keys, lengths, average, out)

    def rank(self, terms: Sequence[TermPostings], setting: Setting,
             depth: int = 1000) -> list[str]:
        """The top ``depth`` keys for one query under ``setting`` (see ``QueryMatrix``)."""
        if not terms:
            return []
        matrix = QueryMatrix(self, terms, {})
        order = matrix.top(matrix.scores([setting])[0], depth)
        return [self.keys[n] for n in matrix.docs[order]]

    def evaluate_many(self, settings: Sequence[Setting], qrels: Qrels
                      ) -> dict[Setting, dict[str, float]]:
        """Mean MAP / nDCG@10 / P@10 / R@100 over the judged queries for every setting, as
        ``archive eval`` computes them (``archive.evaluate``'s definitions, vectorised).

        Settings sharing ``Setting.saturation`` share the saturated term frequencies, so
        those are computed once per query and group; the rest of a setting is one scalar per
        term."""
        groups: dict[tuple[Any, ...], list[Setting]] = {}
        for s in settings:
            groups.setdefault(s.saturation, []).append(s)
        docnum = {key: n for n, key in enumerate(self.keys)}
        sums = {s: np.zeros(len(METRICS)) for s in settings}
        judged_queries = 0
        for qid, terms in self.queries.items():
            judged = qrels.get(qid, {})
            if not relevant_count(judged):
                continue
            judged_queries += 1
            if not terms:
                continue
            grades = {docnum[d]: g for d, g in judged.items() if d in docnum and g > 0}
            matrix = QueryMatrix(self, terms, grades)
            for group in groups.values():
                for s, scores in zip(group, matrix.scores(group)):
                    sums[s] += matrix.metrics(scores, relevant_count(judged), judged)
        n = judged_queries or 1
        return {s: dict(zip(METRICS, (total / n).tolist())) for s, total in sums.items()}

    def evaluate(self, setting: Setting, qrels: Qrels) -> dict[str, float]:
        return self.evaluate_many([setting], qrels)[setting]


class QueryMatrix:
    """One query's matches as a matrix: a row per (term, field), a column per matching
    article (ascending document number, Whoosh's tie order).

    In the sum form a setting's scores are the saturated term frequencies of its k1 and b's,
    weighed per row by field weight, query-term count and idf, and summed: ``NewsBM25F``'s
    formula for a term of one field. In the BM25F form (``NewsBM25F``'s for a word over
    several fields) the rows of one word are first combined (each field's tf over
    its length normalisation, times its field weight, summed), saturated once, and weighed
    per word by query-term count and idf."""

    def __init__(self, collection: CollectionPostings, terms: Sequence[TermPostings],
                 grades: Mapping[int, int]):
        self.collection = collection
        self.terms = terms
        self.docs = np.unique(np.concatenate([t.docs for t in terms]))
        self.columns = [np.searchsorted(self.docs, t.docs) for t in terms]
        self.grades = np.array([grades.get(int(d), 0) for d in self.docs], dtype=float)
        rows: dict[str, list[int]] = {}
        for row, t in enumerate(terms):
            rows.setdefault(t.text, []).append(row)
        self.word_rows = list(rows.values())
        self.word_of = np.zeros(len(terms), dtype=int)
        for word, members in enumerate(self.word_rows):
            self.word_of[members] = word
        # a word's document frequency over its fields: the largest, and over any of them
        self.word_df = {
            "max": [max(terms[r].doc_frequency for r in members) for members in self.word_rows],
            "any": [len(np.unique(np.concatenate([terms[r].docs for r in members])))
                    for members in self.word_rows]}

    def _df(self, setting: Setting, row: int) -> int:
        if setting.df == "field":
            return self.terms[row].doc_frequency
        return self.word_df[setting.df][self.word_of[row]]

    def scores(self, settings: Sequence[Setting]) -> np.ndarray:
        """A row of scores per setting; the settings must share ``Setting.saturation``."""
        first = settings[0]
        k1, c = first.k1, self.collection
        if first.form == "bm25f":
            combined = np.zeros((len(self.word_rows), len(self.docs)))
            for row, (t, columns) in enumerate(zip(self.terms, self.columns)):
                b = first.field_b(t.field)
                norm = (1 - b) + b * c.lengths[t.field][t.docs] / c.average[t.field]
                combined[self.word_of[row], columns] += first.field_weight(t.field) \
                    * t.weights / norm
            saturated = combined * (k1 + 1) / (combined + k1)
            weights = np.array([[(self.terms[members[0]].count if s.qtf else 1)
                                 * ranking.IDF_FORMS[s.idf](c.doc_count,
                                                            self._df(s, members[0]))
                                 for members in self.word_rows] for s in settings])
            return weights @ saturated
        saturated = np.zeros((len(self.terms), len(self.docs)))
        for row, (t, columns) in enumerate(zip(self.terms, self.columns)):
            b = first.field_b(t.field)
            norm = k1 * ((1 - b) + b * c.lengths[t.field][t.docs] / c.average[t.field])
            saturated[row, columns] = t.weights * (k1 + 1) / (t.weights + norm)
        weights = np.array([[s.field_weight(t.field) * (t.count if s.qtf else 1)
                             * ranking.IDF_FORMS[s.idf](c.doc_count, self._df(s, row))
                             for row, t in enumerate(self.terms)] for s in settings])
        return weights @ saturated

    def top(self, scores: np.ndarray, depth: int = 1000) -> np.ndarray:
        """Column indexes of the ``depth`` best scores, best first, ties by document number
        (exactly: every column tied with the cut-off score competes for the last places)."""
        if len(scores) > depth:
            cut = np.partition(scores, len(scores) - depth)[len(scores) - depth]
            candidates = np.flatnonzero(scores >= cut)
        else:
            candidates = np.arange(len(scores))
        return candidates[np.lexsort((candidates, -scores[candidates]))][:depth]

    def metrics(self, scores: np.ndarray, relevant: int, judged: Mapping[str, int]
                ) -> np.ndarray:
        """AP, nDCG@10, P@10, R@100 of the ranking ``scores`` give (``METRICS``' order)."""
        gains = self.grades[self.top(scores)]
        hits = gains > 0
        ranks = np.arange(1, len(gains) + 1)
        ap = float(np.sum(np.cumsum(hits)[hits] / ranks[hits])) / relevant
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
        ideal_dcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, 1))
        dcg = float(np.sum(gains[:10] / np.log2(ranks[:10] + 1)))
        values = {"ap": ap, "ndcg10": dcg / ideal_dcg if ideal_dcg else 0.0,
                  "p10": float(hits[:10].sum()) / 10, "r100": float(hits[:100].sum()) / relevant}
        return np.array([values[m] for m in METRICS])


def _postings(reader: Any, field: str, text: str) -> tuple[int, np.ndarray, np.ndarray]:
    btext = text.encode("utf-8")
    if (field, btext) not in reader:
        return 0, np.empty(0, dtype=int), np.empty(0)
    matcher = reader.postings(field, btext)
    docs, weights = [], []
    while matcher.is_active():
        docs.append(matcher.id())
        weights.append(matcher.weight())
        matcher.next()
    return reader.doc_frequency(field, btext), np.array(docs, dtype=int), np.array(weights)


# -- the selection ------------------------------------------------------------------------------

def criterion(maps: Mapping[str, Mapping[Setting, float]], best_peer: Mapping[str, float],
              setting: Setting, collections: Iterable[str]) -> float:
    """Mean over ``collections`` of the setting's MAP over the best peer's MAP there."""
    names = list(collections)
    return sum(maps[c][setting] / best_peer[c] for c in names) / len(names)


def worst(maps: Mapping[str, Mapping[Setting, float]], best_peer: Mapping[str, float],
          setting: Setting, collections: Iterable[str]) -> float:
    """The lowest over ``collections`` of the setting's MAP over the best peer's MAP."""
    return min(maps[c][setting] / best_peer[c] for c in collections)


def standing(maps: Mapping[str, Mapping[Setting, float]], best_peer: Mapping[str, float],
             setting: Setting, collections: Iterable[str]) -> tuple[float, float]:
    """What a pick maximises: the worst collection's ratio, then the mean ratio."""
    names = list(collections)
    return worst(maps, best_peer, setting, names), criterion(maps, best_peer, setting, names)


def pick(maps: Mapping[str, Mapping[Setting, float]], best_peer: Mapping[str, float],
         settings: Sequence[Setting], collections: Iterable[str]) -> Setting:
    """The setting with the best standing on ``collections`` (the earliest of equals)."""
    names = list(collections)
    return max(settings, key=lambda s: standing(maps, best_peer, s, names))


def leave_one_out(maps: Mapping[str, Mapping[Setting, float]], best_peer: Mapping[str, float],
                  settings: Sequence[Setting], current: Setting | None = None,
                  named_peer: Mapping[str, float] | None = None
                  ) -> tuple[list[dict[str, Any]], Setting]:
    """Per collection: the setting picked on the others and its MAP on this one (the
    cross-validated figure), beside the hindsight best and ``current``'s MAP (the setting in
    use, when the grid holds it); and the setting picked on all. ``named_peer`` (the best MAP
    of the peers the ranking issue names) only adds a second ratio to each row: the picks
    are made against ``best_peer``."""
    names = list(maps)
    rows = []
    for held in names:
        chosen = pick(maps, best_peer, settings, [c for c in names if c != held])
        hindsight = max(settings, key=lambda s: maps[held][s])
        rows.append({"collection": held, "picked": chosen.label, "map": maps[held][chosen],
                     "current": maps[held].get(current) if current is not None else None,
                     "best_peer": best_peer[held],
                     "ratio": maps[held][chosen] / best_peer[held],
                     "hindsight": maps[held][hindsight], "hindsight_setting": hindsight.label,
                     "named_ratio": (maps[held][chosen] / named_peer[held]
                                     if named_peer and named_peer.get(held) else None)})
    return rows, pick(maps, best_peer, settings, names)


LOO_COLUMNS = [("collection", "held out", ""), ("map", "MAP (picked on the others)", ".4f"),
               ("best_peer", "best peer MAP", ".4f"), ("ratio", "/ best peer", ".3f"),
               ("named_ratio", "/ best named peer", ".3f"),
               ("current", "MAP now", ".4f"),
               ("hindsight", "hindsight best MAP", ".4f"), ("picked", "setting picked", "")]


def computable_by_every_scorer(settings: Iterable[Setting]) -> list[Setting]:
    """The settings Whoosh, the columns and the site's lists can all compute: a blended df over
    any field (``df=any``) is a count none of them keeps."""
    return [s for s in settings if s.df != "any"]


def run(data: Path, names: Sequence[str], best_peer: Mapping[str, float],
        settings: Sequence[Setting] | None = None,
        named_peer: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The grid on every collection, the leave-one-out rows and the overall pick; then, on the
    collections only measured on (``testcollections.CHECKS``, never picked with), the setting
    in use beside the pick among the settings every scorer computes."""
    from archive.evaluate import read_qrels, read_queries
    from bench import testcollections

    def postings(name: str) -> tuple[CollectionPostings, Qrels]:
        _, queries_path, qrels_path = testcollections.paths(data, name)
        return (CollectionPostings.read(data / name / "index", read_queries(queries_path)),
                read_qrels(qrels_path))

    settings = list(settings or grid() + bm25f_grid())
    names = [n for n in names if best_peer.get(n)]  # a ratio needs a peer that found something
    checks = [n for n in names if n in testcollections.CHECKS]
    names = [n for n in names if n not in checks]
    maps: dict[str, dict[Setting, float]] = {}
    means: dict[str, dict[Setting, dict[str, float]]] = {}
    for name in names:
        collection, qrels = postings(name)
        means[name] = collection.evaluate_many(settings, qrels)
        maps[name] = {s: m["ap"] for s, m in means[name].items()}
    current = Setting()
    everything = selection(maps, best_peer, settings, current, named_peer)
    chosen = everything.pop("pick")
    computable = selection(maps, best_peer, computable_by_every_scorer(settings), current,
                           named_peer)
    computable_pick = computable.pop("pick")
    check_rows = []
    for name in checks:
        collection, qrels = postings(name)
        found = {s: m["ap"] for s, m in
                 collection.evaluate_many(list({current, computable_pick}), qrels).items()}
        check_rows.append({
            "collection": name, "best_peer": best_peer[name],
            "current": found[current], "current_ratio": found[current] / best_peer[name],
            "pick": found[computable_pick],
            "pick_ratio": found[computable_pick] / best_peer[name],
            "pick_named_ratio": (found[computable_pick] / named_peer[name]
                                 if named_peer and named_peer.get(name) else None)})
    return {**everything, "computable": computable, "chosen": asdict(chosen),
            "current_label": current.label,
            "current_criterion": (criterion(maps, best_peer, current, names)
                                  if current in maps[names[0]] else None),
            "current_worst": (worst(maps, best_peer, current, names)
                              if current in maps[names[0]] else None),
            "chosen_per_collection": {n: means[n][chosen] for n in names},
            "checks": check_rows}


CHECK_COLUMNS = [("collection", "only measured on", ""), ("best_peer", "best peer MAP", ".4f"),
                 ("current", "MAP now", ".4f"), ("current_ratio", "/ best peer", ".3f"),
                 ("pick", "MAP of the pick", ".4f"), ("pick_ratio", "/ best peer", ".3f"),
                 ("pick_named_ratio", "/ best named peer", ".3f")]


def selection(maps: Mapping[str, Mapping[Setting, float]], best_peer: Mapping[str, float],
              settings: Sequence[Setting], current: Setting,
              named_peer: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The leave-one-out rows over ``settings``, their held-out mean, the pick on every
    collection (``pick``) and whether it is ``current``."""
    rows, pick = leave_one_out(maps, best_peer, settings, current, named_peer)
    named = [r["named_ratio"] for r in rows if r["named_ratio"] is not None]
    full = len(named) == len(rows)
    return {"loo": rows, "loo_mean_ratio": sum(r["ratio"] for r in rows) / len(rows),
            "loo_worst_ratio": min(r["ratio"] for r in rows),
            "loo_mean_named_ratio": sum(named) / len(named) if full else None,
            "loo_worst_named_ratio": min(named) if full else None,
            "settings": len(settings), "pick": pick, "chosen_label": pick.label,
            "chosen_criterion": criterion(maps, best_peer, pick, list(maps)),
            "chosen_worst": worst(maps, best_peer, pick, list(maps)),
            "current_is_pick": pick == current}


def verdict(result: Mapping[str, Any]) -> str:
    """What the selection says of the setting in use (``run``'s result), among the settings
    every scorer computes: keep it when it is the pick, or when the picks stand no better held
    out (worst collection, then mean) than it does on all (a pick's edge on all collections
    alone is hindsight); else change it."""
    computable = result["computable"]
    if computable["current_is_pick"]:
        return "the pick among the settings every scorer computes"
    current = (result.get("current_worst"), result["current_criterion"])
    held_out = (computable["loo_worst_ratio"], computable["loo_mean_ratio"])
    if None not in current and held_out <= current:
        return (f"kept: the pick ({computable['chosen_label']}, worst "
                f"{computable['chosen_worst']:.3f}, mean {computable['chosen_criterion']:.3f}) "
                f"gains in hindsight only; picked on the others, the held-out worst is "
                f"{held_out[0]:.3f} and mean {held_out[1]:.3f}")
    return ("not the pick among the settings every scorer computes, and the picks gain held "
            "out: change it")
