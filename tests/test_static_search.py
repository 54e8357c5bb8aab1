"""The static site's search bundle, its Python reference reader, and the browser engine.

The reference reader (tests/support/static_search_reference.py) answers from the bundle files
alone; it must agree with the CLI (``Archive.search``) and the browser engine (engine.js, run
under ``node --test``) must agree with it exactly: same hits, same order, for every query form.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from archive import processes, store
from archive.article import Article, lead_title
from archive.search import Archive
from archive.site import search as ss
from archive.site.search import articles as ss_articles
from archive.site.search import format as ss_format
from archive.site.search import pairs as ss_pairs
from archive.site.search import segments as ss_segments
from archive.site import urls
from archive.site.files import OutputFolder
from support import static_search_reference as ref

ROOT = Path(__file__).resolve().parents[1]
CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
NODE = shutil.which("node")
JS_TEST = ROOT / "tests" / "js" / "engine.test.mjs"

WORDS = ("oil price market bank rate growth export wheat crop minister talks election vote "
         "party strike union court ruling trade deficit profit shares company merger bid "
         "storm flood rescue music film award match league club player coach").split()
SOURCES = ("Reuters", "BBC", "Wire Service")
PLACES = ("Lebanon", "Syria", "El Salvador", "Japan", "Brazil")
TOPICS = ("Cocoa", "Grain", "Politics", "Sport")


#: Headlines that test the page slug the client rebuilds: non-ASCII (the record keeps the
#: folder name), punctuation only, and past the 60-character cut.
ODD_TITLES = {3: "Zürich café’s “Crème” deal", 4: "!!! ---", 6: "__Oil__ & price: 100% (update)",
              8: "An unusually long headline about oil prices that keeps going well past "
                 "sixty characters", 9: "Supercalifragilisticexpialidocious" * 3}


def _articles(count: int = 160, seed: int = 3) -> list[Article]:
    """Synthetic news: a Zipf-ish vocabulary (so common words have long lists and tails),
    repeated phrases, several sources/places/topics, dates over three years, some undated."""
    rng = random.Random(seed)
    weights = [1 / (i + 1) for i in range(len(WORDS))]
    start = datetime(2016, 1, 1)
    out = []
    for i in range(count):
        def text(n: int) -> str:
            words = rng.choices(WORDS, weights, k=n)
            if rng.random() < 0.3:
                words[rng.randrange(n):0] = ["the", "prime", "minister", "of", "japan"]
            return " ".join(words)
        date = None if i % 11 == 0 else start + timedelta(days=rng.randrange(3 * 365),
                                                          hours=rng.randrange(24))
        out.append(Article(
            id=f"story-{i:03d}-{i * 7919 % 100000:05x}", title=text(rng.randint(3, 7)).title(),
            body=". ".join(text(rng.randint(8, 20)) for _ in range(rng.randint(1, 6))),
            path=f"stories/{i}.txt", source=rng.choice(SOURCES), date=date,
            date_source="explicit" if date else "unknown",
            captions=(text(5),) if rng.random() < 0.2 else (),
            places=tuple(rng.sample(PLACES, rng.randint(0, 2))),
            topics=tuple(rng.sample(TOPICS, rng.randint(0, 2)))))
    for i, title in ODD_TITLES.items():  # headlines whose page slug is not plain
        out[i] = replace(out[i], title=f"{title} {out[i].title}")
    for i in range(5, count, 13):  # untitled: the title a reader makes, stored but not searched
        out[i] = replace(out[i], title=lead_title(out[i].body))
    return out


def _index(folder: Path, articles: list[Article]) -> Path:
    ix = store.create_index(folder)
    writer = store.open_writer(ix, folder)
    store.add_articles(writer, articles)
    writer.commit()
    return folder


@pytest.fixture(scope="module")
def fixture_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, ss.BundleReport]:
    """(index, site folder, report): a small head and shards, so tails and many shards exist,
    and lists of 16 postings or more also in number blocks of 8, so blocks do too."""
    base = tmp_path_factory.mktemp("static-search")
    index = _index(base / "index", _articles())
    with Archive(index) as archive, pytest.MonkeyPatch.context() as patch:
        _small_blocks(patch)
        report = ss.build_bundle(archive, OutputFolder(base / "site"), shard_bytes=512,
                                 head_size=4)
    return index, base / "site", report


def _small_blocks(patch: pytest.MonkeyPatch) -> None:
    """Number blocks for lists of 4 heads (of 4 postings in the tests) in blocks of 2 heads."""
    patch.setattr(ss_format, "BLOCK_MIN_HEADS", 4)
    patch.setattr(ss_format, "BLOCK_HEADS", 2)


def _reader(site: Path) -> ref.BundleReader:
    return ref.BundleReader(site / "search" / "bundle")


# --- encodings and the writer --------------------------------------------------------------------

def test_varints_and_postings_round_trip() -> None:
    values = [0, 1, 127, 128, 300, 2 ** 21, 2 ** 32 - 1]
    assert ss.read_varints(bytes(ss.varints(values)), len(values))[0] == values
    postings = [(0, ((4, 9), (), (1, 300))), (5, ((), (2, 2 ** 20), ())), (100000, ((), (), (7, 1)))]
    assert ss.decode_fielded(ss.encode_fielded(postings), 3, 1, 3) == postings
    pairs = [(3, ((2, 4, 9), (), ())), (9, ((), (1, 1, 250), (3, 1, 8)))]
    assert ss.decode_fielded(ss.encode_fielded(pairs), 2, 2, 3) == pairs


def test_number_blocks_hold_each_long_list_in_number_order(fixture_site) -> None:  # noqa: ANN001
    """A long list's number blocks hold exactly its postings (head and tiers together) in
    number order, cut where its block index says; other lists have none."""
    _, site, _ = fixture_site
    bundle = site / "search" / "bundle"

    def load(name: str) -> Any:
        return ss.parse_script((bundle / f"{name}.js").read_bytes())[1]
    nfields = len(load("meta")["avg"])
    checked = unblocked = 0
    for path in bundle.glob("s/*/[tp]/*.js"):
        if "-" in path.stem:  # tails and blocks
            continue
        namespace, shard = path.parent.relative_to(bundle).as_posix(), int(path.stem)
        arity = 1 if namespace.endswith("/t") else 2
        for index, row in enumerate(load(f"{namespace}/{shard}")):
            key, _, count, head, *rest = row
            tiers = rest[0] if rest else []
            postings = ss.decode_fielded(head, count - sum(c for c, _ in tiers), arity, nfields)
            for tier, (c, _) in enumerate(tiers):
                postings += ss.decode_fielded(load(ss_format.tail_name(namespace, shard, index,
                                                                       tier)), c, arity, nfields)
            if len(rest) < 2:
                assert count < 16, key
                unblocked += 1
                continue
            size = rest[1]
            assert size == 8 and count >= 16, key
            blocks = [ss.decode_fielded(load(ss_format.block_name(namespace, shard, index, j)),
                                        min(size, count - j * size), arity, nfields)
                      for j in range(-(-count // size))]
            assert [p for block in blocks for p in block] == sorted(postings), key
            deltas, _ = ss.read_varints(base64.b64decode(
                load(ss_format.block_name(namespace, shard, index))), len(blocks))
            firsts = [sum(deltas[:i + 1]) - 1 for i in range(len(deltas))]
            assert firsts == [block[0][0] for block in blocks], key
            checked += 1
    assert checked > 20 and unblocked > 20


def test_every_file_is_a_script_calling_the_bundle_callback(fixture_site) -> None:  # noqa: ANN001
    _, site, report = fixture_site
    files = list((site / "search" / "bundle").rglob("*.js"))
    assert len(files) + len(ss.asset_files()) == report.files  # + the client scripts
    for path in files[:200]:
        name, _ = ss.parse_script(path.read_bytes())
        assert path.as_posix().endswith(f"/bundle/{name}.js")
    assert report.articles == 160 and report.terms > 30 and report.pairs > 100
    assert report.peak_rss_mb > 0


def test_articles_are_numbered_oldest_first_and_undated_last(fixture_site) -> None:  # noqa: ANN001
    _, site, _ = fixture_site
    reader = _reader(site)
    dates = [reader.article(n)["d"] for n in range(reader.n)]
    dated = [d for d in dates if d]
    assert dates[:len(dated)] == sorted(dated) and len(dated) == reader.dated
    assert all(d is None for d in dates[reader.dated:])


def test_article_file_has_metadata_text_and_page_path(fixture_site) -> None:  # noqa: ANN001
    _, site, _ = fixture_site
    _, record = ss.parse_script((site / "search" / "bundle" / "a" / "0.js").read_bytes())
    assert {"t", "d", "s", "b"} <= set(record) <= {"t", "d", "s", "pl", "u", "h", "b", "c"}
    assert ("u" in record) != ("h" in record)  # the page folder, or only its id suffix
    full = _reader(site).article(0)   # + id (from i/0) and page path
    assert re.fullmatch(r"story-\d{3}-[0-9a-f]{5}", full["id"])
    assert re.fullmatch(r"\d{4}/\d\d/\d\d/[a-z0-9-]+/index\.html", full["path"])
    reader = _reader(site)
    for n in range(reader.n):   # dated and undated: the path the site's page has
        a = reader.article(n)
        date = datetime.fromisoformat(a["d"]) if a["d"] else None
        assert a["path"] == urls.article_path(a["id"], a["t"], date), a


def test_meta_is_small_and_day_tables_load_only_when_needed(fixture_site) -> None:  # noqa: ANN001
    """A first query loads a tiny meta (years only); a day table is fetched only when a date
    range starts or ends inside a year, and then only that year's."""
    _, site, _ = fixture_site
    meta_file = site / "search" / "bundle" / "meta.js"
    _, meta = ss.parse_script(meta_file.read_bytes())
    assert "days" not in meta and "facets" not in meta
    assert [y for y, _ in meta["years"]] == [2016, 2017, 2018]
    assert meta_file.stat().st_size < 400
    reader = _reader(site)
    ref.search(reader, "oil", facets=False)
    assert not [n for n in reader.loaded if n.startswith(("d/", "facets"))]
    ref.search(reader, "date:2017 oil", facets=False)          # whole years: meta suffices
    assert not [n for n in reader.loaded if n.startswith("d/")]
    ref.search(reader, "date:[2017-03-05 to 2017-06]", facets=False)
    assert [n for n in reader.loaded if n.startswith("d/")] == ["d/2017"]


