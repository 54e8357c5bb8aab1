"""``archive timeline``: matches per period add up to what ``archive search`` lists, in the
shell at any width, as JSON for scripts, and with the same errors as search."""

from __future__ import annotations

import json
import random
import re
import shutil
from datetime import date
from pathlib import Path

import pytest

from archive.render import visible_width
from archive.search import Archive
from archive.timeline import period_label, period_start, timelines
from cli_checks import assert_clean, index_folder, invoke


index = index_folder


@pytest.fixture(scope="module")
def reuters_index(tmp_path_factory: pytest.TempPathFactory, corpora_dir: Path) -> Path:
    folder = tmp_path_factory.mktemp("reuters")
    files = folder / "files"
    files.mkdir()
    for name in ("reut2-000.sgm", "reut2-001.sgm", "reut2-013.sgm"):
        shutil.copy(corpora_dir / "reuters21578" / name, files / name)
    return index([files], folder / "index")


@pytest.fixture(scope="module")
def bbc_index(tmp_path_factory: pytest.TempPathFactory, corpora_dir: Path) -> Path:
    return index([corpora_dir / "bbc"], tmp_path_factory.mktemp("bbc") / "index")


def headline_queries(folder: Path, count: int, seed: int) -> list[str]:
    """Words and word pairs from real headlines, a phrase, an OR and a pair that shares no
    article (so the any-word relaxation is counted too)."""
    with Archive(folder) as archive:
        titles = [archive.searcher.stored_fields(d).get("title", "")
                  for d in archive.searcher.reader().all_doc_ids()]
    rng = random.Random(seed)
    words = [w for t in titles for w in re.findall(r"[A-Za-z]{4,}", t)]
    queries = []
    while len(queries) < count - 3:
        queries.append(" ".join(rng.sample(words, rng.choice((1, 1, 2)))).lower())
    queries += [f'"{rng.choice(titles).split()[0]} {rng.choice(titles).split()[0]}"',
                "oil OR gold", "zebra crossing"]
    return queries


@pytest.mark.corpus
@pytest.mark.parametrize("which", ["reuters_index", "bbc_index"])
def test_counts_per_period_add_up_to_the_search_total(which: str,
                                                      request: pytest.FixtureRequest) -> None:
    folder = request.getfixturevalue(which)
    queries = headline_queries(folder, 50, seed=len(which))
    for by, copies in (("month", []), ("day", []), ("year", ["--all-copies"])):
        for query in queries[:50 if by == "month" else 10]:
            shown = json.loads(invoke("search", query, *copies, "--index", folder,
                                      "--json").stdout)
            drawn = json.loads(invoke("timeline", query, *copies, "--by", by, "--index",
                                      folder, "--json").stdout)
            assert sum(p["count"] for p in drawn["periods"]) + drawn["undated"] \
                == shown["total"] == drawn["total"], (query, by)
            assert drawn["relaxed"] == shown.get("relaxed", False)


@pytest.mark.corpus
def test_periods_run_without_gaps_and_hold_their_stories(reuters_index: Path) -> None:
    with Archive(reuters_index) as archive:
        (oil, gold) = timelines(archive, ["oil", "gold"], by="week")
        days = archive.day_table()
        weeks = [p.start for p in oil.periods]
        assert weeks == [p.start for p in gold.periods]  # one run of periods for both
        assert all(w.weekday() == 0 for w in weeks)
        assert all((b - a).days == 7 for a, b in zip(weeks, weeks[1:]))
        matches = archive.matching("oil").docnums
        expected: dict[date, int] = {}
        for docnum in matches:
            if days[docnum]:
                start = period_start(days[docnum], "week")
                expected[start] = expected.get(start, 0) + 1
        assert {p.start: p.count for p in oil.periods if p.count} == expected


@pytest.mark.corpus
def test_normalize_gives_each_periods_share_of_its_stories(reuters_index: Path,
                                                          cli_for) -> None:
    cli = cli_for(reuters_index)
    shares = cli.json("timeline", "oil", "--normalize")
    counts = cli.json("timeline", "oil")
    everything = cli.json("timeline", "")
    assert [p["count"] for p in shares["periods"]] == [p["count"] for p in counts["periods"]]
    by_start = {p["start"]: p["count"] for p in everything["periods"]}
    for period in shares["periods"]:
        assert 0 <= period["share"] <= 1
        if period["count"]:
            assert period["share"] >= period["count"] / max(by_start[period["start"]], 1) - 0.05
    assert all(p["share"] is None for p in counts["periods"])


