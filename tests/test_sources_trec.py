"""TREC and LDC ``<DOC>`` files: the layout research news corpora ship in."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from archive.sources import SourceFile, format_of
from archive.sources.trec import read

DATA = Path(__file__).parent / "data" / "trec"

GIGAWORD = """\
<DOC id="AFP_ENG_20090531.0001" type="story" >
<HEADLINE>
Chile swine flu cases jump to 276
</HEADLINE>
<DATELINE>
Santiago, May 31, 2009 (AFP)
</DATELINE>
<TEXT>
<P>
Chilean health authorities confirmed 26 new cases of swine flu on Sunday,
raising the number of patients in the country to 276.
</P>
<P>
The disease continued its rise across Latin America &amp; beyond.
</P>
</TEXT>
</DOC>
<DOC id="AFP_ENG_20090531.0002" type="multi" >
<TEXT>
   A chronology of major world events
    PARIS, May 31 (AFP) - The advent of the season.
</TEXT>
</DOC>
"""

TREC_AP = """\
<DOC>
<DOCNO> AP880212-0001 </DOCNO>
<FILEID>AP-NR-02-12-88 2344EST</FILEID>
<HEAD>Reports Former Saigon Officials Released from Re-education Camp</HEAD>
<BYLINE>By JOHN SMITH</BYLINE>
<DATELINE>BANGKOK, Thailand (AP) </DATELINE>
<TEXT>
   More than 150 former officers of the overthrown South Vietnamese
government have been released from a re-education camp.
   The report said the men were freed on Friday.
</TEXT>
</DOC>
<DOC>
<DOCNO> LA010189-0001 </DOCNO>
<DATE><P>January 1, 1989, Sunday, Home Edition</P></DATE>
<HEADLINE><P>NEW YEAR'S RESOLUTIONS</P></HEADLINE>
<TEXT><P>Resolutions for the year ahead.</P></TEXT>
</DOC>
"""


def read_file(tmp_path: Path, name: str, text: str) -> list:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    source = SourceFile(path, f"news/{name}")
    assert format_of(source) == "trec"
    return list(read(source))


def test_anserinis_sample_trec_file(tmp_path: Path) -> None:
    source = SourceFile(DATA / "trec1", "trec/trec1")
    assert format_of(source) == "trec"
    articles = list(read(source))
    assert [(a.external_id, a.title, a.dateline) for a in articles] == [
        ("TREC_DOC_1", "This is head", "TOKYO (AP)"),
        ("DOC222", "HEAD", "MEXICO CITY (AP)")]
    assert articles[0].body.split() == ["very", "simple", "text"]
    assert len({a.id for a in articles}) == 2


def test_gigaword_documents_take_date_and_source_from_their_id(tmp_path: Path) -> None:
    story, multi = read_file(tmp_path, "afp_eng_200905", GIGAWORD)
    assert story.title == "Chile swine flu cases jump to 276"
    assert story.date == datetime(2009, 5, 31) and story.date_source == "explicit"
    assert story.source == "AFP" and story.dateline == "Santiago, May 31, 2009 (AFP)"
    assert story.body.split("\n\n") == [
        "Chilean health authorities confirmed 26 new cases of swine flu on Sunday, raising the "
        "number of patients in the country to 276.",
        "The disease continued its rise across Latin America & beyond."]
    assert story.extra == {"type": "story"} and multi.extra == {"type": "multi"}
    assert multi.title == "A chronology of major world events"


def test_trec_disk_documents_ap_and_la_times(tmp_path: Path) -> None:
    ap, la = read_file(tmp_path, "mixed.txt", TREC_AP)
    assert ap.date == datetime(1988, 2, 12) and ap.source == "AP"
    assert ap.author == "JOHN SMITH" and ap.dateline == "BANGKOK, Thailand (AP)"
    assert ap.body.count("\n\n") == 1  # an indented line starts a paragraph
    assert la.date == datetime(1989, 1, 1) and la.source == "Los Angeles Times"
    assert la.title == "NEW YEAR'S RESOLUTIONS" and la.body == "Resolutions for the year ahead."


def test_a_document_with_neither_headline_nor_text_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "bad"
    path.write_text("<DOC><DOCNO>X1</DOCNO></DOC>\n<DOC><DOCNO>X2</DOCNO><TEXT>Fine.</TEXT></DOC>")
    source = SourceFile(path, "news/bad")
    articles = list(read(source))
    assert [a.external_id for a in articles] == ["X2"]
    assert "X1" in str(source.warnings[0]) and "neither headline nor text" in str(source.warnings[0])
