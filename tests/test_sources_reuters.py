"""The Reuters-21578 SGML reader."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archive.article import Article
from archive.sources import IngestError, SourceFile
from archive.sources import reuters

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
REUTERS = CORPORA / "reuters21578"
needs_corpora = pytest.mark.skipif(not CORPORA.exists(),
                                   reason="needs ../shared/corpora (CI has it)")

NORM = """<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" OLDID="5544" NEWID="1">
<DATE>26-FEB-1987 15:01:01.79</DATE>
<TOPICS><D>cocoa</D></TOPICS>
<PLACES><D>el-salvador</D><D>usa</D><D>uruguay</D></PLACES>
<PEOPLE><D>perez-de-cuellar</D></PEOPLE>
<ORGS><D>gatt</D></ORGS>
<EXCHANGES><D>nasdaq</D></EXCHANGES>
<COMPANIES></COMPANIES>
<UNKNOWN> 
&#5;&#5;&#5;C T
&#22;&#22;&#1;f0704&#31;reute
u f BC-BAHIA-COCOA-REVIEW   02-26 0105</UNKNOWN>
<TEXT>&#2;
<TITLE>BAHIA COCOA &lt;REVIEW&gt;</TITLE>
<DATELINE>    SALVADOR, Feb 26 - </DATELINE><BODY>Showers continued throughout the week in
the Bahia cocoa zone, alleviating the drought.
    The dry period means the temporao will be late &lt;BAHIA>.
 Reuter
&#3;</BODY></TEXT>
</REUTERS>
"""

BRIEF = """<REUTERS TOPICS="YES" NEWID="2">
<DATE>26-FEB-1987 15:41:56.54</DATE>
<TOPICS><D>money-supply</D></TOPICS>
<PLACES></PLACES>
<TEXT TYPE="BRIEF">&#2;
******<TITLE>ASSETS OF MONEY MARKET MUTUAL FUNDS ROSE 720.4 MLN DLRS
</TITLE>Blah blah blah.
&#3;

</TEXT>
</REUTERS>
"""

UNPROC = """<REUTERS TOPICS="NO" NEWID="3">
<DATE> 2-MAR-1987 605:12:19.12</DATE>
<TOPICS></TOPICS>
<PLACES><D>uk</D></PLACES>
<TEXT TYPE="UNPROC">&#2;
FEDERAL RESERVE WEEKLY REPORT - FEB 26
    Two weeks ended Feb 25      daily avgs-mlns
 Net free reserves.............644 vs.....1,337
 Reuter
&#3;

