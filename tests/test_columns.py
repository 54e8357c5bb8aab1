"""The columnar query core (``archive.columns``) against the Whoosh path it stands in for.

Differential: every query runs twice over one real index, once on the columns and once with
``use_columns=False``, and the answers must agree: the same matches with the same scores (to
1e-6), the same top 10 in the same order (an exchange allowed only between documents whose
scores tie to 1e-9, the order floating-point summation may settle either way), the same
hits, snippets, totals, facets and relaxation. On the shared corpora that is 300 queries
built from real headlines; on a generated corpus (no corpora needed) a smaller set of every
form. Then the sidecars' life: written by ``archive index``, rebuilt after deletions and
merges, a missing one sends searches to Whoosh and ``archive check`` notes it.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from archive import columns, store
from archive.analysis import STOP_WORDS
from archive.indexer import Indexer
from archive.query import Filters
from archive.search import Archive
from tests.conftest import CORPORA, needs_corpora

SORTS = ("relevance", "newest", "oldest")


# --- the comparison -------------------------------------------------------------------------

def _raw_scores(archive: Archive, text: str, filters: Filters | None) -> dict[int, float]:
    """Whoosh's own score of every match (the Whoosh path's collector, unrounded)."""
    results = archive.searcher.search(archive.parse(text), limit=None,
                                      filter=(filters or Filters()).query())
    return {docnum: score for score, docnum in results.top_n}


def _column_scores(archive: Archive, text: str, filters: Filters | None) -> dict[int, float]:
    index = archive.column_index()
    assert index is not None
    found = index.match(archive.parse(text), (filters or Filters()).query())
    return dict(zip(found.docs.tolist(), found.scores.tolist()))


def _same_order(ours: list[int], theirs: list[int], scores: dict[int, float]) -> None:
    """The same documents in the same order, but for exchanges among tied scores."""
    assert len(ours) == len(theirs)
    for n, (a, b) in enumerate(zip(ours, theirs)):
        if a != b:
            assert abs(scores[a] - scores[b]) < 1e-9, (n, a, b, scores[a], scores[b])


def compare(on_columns: Archive, on_whoosh: Archive, text: str, sort: str = "relevance",
            filters: Filters | None = None, *, expect_columns: bool = True) -> None:
    assert on_columns.search_path(text, filters=filters) == \
        ("columns" if expect_columns else "whoosh"), text
    page = on_columns.search(text, sort=sort, filters=filters)
    want = on_whoosh.search(text, sort=sort, filters=filters)
    assert (page.total, page.relaxed, page.suggestion, page.query) == \
        (want.total, want.relaxed, want.suggestion, want.query), text
    assert page.facets == want.facets, text
    scores: dict[int, float] = {}
    if page.total and not page.relaxed and expect_columns:
        scores = _column_scores(on_columns, text, filters)
        theirs = _raw_scores(on_whoosh, text, filters)
        assert scores.keys() == theirs.keys(), text
        assert max(abs(scores[d] - theirs[d]) for d in scores) < 1e-6, text
    if sort != "relevance" or not scores:
        assert page.hits == want.hits, (text, sort)
        return
    number = {hit.id: on_whoosh.searcher.document_number(id=hit.id)
              for hit in (*page.hits, *want.hits)}
    _same_order([number[h.id] for h in page.hits], [number[h.id] for h in want.hits], scores)
    by_id = {hit.id: hit for hit in want.hits}
    for hit in page.hits:
        if hit.id in by_id:  # the same article shown the same way (rank aside, in a tie)
            other = by_id[hit.id]
            assert (hit.title, hit.snippet, hit.score, hit.copies, hit.date) == \
                (other.title, other.snippet, other.score, other.copies, other.date), text
    _same_order(list(on_columns.matching(text, filters=filters).docnums),
                list(on_whoosh.matching(text, filters=filters).docnums), scores)


# --- queries from headlines -------------------------------------------------------------------

def _words(title: str) -> list[str]:
    return [w for w in re.findall(r"[A-Za-z]+", title.lower())
            if len(w) >= 3 and w not in STOP_WORDS]


def headline_queries(archive: Archive, count: int, seed: int
                     ) -> Iterator[tuple[str, str, Filters | None]]:
    """(query, sort, filters) triples built from the index's own headlines: single words,
    two words, explicit AND / OR / NOT, field terms, facet terms, date filters, phrases
    (running words of a headline), proximity, prefixes, wildcards and fuzzy words, under
    each sort; the forms a reader types, in even measure."""
    rng = random.Random(seed)
    reader = archive.searcher.reader()
    # in id order: document numbers depend on which indexing process wrote which segment
    stored = sorted((fields for _, fields in reader.iter_docs()), key=lambda s: s["id"])
    heads = [s for s in stored if len(_words(s.get("title", ""))) >= 2]
    years = sorted({s["date"].year for s in stored if s.get("date")})
    forms = ("one", "two", "and", "or", "not", "title", "facet", "year", "since", "date",
             "phrase", "near", "prefix", "wildcard", "fuzzy")
    for n in range(count):
        doc = heads[rng.randrange(len(heads))]
        words = _words(doc["title"])
        a, b = rng.sample(words, 2)
        form, sort = forms[n % len(forms)], SORTS[n // len(forms) % len(SORTS)]
        filters = None
        if form == "one":
            text = a
        elif form == "two":
            text = f"{a} {b}"
        elif form == "and":
            text = f"{a} AND {b}"
        elif form == "or":
            text = f"{a} OR {b}"
        elif form == "not":
            text = f"{a} -{b}" if n % 2 else f"{a} AND NOT {b}"
        elif form == "title":
            text = f"title:{a} {b}"
        elif form == "facet":
            facet = next(((name, doc[name].split(",")[0].strip().lower())
                          for name in ("topic", "place", "source") if doc.get(name)), None)
            text = f"{a} {facet[0]}:{facet[1].split()[0]}" if facet else a
        elif form == "year" and years:
            year = doc["date"].year if doc.get("date") else rng.choice(years)
            text = f"{a} date:{year}"
        elif form == "since" and years:
            year = rng.choice(years)
            text, filters = a, Filters(since=datetime(year, 1, 1),
                                       until=datetime(year, 12, 31, 23, 59))
        elif form == "date" and years:
            text = f"{a} date:>{rng.choice(years)}-06-01"
        elif form == "phrase":  # two or three running words of the headline, as written
            running = re.findall(r"[A-Za-z]+", doc["title"].lower())
            size = min(len(running), rng.choice((2, 2, 3)))
            start = rng.randrange(len(running) - size + 1)
            text = '"' + " ".join(running[start:start + size]) + '"'
        elif form == "near":
            text = f'"{a} {b}"~{rng.randint(2, 6)}'
        elif form == "prefix":
            text = f"{a[:max(3, len(a) - rng.randint(1, 3))]}* {b}"
        elif form == "wildcard":
            at = rng.randrange(1, len(a))
            text = a[:at] + "?" + a[at + 1:]
        elif form == "fuzzy":  # a letter dropped, as a reader mistypes it
            at = rng.randrange(1, len(a))
            text = f"{a[:at] + a[at + 1:]}~ {b}" if n % 2 else f"{a[:at] + a[at + 1:]}~"
        else:
            text = f"{a} OR {b} -{rng.choice(words)}"
        yield text, sort, filters


# --- a generated corpus (no shared corpora needed) -------------------------------------------

VOCABULARY = ("oil prices bank rates trade talks election coalition harbour volcano grain "
              "harvest wheat shipping strike union budget deficit minister court ruling "
              "airline merger profit loss shares exports imports currency inflation "
              "drought flood storm rescue council library orchestra symphony museum").split()
SOURCES = ("Reuters", "AP", "BBC News", "")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")


def write_generated(folder: Path, count: int, seed: int = 7) -> Path:
    """``count`` short articles over a small vocabulary (so words repeat across articles
    and scores tie), most dated in the text, some wire copies of others."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    texts: list[str] = []
    for n in range(count):
        if texts and n % 17 == 0:  # a wire copy: the same story again
            text = texts[rng.randrange(len(texts))]
        else:
            head = " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(3, 6)))
            body = " ".join(rng.choice(VOCABULARY[:rng.randint(8, len(VOCABULARY))])
                            for _ in range(rng.randint(20, 120)))
            dated = "" if n % 9 == 0 else \
                f" on {MONTHS[rng.randrange(12)]} {rng.randint(1, 28)}, {rng.randint(2012, 2019)},"
            text = f"{head.capitalize()}\n\nThe story broke{dated} said officials. {body}.\n\n" \
                   f"{rng.choice(SOURCES)}\n"
        texts.append(text)
        (folder / f"story{n:04d}.txt").write_text(text, encoding="utf-8")
    return folder


