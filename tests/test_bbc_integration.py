"""The 2,225 BBC News articles of ../shared/corpora/bbc, indexed once for this module."""

from __future__ import annotations

from pathlib import Path

import pytest

from archive.article import make_id

pytestmark = pytest.mark.needs_corpora

BBC_ARTICLES = 2225


@pytest.fixture(scope="module")
def bbc(tmp_path_factory: pytest.TempPathFactory, corpora_dir: Path, cli_for):  # noqa: ANN001, ANN201
    """(cli, first run's report, second run's report) for one index of the BBC corpus."""
    cli = cli_for(tmp_path_factory.mktemp("bbc") / "index")
    first = cli.json("index", corpora_dir / "bbc", "--no-progress")
    second = cli.json("index", corpora_dir / "bbc", "--no-progress")
    return cli, first, second


def test_every_article_is_added(bbc) -> None:  # noqa: ANN001
    _, first, _ = bbc
    assert first["added"] == BBC_ARTICLES
    assert first["files_read"] == BBC_ARTICLES
    assert first["skipped"] == []
    assert first["passed_over"] == 2  # README.TXT and PROVENANCE.md are not articles


def test_exactly_one_warning_for_the_latin1_file(bbc) -> None:  # noqa: ANN001
    _, first, _ = bbc
    assert len(first["warnings"]) == 1
    (warning,) = first["warnings"]
    assert warning["path"] == "bbc/sport/199.txt"
    assert "not valid UTF-8" in warning["reason"]


def test_stats_count_every_article(bbc) -> None:  # noqa: ANN001
    cli, _, _ = bbc
    stats = cli.json("stats")
    assert stats["articles"] == BBC_ARTICLES
    assert stats["bytes"] > 1_000_000


def test_a_known_headline_finds_its_article(bbc) -> None:  # noqa: ANN001
    cli, _, _ = bbc
    page = cli.json("search", 'title:"Ad sales boost Time Warner profit"')
    assert page["total"] == 1
    (hit,) = page["hits"]
    assert hit["id"] == make_id("bbc/business/001.txt")
    assert hit["title"] == "Ad sales boost Time Warner profit"
    article = cli.json("show", hit["id"])
    assert article["path"] == "bbc/business/001.txt"
    assert article["body"].startswith("Quarterly profits at US media giant TimeWarner jumped 76%")


def test_the_latin1_article_is_searchable_with_its_pound_signs(bbc) -> None:  # noqa: ANN001
    cli, _, _ = bbc
    article = cli.json("show", make_id("bbc/sport/199.txt"))
    assert "\u00a3" in article["body"] and "\ufffd" not in article["body"]


def test_a_second_run_reads_nothing_and_is_far_faster(bbc) -> None:  # noqa: ANN001
    _, first, second = bbc
    assert {k: second[k] for k in ("added", "updated", "removed", "unchanged", "files_read")} == \
        {"added": 0, "updated": 0, "removed": 0, "unchanged": BBC_ARTICLES, "files_read": 0}
    assert second["warnings"] == [] and second["skipped"] == []
    assert second["seconds"] * 20 <= first["seconds"], (first["seconds"], second["seconds"])