def test_lazy_day_tables_give_the_same_ranges_as_the_dates(fixture_site) -> None:  # noqa: ANN001
    """Every day boundary: first_from(day) is the first article dated day or later."""
    _, site, _ = fixture_site
    reader = _reader(site)
    dates = [int(reader.article(n)["d"].replace("-", "")) for n in range(reader.dated)]
    start = datetime(2015, 12, 30)
    for offset in range(0, 3 * 366 + 5):
        day = start + timedelta(days=offset)
        key = day.year * 10000 + day.month * 100 + day.day
        expected = next((n for n, d in enumerate(dates) if d >= key), reader.dated)
        assert reader.first_from(key) == expected, key
        assert reader.first_from(key + 1) == next(  # YYYYMMDD + 1 past a month's end too
            (n for n, d in enumerate(dates) if d > key), reader.dated), key
    assert reader.first_from(0) == 0 and reader.first_from(99999999 + 1) == reader.dated


def test_facet_files_are_found_by_hash(fixture_site) -> None:  # noqa: ANN001
    _, site, _ = fixture_site
    reader = _reader(site)
    for facet in ss.FACETS:
        buckets = reader.meta["fb"][facet]
        for b in range(buckets):
            assert (site / "search" / "bundle" / "f" / facet / f"{b}.js").is_file()
    assert reader.facet_numbers("source", "nowhere") == []
    salvador = reader.facet_numbers("place", "el salvador")
    assert salvador and all("El Salvador" in reader.article(n)["pl"] for n in salvador)