def _index(folder: Path, *inputs: Path) -> None:
    report = Indexer(folder).run([str(p) for p in inputs])
    assert not report.skipped, report.skipped


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Archive, Archive]]:
    base = tmp_path_factory.mktemp("columns-generated")
    _index(base / "index", write_generated(base / "news", 260))
    with Archive(base / "index") as on_columns, \
            Archive(base / "index", use_columns=False) as on_whoosh:
        yield on_columns, on_whoosh


def test_the_index_run_writes_a_sidecar_per_segment(generated) -> None:  # noqa: ANN001
    on_columns, _ = generated
    status = columns.column_status(on_columns.folder, on_columns.searcher.reader())
    assert status.complete and status.present and not status.orphans
    assert on_columns.column_index() is not None


@pytest.mark.parametrize("sort", SORTS)
def test_generated_corpus_every_form_agrees_with_whoosh(generated, sort: str) -> None:  # noqa: ANN001
    on_columns, on_whoosh = generated
    fixed = ["oil", "oil prices", "oil AND prices", "oil OR symphony", "oil -prices",
             "NOT oil", "", "title:harbour", "source:reuters oil", "harbour date:2015",
             "date:[2014-03-01 to 2016-08-31]", "date:>2017-01-01 bank", "title:oil^2 bank",
             "(oil OR grain) AND (strike OR union)", "oil symphony xylophone",
             "volcano library orchestra drought", '"oil prices"', '"oil prices"~3',
             'title:"bank rates"', '"prices oil"~2', 'oil "bank rates trade"~4',
             '"oil prices"^2 -strike', '"oil xylophone"', '"oil oil"~5',
             '"oil oil"', '"prices oil prices"~3', '"oil prices oil"', '"bank rates"~1',
             '"oil prices"~0', 'title:"oil oil"~4', '"harbour volcano grain"',
             '"oil prices" OR "bank rates"', "pric*", "p?ice", "prises~", "harb* -oil",
             "title:pric* bank", "symphny~ OR volc*",
             "source:reu*", "xyzzy*", "b*", "pric*^2 oil", "orchestr~1 drought"]
    for text in fixed:
        compare(on_columns, on_whoosh, text, sort)
    for text, _sort, filters in headline_queries(on_columns, 60, seed=1):
        compare(on_columns, on_whoosh, text, sort, filters)
    compare(on_columns, on_whoosh, "oil", sort, Filters(source="Reuters", undated=False))
    compare(on_columns, on_whoosh, "bank", sort, Filters(undated=True))
    for text in ('"oil prices"~3', '"bank rates" -"oil prices"', "pric* -oil"):
        compare(on_columns, on_whoosh, text, sort, Filters(source="Reuters", undated=False))
        compare(on_columns, on_whoosh, text, sort,
                Filters(since=datetime(2014, 1, 1), until=datetime(2016, 12, 31)))


