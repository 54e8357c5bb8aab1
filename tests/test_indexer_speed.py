"""The indexing speed-ups (issue 5) change how the index is computed, never what it holds.

Every test builds the same input two ways and compares: Whoosh's own writer in one process
(``store.open_writer(..., fast=False)``, the path before the speed-ups) against the archive's
(ArchiveWriter: one-pass cached analysis, term-at-a-time postings, and SplitWriter's forked
segment writers). Compared: the document count, every stored field in document order, every
term's postings (ids, weights, value bytes) and statistics, every field length and column,
and the hits (ids in order, scores) of a set of queries. Whoosh's ``spell_*`` pseudo-postings
all carry document 0 of their segment, so across different segmentations only their terms and
statistics are compared.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from whoosh import qparser

from archive import analysis, store
from archive.enrich.duplicates import DuplicateFinder
from archive.indexer import DUPLICATES, Indexer

from conftest import CORPORA

WORDS = ("minister's harbour council election volcano orchestra harvest grain market shares "
         "bank Reuters river storm festival league striker museum rail strike port tariff "
         "vaccine hospital budget senate court verdict drought flood satellite launch the of "
         "and to in a is was it's don't Syria Lebanon Hezbollah Islamic State U.S. 1987 2017 "
         "3.5 pct mln dlrs İstanbul straße naïve café O'Brien’s they’re won’t").split()

QUERIES = ["harbour", "election council", '"islamic state"', "minister", "syria OR lebanon",
           "strike NOT rail", "title:volcano", "vaccin*", "o'brien", "they're", "istanbul",
           "pct mln", "court verdict drought", "the", "won't"]


def make_corpus(folder: Path, count: int = 60, seed: int = 5) -> Path:
    """``count`` text articles in a few desks: headlines, datelines, captions, stop words,
    apostrophes (straight and curly), non-ASCII words, and some wire copies of each other."""
    rnd = random.Random(seed)
    bodies: list[str] = []
    for i in range(count):
        desk = folder / f"desk{i % 4}"
        desk.mkdir(parents=True, exist_ok=True)
        title = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 9))).capitalize()
        if bodies and i % 7 == 0:  # a wire copy, lightly edited
            body = rnd.choice(bodies) + " Updated."
        else:
            paragraphs = [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(20, 80)))
                          for _ in range(rnd.randint(1, 4))]
            body = "\n\n".join(paragraphs)
        bodies.append(body)
        caption = f"\n\n(Photo: {rnd.choice(WORDS)} {rnd.choice(WORDS)})" if i % 5 == 0 else ""
        (desk / f"story{i:03d}.txt").write_text(
            f"{title}\n\nBEIRUT (Reuters) - {body}{caption}\n\nReuters\n", encoding="utf-8")
    return folder


def whoosh_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every writer the Indexer opens Whoosh's own SegmentWriter, in one process."""
    real = store.open_writer

    def plain(ix: Any, folder: Path, lock_timeout: float = 10.0, **kwargs: Any) -> Any:
        kwargs.update(fast=False, procs=1)
        return real(ix, folder, lock_timeout, **kwargs)
    monkeypatch.setattr(store, "open_writer", plain)


def index_with_whoosh(monkeypatch: pytest.MonkeyPatch, folder: Path, inputs: Path,
                      **options: Any) -> Any:
    """Index ``inputs`` into ``folder`` with Whoosh's own writer (the reference); the report."""
    with monkeypatch.context() as patch:
        whoosh_writer(patch)
        return Indexer(folder, procs=1, **options).run([inputs])


def snapshot(folder: Path) -> dict[str, Any]:
    """Everything an index holds, keyed so two indexes can be compared."""
    ix = store.open_index(folder)
    out: dict[str, Any] = {}
    with ix.searcher() as searcher:
        reader = searcher.reader()
        live = [d for d in range(reader.doc_count_all()) if not reader.is_deleted(d)]
        out["docs"] = len(live)
        out["stored"] = [reader.stored_fields(d) for d in live]
        terms = {}
        for fieldname, text in reader.all_terms():
            info = reader.term_info(fieldname, text)
            stats = (info.weight(), info.doc_frequency(), info.min_length(), info.max_length(),
                     info.max_weight())
            if fieldname.startswith("spell_"):
                terms[(fieldname, text)] = stats
                continue
            matcher = reader.postings(fieldname, text)
            postings = []
            while matcher.is_active():
                postings.append((matcher.id(), matcher.weight(), matcher.value()))
                matcher.next()
            terms[(fieldname, text)] = (stats, postings)
        out["terms"] = terms
        names = ix.schema.names()
        out["lengths"] = {name: (reader.field_length(name),
                                 [reader.doc_field_length(d, name) for d in live])
                          for name in names}
        out["columns"] = {name: list(reader.column_reader(name, translate=False))
                          for name in names if reader.has_column(name)}
        out["hits"] = hits(searcher, ix.schema)
    return out