@pytest.mark.corpus
@pytest.mark.parametrize("width", [40, 120])
def test_terminal_chart_fits_the_width(reuters_index: Path, width: int,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    for args in (["oil"], ["oil", "gold", "--by", "week"], ["oil", "--normalize", "--by", "day"]):
        result = invoke("timeline", *args, "--index", reuters_index)
        assert_clean(result)
        lines = result.stdout.splitlines()
        assert all(visible_width(line) <= width for line in lines), (args, lines)
        data = json.loads(invoke("timeline", *args, "--index", reuters_index, "--json").stdout)
        first = data[0] if isinstance(data, list) else data
        for period in first["periods"]:  # every period is a row, labelled as in the JSON
            assert any(line.startswith(period["start"] + " ") for line in lines), period
        assert any(line.startswith("Most") for line in lines)


@pytest.mark.corpus
def test_the_longest_bar_belongs_to_the_busiest_period(reuters_index: Path) -> None:
    result = invoke("timeline", "oil", "--by", "day", "--index", reuters_index)
    rows = [line for line in result.stdout.splitlines() if re.match(r"\d{4}-\d\d-\d\d ", line)]
    longest = max(rows, key=lambda line: line.count("█"))
    data = json.loads(invoke("timeline", "oil", "--by", "day", "--index", reuters_index,
                             "--json").stdout)
    busiest = max(data["periods"], key=lambda p: p["count"])
    assert longest.startswith(busiest["start"])
    assert f"Most: {busiest['start']} ({busiest['count']:,})" in result.stdout.replace("\n", " ")


def test_timeline_behaves_as_search_without_an_index_a_match_or_a_valid_query(
        tmp_path: Path, news_index) -> None:
    missing = invoke("timeline", "oil", "--index", tmp_path / "nowhere")
    searched = invoke("search", "oil", "--index", tmp_path / "nowhere")
    assert_clean(missing, 1)
    assert (missing.exit_code, missing.stderr) == (searched.exit_code, searched.stderr)
    nothing = news_index("timeline", "qqqzzzx")
    assert_clean(nothing, 1)
    assert "No articles match qqqzzzx." in nothing.stdout
    bad = news_index("timeline", "date:someday")
    assert_clean(bad, 2)
    assert bad.stderr == news_index("search", "date:someday").stderr
    unknown = news_index("timeline", "oil", "--by", "decade")
    assert unknown.exit_code == 2 and "'decade' is not one of" in unknown.stderr


def test_json_shape_for_one_query_and_for_several(news_index) -> None:
    one = news_index.json("timeline", "", "--by", "year")
    assert set(one) >= {"query", "by", "periods", "total"}
    assert all(set(p) == {"start", "count", "share"} for p in one["periods"])
    several = news_index.json("timeline", "", "volcano", "--by", "year")
    assert [t["query"] for t in several] == ["", "volcano"]
    assert [p["start"] for p in several[0]["periods"]] == [p["start"] for p in one["periods"]]


def test_period_labels() -> None:
    day = date(2005, 3, 2)
    assert period_label(period_start(day, "year"), "year") == "2005"
    assert period_label(period_start(day, "month"), "month") == "2005-03"
    assert period_start(day, "week") == date(2005, 2, 28)
    assert period_label(period_start(day, "week"), "week") == "2005-W09"
    assert period_label(period_start(day, "day"), "day") == "2005-03-02"
    # ISO weeks near New Year belong to the year of their Thursday
    assert period_label(period_start(date(2005, 1, 1), "week"), "week") == "2004-W53"


def test_matches_with_no_date_say_there_is_nothing_to_chart(tmp_path: Path) -> None:
    news = tmp_path / "news"
    news.mkdir()
    (news / "a.txt").write_text("Harbour reopens\n\nThe harbour reopened after repairs.\n")
    index_folder([news], tmp_path / "index")
    result = invoke("timeline", "harbour", "--index", tmp_path / "index")
    assert_clean(result)
    assert "1 article matches harbour, by month (1 undated)." in result.stdout
    assert "nothing to chart" in result.stdout


def test_periods_run_to_the_last_date_there_is() -> None:
    from archive.timeline import counted_rows
    assert counted_rows([date(9999, 11, 30), date(9999, 12, 31)], "month") == [
        ["9999-11", 1], ["9999-12", 1]]
    assert counted_rows([date(9999, 12, 31)], "year") == [["9999", 1]]
