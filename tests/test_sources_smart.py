"""SMART test collections (``.I`` records): the documents are read, the queries and judgment
tables beside them are passed over."""

from __future__ import annotations

from pathlib import Path

import pytest

from archive.sources import MANIFEST, NotAnArticleFile, SourceFile, classify, format_of
from archive.sources.smart import read

DOCUMENTS = """\
.I 1\r
.T\r
Eighteen Editions of the Dewey\r
Decimal Classification\r
.A\r
Comaromi, J.P.\r
Batty, D.\r
.B\r
j. ae. scs. 25, 1958, 324.\r
.W\r
   The present study is a history of the DEWEY Decimal\r
Classification.\r
\r
A second paragraph.\r
.X\r
1\t5\t1\r
.I 2\r
.T \r
.A\r
.B\r
.W\r
.I 3\r
.T\r
Use made of technical libraries\r
.W\r
This report is an analysis of 6300 acts of use\r
.W\r
and a repeated marker adds to the text.\r
"""

QUERIES = """\
.I 1
.W
What problems and concerns are there in making up descriptive titles?
.I 2
.T
Keyword indexing
.W
How can actually pertinent data be retrieved?
.I 3
.W
What is information science?
"""


def _source(tmp_path: Path, name: str, text: str) -> SourceFile:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return SourceFile(path, f"collection/{name}")


def test_records_become_articles_and_an_empty_record_is_a_warning(tmp_path: Path) -> None:
    source = _source(tmp_path, "CISI.ALL", DOCUMENTS)
    assert format_of(source) == "smart"
    first, third = list(read(source))
    assert first.title == "Eighteen Editions of the Dewey Decimal Classification"
    assert first.author == "Comaromi, J.P.; Batty, D."
    assert first.body == ("The present study is a history of the DEWEY Decimal "
                          "Classification.\n\nA second paragraph.")
    assert first.external_id == "1" and first.extra == {"citation": "j. ae. scs. 25, 1958, 324."}
    assert "1\t5" not in first.body   # citations (.X) stay out
    assert third.body == ("This report is an analysis of 6300 acts of use\n\n"
                          "and a repeated marker adds to the text.")
    assert first.id != third.id and third.external_id == "3"
    assert [str(w) for w in source.warnings] == [   # the file and the record's line
        "collection/CISI.ALL:17: record 2 has neither title nor text; skipped"]


@pytest.mark.parametrize("name", ["cran.qry", "query.text", "topics.all"])
def test_a_query_file_is_passed_over_as_data(tmp_path: Path, name: str) -> None:
    """By its name, or (``topics.all``) because most of its records have no title."""
    source = _source(tmp_path, name, QUERIES)
    assert format_of(source) == "smart"
    with pytest.raises(NotAnArticleFile) as caught:
        list(read(source))
    assert caught.value.rule == MANIFEST and "queries" in caught.value.reason


@pytest.mark.parametrize("table", ["1 184 2 \n1 29 2 \n1 31 2 \n",
                                   "    1     28\t0\t0.000000\n    1     35\t0\t0.000000\n"])
def test_a_table_of_numbers_is_never_an_article(tmp_path: Path, table: str) -> None:
    """Relevance judgments (Cranfield's ``cranqrel``, CISI's ``CISI.REL``) were read as one
    article titled with their numbers."""
    assert classify(_source(tmp_path, "cranqrel", table)) == (None, MANIFEST)
    assert classify(_source(tmp_path, "story.txt", "1987\n\nA year to remember.\n"))[0] == "text"


@pytest.mark.corpus
@pytest.mark.parametrize("name, articles, data", [
    ("cisi", 1460, ["cisi/CISI.QRY", "cisi/CISI.REL"]),
    ("cranfield", 1398, ["cranfield/cran.qry", "cranfield/cranqrel"]),
])
def test_the_shared_collections_index_their_documents_only(
        corpora_dir: Path, cli_for, tmp_path: Path, name: str, articles: int,  # noqa: ANN001
        data: list[str]) -> None:
    """Cranfield's records 471 and 995 are empty in the collection itself."""
    cli = cli_for(tmp_path / "index")
    report = cli.json("index", corpora_dir / name)
    assert report["added"] == articles, report
    passed = {entry["path"] for entry in report["passed_over_files"]
              if entry["rule"] == MANIFEST}
    assert set(data) <= passed, report["passed_over_files"]
    assert report["skipped"] == [] and len(report["warnings"]) == (2 if name == "cranfield" else 0)
    hits = cli.json("search", "aerodynamics" if name == "cranfield" else "dewey")
    assert hits["total"] > 0 and all(h["title"] for h in hits["hits"])
