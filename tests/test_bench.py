"""The benchmark suite runs end to end on a tiny made-up corpus (timings are never asserted).

A fake ``corpora`` folder holds a few BBC-style text files, two Reuters SGML files, a JSON Lines
collection and miniature CISI and Cranfield collections in their original formats; every
``python -m bench`` command runs against it, in-process (``BENCH_INPROCESS``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.fake_corpora import WORDS, write_news
from support.fake_corpora import text as _text


def _dotted(records: list[tuple[int, dict[str, str]]]) -> str:
    out = []
    for number, fields in records:
        out.append(f".I {number}")
        for letter, text in fields.items():
            out.extend([f".{letter}", text])
    return "\r\n".join(out) + "\r\n"


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_news(tmp_path_factory.mktemp("corpora"), bbc_files=12, reuters_files=2)
    cisi, cran = root / "cisi", root / "cranfield"
    cisi.mkdir()
    cran.mkdir()
    docs = [(i, {"T": f"{WORDS[i]} {WORDS[i + 1]}", "A": "Smith, J.", "W": _text(i, 20)})
            for i in range(1, 9)]
    (cisi / "CISI.ALL").write_text(_dotted([(n, {**f, "X": "1\t5\t1"}) for n, f in docs]),
                                   "latin-1")
    (cisi / "CISI.QRY").write_text(_dotted([(1, {"W": f"{WORDS[1]} {WORDS[2]}"}),
                                            (2, {"W": f"{WORDS[5]} (of: {WORDS[6]}"})]),
                                   "latin-1")
    (cisi / "CISI.REL").write_text("     1     1\t0\t0.000000\r\n     2     5\t0\t0.000000\r\n",
                                   "latin-1")
    (cran / "cran.all.1400").write_text(_dotted([(n, {**f, "B": "j. ae."}) for n, f in docs])
                                        .replace("\r\n", "\n"), "latin-1")
    # .I numbers with gaps: the qrels number queries by position (1, 2), not by .I (3, 9)
    (cran / "cran.qry").write_text(_dotted([(3, {"W": f"{WORDS[2]} {WORDS[3]}"}),
                                            (9, {"W": f"{WORDS[6]} {WORDS[7]}"})]), "latin-1")
    (cran / "cranqrel").write_text("1 2 1\n1 3 4\n1 8 -1\n2 6 2\n2 8 -1", "latin-1")
    jsonl = root / "wire"
    jsonl.mkdir()
    for f in range(2):
        with open(jsonl / f"wire-{f}.jsonl", "w", encoding="utf-8") as out:
            for k in range(8):
                i = f * 8 + k
                out.write(json.dumps({"id": f"w{i}", "title": f"{WORDS[i]} {WORDS[i + 2]} news",
                                      "body": _text(i), "date": f"19{90 + i % 9}-0{1 + i % 9}-10",
                                      "source": "Wire"}) + "\n")
    return root


@pytest.fixture(autouse=True)
def _in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Measured steps run in this process (``BENCH_INPROCESS``): a process each costs seconds."""
    monkeypatch.setenv("BENCH_INPROCESS", "1")