def hits(searcher: Any, schema: Any) -> dict[str, list[tuple[str, float]]]:
    """The top 20 (id, score) of each query over title, body and captions (BM25F, the
    searcher's default weighting)."""
    parser = qparser.MultifieldParser(["title", "body", "captions"], schema)
    out = {}
    for text in QUERIES:
        results = searcher.search(parser.parse(text), limit=20)
        out[text] = [(results[n]["id"], round(results.score(n), 9))
                     for n in range(results.scored_length())]
    return out


def assert_same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a["docs"] == b["docs"]
    assert a["stored"] == b["stored"]
    assert a["terms"].keys() == b["terms"].keys()
    differ = [k for k in a["terms"] if a["terms"][k] != b["terms"][k]]
    assert not differ, f"{len(differ)} terms differ, e.g. {differ[:5]}"
    assert a["lengths"] == b["lengths"]
    assert a["columns"] == b["columns"]
    assert a["hits"] == b["hits"]
    assert any(a["hits"].values())  # the queries do find something


# --- the analysis ------------------------------------------------------------------------------

TRICKY = ["", "the of and", "The minister's harbour, the harbour!", "They’re won’t O'Brien’s",
          "İstanbul STRASSE straße naïve café ÉCOLE", "3.5 pct 1,000 mln dlrs U.S.-led 2017",
          "a a a harbour a harbour", "don't", "x" * 300, "under_score snake_case_word",
          "running runs ran runner's"]


@pytest.mark.parametrize("text", TRICKY)
def test_fast_text_gives_whooshs_postings_and_spelling_words(text: str) -> None:
    schema = store.build_schema()
    for name in store.TEXT_FIELDS:
        field = schema[name]
        fast = analysis.FastText.for_field(field)
        assert fast is not None
        items, spelling = fast.postings(text)
        assert items == list(field.index(text))
        assert spelling == list(field.spellable_words(text))
        # and again, now from the word cache
        assert fast.postings(text) == (items, spelling)


def test_fast_text_follows_an_index_analysed_before_dotted_abbreviations() -> None:
    """An index made before "U.S." became one word keeps that older chain (its schema
    pickles it) and its fast path, which must still give exactly what that chain gives."""
    from whoosh.analysis import (LowercaseFilter, PyStemmerFilter, RegexTokenizer, StopFilter,
                                 SubstitutionFilter)
    older = (RegexTokenizer(r"\w+(?:['\u2019]\w+)*") | LowercaseFilter()
             | SubstitutionFilter("\u2019", "'") | StopFilter(stoplist={"the"}, minsize=1)
             | PyStemmerFilter("english"))
    fast = analysis.FastText.for_analyzer(older)
    assert fast is not None
    for text in TRICKY + ["The U.S. and the U.K. said"]:
        assert fast.tokens(text) == [t.text for t in older(text)]
    assert fast.tokens("The U.S. said") == ["u", "s", "said"]


def test_fast_text_refuses_other_analyzers() -> None:
    from whoosh import fields
    assert analysis.FastText.for_field(fields.TEXT()) is None  # Whoosh's StandardAnalyzer
    assert analysis.FastText.for_field(fields.ID()) is None
    assert analysis.FastText.for_field(store.build_schema()["source"]) is None


# --- whole indexes -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("speed") / "news")