def test_searches_that_hand_back_mapped_pages_find_the_same(generated, monkeypatch) -> None:  # noqa: ANN001
    """A searcher hands the sidecars' and segments' mapped pages back above a limit (each
    query maps more of them); handing them back before every search changes no result, and
    both kinds of mapping are handed back."""
    import archive.search as search_module
    on_columns, _ = generated
    queries = ["oil", "oil prices", '"oil prices"', "pric* -oil", "harbour date:2015", ""]
    queries += [text for text, _, _ in headline_queries(on_columns, 20, seed=3)]
    kept = [on_columns.search(text, facets=True) for text in queries]
    released: list[int] = []
    release_mappings = store.release_mappings
    monkeypatch.setattr(store, "release_mappings",
                        lambda mappings: released.append(release_mappings(mappings)) or 0)
    monkeypatch.setattr(search_module, "PAGES_LIMIT_MB", -1)
    with Archive(on_columns.folder) as fresh:
        handed_back = [fresh.search(text, facets=True) for text in queries]
        assert fresh.matching("oil").docnums == on_columns.matching("oil").docnums
        assert fresh.column_index() is not None  # still on the columns (none went wrong)
        segments = store.release(leaf for leaf, _ in fresh.searcher.reader().leaf_readers())
    assert handed_back == kept
    assert max(released) > 10 and segments > 0  # the sidecars' files, the segments' files


