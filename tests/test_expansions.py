"""Fuzzy words, wildcards and prefixes: the word as typed outranks its variants.

Each word an expansion reaches takes the idf of the most common of them (Lucene's blended
document frequency); scored apart, as Whoosh does, a rare variant outranked the word typed:
``blair~`` put "Comic Morris returns with sitcom" (a Claire) above the articles on Tony Blair.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_checks import invoke

STORIES = {
    f"blair{n}.txt": f"Blair speech number {n}\n\nThe prime minister Tony Blair spoke on "
                     f"policy {n} today and Blair answered questions.\n"
    for n in range(6)
} | {
    "claire.txt": "Comic returns with sitcom\n\nThe writer Claire joined the cast.\n",
    "blairs.txt": "Family history\n\nThe Blairs of the village held a fete.\n",
    "blaine.txt": "Magician show\n\nThe magician Blaine sat in a box.\n",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("expansions")
    news = folder / "news"
    news.mkdir()
    for name, text in STORIES.items():
        (news / name).write_text(text, encoding="utf-8")
    result = invoke("index", news, "--index", folder / "index")
    assert result.exit_code == 0, result.output
    return folder / "index"


def titles(index: Path, query: str) -> list[str]:
    result = invoke("search", query, "--index", index, "--json", "--limit", "20")
    assert result.exit_code == 0, result.output
    return [hit["title"] for hit in json.loads(result.stdout)["hits"]]


@pytest.mark.parametrize("query", ["blair~", "blair~2", "blair*", "bla?r", "blai*"])
def test_the_word_as_typed_outranks_its_variants(index: Path, query: str) -> None:
    found = titles(index, query)
    speeches = [t for t in found if t.startswith("Blair speech")]
    assert len(speeches) == 6
    assert found[:6] == speeches, found  # every article with the typed word comes first


def test_variants_still_match(index: Path) -> None:
    assert "Comic returns with sitcom" in titles(index, "blair~")
    assert "Family history" in titles(index, "blair*")


@pytest.mark.corpus
def test_bbc_blair_fuzzy_wildcard_and_prefix_lead_with_tony_blair(corpora_dir: Path,
                                                                 tmp_path: Path) -> None:
    result = invoke("index", corpora_dir / "bbc" / "politics",
                    corpora_dir / "bbc" / "entertainment", "--index", tmp_path / "index")
    assert result.exit_code == 0, result.output
    for query in ("blair~", "blair*", "bla?r"):
        top = titles(tmp_path / "index", query)[:10]
        assert all("Blair" in t or "PM" in t or "Labour" in t or "Brown" in t
                   for t in top[:5]), (query, top)
        assert "Comic Morris returns with sitcom" not in top[:5], (query, top)


def scores(index: Path, query: str) -> dict[str, float]:
    result = invoke("search", query, "--index", index, "--json", "--limit", "20")
    assert result.exit_code == 0, result.output
    return {hit["title"]: hit["score"] for hit in json.loads(result.stdout)["hits"]}


def test_the_typed_word_scores_as_the_plain_word_does(index: Path) -> None:
    """An expansion's words are each one BM25F term over the text fields, like a plain word:
    where the typed word is the most common one reached (so the idf is its own) and an
    article holds no variant, ``blair~`` scores it exactly as ``blair`` does."""
    plain, fuzzy = scores(index, "blair"), scores(index, "blair~")
    speeches = [t for t in plain if t.startswith("Blair speech")]
    assert len(speeches) == 6
    for title in speeches:
        assert fuzzy[title] == pytest.approx(plain[title], rel=1e-9), title
