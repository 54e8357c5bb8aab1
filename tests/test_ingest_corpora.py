"""Issue 3's done-when checks on the real corpora: Reuters-21578, AG News, and the BBC
collection's duplicate clusters surviving a JSON Lines copy of itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from archive.cli import main

from conftest import CORPORA

pytestmark = pytest.mark.needs_corpora

REUTERS_STORIES = 21_578
BBC_FILES = 2_225


def run(*args: object) -> dict:
    result = CliRunner().invoke(main, [str(a) for a in args] + ["--json"],
                                catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def reuters(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    index = tmp_path_factory.mktemp("reuters") / "index"
    report = run("index", CORPORA / "reuters21578", "--index", index)
    return index, report


def test_reuters_indexes_every_story(reuters: tuple[Path, dict]) -> None:
    index, report = reuters
    assert report["added"] == REUTERS_STORIES
    assert report["skipped"] == []
    stats = run("stats", "--index", index)
    assert stats["articles"] == REUTERS_STORIES
    assert stats["by_year"] == {"1987": REUTERS_STORIES}


def test_place_query_sorted_newest(reuters: tuple[Path, dict]) -> None:
    index, _ = reuters
    page = run("search", "place:lebanon", "--sort", "newest", "--limit", "50", "--index", index)
    assert page["total"] >= 20
    assert all("Lebanon" in hit["places"] for hit in page["hits"])
    dates = [hit["date"] for hit in page["hits"]]
    assert dates == sorted(dates, reverse=True)


def test_topic_and_month_query(reuters: tuple[Path, dict]) -> None:
    index, _ = reuters
    page = run("search", "topic:cocoa date:1987-03", "--limit", "100", "--index", index)
    assert page["total"] > 10
    for hit in page["hits"]:
        assert "cocoa" in hit["topics"]
        assert hit["date"].startswith("1987-03")
    first = run("show", page["hits"][0]["id"], "--index", index)
    assert first["source"] == "Reuters" and first["date_source"] == "explicit"


def test_known_story_fields(reuters: tuple[Path, dict]) -> None:
    index, _ = reuters
    page = run("search", 'title:"bahia cocoa review"', "--index", index)
    story = run("show", page["hits"][0]["id"], "--index", index)
    assert story["title"] == "BAHIA COCOA REVIEW"
    assert story["external_id"] == "1" and story["dateline"] == "Salvador"
    assert {"El Salvador", "USA", "Uruguay"} <= set(story["places"])
    assert story["topics"] == ["cocoa"]


def test_agnews_csv_indexes_every_row(tmp_path: Path) -> None:
    report = run("index", CORPORA / "agnews" / "test.csv", "--index", tmp_path / "index")
    assert report["added"] == 7_600
    stats = run("stats", "--index", tmp_path / "index")
    assert stats["articles"] == 7_600
    page = run("search", "topic:sports", "--limit", "1", "--index", tmp_path / "index")
    assert page["total"] > 1000


def test_bbc_clusters_survive_a_jsonl_copy_of_itself(tmp_path: Path) -> None:
    """Indexing BBC and a JSON Lines export of it gives the same clusters, each story once."""
    first = tmp_path / "first"
    alone = run("index", CORPORA / "bbc", "--index", first)
    assert alone["added"] == BBC_FILES
    assert alone["clusters"] >= 98  # the 98 stories the collection holds twice, at least
    export = tmp_path / "copy" / "bbc.jsonl"
    export.parent.mkdir()
    result = CliRunner().invoke(main, ["export", "--index", str(first), "-o", str(export)])
    assert result.exit_code == 0, result.output
    both = tmp_path / "both"
    run("index", CORPORA / "bbc", "--index", both)
    combined = run("index", export, "--index", both)
    assert combined["added"] == BBC_FILES
    # distinct stories = articles - extra copies: 2,068 either way; now each has a twin
    stories_alone = BBC_FILES - alone["copies"]
    stories_both = 2 * BBC_FILES - combined["copies"]
    assert stories_both == stories_alone
    assert combined["clusters"] == stories_alone
    page = run("search", 'title:"ad sales boost time warner profit"', "--index", both)
    assert page["total"] == 1 and page["hits"][0]["copies"] == 1
    every = run("search", 'title:"ad sales boost time warner profit"', "--all-copies",
                "--index", both)
    assert every["total"] == 2