def test_searches_stay_on_the_columns_under_a_low_soft_limit_on_open_files(generated) -> None:  # noqa: ANN001
    """Every mapped array holds a descriptor: under a low soft limit the searches would run
    out and fall back to Whoosh for good, unless opening the sidecars raises it (to the hard
    limit, as any process may)."""
    resource = pytest.importorskip("resource", reason="POSIX only")
    on_columns, _ = generated
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = 40
    if hard != resource.RLIM_INFINITY and hard <= 4 * low:
        pytest.skip(f"the hard limit on open files ({hard}) leaves nothing to raise")
    script = f"""
import resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, ({low}, {hard}))
from archive.search import Archive
with Archive(sys.argv[1]) as archive:
    for text in ("oil", "oil prices", '"oil prices"', "pric* -oil", "harbour date:2015", "",
                 "title:harbour", "source:reuters oil"):
        archive.search(text, facets=True)
    print(archive.column_index() is not None, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
"""
    done = subprocess.run([sys.executable, "-c", script, str(on_columns.folder)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    on_the_columns, raised = done.stdout.split()
    assert on_the_columns == "True" and int(raised) > low


def test_pages_and_copies_agree(generated) -> None:  # noqa: ANN001
    on_columns, on_whoosh = generated
    for page in (1, 2, 3):
        for all_copies in (False, True):
            ours = on_columns.search("oil OR bank", page=page, page_size=7,
                                     all_copies=all_copies)
            theirs = on_whoosh.search("oil OR bank", page=page, page_size=7,
                                      all_copies=all_copies)
            assert (ours.total, [h.id for h in ours.hits]) == \
                (theirs.total, [h.id for h in theirs.hits])
    assert any(h.copies for h in on_columns.search("", page_size=300).hits)


@pytest.mark.parametrize("form, example", columns.FALLBACK_FORMS)
def test_named_forms_fall_back_to_whoosh_with_the_same_results(generated, form: str,  # noqa: ANN001
                                                               example: str) -> None:
    on_columns, on_whoosh = generated
    assert on_columns.search_path(example) == "whoosh", form
    ours, theirs = on_columns.search(example), on_whoosh.search(example)
    assert (ours.total, ours.hits) == (theirs.total, theirs.hits)


def test_forms_outside_the_fallback_list_run_on_the_columns(generated) -> None:  # noqa: ANN001
    on_columns, _ = generated
    for text in ("oil", "oil bank", "oil OR bank", "oil -bank", "title:oil", "year:2015",
                 "source:reuters", "date:2015", "", '"oil prices"', '"oil prices"~3',
                 'title:"oil prices" bank', "pric*", "p?ice", "prises~", "oil harb*"):
        assert on_columns.search_path(text) == "columns", text


def test_whoosh_path_forced_by_flag_and_environment(generated, monkeypatch) -> None:  # noqa: ANN001
    on_columns, on_whoosh = generated
    assert on_whoosh.search_path("oil") == "whoosh"
    monkeypatch.setenv("ARCHIVE_COLUMNS", "0")
    with Archive(on_columns.folder) as forced:
        assert forced.search_path("oil") == "whoosh"
    monkeypatch.setenv("ARCHIVE_COLUMNS", "1")
    with Archive(on_columns.folder) as allowed:
        assert allowed.search_path("oil") == "columns"


# --- the sidecars' life ------------------------------------------------------------------------

def test_sidecars_follow_deletions_additions_and_merges(tmp_path: Path, cli_for) -> None:  # noqa: ANN001
    news = write_generated(tmp_path / "news", 120, seed=3)
    index = tmp_path / "index"
    _index(index, news)
    gone = sorted(news.glob("*.txt"))[:15]
    names = {p.name for p in gone}
    with Archive(index) as before:
        gone_ids = {h.id for h in before.search("", page_size=500, all_copies=True).hits
                    if Path(before.article(h.id).path).name in names}
    assert len(gone_ids) == len(gone)
    for path in gone:
        path.unlink()
    write_generated(tmp_path / "more", 40, seed=11)
    for path in (tmp_path / "more").glob("*.txt"):
        shutil.move(path, news / f"more-{path.name}")
    _index(index, news)                 # deletions and a new segment
    _index(index, news)                 # nothing changed: nothing to write
    with Archive(index) as on_columns, Archive(index, use_columns=False) as on_whoosh:
        status = columns.column_status(index, on_columns.searcher.reader())
        assert status.complete and not status.orphans
        listed = {h.id for h in on_columns.search("", page_size=1000, all_copies=True).hits}
        assert not listed & gone_ids
        for text in ("oil", "bank OR harbour", "NOT oil", "", '"oil prices"~2', "pric*",
                     "harb* OR symphny~", "p?ice", '"bank rates"'):
            for sort in SORTS:
                compare(on_columns, on_whoosh, text, sort)
    # a merge into one segment: the old segments' sidecars go, the new one's is written
    from archive import store
    ix = store.open_index(index)
    writer = ix.writer()
    writer.commit(optimize=True)
    columns.sync_columns(index, store.open_index(index))
    with Archive(index) as on_columns, Archive(index, use_columns=False) as on_whoosh:
        status = columns.column_status(index, on_columns.searcher.reader())
        assert status.complete and not status.orphans and len(status.present) == 1
        assert len(list((index / columns.COLUMNS_DIR).iterdir())) == 1
        for text in ("oil", "bank -harbour", "date:2016"):
            compare(on_columns, on_whoosh, text)
    assert cli_for(index)("check").exit_code == 0


def test_a_missing_sidecar_falls_back_and_check_notes_it(tmp_path: Path, cli_for) -> None:  # noqa: ANN001
    index = tmp_path / "index"
    _index(index, write_generated(tmp_path / "news", 60, seed=5))
    sidecars = list((index / columns.COLUMNS_DIR).iterdir())
    assert sidecars
    shutil.rmtree(sidecars[0])
    with Archive(index) as archive, Archive(index, use_columns=False) as on_whoosh:
        assert archive.column_index() is None
        assert archive.search_path("oil") == "whoosh"
        assert archive.search("oil").hits == on_whoosh.search("oil").hits
    checked = cli_for(index)("check")
    assert checked.exit_code == 0
    assert "without a current columnar sidecar" in checked.output
    _index(index, tmp_path / "news")   # the next run writes it again
    with Archive(index) as archive:
        assert archive.search_path("oil") == "columns"
    assert "columnar" not in cli_for(index)("check").output


def test_a_stale_sidecar_is_not_used(tmp_path: Path) -> None:
    index = tmp_path / "index"
    _index(index, write_generated(tmp_path / "news", 40, seed=9))
    meta = next((index / columns.COLUMNS_DIR).iterdir()) / "meta.json"
    meta.write_text(meta.read_text().replace('"doc_count": ', '"doc_count": 1'))
    with Archive(index) as archive:
        assert archive.search_path("oil") == "whoosh"


# --- positions -------------------------------------------------------------------------------

def test_sidecar_positions_are_whooshs_for_every_posting(generated) -> None:  # noqa: ANN001
    import numpy as np

    on_columns, _ = generated
    index = on_columns.column_index()
    assert index is not None
    checked = 0
    for (sidecar, _offset), (leaf, _) in zip(index.sidecars,
                                             on_columns.searcher.reader().leaf_readers()):
        assert sidecar.positional == {"title", "body", "captions"} & set(sidecar.fields)
        for name in sidecar.positional:
            columns_ = sidecar.field(name)
            for i in range(len(columns_.words)):
                word = columns_.words[i]
                docs, _ = columns_.postings(word)
                counts, flat = columns_.positions_in(word, np.asarray(docs))
                matcher = leaf.postings(name, word)
                want: list[int] = []
                held: list[int] = []
                while matcher.is_active():
                    positions = matcher.value_as("positions")
                    want.extend(positions)
                    held.append(len(positions))
                    matcher.next()
                assert counts.tolist() == held and flat.tolist() == want, (name, word)
                checked += len(held)
    assert checked > 5_000


def test_position_values_decode_as_whoosh_decodes_them() -> None:
    import numpy as np
    from whoosh import formats

    from archive import store

    rng = random.Random(3)
    lists = [[], [0], [7], [70_000], [1, 2, 3], sorted(rng.sample(range(200_000), 2500)),
             sorted(rng.sample(range(300), 40))] + \
        [sorted(rng.sample(range(5000), rng.randint(1, 30))) for _ in range(300)]
    plain = formats.Positions()
    values = [plain.encode(positions) for positions in lists]
    for chosen in (values, values[:1], values[3:4], values[5:6]):
        counts, flat = store.position_arrays(plain, chosen)
        want = [plain.decode_positions(v) for v in chosen]
        assert counts.tolist() == [len(w) for w in want]
        assert flat.tolist() == [p for w in want for p in w]
    # a value without pickle's STOP (Whoosh's decoder adds it) and another format: decoded
    # one value at a time, to the same positions
    odd = values[:5] + [values[5][:-1]] + values[6:]
    counts, flat = store.position_arrays(plain, odd)
    assert flat.tolist() == [p for w in lists for p in w] and counts.sum() == len(flat)
    chars = formats.Characters()
    spans = [[(0, 0, 4), (3, 20, 25)], [(9, 50, 58)]]
    counts, flat = store.position_arrays(chars, [chars.encode(s) for s in spans])
    assert counts.tolist() == [2, 1] and flat.tolist() == [0, 3, 9]
    assert store.position_arrays(plain, [])[1].dtype == np.int64


def test_a_phrase_on_the_columns_reads_no_whoosh_postings(generated, monkeypatch) -> None:  # noqa: ANN001
    from whoosh.reading import SegmentReader

    on_columns, on_whoosh = generated
    index = on_columns.column_index()
    assert index is not None
    want = {text: set(on_whoosh.searcher.docs_for_query(on_whoosh.parse(text)))
            for text in ('"oil prices"', '"bank rates trade"~4', '"oil oil"~2')}

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a phrase read Whoosh's postings")

    monkeypatch.setattr(SegmentReader, "postings", refuse)
    for text, docs in want.items():
        found = index.match(on_columns.parse(text))
        assert set(found.docs.tolist()) == docs and docs, text


def test_a_sidecar_of_the_version_before_positions_is_stale_and_rebuilt(
        tmp_path: Path, cli_for) -> None:  # noqa: ANN001
    import json

    index = tmp_path / "index"
    _index(index, write_generated(tmp_path / "news", 50, seed=17))
    for folder in (index / columns.COLUMNS_DIR).iterdir():  # as version 1 wrote it
        meta = json.loads((folder / "meta.json").read_text())
        assert meta["version"] == 2 and meta["positions"]
        for name in meta.pop("positions"):
            for part in ("counts", "position_starts", "positions"):
                (folder / f"{name}.{part}.npy").unlink()
        meta["version"] = 1
        (folder / "meta.json").write_text(json.dumps(meta))
    with Archive(index) as archive:
        assert archive.search_path('"oil prices"') == "whoosh"
    checked = cli_for(index)("check")
    assert checked.exit_code == 0 and "without a current columnar sidecar" in checked.output
    _index(index, tmp_path / "news")
    assert "columnar" not in cli_for(index)("check").output
    with Archive(index) as archive, Archive(index, use_columns=False) as on_whoosh:
        assert archive.search_path('"oil prices"') == "columns"
        compare(archive, on_whoosh, '"oil prices"~2')
    for folder in (index / columns.COLUMNS_DIR).iterdir():
        assert (folder / "body.positions.npy").is_file()


# --- 300 real headline queries on the shared corpora -------------------------------------------

@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Any, Any]]]:
    base = tmp_path_factory.mktemp("columns-shared")
    reuters = base / "reuters"
    reuters.mkdir()
    for name in ("reut2-000.sgm", "reut2-001.sgm", "reut2-002.sgm"):  # 3,000 articles
        (reuters / name).symlink_to(CORPORA / "reuters21578" / name)
    out: dict[str, tuple[Any, Any]] = {}
    for name, source in (("bbc", CORPORA / "bbc"), ("reuters", reuters)):
        _index(base / name, source)
        out[name] = (Archive(base / name), Archive(base / name, use_columns=False))
    yield out
    for pair in out.values():
        for archive in pair:
            archive.close()