def bench(corpora: Path, tmp: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run ``python -m bench --corpora C --data D --results R ARGS`` in-process; return what it
    printed."""
    from bench.__main__ import main

    capsys.readouterr()
    assert main(["--corpora", str(corpora), "--data", str(tmp / "data"),
                 "--results", str(tmp / "results"), *args]) == 0
    return capsys.readouterr().out


def _result(tmp: Path, name: str) -> dict:
    return json.loads((tmp / "results" / f"{name}.json").read_text("utf-8"))


def test_convert(corpora: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = bench(corpora, tmp_path, capsys, "convert")
    assert "cisi" in out and "cranfield" in out
    cran = tmp_path / "data" / "cranfield"
    assert (cran / "queries.tsv").read_text("utf-8").splitlines()[1].startswith("2\t")
    # Cleverdon 1 (best) -> grade 4, 4 -> 1, -1 -> 0
    assert (cran / "qrels.txt").read_text("utf-8").split("\n")[:3] == \
        ["1 0 2 4", "1 0 3 1", "1 0 8 0"]
    first = json.loads((cran / "docs.jsonl").read_text("utf-8").splitlines()[0])
    assert first["id"] == "1" and first["title"] == "coffee harvest"


def test_relevance_against_the_peers(corpora: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Needs the bench extra's bm25s: the README's test install leaves it out, so this skips."""
    pytest.importorskip("bm25s", reason="bm25s is in the bench extra: pip install -e '.[bench]'")
    _fake_cf(tmp_path / "data" / "raw" / "cf")
    bench(corpora, tmp_path, capsys, "convert")
    out = bench(corpora, tmp_path, capsys, "relevance")
    rows = _result(tmp_path, "relevance")["rows"]
    systems = {(r["collection"], r["system"]) for r in rows}
    assert ("cisi", "archive") in systems and ("cranfield", "fts5") in systems
    assert ("cranfield", "bm25s") in systems and ("cisi", "whoosh-bm25f") in systems
    assert all(0 <= r["map"] <= 1 for r in rows)
    assert "MAP" in out and "archive / best" in out
    # the lever selection ran on the same collections, one held-out row each
    levers = _result(tmp_path, "relevance")["levers"]
    assert [r["collection"] for r in levers["loo"]] == ["cisi", "cranfield"]
    assert "Leave-one-collection-out" in out and "picked on all 2" in out
    # no raw files under this run's --data, and the made-up Reuters has no ModApte test split
    skipped = _result(tmp_path, "relevance")["skipped"]
    assert set(skipped) == {"adi", "cacm", "lisa", "npl", "reuters", "scifact"}
    assert "skipped lisa: " in out and "fetch-collections" in skipped["lisa"]
    # CF, a collection only measured on, is scored beside the others but never picked with
    assert ("cf", "archive") in systems and ("cf", "bm25s") in systems
    assert [r["collection"] for r in levers["checks"]] == ["cf"]
    assert levers["checks"][0]["current"] == pytest.approx(
        next(r["map"] for r in rows if r["collection"] == "cf" and r["system"] == "archive"))
    assert "only measured on" in out


def _fake_cf(folder: Path) -> None:
    """A made-up CF collection in its original tagged format (``testcollections.convert_cf``)."""
    folder.mkdir(parents=True)
    records = [f"PN 740{n:02d}\nRN {n:05d} \nTI {WORDS[n]} {WORDS[n + 1]}\n"
               f"AB {_text(n, 12)}\n" for n in range(1, 7)]
    (folder / "cf74").write_text("\n".join(records), "latin-1")
    for part in ("cf75", "cf76", "cf77", "cf78", "cf79"):
        (folder / part).write_text("", "latin-1")
    (folder / "cfquery").write_text(
        f"QN 00001 \nQU {WORDS[1]} {WORDS[2]}\nNR 00002\nRD    1 2200    2 0100\n\n"
        f"QN 00002 \nQU {WORDS[4]}\nNR 00001\nRD    4 1111\n", "latin-1")


def test_lead_titles_compares_the_made_titles_searched_and_not(
        corpora: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from whoosh import index

    bench(corpora, tmp_path, capsys, "convert")
    out = bench(corpora, tmp_path, capsys, "lead-titles")
    rows = _result(tmp_path, "lead-titles")["rows"]
    assert [r["collection"] for r in rows] == ["cisi", "cranfield"]
    assert all(0 <= r["searched_now"] <= 1 and 0 <= r["not_searched_best"] <= 1 for r in rows)
    assert "mean ratio (not searched / searched)" in out
    # the two builds differ in just that: the made titles are searched in one only
    untitled = tmp_path / "data" / "untitled" / "cisi"
    lengths = {}
    for variant in ("lead-searched", "lead-not-searched"):
        with index.open_dir(str(untitled / variant), indexname="archive").reader() as reader:
            lengths[variant] = reader.field_length("title")
            assert reader.field_length("body") > 0
    assert lengths["lead-searched"] > 0 and lengths["lead-not-searched"] == 0


def test_analyzers_builds_each_collection_four_ways_and_selects_by_leave_one_out(
        corpora: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from whoosh import index

    from bench import analyzers

    bench(corpora, tmp_path, capsys, "convert")
    # the peers' MAP the ratios are over: a relevance run's rows (bm25s is not needed here)
    (tmp_path / "results").mkdir(exist_ok=True)
    (tmp_path / "results" / "relevance.json").write_text(json.dumps({"rows": [
        {"collection": c, "system": system, "map": m} for c in ("cisi", "cranfield")
        for system, m in (("archive", 0.5), ("bm25s", 0.4), ("fts5", 0.3))]}), "utf-8")
    out = bench(corpora, tmp_path, capsys, "analyzers")
    result = _result(tmp_path, "analyzers")
    assert [v["analyzer"] for v in result["variants"]] == [v.label for v in analyzers.VARIANTS]
    assert [r["collection"] for r in result["alone"]] == ["cisi", "cranfield"]
    assert [r["collection"] for r in result["joint"]] == ["cisi", "cranfield"]
    assert all(0 <= r["map"] <= 1 and r["best_peer"] == 0.4 for r in result["alone"])
    assert "Among all four" in out and "picked together" in out
    finding = result["finding_abbreviations"]
    assert [v["analyzer"] for v in finding["variants"]] == \
        [v.label for v in analyzers.FINDING_ABBREVIATIONS]
    assert "abbreviations joined" in finding["alone_pick"]
    # each index was analysed by its own variant's chain (the schema keeps it)
    for variant in analyzers.VARIANTS:
        folder = tmp_path / "data" / "analyzers" / "cisi" / \
            variant.label.replace(", ", "-").replace(" ", "-")
        with index.open_dir(str(folder), indexname="archive").reader() as reader:
            got = [t.text for t in reader.schema["body"].analyzer("the U.S. and vitamin C")]
        assert got == {(False, False): ["u", "s", "vitamin", "c"],
                       (False, True): ["vitamin"], (True, False): ["us", "vitamin", "c"],
                       (True, True): ["us", "vitamin"]}[(variant.abbreviations,
                                                         variant.letters)]


def test_analyzers_archive_variant_is_the_archives_analyzer() -> None:
    from archive.analysis import news_analyzer
    from bench import analyzers

    ours, theirs = analyzers.ARCHIVE.analyzer(), news_analyzer()
    assert [type(i) for i in ours.items] == [type(i) for i in theirs.items]
    text = "The U.S.-led talks, J. K. Rowling's e.g. vitamin C at 3 p.m. don\u2019t x.y bbc.co.uk"
    assert [t.text for t in ours(text)] == [t.text for t in theirs(text)]
    assert len({v.label for v in analyzers.VARIANTS}) == 4


def test_analyzers_selection_picks_on_the_others() -> None:
    """Left out, each collection gets the analyzer best on the other two: x gets A (its worst
    of y and z is above B's), y and z get B (A is far below the peer on x); B is the pick on
    all three."""
    from bench import analyzers, levers

    a, b = analyzers.VARIANTS[0], analyzers.ARCHIVE
    now, other = levers.Setting(), levers.Setting(k1=1.2)
    maps = {v: {} for v in analyzers.VARIANTS}
    for v in analyzers.VARIANTS:
        for name, (ma, mb) in {"x": (0.20, 0.44), "y": (0.48, 0.44), "z": (0.48, 0.44)}.items():
            maps[v][name] = {now: ma if v == a else mb if v == b else 0.1, other: 0.05}
    result = analyzers.select(maps, {"x": 0.4, "y": 0.4, "z": 0.4}, [now, other], now)
    picks = {r["collection"]: r["picked"] for r in result["alone"]}
    assert picks["x"].startswith(a.label + ";")
    assert picks["y"].startswith(b.label + ";") and picks["z"].startswith(b.label + ";")
    assert result["alone_pick"].startswith(b.label + ";") and result["alone_pick_is_archive"]
    assert result["alone_mean"] == pytest.approx((0.20 + 0.44 + 0.44) / 0.4 / 3)
    assert result["joint_mean"] == pytest.approx(result["alone_mean"])  # `other` never wins
    assert [v["criterion"] for v in result["variants"] if v["archive"]] == \
        [pytest.approx(0.44 / 0.4)]


def test_examples(corpora: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench.examples import QUERIES
    out = bench(corpora, tmp_path, capsys, "examples")
    rows = _result(tmp_path, "examples")["rows"]
    assert [(r["corpus"], r["query"]) for r in rows] == \
        [(c, q) for c in ("bbc", "reuters") for q in QUERIES[c]]
    oil = next(r for r in rows if r["corpus"] == "reuters" and r["query"] == "gold")
    assert len(oil["top"]) <= 5 and f"reuters `gold` ({oil['total']:,}" in out


def test_scale_index_and_queries(corpora: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    bench(corpora, tmp_path, capsys, "scale", "--n", "150", "--per-file", "50")
    articles = tmp_path / "data" / "scale" / "articles"
    first = (articles / "scale-00000.jsonl").read_text("utf-8")
    assert len(list(articles.glob("*.jsonl"))) == 3
    bench(corpora, tmp_path, capsys, "scale", "--n", "150", "--per-file", "50")
    assert (articles / "scale-00000.jsonl").read_text("utf-8") == first  # deterministic

    out = bench(corpora, tmp_path, capsys, "index", "--corpus", f"bbc={corpora / 'bbc'}",
                "--corpus", f"reuters={corpora / 'reuters21578'}", "--with-scale")
    rows = _result(tmp_path, "index")["rows"]
    by = {(r["corpus"], r["step"]): r for r in rows}
    assert by[("bbc", "full build")]["docs"] == 12
    assert by[("bbc", "unchanged re-run")]["docs"] == 12
    assert by[("bbc", "+1 new, 1 edited")]["docs"] == 2
    assert by[("reuters", "full build")]["docs"] == 20
    assert by[("reuters", "write only (whoosh)")]["docs"] == 20
    # 1 new story in a new file; 1 edited story: its file is read again, only it re-indexed
    assert by[("reuters", "+1 new, 1 edited")]["docs"] == 2
    assert by[("scale", "full build")]["docs"] == 150
    assert by[("scale", "+2 new, 2 edited")]["docs"] == 4  # of a 50-record file, 2 re-indexed
    assert "x FTS5" in out

    out = bench(corpora, tmp_path, capsys, "queries", "--per-kind", "3",
                "--corpus", f"wire={corpora / 'wire'}")
    rows = _result(tmp_path, "queries")["rows"]
    assert {r["system"] for r in rows} == {"archive", "archive, whoosh path", "archive+facets",
                                          "whoosh top-10 only", "fts5"}
    assert all(r["queries"] == 15 for r in rows)
    assert "p95" in out


def test_sidecars_build_three_ways(corpora: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = bench(corpora, tmp_path, capsys, "sidecars", "--corpus", f"wire={corpora / 'wire'}")
    rows = {r["sidecars"]: r for r in _result(tmp_path, "sidecars")["rows"]}
    assert set(rows) == {"none", "writer", "segments"}
    assert all(r["articles"] == 16 for r in rows.values())
    assert rows["none"]["sidecar_mb"] == 0 and rows["none"]["x_none"] == 1
    assert rows["writer"]["sidecar_mb"] == rows["segments"]["sidecar_mb"] > 0
    assert "x none" in out


def test_merges_builds_both_ways_and_times_the_same_queries(
        corpora: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from archive.indexer import Indexer
    from archive.store import fastwriter

    # 40 articles in files of 2, a commit at each file, one writer process: Whoosh merges
    # its small segments, the archive's policy (settled at 2 articles here) none of them
    bench(corpora, tmp_path, capsys, "scale", "--n", "40", "--per-file", "2")
    monkeypatch.setattr(fastwriter, "SETTLED_SEGMENT_DOCS", 2)
    monkeypatch.setattr(Indexer.__init__, "__kwdefaults__",
                        {**Indexer.__init__.__kwdefaults__, "commit_every": 2})
    policy = fastwriter.merge_small_segments
    out = bench(corpora, tmp_path, capsys, "merges", "--corpus",
                f"scale={tmp_path / 'data' / 'scale' / 'articles'}", "--procs", "1",
                "--per-kind", "2")
    assert fastwriter.merge_small_segments is policy  # put back after the whoosh build
    rows = {r["policy"]: r for r in _result(tmp_path, "merges")["rows"]}
    assert set(rows) == {"whoosh", "archive"}
    assert rows["whoosh"]["articles"] == rows["archive"]["articles"] == 40
    assert rows["archive"]["segments"] == 20 > rows["whoosh"]["segments"]
    assert rows["whoosh"]["x_whoosh"] == 1 and rows["archive"]["queries"] == 10
    assert "x whoosh" in out


def test_duplicates_against_datasketch_on_the_scale_set_and_the_corpora(
        corpora: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both systems add the same signatures; on the corpora (a BBC story copied twice)
    they find the same clusters, which are not empty."""
    import shutil

    copied = tmp_path / "corpora"
    shutil.copytree(corpora, copied)
    story = sorted((copied / "bbc").rglob("*.txt"))[0]
    (story.parent / "900.txt").write_bytes(story.read_bytes())
    (story.parent / "901.txt").write_bytes(story.read_bytes())
    out = bench(copied, tmp_path, capsys, "duplicates", "--n", "30")
    rows = _result(tmp_path, "duplicates")["rows"]
    assert [(r["set"], r["system"]) for r in rows] == [
        ("scale 30", "archive"), ("scale 30", "datasketch"),
        ("bbc+reuters", "archive"), ("bbc+reuters", "datasketch")]
    assert [r["articles"] for r in rows] == [30, 30, 34, 34]
    assert all(r["same_clusters"] for r in rows)
    assert rows[2]["clusters"] == 1 and rows[2]["in_clusters"] == 3
    assert rows[1]["x_time"] == rows[1]["x_memory"] == 1 and "x datasketch" in out


def test_worker_subprocess_reports_memory_and_cpu(corpora: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.common import run_worker

    monkeypatch.delenv("BENCH_INPROCESS")
    result = run_worker("read_only", inputs=[str(corpora / "bbc")], enrich=False)
    assert result["docs"] == 12 and result["peak_rss_mb"] > 0 and result["cpu_seconds"] > 0


def test_site_update_holds_out_the_newest_day_and_edits_others() -> None:
    """The daily-update bench adds the newest 1% of dated records (a day's news) and edits
    another 1% of the rest, chosen with a seed: never an added one, the same every run."""
    from bench import site_update
    records = [{"title": f"t{i}", "body": "b", "date": f"2020-01-{1 + i % 28:02d}T00:00:00"}
               for i in range(300)] + [{"title": "undated", "body": "b"}]
    base, day, edited = site_update.split(records)
    assert len(day) == 3 and len(base) == 298 and len(edited) == 3
    assert min(r["date"] for r in day) >= max(r["date"] for r in base if r.get("date"))
    assert edited == site_update.split(records)[2] and max(edited) < len(base)
