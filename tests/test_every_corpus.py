"""Every command over every shared corpus, each indexed in its own format.

BBC as text files, Reuters-21578 as SGML, AG News as CSV, CISI and Cranfield as JSON Lines
(converted from their SMART files, as a user would with a one-off script). On each index
``search`` (text and ``--json``, a match and a miss), ``show``, ``stats``, ``export``
(JSON Lines and CSV), ``check`` and ``site`` run through the CLI: each must exit 0 (1 for a
search that finds nothing), print no traceback, and agree with the others on what is there.

A slice of each corpus is enough, and keeps the file to a few minutes on two cores: every
record of a corpus goes through the same reader, so what must be covered is each kind of
record, and the slices hold them all. BBC: two topic folders, one of them holding the
Latin-1 file (sport/199.txt) and wire copies; Reuters: reut2-021.sgm, 578 stories of which
118 have a title and no body; AG News: the first 1,000 rows with its classes.txt; CISI and
Cranfield: the first 400 records, plus Cranfield's two records with no text at all (471 and
995). The full-corpus counts are checked in test_ingest_corpora.py and
test_bbc_integration.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from archive.site import urls

from cli_checks import assert_clean, invoke
from conftest import CORPORA
from dotted_collections import read_dotted, write_jsonl

pytestmark = pytest.mark.corpus

AGNEWS_ROWS = 1_000
DOTTED_RECORDS = 400
CRANFIELD_EMPTY = ("471", "995")  # no title, no text: reported, not indexed


@dataclass(frozen=True)
class Corpus:
    """One corpus slice: how to lay out its input, how many articles it must give, and
    queries that match in it (a word, a phrase or field, a facet)."""

    name: str
    inputs: Callable[[Path], list[Path]]
    articles: int
    queries: tuple[str, ...]
    warnings: int = 0
    bodiless: bool = False  # whether some of its articles have a title and no body


def bbc_inputs(work: Path) -> list[Path]:
    return [CORPORA / "bbc" / "sport", CORPORA / "bbc" / "entertainment"]


def reuters_inputs(work: Path) -> list[Path]:
    return [CORPORA / "reuters21578" / "reut2-021.sgm"]


def agnews_inputs(work: Path) -> list[Path]:
    """The first rows of test.csv with classes.txt beside them (it names the topics)."""
    folder = work / "agnews"
    folder.mkdir()
    with open(CORPORA / "agnews" / "test.csv", encoding="utf-8", newline="") as source:
        rows = [line for _, line in zip(range(AGNEWS_ROWS), source)]
    (folder / "test.csv").write_text("".join(rows), encoding="utf-8", newline="")
    (folder / "classes.txt").write_bytes((CORPORA / "agnews" / "classes.txt").read_bytes())
    return [folder / "test.csv"]


def cisi_inputs(work: Path) -> list[Path]:
    records = read_dotted(CORPORA / "cisi" / "CISI.ALL")[:DOTTED_RECORDS]
    return [write_jsonl(records, work / "cisi.jsonl")]


def cranfield_inputs(work: Path) -> list[Path]:
    records = read_dotted(CORPORA / "cranfield" / "cran.all.1400")
    empty = [r for r in records if r[0] in CRANFIELD_EMPTY]
    assert len(empty) == 2 and not any(empty[0][1].values())
    return [write_jsonl(records[:DOTTED_RECORDS] + empty, work / "cranfield.jsonl")]


CORPUS_SLICES = {
    corpus.name: corpus for corpus in (
        Corpus("bbc", bbc_inputs, 511 + 386, ('"world cup"', "title:film", "england rugby"),
               warnings=1),  # sport/199.txt is Latin-1
        Corpus("reuters", reuters_inputs, 578, ("oil prices", "topic:crude", "place:japan"),
               bodiless=True),
        Corpus("agnews", agnews_inputs, AGNEWS_ROWS, ("iraq", "topic:sports", '"oil prices"')),
        Corpus("cisi", cisi_inputs, DOTTED_RECORDS,
               ("library", '"information retrieval"', "title:indexing")),
        Corpus("cranfield", cranfield_inputs, DOTTED_RECORDS,
               ('"boundary layer"', "title:heat", "supersonic flow"), warnings=2),
    )
}


@dataclass
class Indexed:
    corpus: Corpus
    index: Path
    work: Path
    report: dict


@pytest.fixture(scope="module", params=list(CORPUS_SLICES))
def indexed(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Indexed:
    corpus = CORPUS_SLICES[request.param]
    work = tmp_path_factory.mktemp(corpus.name)
    result = invoke("index", *corpus.inputs(work), "--index", work / "index", "--no-progress",
                    "--json")
    assert_clean(result)
    return Indexed(corpus, work / "index", work, json.loads(result.stdout))


def run_json(*args: object, exit_codes: tuple[int, ...] = ()) -> dict:
    result = invoke(*args, "--json")
    assert_clean(result, *exit_codes)
    return json.loads(result.stdout)


def test_index_adds_every_article(indexed: Indexed) -> None:
    report = indexed.report
    assert report["added"] == indexed.corpus.articles
    assert report["skipped"] == []
    assert len(report["warnings"]) == indexed.corpus.warnings, report["warnings"]
    stats = run_json("stats", "--index", indexed.index)
    assert stats["articles"] == indexed.corpus.articles
    assert_clean(invoke("stats", "--index", indexed.index))


def test_queries_find_articles_that_show_opens(indexed: Indexed) -> None:
    for query in indexed.corpus.queries:
        page = run_json("search", query, "--index", indexed.index)
        assert page["total"] > 0, query
        assert_clean(invoke("search", query, "--index", indexed.index))
        first = page["hits"][0]
        article = run_json("show", first["id"], "--index", indexed.index)
        assert article["id"] == first["id"] and article["title"] == first["title"]
        assert_clean(invoke("show", first["id"], "--index", indexed.index))


def test_a_query_matching_nothing_exits_1(indexed: Indexed) -> None:
    page = run_json("search", "qqxyzzyqq", "--index", indexed.index, exit_codes=(1,))
    assert page["total"] == 0
    missing = invoke("show", "no-such-article", "--index", indexed.index)
    assert_clean(missing, 1)
    assert missing.exit_code == 1 and "no-such-article" in missing.stderr


def test_export_holds_every_article_in_both_formats(indexed: Indexed) -> None:
    jsonl, csv_file = indexed.work / "export.jsonl", indexed.work / "export.csv"
    assert_clean(invoke("export", "--index", indexed.index, "-o", jsonl))
    assert_clean(invoke("export", "--index", indexed.index, "--format", "csv", "-o", csv_file))
    exported = [json.loads(line) for line in jsonl.read_text("utf-8").splitlines()]
    assert len(exported) == indexed.corpus.articles
    assert len({a["id"] for a in exported}) == len(exported)
    assert all(a["title"].strip() for a in exported)
    bodiless = [a for a in exported if not a["body"].strip()]
    assert bool(bodiless) == indexed.corpus.bodiless
    for article in bodiless[:3]:  # a title-only story opens like any other
        assert_clean(invoke("show", article["id"], "--index", indexed.index))


def test_check_finds_the_index_sound(indexed: Indexed) -> None:
    report = run_json("check", "--index", indexed.index)
    assert report["ok"] and report["articles"] == indexed.corpus.articles
    assert_clean(invoke("check", "--index", indexed.index))


def test_site_has_a_page_for_every_article(indexed: Indexed) -> None:
    site = indexed.work / "site"
    report = run_json("site", "--index", indexed.index, "--out", site, "--no-progress")
    assert report["articles"] == indexed.corpus.articles
    assert (site / "index.html").is_file() and (site / "search" / "index.html").is_file()
    jsonl = indexed.work / "site-check.jsonl"
    assert_clean(invoke("export", "--index", indexed.index, "-o", jsonl))
    for line in jsonl.read_text("utf-8").splitlines():
        article = json.loads(line)
        date = datetime.fromisoformat(article["date"]) if article["date"] else None
        assert (site / urls.article_path(article["id"], article["title"], date)).is_file(), \
            article["id"]