@needs_corpora
@pytest.mark.corpus
@pytest.mark.parametrize("corpus", ["bbc", "reuters"])
def test_300_headline_queries_agree_with_whoosh(shared, corpus: str) -> None:  # noqa: ANN001
    on_columns, on_whoosh = shared[corpus]
    queries = list(headline_queries(on_columns, 150, seed=14))
    assert len(queries) == 150
    for text, sort, filters in queries:
        compare(on_columns, on_whoosh, text, sort, filters)
    # a word again within a phrase, which its own positions must not satisfy
    rng = random.Random(15)
    for text, _sort, _filters in rng.sample(queries, 12):
        words = _words(text) or ["said"]
        a, b = words[0], words[-1]
        for repeated in (f'"{a} {a}"~6', f'"{a} {b} {a}"~8', f'"{b} {b}"'):
            compare(on_columns, on_whoosh, repeated)


def test_a_phrase_in_the_headline_marks_no_body_words_that_stand_apart(tmp_path: Path) -> None:
    # Whoosh's TermsCollector recorded a phrase's words in every field whose postings stood
    # at the match, so the body, where the words stand apart, had "arms" marked on the
    # Whoosh path and the lead shown on the columns (found on the BBC headline "Straw
    # attacked on China arms"); both paths now mark only the branches that match
    news = tmp_path / "news"
    news.mkdir()
    (news / "a.txt").write_text(
        "Straw attacked on China arms\n\nThe ban on arms exports was condemned. "
        "Talks in China went on.\n", encoding="utf-8")
    for n in range(3):
        (news / f"b{n}.txt").write_text(
            f"Trade story {n}\n\nArms makers met again, story {n}.\n",
            encoding="utf-8")
    _index(tmp_path / "index", news)
    with Archive(tmp_path / "index") as on_columns, \
            Archive(tmp_path / "index", use_columns=False) as on_whoosh:
        for archive in (on_columns, on_whoosh):
            page = archive.search('"china arms"')
            assert [h.title for h in page.hits] == ["Straw attacked on China arms"]
            assert not [s for s in page.hits[0].snippet if s.match]
        compare(on_columns, on_whoosh, '"china arms"')
        compare(on_columns, on_whoosh, '"china arms" OR exports')


