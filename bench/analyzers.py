"""The analyzer's levers, chosen by leave-one-collection-out: ``python -m bench analyzers``.

Two levers of the one analyzer (``archive.analysis``) that the ranking grid cannot reach,
because each needs its own index: whether a dotted abbreviation is one word ("U.S." -> "us",
meeting "US"; before, "u" and "s"), and whether the single letters a-z are stop words. Every
collection of the suite is indexed once per combination (four analyzers, the index built in
this process with ``store.schema.news_analyzer`` replaced), each index's postings are scored
over the ranking grid (``bench/levers.py``, the settings every scorer computes), and the
choice is made as the grid's is: for each collection left out, the analyzer best on the
others, its MAP on the one left out. Twice: at the ranking setting in use (the analyzer
alone), and jointly with the grid (analyzer and setting picked together); and all of it again
among the analyzers that keep "U.S." a word a search finds (``FINDING_ABBREVIATIONS``): a
requirement of news search, not a lever, so it narrows the candidates before the choice.

Ratios are over the last relevance run's best peer on each collection (as ``bench levers``),
the same denominator for every analyzer, so they compare the analyzers with each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from string import ascii_lowercase
from typing import Any
from unittest import mock

from bench import levers, testcollections

#: The tokenizer before dotted abbreviations were joined.
WORDS_ONLY = r"\w+(?:['\u2019]\w+)*"


@dataclass(frozen=True)
class Variant:
    """One analyzer of the four: its two levers."""

    abbreviations: bool  # "U.S." one word, its dots removed
    letters: bool        # a-z stop words

    @property
    def label(self) -> str:
        return (f"abbreviations {'joined' if self.abbreviations else 'split'}, "
                f"letters {'stopped' if self.letters else 'kept'}")

    def analyzer(self) -> Any:
        """The chain ``news_analyzer`` would build with these levers."""
        from whoosh.analysis import (LowercaseFilter, PyStemmerFilter, RegexTokenizer,
                                     StopFilter, SubstitutionFilter)

        from archive import analysis
        chain = (RegexTokenizer(analysis.TOKEN_PATTERN if self.abbreviations else WORDS_ONLY)
                 | LowercaseFilter() | SubstitutionFilter("\u2019", "'"))
        if self.abbreviations:
            chain = chain | SubstitutionFilter(r"\.", "")
        stops = analysis.STOP_WORDS if self.letters else \
            analysis.STOP_WORDS - (set(ascii_lowercase) - {"a", "i"})  # Snowball's own two
        return chain | StopFilter(stoplist=stops, minsize=1) \
            | PyStemmerFilter("english", cachesize=100_000)


VARIANTS = tuple(Variant(a, le) for a in (False, True) for le in (False, True))
#: The analyzers a news search can use. Split, "U.S." is "u" and "s": with the letters
#: stopped it is no word at all (a search for it finds nothing), with them kept it never
#: meets "US".
FINDING_ABBREVIATIONS = tuple(v for v in VARIANTS if v.abbreviations)
#: what ``archive.analysis.news_analyzer`` builds (tests/test_bench.py holds them equal)
ARCHIVE = Variant(True, True)


@dataclass(frozen=True)
class Choice:
    """An analyzer and a ranking setting: a key of the joint selection."""

    variant: Variant
    setting: levers.Setting

    @property
    def label(self) -> str:
        return f"{self.variant.label}; {self.setting.label}"


def build(docs: Path, index_dir: Path, variant: Variant) -> None:
    """Index ``docs`` at ``index_dir`` in this process (one writer) with ``variant``'s
    analyzer in every text field."""
    from archive import store
    from archive.indexer import Indexer

    with mock.patch.object(store.schema, "news_analyzer", variant.analyzer):
        report = Indexer(index_dir, procs=1).run([docs], rebuild=True)
    if report.skipped:
        raise RuntimeError(f"indexing {docs}: {report.skipped[0]}")


def scored(data: Path, work: Path, names: Sequence[str], settings: Sequence[levers.Setting],
           progress: Callable[[str], None] = lambda _: None
           ) -> dict[Variant, dict[str, dict[levers.Setting, float]]]:
    """MAP of every setting, per analyzer and collection."""
    from archive.evaluate import read_qrels, read_queries

    maps: dict[Variant, dict[str, dict[levers.Setting, float]]] = {v: {} for v in VARIANTS}
    for name in names:
        docs, queries_path, qrels_path = testcollections.paths(data, name)
        queries, qrels = read_queries(queries_path), read_qrels(qrels_path)
        for variant in VARIANTS:
            index_dir = work / name / variant.label.replace(", ", "-").replace(" ", "-")
            build(docs, index_dir, variant)
            postings = levers.CollectionPostings.read(index_dir, queries)
            maps[variant][name] = {s: m["ap"]
                                   for s, m in postings.evaluate_many(settings, qrels).items()}
            progress(f"{name}: {variant.label}")
    return maps


def select(maps: Mapping[Variant, Mapping[str, Mapping[levers.Setting, float]]],
           best_peer: Mapping[str, float], settings: Sequence[levers.Setting],
           current: levers.Setting, candidates: Sequence[Variant] = VARIANTS) -> dict[str, Any]:
    """Among ``candidates``: the analyzer alone at ``current`` and jointly with ``settings``,
    each by leave-one-out; plus each analyzer's own grid selection (its held-out mean) and its
    MAP at ``current``."""
    names = list(next(iter(maps.values())))
    alone = {n: {Choice(v, current): maps[v][n][current] for v in candidates} for n in names}
    joint = {n: {Choice(v, s): maps[v][n][s] for v in candidates for s in settings}
             for n in names}
    alone_rows, alone_pick = levers.leave_one_out(alone, best_peer, list(alone[names[0]]))
    joint_rows, joint_pick = levers.leave_one_out(joint, best_peer, list(joint[names[0]]))
    per_variant = []
    for v in candidates:
        rows, _ = levers.leave_one_out(maps[v], best_peer, settings)
        per_variant.append({
            "analyzer": v.label, "archive": v == ARCHIVE,
            **{n: maps[v][n][current] for n in names},
            "criterion": levers.criterion(maps[v], best_peer, current, names),
            "grid_loo": sum(r["ratio"] for r in rows) / len(rows)})
    return {"collections": names, "setting": current.label, "settings": len(settings),
            "variants": per_variant,
            "alone": alone_rows, "alone_mean": _mean(alone_rows), "alone_pick": alone_pick.label,
            "alone_pick_is_archive": alone_pick.variant == ARCHIVE,
            "joint": joint_rows, "joint_mean": _mean(joint_rows), "joint_pick": joint_pick.label}


def _mean(rows: Sequence[Mapping[str, Any]]) -> float:
    return sum(r["ratio"] for r in rows) / len(rows)


def run(data: Path, work: Path, best_peer: Mapping[str, float], names: Sequence[str],
        progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    settings = levers.computable_by_every_scorer(levers.grid() + levers.bm25f_grid())
    maps = scored(data, work, names, settings, progress)
    return {**select(maps, best_peer, settings, levers.Setting()),
            "finding_abbreviations": select(maps, best_peer, settings, levers.Setting(),
                                            FINDING_ABBREVIATIONS)}


ROW_COLUMNS = [("collection", "held out", ""), ("map", "MAP (picked on the others)", ".4f"),
               ("best_peer", "best peer MAP", ".4f"), ("ratio", "/ best peer", ".3f"),
               ("hindsight", "hindsight best MAP", ".4f"), ("picked", "picked on the others", "")]