def test_fast_writer_builds_the_same_index(corpus: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    Indexer(tmp_path / "fast", procs=1, commit_every=25).run([corpus])
    fast = snapshot(tmp_path / "fast")
    index_with_whoosh(monkeypatch, tmp_path / "whoosh", corpus, commit_every=25)
    assert_same(fast, snapshot(tmp_path / "whoosh"))
    assert fast["docs"] == 60


def test_split_writer_keeps_every_article_in_order(corpus: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """procs=2 with a low threshold: each commit is written as two segments by two processes;
    the index holds every article, in the order added, with the same postings and hits."""
    report = Indexer(tmp_path / "split", procs=2, split_min=8, commit_every=40).run([corpus])
    assert report.added == 60
    split = snapshot(tmp_path / "split")
    with store.open_index(tmp_path / "split").searcher() as searcher:
        segments = [r.doc_count_all() for r, _ in searcher.reader().leaf_readers()]
    assert len(segments) >= 3 and sum(segments) == 60  # 2 commits, the first split in two
    index_with_whoosh(monkeypatch, tmp_path / "whoosh", corpus, commit_every=40)
    assert_same(split, snapshot(tmp_path / "whoosh"))
    assert split["docs"] == 60


def test_incremental_runs_match_whooshs(corpus: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Build, then add a file, edit two (one wire copy joins a cluster) and delete one: the
    archive's writers and Whoosh's leave the same index after each step."""
    work = tmp_path / "work"
    shutil.copytree(corpus, work / "news")
    news = work / "news"

    def change() -> None:
        files = sorted(news.rglob("*.txt"))
        files[1].write_text(files[1].read_text("utf-8") + "\nA late correction.\n", "utf-8")
        files[2].write_text(files[3].read_text("utf-8"), "utf-8")  # now a copy of another
        files[4].unlink()
        (news / "desk9").mkdir()
        (news / "desk9" / "new.txt").write_text(files[5].read_text("utf-8").replace(
            "Reuters", "AP"), "utf-8")

    Indexer(tmp_path / "fast", procs=2, split_min=8).run([news])
    index_with_whoosh(monkeypatch, tmp_path / "whoosh", news)
    assert_same(snapshot(tmp_path / "fast"), snapshot(tmp_path / "whoosh"))
    change()
    fast_report = Indexer(tmp_path / "fast", procs=2, split_min=8).run([news])
    whoosh_report = index_with_whoosh(monkeypatch, tmp_path / "whoosh", news)
    assert fast_report.to_dict() == whoosh_report.to_dict()
    assert (fast_report.added, fast_report.updated, fast_report.removed) == (1, 2, 1)
    assert_same(snapshot(tmp_path / "fast"), snapshot(tmp_path / "whoosh"))


def _mtimes(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.iterdir()
            if p.is_file() and not p.name.endswith("WRITELOCK")}


def test_unchanged_rerun_rewrites_nothing(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    first = Indexer(folder, procs=1).run([corpus])
    before = _mtimes(folder)
    assert DUPLICATES in before and store.MANIFEST in before
    again = Indexer(folder, procs=1).run([corpus])
    assert _mtimes(folder) == before  # segments, TOC, duplicates.npz, manifest untouched
    assert (again.added, again.updated, again.removed, again.unchanged) == (0, 0, 0, 60)
    assert (again.clusters, again.copies) == (first.clusters, first.copies)
    assert first.clusters > 0  # the corpus has wire copies
    # a touched file with the same bytes: only the manifest is rewritten
    path = sorted(corpus.rglob("*.txt"))[0]
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    Indexer(folder, procs=1).run([corpus])
    after = _mtimes(folder)
    assert {k for k in after if after[k] != before.get(k)} == {store.MANIFEST}


def test_a_failed_writer_process_fails_the_commit_cleanly(corpus: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A forked segment writer that fails: the run raises, the previous commit stays in
    force, the lock is free, and the next run converges on the full index."""
    folder = tmp_path / "index"
    parent = os.getpid()
    real_add = store.ArchiveWriter.add_document

    def add_document(self: Any, **doc: Any) -> None:
        if os.getpid() != parent:
            raise RuntimeError("injected failure in a writer process")
        real_add(self, **doc)
    monkeypatch.setattr(store.ArchiveWriter, "add_document", add_document)
    with pytest.raises(store.WriterProcessFailed, match="injected failure"):
        Indexer(folder, procs=2, split_min=8, commit_every=40).run([corpus])
    assert not store.exists(folder) or snapshot(folder)["docs"] == 0  # nothing committed
    monkeypatch.undo()
    store.open_writer(store.open_index(folder), folder, lock_timeout=0.5).cancel()  # lock free
    report = Indexer(folder, procs=2, split_min=8).run([corpus])
    assert report.added == 60 and snapshot(folder)["docs"] == 60


def test_signatures_and_candidates_match_datasketch(corpus: Path) -> None:
    """DuplicateFinder computes MinHash and LSH itself (no datasketch import, ~1 s a run):
    the same signature values as datasketch's MinHash, the same (bands, rows) as its
    optimiser, and the same candidates as its MinHashLSH, after insertions and removals."""
    from datasketch import MinHash, MinHashLSH
    from datasketch.lsh import _optimal_param

    from archive.enrich import duplicates as dup, minhash

    for (threshold, num_perm), params in minhash.LSH_PARAMS.items():
        assert tuple(_optimal_param(threshold, num_perm, 0.5, 0.5)) == params
    finder = DuplicateFinder()
    lsh = MinHashLSH(threshold=DuplicateFinder().threshold - dup.CANDIDATE_MARGIN, num_perm=128)
    rows = minhash.SignatureRows(128)
    bands = minhash.Bands(*minhash.lsh_params(0.65, 128), rows)
    texts = [p.read_text("utf-8") for p in sorted(corpus.rglob("*.txt"))] + ["", "one", "a b"]
    ours = {}
    for n, text in enumerate(texts):
        reference = MinHash(num_perm=128, seed=1, scheme="affine32", hashfunc=minhash.hash32)
        reference.update_batch([g.encode("utf-8") for g in dup.shingles(text)])
        signature = finder.signature(text)
        assert signature.hashvalues.dtype == reference.hashvalues.dtype
        assert (signature.hashvalues == reference.hashvalues).all(), text[:60]
        ours[n] = signature.hashvalues
        lsh.insert(n, reference)
        bands.insert(rows.append(ours[n]))
    for key in (3, 10, 20):
        lsh.remove(key)
        bands.remove(key)
    for key, hashes in ours.items():
        reference = MinHash(num_perm=128, seed=1, scheme="affine32", hashvalues=hashes)
        assert bands.query(hashes) == set(lsh.query(reference)), key
    assert any(len(bands.query(h)) > 1 for h in ours.values())  # shared bands
    # the bulk insert of a load, and inserts beyond the unsorted buffer, answer the same
    full = MinHashLSH(threshold=DuplicateFinder().threshold - dup.CANDIDATE_MARGIN,
                      num_perm=128)
    for key, hashes in ours.items():
        full.insert(key, MinHash(num_perm=128, seed=1, scheme="affine32", hashvalues=hashes))
    many = minhash.Bands(16, 8, rows)
    many.insert_many(__import__("numpy").arange(len(ours)))
    small = minhash.Bands(16, 8, rows)
    small.PENDING = 3  # merged into the sorted arrays at every third insert
    for key in ours:
        small.insert(key)
    for key, hashes in ours.items():
        reference = MinHash(num_perm=128, seed=1, scheme="affine32", hashvalues=hashes)
        assert many.query(hashes) == small.query(hashes) == set(full.query(reference)), key


def test_duplicates_file_stats_and_old_files(corpus: Path, tmp_path: Path) -> None:
    """duplicates.npz carries the cluster counts (an unchanged run reports them without
    loading it), and a file written before (zlib, 64-bit values, no counts) still loads."""
    import numpy as np

    folder = tmp_path / "index"
    report = Indexer(folder, procs=1).run([corpus])
    path = folder / DUPLICATES
    assert DuplicateFinder.saved_stats(path) == (report.clusters, report.copies)
    finder = DuplicateFinder.load(path)
    with np.load(path) as data:
        old = {k: data[k] for k in data.files if k != "stats"}
    old["hashes"] = old["hashes"].astype(np.uint64)
    with open(path, "wb") as out:
        np.savez_compressed(out, **old)
    assert DuplicateFinder.saved_stats(path) is None
    assert DuplicateFinder.load(path).clusters() == finder.clusters()
    again = Indexer(folder, procs=1).run([corpus])  # falls back to loading the finder
    assert (again.clusters, again.copies) == (report.clusters, report.copies)


# --- a real corpus -------------------------------------------------------------------------------

@pytest.mark.needs_corpora
@pytest.mark.skipif(not (CORPORA / "bbc").is_dir(), reason="needs ../shared/corpora/bbc")
def test_bbc_fast_writer_and_split_writer_match_whoosh(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole BBC collection (2,225 articles, one commit): Whoosh's writer vs the archive's
    in one process and in two."""
    bbc = CORPORA / "bbc"
    Indexer(tmp_path / "split", procs=2).run([bbc])
    split = snapshot(tmp_path / "split")
    index_with_whoosh(monkeypatch, tmp_path / "whoosh", bbc)
    reference = snapshot(tmp_path / "whoosh")
    assert split["docs"] == 2225
    assert_same(split, reference)