@pytest.mark.parametrize("table_share", [0, 10 ** 6])  # dates read per document, or as a table
def test_equal_scores_go_newest_first_on_both_paths_and_in_the_site(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table_share: int) -> None:
    # Whoosh's collector leaves equal scores by document number (here the order the file
    # lists them: oldest first); the archive's relevance order, like the site's search, puts
    # the newest first and the undated last, whichever path answers
    import json

    from archive import _tables
    monkeypatch.setattr(_tables, "NEWEST_TABLE_SHARE", table_share)

    from archive.site import search as site_search
    from archive.site.files import OutputFolder
    from support import static_search_reference as ref

    dates = ["1987-03-02", "1987-04-20", "", "1987-03-30"]
    with open(tmp_path / "wire.jsonl", "w", encoding="utf-8") as out:
        for n, date in enumerate(dates):
            out.write(json.dumps({"id": f"w{n}", "title": f"Harbour notice {'abcd'[n]}",
                                  "body": f"Cargo rates at the harbour, notice {'wxyz'[n]}.",
                                  "date": date, "source": "Wire"}) + "\n")
    _index(tmp_path / "index", tmp_path / "wire.jsonl")
    with Archive(tmp_path / "index") as on_columns, \
            Archive(tmp_path / "index", use_columns=False) as on_whoosh:
        assert on_columns.search_path("harbour") == "columns"
        for archive in (on_columns, on_whoosh):
            page = archive.search("harbour", all_copies=True)
            assert len({h.score for h in page.hits}) == 1  # every score ties
            assert [h.title[-1] for h in page.hits] == ["b", "d", "a", "c"]
            assert [h.title[-1] for h in archive.search("harbour", page=2, page_size=2,
                                                        all_copies=True).hits] == ["a", "c"]
        site_search.build_bundle(on_whoosh, OutputFolder(tmp_path / "site"))
    reader = ref.BundleReader(tmp_path / "site" / "search" / "bundle")
    assert [h["title"][-1] for h in ref.search(reader, "harbour", facets=False).hits] == \
        ["b", "d", "a", "c"]