</TEXT>
</REUTERS>
"""


def write_sgm(path: Path, *stories: str) -> Path:
    path.write_bytes(('<!DOCTYPE lewis SYSTEM "lewis.dtd">\n' + "".join(stories))
                     .encode("latin-1"))
    return path


def read_all(path: Path) -> tuple[list[Article], SourceFile]:
    source = SourceFile(path, f"reuters/{path.name}")
    return list(reuters.read(source)), source


def test_normal_story_fields(tmp_path: Path) -> None:
    (article,), source = read_all(write_sgm(tmp_path / "reut2-000.sgm", NORM))
    assert article.title == "BAHIA COCOA <REVIEW>"
    assert article.body == ("Showers continued throughout the week in the Bahia cocoa zone, "
                            "alleviating the drought.\n\nThe dry period means the temporao will "
                            "be late <BAHIA>.")
    assert article.date == datetime(1987, 2, 26, 15, 1, 1, 790000)
    assert article.date_source == "explicit"
    assert article.topics == ("cocoa",)
    assert article.places == ("El Salvador", "USA", "Uruguay")
    assert (article.source, article.dateline) == ("Reuters", "Salvador")
    assert article.external_id == "1" and article.id == source.article_id("1")
    assert article.path == "reuters/reut2-000.sgm"
    assert article.extra["people"] == ["perez-de-cuellar"]
    assert article.extra["orgs"] == ["gatt"] and article.extra["exchanges"] == ["nasdaq"]
    assert not source.warnings


def test_brief_and_unprocessed_stories(tmp_path: Path) -> None:
    (brief, unproc), source = read_all(write_sgm(tmp_path / "r.sgm", BRIEF, UNPROC))
    assert brief.title == "ASSETS OF MONEY MARKET MUTUAL FUNDS ROSE 720.4 MLN DLRS"
    assert brief.body == "" and brief.topics == ("money-supply",)
    assert unproc.title == "FEDERAL RESERVE WEEKLY REPORT - FEB 26"
    assert unproc.body == ("Two weeks ended Feb 25 daily avgs-mlns\n\n"
                           "Net free reserves.............644 vs.....1,337")
    assert unproc.places == ("UK",)
    assert unproc.date == datetime(1987, 3, 2)  # the damaged time is dropped, the day kept
    assert [(w.line, "unreadable time" in w.reason) for w in source.warnings] == [(13, True)]


def test_damaged_stories_do_not_cost_the_rest(tmp_path: Path) -> None:
    unclosed = NORM.replace("</REUTERS>", "").replace('NEWID="1"', 'NEWID="9"')
    empty = '<REUTERS NEWID="10"><DATE>garbage</DATE></REUTERS>\n'
    nothing = "<REUTERS></REUTERS>\n"
    path = write_sgm(tmp_path / "r.sgm", unclosed, empty, nothing, BRIEF, UNPROC)
    articles, source = read_all(path)
    assert [a.external_id for a in articles] == ["9", "10", "2", "3"]
    assert articles[0].title == "BAHIA COCOA <REVIEW>"
    assert articles[1].title and articles[1].date is None
    reasons = " | ".join(w.reason for w in source.warnings)
    assert "unreadable date" in reasons and "no text" in reasons


def test_file_without_stories_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.sgm"
    path.write_text('<!DOCTYPE lewis SYSTEM "lewis.dtd">\n', encoding="latin-1")
    with pytest.raises(IngestError, match="no <REUTERS> stories"):
        read_all(path)


def test_stories_straddling_chunks(tmp_path: Path) -> None:
    stories = [NORM.replace('NEWID="1"', f'NEWID="{n}"') for n in range(1, 301)]
    articles, source = read_all(write_sgm(tmp_path / "many.sgm", *stories))
    assert [a.external_id for a in articles] == [str(n) for n in range(1, 301)]
    assert not source.warnings


@pytest.mark.corpus
@needs_corpora
def test_whole_collection() -> None:
    files = sorted(REUTERS.glob("reut2-*.sgm"))
    assert len(files) == 22
    articles: list[Article] = []
    for path in files:
        articles.extend(reuters.read(SourceFile(path, f"reuters21578/{path.name}")))
    assert len(articles) == 21578
    assert len({a.id for a in articles}) == 21578
    assert {a.external_id for a in articles} == {str(n) for n in range(1, 21579)}
    assert all(a.title and a.source == "Reuters" for a in articles)
    assert sum(1 for a in articles if a.extra["text_type"] == "BRIEF") == 1798
    assert all(not a.body for a in articles if a.extra["text_type"] == "BRIEF")
    first = articles[0]
    assert first.title == "BAHIA COCOA REVIEW"
    assert first.date is not None and first.date.date() == datetime(1987, 2, 26).date()
    assert first.topics == ("cocoa",)
    assert {"El Salvador", "USA", "Uruguay"} <= set(first.places)
    assert (first.source, first.dateline) == ("Reuters", "Salvador")
    assert not first.body.endswith("Reuter")


@st.composite
def sgm_files(draw: st.DrawFn) -> bytes:
    if draw(st.booleans()):
        return draw(st.binary(max_size=400))
    data = bytearray((NORM + BRIEF + UNPROC).encode("latin-1"))
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, len(data)))
        data[at:at + draw(st.integers(0, 40))] = draw(st.binary(max_size=6))
    return bytes(data)


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=sgm_files())
def test_fuzz_only_articles_or_ingest_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.sgm"
    path.write_bytes(data)
    try:
        articles, _ = read_all(path)
    except IngestError:
        return
    assert articles and all(isinstance(a, Article) and a.title for a in articles)