def test_a_second_build_writes_nothing(fixture_site) -> None:  # noqa: ANN001
    index, site, first = fixture_site
    with Archive(index) as archive:
        again = ss.build_bundle(archive, OutputFolder(site), shard_bytes=512, head_size=4)
    assert again.written == 0 and again.files == first.files


def test_shard_size_sets_the_file_count(fixture_site, tmp_path: Path) -> None:  # noqa: ANN001
    index, _, small = fixture_site
    with Archive(index) as archive:
        big = ss.build_bundle(archive, OutputFolder(tmp_path), shard_bytes=8192, head_size=4)
    assert big.term_shards < small.term_shards and big.files < small.files


def test_lists_spooled_in_partitions_answer_as_one(fixture_site, tmp_path: Path,  # noqa: ANN001
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A large unit's term and pair lists are spooled to disk by partition and written a
    partition at a time (a unit of hundreds of thousands of articles does not hold its lists
    in memory together): the shards are cut otherwise, the answers are the same."""
    index, site, one = fixture_site
    monkeypatch.setattr(ss_segments, "partitions_for", lambda articles: 4)
    with Archive(index) as archive:
        four = ss.build_bundle(archive, OutputFolder(tmp_path), shard_bytes=512, head_size=4)
    assert four.term_shards % 4 == 0 and four.term_shards != one.term_shards
    whole, parted = _reader(site), _reader(tmp_path)
    for q in FIXTURE_QUERIES:
        for sort in ("relevance", "newest"):
            a = ref.search(whole, q, sort=sort, facets=True)
            b = ref.search(parted, q, sort=sort, facets=True)
            assert (a.total, [h["id"] for h in a.hits], a.facets) == \
                (b.total, [h["id"] for h in b.hits], b.facets), q


# --- two processes: the same bundle, byte for byte -----------------------------------------------

@pytest.fixture(scope="module")
def split_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of two segments with a deleted article: the helper reopens every segment and
    must skip the deletion exactly as the parent does."""
    folder = tmp_path_factory.mktemp("static-search-split") / "index"
    ix = store.create_index(folder)
    writer = store.open_writer(ix, folder, procs=2, split_min=1)
    store.add_articles(writer, _articles())
    writer.commit()
    writer = store.open_writer(ix, folder)
    writer.delete_by_term("id", _articles()[7].id)
    writer.commit(merge=False)
    return folder


def _tree(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes()
            for p in sorted(site.rglob("*")) if p.is_file()}


def _counts(report: ss.BundleReport) -> dict[str, Any]:
    return {k: v for k, v in report.to_dict().items() if k not in ("seconds", "peak_rss_mb")}


@pytest.mark.parametrize("mmap", [False, True])
def test_two_process_build_is_byte_identical_to_the_sequential_one(
        split_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mmap: bool) -> None:
    """The parent takes a task too: the helper is slowed so that it must."""
    parent, log = os.getpid(), tmp_path / "workers.log"
    build_part = ss_segments.build_part

    def logged(*args: Any) -> Any:
        if os.getpid() != parent:
            time.sleep(1.0)
        with open(log, "a") as f:
            f.write(f"{args[2]}-{args[3]}:{os.getpid()}\n")
        return build_part(*args)

    monkeypatch.setattr(ss_segments, "build_part", logged)
    tasks = ["0-pairs", "0-terms", "1-pairs", "1-terms"]
    with Archive(split_index, mmap=mmap) as archive:
        leaves = list(archive.searcher.reader().leaf_readers())
        assert len(leaves) == 2 and archive.searcher.doc_count() == 159
        one = ss.build_bundle(archive, OutputFolder(tmp_path / "one"), shard_bytes=512,
                              head_size=4, procs=1)
        assert sorted(log.read_text().split()) == [f"{t}:{parent}" for t in tasks]
        log.unlink()
        two = ss.build_bundle(archive, OutputFolder(tmp_path / "two"), shard_bytes=512,
                              head_size=4, procs=2)
    workers = log.read_text().split()   # each task once, some by each process
    assert sorted(w.split(":")[0] for w in workers) == tasks and \
        len({w.split(":")[1] for w in workers}) == 2, workers
    assert _counts(one) == _counts(two) and one.articles == 159 and one.segments == 2
    assert _tree(tmp_path / "one") == _tree(tmp_path / "two")
    assert two.peak_rss_mb > 0


def test_a_pairs_task_counts_the_words_as_the_terms_task_does(split_index: Path) -> None:
    """A unit's pair lists are built apart from its term lists (either process may take
    either); the per-field document frequencies their heads carry, read from the segments'
    term tables, are those the term lists sum over the postings."""
    with Archive(split_index) as archive:
        numbering = ss_segments.Numbering(archive)
        units = ss_segments.units(archive)
        assert len(units) == 2   # one per segment, one with a deleted article
        for unit in units:
            members = ss_segments._members(archive, unit)
            order = ss_segments._Order(archive.searcher.weighting, members)
            superseded = ss_segments._superseded(members, numbering)
            entries = list(ss_segments.term_lists(members, superseded, numbering, order, 4))
            dfs_of = ss_segments.unit_dfs(members)
            assert len(entries) > 30 and all(dfs_of[e.key] == e.dfs for e in entries)
        tasks = ss_segments.tasks(archive, [0, 1])
    assert sorted(tasks) == [(0, "pairs"), (0, "terms"), (1, "pairs"), (1, "terms")]
    assert [part for _, part in tasks[:2]] == ["pairs", "pairs"]   # the costlier first


def _slow_articles(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent's article pass waits, so the helper claims the one segment first."""
    build = ss_articles.build_articles

    def slow(*args: Any) -> Any:
        time.sleep(0.5)
        return build(*args)
    monkeypatch.setattr(ss_articles, "build_articles", slow)


def test_a_failing_helper_raises_a_clear_error(fixture_site, tmp_path: Path,  # noqa: ANN001
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    parent, build_part = os.getpid(), ss_segments.build_part

    def broken(*args: Any, **kwargs: Any) -> Any:
        if os.getpid() != parent:
            raise RuntimeError("no terms today")
        return build_part(*args, **kwargs)

    index, _, _ = fixture_site
    monkeypatch.setattr(ss_segments, "build_part", broken)
    _slow_articles(monkeypatch)
    left = set(Path(tempfile.gettempdir()).glob("archive-bundle-*"))
    with Archive(index) as archive, pytest.raises(
            ss.BundleProcessFailed, match="helper process failed: RuntimeError: no terms today"):
        ss.build_bundle(archive, OutputFolder(tmp_path), shard_bytes=512, head_size=4, procs=2)
    assert set(Path(tempfile.gettempdir()).glob("archive-bundle-*")) == left
    with pytest.raises(ChildProcessError):   # the helper was reaped
        os.waitpid(-1, os.WNOHANG)


def test_a_killed_helper_raises_a_clear_error(fixture_site, tmp_path: Path,  # noqa: ANN001
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    parent, build_part = os.getpid(), ss_segments.build_part

    def killed(*args: Any, **kwargs: Any) -> Any:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return build_part(*args, **kwargs)

    index, _, _ = fixture_site
    monkeypatch.setattr(ss_segments, "build_part", killed)
    _slow_articles(monkeypatch)
    with Archive(index) as archive, pytest.raises(ss.BundleProcessFailed,
                                                  match=r"helper process died \(wait status 9\)"):
        ss.build_bundle(archive, OutputFolder(tmp_path), shard_bytes=512, head_size=4, procs=2)


def test_a_failing_parent_stops_its_helper(fixture_site, tmp_path: Path,  # noqa: ANN001
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> list[list[int]]:
        raise OSError(28, "No space left on device")

    index, _, _ = fixture_site
    monkeypatch.setattr(ss_articles, "build_articles", broken)
    with Archive(index) as archive, pytest.raises(OSError, match="No space left"):
        ss.build_bundle(archive, OutputFolder(tmp_path), shard_bytes=512, head_size=4, procs=2)
    with pytest.raises(ChildProcessError):   # the helper was killed and reaped
        os.waitpid(-1, os.WNOHANG)


def test_one_usable_core_builds_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert not processes.second_process_pays()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert processes.second_process_pays()


def test_fast_tokens_equal_the_field_analyzer() -> None:
    """The build's one-pass tokenizer gives exactly the analyzer's tokens (pairs depend on it)."""
    schema = store.build_schema()
    tokens = ss_pairs.Tokens(schema["body"].analyzer)
    assert tokens.fast is not None
    texts = [a.body + " " + a.title for a in _articles(40)] + [
        "Don\u2019t STOP the U.S. of A's İstanbul naïve café 3.5% x_y 10,000 o'neill’s",
        "The the THE and-or it's its", "", "   ", "über-Größe Ölpreis 北京 日本の経済",
    ]
    for text in texts:
        assert tokens.fast.tokens(text) == [t.text for t in schema["body"].analyzer(text)], text
        assert tokens(text) == [t.text for t in schema["body"].analyzer(text)], text
    assert tokens.fast is not None  # no difference seen: the fast path stays on


def test_classic_analysis_wrapper_exposes_the_module_exports() -> None:
    source = "export const A = 1;\nexport function f(x) { return x; }\nconst hidden = 2;\n"
    wrapped = ss.classic_analysis(source)
    assert "export" not in wrapped.replace("exports", "")
    assert "root.ArchiveAnalysis = { A, f }" in wrapped
    with pytest.raises(ValueError):
        ss.classic_analysis("export default 3;")


def test_page_markup_has_a_labelled_query_box_and_relative_scripts() -> None:
    html = str(ss.page_markup("../"))
    assert '<label for="search-q">' in html and 'name="q"' in html
    assert 'src="../assets/search/search.js"' in html
    assert 'data-bundle="../search/bundle/"' in html and 'aria-live="polite"' in html
    assert set(ss.asset_files()) == {"assets/search/search.js", "assets/search/counts.js",
                                     "assets/search/chart.js"}


def test_a_weighting_the_client_cannot_follow_is_refused(fixture_site, tmp_path: Path) -> None:  # noqa: ANN001
    """The client computes the product's Lucene idf only; a bench lever's other idf would
    rank differently in the browser than in the CLI, so no bundle is written for it."""
    from archive.ranking import NewsBM25F
    index, _, _ = fixture_site
    with Archive(index) as archive:
        archive.searcher = archive.index.searcher(weighting=NewsBM25F(idf_form="whoosh"))
        with pytest.raises(ValueError, match="Lucene's idf only"):
            ss.build_bundle(archive, OutputFolder(tmp_path / "site"), shard_bytes=512,
                            head_size=4)


def test_client_is_small_and_served_minified() -> None:
    """Issue 7: client code (search + UI) under 15 KB gzipped, all of it. It is served
    minified (comments and indentation gone) with its names, strings and template literals
    as written (the JS tests run the served files, so the code itself is checked there)."""
    import gzip
    files = ss.asset_files()
    total = sum(len(gzip.compress(data, 6)) for data in files.values())
    assert total < 15 * 1024, total
    served = files["assets/search/search.js"].decode("utf-8")
    assert "ArchiveAnalysis" in served and "class Engine" in served and "readState" in served
    for name, sources in (("search.js", ("analysis.js", "engine.js", "ui.js")),
                          ("counts.js", ("counts.js",)), ("chart.js", ("chart.js",))):
        text = files[f"assets/search/{name}"].decode("utf-8")
        assert "/**" not in text and "\n  " not in text, name
        source = "".join((ss.ASSET_FOLDER / n).read_text("utf-8") for n in sources)
        code = "\n".join(line for line in source.splitlines()
                         if not line.strip().startswith(("//", "*", "/*")))
        literals = [t for t in re.findall(r"`[^`]*`", code) if "${" in t or "\n" in t]
        assert literals and all(literal in text for literal in literals), name
        assert len(text) < 0.9 * len(source), name


# --- the reference reader against the CLI --------------------------------------------------------

FIXTURE_QUERIES = [
    "oil", "oil price", "bank rate growth", '"prime minister"', '"prime minister of japan"',
    "oil OR wheat", "market NOT oil", "(oil OR bank) NOT price", "music film award",
    "minister talks", "strike union court", "source:reuters oil", "place:\"el salvador\"",
    "topic:cocoa", "date:2017", "date:2017-03", "date:[2016-06 to 2017-02] bank",
    "date:>2018-01-01", "date:<2016-03", "oil AND price OR wheat", "coach",
]


def _cli_ids(archive: Archive, query: str, sort: str = "relevance") -> tuple[int, list[str]]:
    """The CLI's total and first page; no page when every score ties (a filter-only query),
    since the CLI then keeps index order and the site newest first: nothing to compare."""
    page = archive.search(query, sort=sort, page_size=10, facets=False)
    if sort == "relevance" and len({h.score for h in page.hits}) == 1 and page.total > 10:
        return page.total, []
    return page.total, [h.id for h in page.hits]


def test_reference_agrees_with_the_cli_on_the_fixture(fixture_site) -> None:  # noqa: ANN001
    index, site, _ = fixture_site
    reader = _reader(site)
    overlaps = []
    with Archive(index) as archive:
        for q in FIXTURE_QUERIES:
            total, ids = _cli_ids(archive, q)
            answer = ref.search(reader, q, facets=False)
            assert answer.total == total, q
            if ids:
                overlaps.append(ref.overlap_at(10, ids, [h["id"] for h in answer.hits]))
            for sort in ("newest", "oldest"):
                # dates tie within a day at this size, so compare sets
                total, ids = _cli_ids(archive, q, sort)
                got = ref.search(reader, q, sort=sort, facets=False)
                assert got.total == total
    assert sum(overlaps) / len(overlaps) >= 0.9, overlaps


def test_summed_term_scores_reproduce_the_cli_scores(fixture_site) -> None:  # noqa: ANN001
    """Per-term scores summed = Whoosh's AND score, up to the 8-bit quantization."""
    index, site, _ = fixture_site
    reader = _reader(site)
    with Archive(index) as archive:
        for q in ("oil price", "bank rate growth", "minister talks", '"prime minister"'):
            # Every hit (titles too: the title's query-time weight must be in the pair scores).
            cli = {h.id: h.score for h in archive.search(q, page_size=200, facets=False).hits}
            mine = {h["id"]: h["score"] for h in ref.search(reader, q, page_size=200,
                                                            facets=False).hits}
            for id_, score in cli.items():
                assert mine[id_] == pytest.approx(score, rel=0.02, abs=0.02), (q, id_)


def test_reference_facet_counts_match_the_cli(fixture_site) -> None:  # noqa: ANN001
    index, site, _ = fixture_site
    reader = _reader(site)
    with Archive(index) as archive:
        for q in ("oil", "market NOT oil", ""):
            cli = archive.search(q, page_size=1)
            got = ref.search(reader, q, page_size=1).facets
            for name in ("source", "place", "topic", "year"):
                assert [(f.key, f.count) for f in cli.facets[name]] == \
                    [(k, c) for k, _, c in got[name]], (q, name)


def test_filters_and_sorts(fixture_site) -> None:  # noqa: ANN001
    _, site, _ = fixture_site
    reader = _reader(site)
    newest = ref.search(reader, "bank", sort="newest", page_size=500, facets=False).hits
    dates = [h["date"] for h in newest]
    dated = [d for d in dates if d]
    assert dated == sorted(dated, reverse=True) and dates[:len(dated)] == dated
    only = ref.search(reader, "bank", filters={"source": "BBC", "year": "2017"},
                      page_size=500, facets=False)
    for hit in only.hits:
        assert hit["date"].startswith("2017")
        assert reader.article(hit["n"])["s"] == "BBC"


@pytest.mark.parametrize("query, message", [
    ("oil*", "wildcards"), ("oi?", "wildcards"), ("oil~", "fuzzy"), ("oil~2", "fuzzy"),
    ('"oil price"~3', "proximity"), ("title:oil", "no title: field"),
    ("date:2017-13", "bad month"), ("date:soon", "cannot read"),
])
def test_unsupported_syntax_gets_a_clear_error(query: str, message: str) -> None:
    with pytest.raises(ref.QueryError, match=message):
        ref.parse_query(query)


def test_minus_means_not_and_stop_words_vanish() -> None:
    assert ref.parse_query("oil -price") == {"op": "and", "kids": [
        {"op": "term", "key": "oil"}, {"op": "not", "kid": {"op": "term", "key": "price"}}]}
    assert ref.parse_query("the of") is None
    assert ref.parse_query('"bank of england"') == {"op": "phrase", "keys": ["bank england"]}
    assert ref.parse_query("a OR bank loan")["kids"][1] == {"op": "term", "key": "loan"}


@pytest.mark.corpus
def test_reference_agrees_with_the_cli_on_bbc_headlines(tmp_path: Path) -> None:
    """A slice of the BBC corpus (40 stories per section, to keep the test fast)."""
    if not CORPORA.is_dir():
        pytest.skip("needs ../shared/corpora")
    from archive.indexer import Indexer  # noqa: PLC0415
    src = tmp_path / "bbc"
    for section in sorted((CORPORA / "bbc").iterdir()):
        if section.is_dir():
            (src / section.name).mkdir(parents=True)
            for path in sorted(section.glob("*.txt"))[:40]:
                shutil.copy(path, src / section.name / path.name)
    Indexer(tmp_path / "index").run([src])
    with Archive(tmp_path / "index") as archive:
        ss.build_bundle(archive, OutputFolder(tmp_path / "site"))
        # sorted: document numbers depend on which indexing process wrote which segment
        titles = sorted(s.get("title", "") for s in archive.searcher.reader().all_stored_fields())
        reader = _reader(tmp_path / "site")
        overlaps = []
        for q in ref.headline_queries(titles, 120):
            total, ids = _cli_ids(archive, q)
            got = ref.search(reader, q, facets=False)
            if ids:
                overlaps.append(ref.overlap_at(10, ids, [h["id"] for h in got.hits]))
    assert sum(overlaps) / len(overlaps) >= 0.9


# --- the browser engine under node ----------------------------------------------------------------

ENGINE_CASES = FIXTURE_QUERIES + [
    "oil -price", "-oil", "NOT oil", "oil OR NOT price", "x1 OR oil", "the", "", "\"of the\"",
    "source:bbc date:2017", "place:japan OR place:syria", "(market OR bank", "oil )",
    "club AND NOT (league OR player)", "year:2018 music", "date:[2017 to]", "date:[to 2016-05]",
    "oil price market", "date:20170305", "OR oil AND", "NOT",
    # a common word with a rare one: its number blocks settle the rare word's articles
    "oil coach", "coach -oil", "film AND NOT (oil OR price)", "\"prime minister\" coach",
]


def _cases(reader: ref.BundleReader) -> list[dict]:
    cases = []
    for q in ENGINE_CASES:
        for sort in ("relevance", "newest", "oldest"):
            for page, filters in ((1, {}), (2, {}), (1, {"source": "reuters", "year": "2017"})):
                answer = ref.search(reader, q, sort=sort, page=page, filters=filters)
                cases.append({"q": q, "sort": sort, "page": page, "filters": filters,
                              "total": answer.total, "hits": [h["n"] for h in answer.hits],
                              "facets": answer.facets})
    for q in ("oil*", "oil~", "title:oil", "date:2017-13"):
        cases.append({"q": q, "error": True})
    return cases


@pytest.mark.skipif(NODE is None, reason="node is not on PATH: cannot run the JS engine test")
def test_browser_engine_matches_the_reference(fixture_site, tmp_path: Path) -> None:  # noqa: ANN001
    _, site, _ = fixture_site
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(_cases(_reader(site))), "utf-8")
    reader = _reader(site)
    paths = tmp_path / "paths.json"  # article file -> the page path the site gave it
    paths.write_text(json.dumps({f"a/{n}": reader.article(n)["path"] for n in range(reader.n)}))
    env = {"PATH": str(Path(NODE).parent), "ARCHIVE_SITE": str(site),
           "ARCHIVE_CASES": str(cases), "ARCHIVE_PATHS": str(paths)}
    run = subprocess.run([NODE, "--test", str(JS_TEST)], capture_output=True, text=True,
                         env=env, timeout=60)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


# --- a day's update: only the new segment's lists are written ------------------------------------

def _articles_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the articles the bundle's article pass reads from here on, as it reads them."""
    read: list[str] = []
    article_record = ss_articles.article_record

    def recorded(stored: dict[str, Any]) -> Any:
        read.append(stored["id"])
        return article_record(stored)
    monkeypatch.setattr(ss_articles, "article_record", recorded)
    return read


def test_a_days_update_writes_only_the_new_segments_lists(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Articles newer than any are added (a new segment) and one older article is edited
    (its old copy deleted in its segment): the old segment's files are left as they were,
    only the new and edited articles are read again, the reference still answers as the CLI
    does, and the edited article shows once."""
    # every article dated: undated ones are numbered after the newest, so new ones move them
    base = [a if a.date else replace(a, date=datetime(2016, 6, 1), date_source="explicit")
            for a in _articles()]
    index = _index(tmp_path / "index", base)
    site = tmp_path / "site"
    with Archive(index) as archive:
        ss.build_bundle(archive, OutputFolder(site), shard_bytes=512, head_size=4, procs=1)
        (old,) = [row[0] for row in _reader(site).meta["segs"]]
    day = [replace(a, id=f"day-{i:02d}", date=datetime(2019, 3, 1, i), path=f"day/{i}.txt",
                   date_source="explicit") for i, a in enumerate(_articles(12, seed=9))]
    edited = replace(base[20], body=base[20].body + ". zeppelin")
    ix = store.open_index(index)
    writer = store.open_writer(ix, index)
    store.add_articles(writer, day)
    writer.update_document(**store.to_document(edited))
    writer.commit(merge=False)
    ix.close()
    built: list[int] = []
    build_part = ss_segments.build_part

    def counted(*args: Any) -> Any:
        built.append(args[2])
        return build_part(*args)
    monkeypatch.setattr(ss_segments, "build_part", counted)
    read = _articles_read(monkeypatch)
    with Archive(index) as archive:
        out = OutputFolder(site)
        ss.build_bundle(archive, out, shard_bytes=512, head_size=4, procs=1)
        assert built == [1, 1]   # the old segment's files were kept, not even rebuilt
        # the article pass read only the new and the edited articles
        assert sorted(read) == sorted([a.id for a in day] + [edited.id])
        segs = [row[0] for row in _reader(site).meta["segs"]]
        assert old in segs and len(segs) == 2
        written = [line[2:] for line in out.change_lines() if line[0] in "AM"]
        assert written and not [p for p in written if f"/s/{old}/" in p], written
        reader = _reader(site)
        assert reader.meta["x"][old]   # the edited article's old copy
        for q in FIXTURE_QUERIES + ["zeppelin", "oil zeppelin"]:
            total, ids = _cli_ids(archive, q)
            answer = ref.search(reader, q, facets=False)
            assert answer.total == total, q
            if ids:
                assert ref.overlap_at(10, ids, [h["id"] for h in answer.hits]) >= 0.9, q
        zeppelin = ref.search(reader, "zeppelin", facets=False)
        assert [h["id"] for h in zeppelin.hits] == [edited.id]
        fresh = tmp_path / "fresh"
        ss.build_bundle(archive, OutputFolder(fresh), shard_bytes=512, head_size=4, procs=1)
    assert _tree(site) == _tree(fresh)


def test_a_damaged_article_memory_is_read_as_far_as_it_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The article pass's memory of the last build (a line per article) cut off in the
    middle of a line: the articles it still holds are not read again, the rest are, and the
    bundle is the one a fresh build writes."""
    articles = _articles(60)
    index = _index(tmp_path / "index", articles)
    site, fresh = tmp_path / "site", tmp_path / "fresh"
    with Archive(index) as archive:
        ss.build_bundle(archive, OutputFolder(site), shard_bytes=512, head_size=4, procs=1)
        memory = site / ss_articles.ARTICLE_CACHE
        lines = memory.read_bytes().splitlines(keepends=True)
        assert len(lines) == 1 + len(articles)   # the header, then a line per article
        memory.write_bytes(b"".join(lines[:21]) + lines[21][:7])
        read = _articles_read(monkeypatch)
        ss.build_bundle(archive, OutputFolder(site), shard_bytes=512, head_size=4, procs=1)
        assert len(read) == len(articles) - 20
        ss.build_bundle(archive, OutputFolder(fresh), shard_bytes=512, head_size=4, procs=1)
    assert _tree(site) == _tree(fresh)


def test_mapped_pages_handed_back_at_every_step_leave_the_bundle_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The passes over every article, term and pair hand the mapped pages they read back to
    the kernel (``store.pages``); doing it at every step changes no byte: the bundle is the
    one a usual (two-process) build writes."""
    from archive.store import pages

    index = _index(tmp_path / "index", _articles(80))
    usual, released = tmp_path / "usual", tmp_path / "released"
    with Archive(index) as archive:
        ss.build_bundle(archive, OutputFolder(usual), shard_bytes=512, head_size=4, procs=2)
    handed: list[int] = []
    release = pages.release

    def counted(leaves: Any) -> int:
        done = release(leaves)
        handed.append(done)
        return done
    monkeypatch.setattr(pages, "release", counted)
    monkeypatch.setattr(pages, "LIMIT_MB", -1)
    monkeypatch.setattr(pages, "LOOK_EVERY", 1)
    with Archive(index) as archive:
        ss.build_bundle(archive, OutputFolder(released), shard_bytes=512, head_size=4, procs=1)
    assert len(handed) > 80 and all(handed)   # every step, each time some mapping
    assert _tree(usual) == _tree(released)


class _FakeSegments:
    """A source whose reader lists segments of the given sizes (all ``units`` reads)."""

    def __init__(self, sizes: list[int]):
        class Leaf:
            def __init__(self, i: int, size: int):
                self.seg = type("Segment", (), {"segid": f"seg{i:04d}"})()
                self.size = size

            def segment(self) -> Any:
                return self.seg

            def doc_count_all(self) -> int:
                return self.size
        leaves = [(Leaf(i, n), sum(sizes[:i])) for i, n in enumerate(sizes)]
        reader = type("Reader", (), {"leaf_readers": lambda self: iter(leaves)})()
        self.searcher = type("Searcher", (), {"reader": lambda self: reader})()


def test_units_are_consecutive_runs_and_a_new_segment_changes_only_the_newest() -> None:
    rng = random.Random(11)
    for _ in range(200):
        sizes = [rng.choice([1, 30, 300, 2500, 5000, 60000]) for _ in range(rng.randint(1, 40))]
        before = ss_segments.units(_FakeSegments(sizes))
        assert [p for u in before for p in u.positions] == list(range(len(sizes)))
        assert all(u.articles == sum(sizes[p] for p in u.positions) for u in before)
        after = ss_segments.units(_FakeSegments(sizes + [rng.choice([1, 200, 2500])]))
        kept = 0
        while kept < len(before) and kept < len(after) and before[kept] == after[kept]:
            kept += 1
        # the older units stay; the newest are carried, with the new segment, into one
        assert len(after) == kept + 1
        assert after[-1].positions == tuple(p for u in before[kept:] for p in u.positions) + \
            (len(sizes),)
    # segments of one size: at most FANOUT - 1 units per level
    for count in range(1, 200):
        found = ss_segments.units(_FakeSegments([2500] * count))
        levels = Counter(u.level for u in found)
        assert max(levels.values()) < ss_segments.FANOUT, (count, levels)


def _word_tiers_bound_their_postings(reader: ref.BundleReader) -> int:
    """Every tail tier of every word's list: its bound (the highest combined term frequency
    at its unit's averages) times the unit's ``rho`` is at least each of its postings'
    combined term frequency at the collection's averages, the one the browser scores. Returns
    how many tiers were checked."""
    meta, checked = reader.meta, 0
    w, nfields = meta["w"], len(meta["avg"])
    for segid, term_shards, _ in meta["segs"]:
        for shard in range(term_shards):
            for index, row in enumerate(reader.load(f"s/{segid}/t/{shard}")):
                for t, (count, bound) in enumerate(row[4] if len(row) > 4 else []):
                    data = reader.load(ss_format.tail_name(f"s/{segid}/t", shard, index, t))
                    for _, fields in ss.decode_fielded(data, count, 1, nfields):
                        combined = sum(w["fw"][f] * v[0] / ((1 - w["b"][f]) + w["b"][f] * v[1]
                                                            / meta["avg"][f])
                                       for f, v in enumerate(fields) if v)
                        assert combined <= bound[nfields] * meta["rho"][segid], (row[0], t)
                    checked += 1
    return checked


def test_small_segments_share_lists_and_an_edit_inside_a_unit_shows_its_newer_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seven commits of 20 articles (the third edits an article of the first, the sixth one
    of the fifth), with levels scaled down to this size: the first four segments are cut as
    one unit, the last three alone, so a first query fetches four shards, not seven. Inside
    a unit only an article's newest copy is listed (the unit lists no deletion for it); across
    units the old copy is skipped by its unit's deletion list. The reference answers as the
    CLI does, and a bundle brought up to date after every commit is the fresh build."""
    monkeypatch.setattr(ss_segments, "LEVEL_BASE", 10)   # levels: < 40, < 160, ...
    base = [a if a.date else replace(a, date=datetime(2016, 6, 1), date_source="explicit")
            for a in _articles()]
    folder, site = tmp_path / "index", tmp_path / "site"
    ix = store.create_index(folder)
    edits = {2: replace(base[3], body=base[3].body + ". zeppelin"),
             5: replace(base[90], title="Blimp " + base[90].title, body="airship")}
    for commit in range(7):
        writer = store.open_writer(ix, folder)
        store.add_articles(writer, base[commit * 20:(commit + 1) * 20])
        if commit in edits:
            writer.update_document(**store.to_document(edits[commit]))
        writer.commit(merge=False)
        with Archive(folder) as archive:
            out = OutputFolder(site)
            ss.build_bundle(archive, out, shard_bytes=512, head_size=4, procs=1)
    ix.close()
    with Archive(folder) as archive:
        leaves = [leaf for leaf, _ in archive.searcher.reader().leaf_readers()]
        units = ss_segments.units(archive)
        assert len(leaves) == 7
        assert [u.positions for u in units] == [(0, 1, 2, 3), (4,), (5,), (6,)]
        reader = _reader(site)
        assert [row[0] for row in reader.meta["segs"]] == [u.uid for u in units]
        assert set(reader.meta["x"]) == {units[1].uid}   # base[90]'s old copy, not base[3]'s
        for q in FIXTURE_QUERIES + ["zeppelin", "oil zeppelin", "airship", "blimp"]:
            total, ids = _cli_ids(archive, q)
            answer = ref.search(reader, q, facets=False)
            assert answer.total == total, q
            if ids:
                assert ref.overlap_at(10, ids, [h["id"] for h in answer.hits]) >= 0.9, q
        for q, edited in (("zeppelin", base[3]), ("airship", base[90])):
            assert [h["id"] for h in ref.search(reader, q, facets=False).hits] == [edited.id]
        assert _word_tiers_bound_their_postings(reader) > 20
        assert max(reader.meta["rho"].values()) > 1   # some unit's averages are below the whole's
        fresh = tmp_path / "fresh"
        ss.build_bundle(archive, OutputFolder(fresh), shard_bytes=512, head_size=4, procs=1)
    # (files of the units merged since are what the site builder then removes)
    assert {p: b for p, b in _tree(site).items() if p in out.produced} == \
        {p: b for p, b in _tree(fresh).items() if not p.startswith(".archive-")}


def test_a_kept_segment_whose_file_changed_is_built_again(fixture_site, tmp_path: Path) -> None:
    """The segment cache is trusted only while every file it lists has its size: a damaged
    file makes the segment's lists be built (and the file written) again."""
    index, _, _ = fixture_site
    site = tmp_path / "site"
    with Archive(index) as archive:
        ss.build_bundle(archive, OutputFolder(site), shard_bytes=512, head_size=4, procs=1)
        (segid, _, _), = _reader(site).meta["segs"]
        victim = site / "search" / "bundle" / "s" / segid / "t" / "0.js"
        good = victim.read_bytes()
        victim.write_bytes(good + b"\n")
        out = OutputFolder(site)
        ss.build_bundle(archive, out, shard_bytes=512, head_size=4, procs=1)
    assert victim.read_bytes() == good
    assert out.change_lines() == [f"M search/bundle/s/{segid}/t/0.js"]