def test_a_snippet_marks_the_words_its_own_article_matched(tmp_path: Path) -> None:
    # "bu?s" expands to "buy" and "but" (the stem of "butted"); Whoosh's highlighter marked
    # every expansion any hit matched, so the stop word "but" in the first article was
    # marked on the Whoosh path (which collects every match) and not on the columns (which
    # collect the page's); each snippet now marks what its own article matched
    news = tmp_path / "news"
    news.mkdir()
    (news / "a.txt").write_text(
        "Traders buy shares\n\nTraders buy shares but prices fell.\n", encoding="utf-8")
    (news / "b.txt").write_text(
        "Goats at the fence\n\nThe goats butted the fence.\n", encoding="utf-8")
    _index(tmp_path / "index", news)
    with Archive(tmp_path / "index") as on_columns, \
            Archive(tmp_path / "index", use_columns=False) as on_whoosh:
        for archive in (on_columns, on_whoosh):
            marked = {hit.title: [s.text for s in hit.snippet if s.match]
                      for hit in archive.search("bu?s").hits}
            assert marked == {"Traders buy shares": ["buy"], "Goats at the fence": ["butted"]}
        compare(on_columns, on_whoosh, "bu?s")


def test_an_excluded_word_excludes_a_segments_first_match_on_both_paths(generated) -> None:  # noqa: ANN001
    # Whoosh's own AndNotMatcher let a segment's first match through when the excluded
    # word's first document came earlier (archive.query.Exclusion); on this corpus it did
    on_columns, on_whoosh = generated
    with_price = set(on_whoosh.searcher.docs_for_query(on_whoosh.parse("prices")))
    for archive in (on_columns, on_whoosh):
        listed = set(archive.matching("oil -prices", all_copies=True).docnums)
        assert listed and not listed & with_price


def test_an_open_archive_whose_sidecars_a_later_run_removed_uses_whoosh(tmp_path: Path) -> None:
    index = tmp_path / "index"
    _index(index, write_generated(tmp_path / "news", 40, seed=13))
    with Archive(index) as archive, Archive(index, use_columns=False) as on_whoosh:
        assert archive.column_index() is not None   # opened, no field read yet
        shutil.rmtree(index / columns.COLUMNS_DIR)  # as a later run's sync after a merge
        assert archive.search("oil").hits == on_whoosh.search("oil").hits
        assert archive.search_path("oil") == "whoosh"


@pytest.mark.parametrize("procs", [1, 2])
def test_sidecars_tapped_from_the_writer_equal_ones_read_back(tmp_path: Path,
                                                              procs: int) -> None:
    """The writer's tap (``columns.PostingsTap``) writes each new segment's sidecar from the
    postings it writes; every array equals the one read back from the finished segment."""
    import numpy as np

    from archive import store

    from functools import partial

    source = tmp_path / "source"
    _index(source, write_generated(tmp_path / "news", 90, seed=21))
    index = tmp_path / "index"
    ix = store.create_index(index)
    writer = store.open_writer(ix, index, procs=procs, split_min=10,
                               tap=partial(columns.PostingsTap, index / columns.COLUMNS_DIR))
    store.add_articles(writer, store.iter_articles(store.open_index(source)))
    writer.commit()  # no sync: any sidecar there is the tap's
    tapped = index / columns.COLUMNS_DIR
    again = tmp_path / "read-back"
    with store.open_index(index).reader() as reader:
        leaves = [leaf for leaf, _ in reader.leaf_readers()]
        assert len(leaves) == procs
        for leaf in leaves:
            columns.write_sidecar(again, leaf)
    names = sorted(p.name for p in tapped.iterdir())
    assert names == sorted(p.name for p in again.iterdir())
    for name in names:
        files = sorted(p.name for p in (tapped / name).iterdir())
        assert files == sorted(p.name for p in (again / name).iterdir())
        for file in files:
            if file.endswith(".npy"):
                ours, theirs = np.load(tapped / name / file), np.load(again / name / file)
                assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs), file


@pytest.mark.parametrize("sort", SORTS)
def test_a_relaxed_query_ranks_on_the_columns_as_on_whoosh(generated, sort: str) -> None:  # noqa: ANN001
    on_columns, on_whoosh = generated
    text = "oil symphony xylophone"   # no article has all three: any word, most words first
    assert on_columns.search_path(text) == "columns"
    ours, theirs = on_columns.search(text, sort=sort), on_whoosh.search(text, sort=sort)
    assert ours.relaxed and ours.total > 10
    assert (ours.total, ours.hits, ours.suggestion) == (theirs.total, theirs.hits,
                                                        theirs.suggestion)


def test_whooshs_top_n_skipping_keeps_the_fielded_words_ranking(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whoosh's top-N collector skips postings blocks by quality bounds; through
    ``FieldedWord``'s saturation the bounds must stay safe: the top 10 equal the top 10 of
    every match scored."""
    from archive import ranking
    _index(tmp_path / "index", write_generated(tmp_path / "news", 1200))
    asked: list[float] = []
    unsaturated = ranking.NewsBM25F.unsaturated
    monkeypatch.setattr(ranking.NewsBM25F, "unsaturated",
                        lambda self, score: asked.append(score) or unsaturated(self, score))
    with Archive(tmp_path / "index", use_columns=False) as on_whoosh:
        searcher = on_whoosh.searcher
        assert type(on_whoosh.parse("oil")).__name__ == "FieldedWord"
        for text in ("oil", "bank", "oil bank", "oil OR symphony OR harbour",
                     "prices bank rates", "harbour volcano grain orchestra"):
            q = on_whoosh.parse(text) if " " not in text or "OR" in text else \
                on_whoosh.free_text_query(text)
            every = sorted(((-score, docnum) for score, docnum in
                            searcher.search(q, limit=None).top_n))
            top = searcher.search(q, limit=10, optimize=True)
            assert [d for _, d in top.top_n] == [d for _, d in every[:10]], text
            assert [s for s, _ in top.top_n] == pytest.approx([-s for s, _ in every[:10]]), text
    assert asked   # the collector did skip by the bounds
