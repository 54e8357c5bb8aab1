"""The test-collection converters (bench/testcollections.py) on small inline samples of each
format: no network, no data files. The checks on the real collections skip when
``bench/data/raw/<name>/`` is absent (``python -m bench fetch-collections --from MIRROR``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import testcollections as tc
from bench.common import CORPORA, DATA


def _read(out: Path) -> tuple[list[dict], list[list[str]], list[str]]:
    docs = [json.loads(line) for line in (out / "docs.jsonl").read_text("utf-8").splitlines()]
    queries = [line.split("\t") for line in (out / "queries.tsv").read_text("utf-8").splitlines()]
    qrels = (out / "qrels.txt").read_text("utf-8").splitlines()
    return docs, queries, qrels


def _files(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, "latin-1")
    return folder


def test_adi(tmp_path: Path) -> None:
    src = _files(tmp_path / "adi", {
        "ADI.ALL": ".I 1\r\n.T\r\nthe ibm dsd technical\r\ninformation center\r\n.A\r\n"
                   "H. S. WHITE\r\n.W\r\nthe ibm data systems division\r\n.I 2\r\n.T\r\n"
                   "an evaluation\r\n.W\r\ncitation indexes\r\n",
        "ADI.QRY": ".I 1\r\n.W\r\nWhat problems are there in\r\nmaking up titles?\r\n",
        "ADI.REL": "1   17   0   0.000000   \r\n1   2   0   0.000000   \r\n"})
    stats = tc.convert_adi(src, tmp_path / "out")
    docs, queries, qrels = _read(tmp_path / "out")
    assert docs[0] == {"id": "1", "title": "the ibm dsd technical\ninformation center",
                       "body": "the ibm data systems division", "author": "H. S. WHITE"}
    assert queries == [["1", "What problems are there in making up titles?"]]
    assert qrels == ["1 0 17 1", "1 0 2 1"]
    assert stats == {"docs": 2, "queries": 1, "qrels": 2, "judged_queries": 1}


def test_cacm_strips_the_zero_padded_qids(tmp_path: Path) -> None:
    src = _files(tmp_path / "cacm", {
        "cacm.all": ".I 1\n.T\nPreliminary Report-International Algebraic Language\n.B\n"
                    "CACM December, 1958\n.A\nPerlis, A. J.\nSamelson,K.\n.N\nCA581203 JB\n"
                    ".X\n100\t5\t1\n123\t5\t1\n.I 2\n.T\nA title\n.W\nAn abstract.\n.X\n2\t5\t2\n",
        "query.text": ".I 1\n.W\n What articles deal with TSS?\n.N\n 1. Richard Alexander\n"
                      ".I 2\n.W\n Articles by Prieve\n.A\nPrieve, B.\n.N\n 2. R. A.\n",
        "qrels.text": "01 1410  0 0\n01 0002  0 0\n02 1  0 0\n"})
    tc.convert_cacm(src, tmp_path / "out")
    docs, queries, qrels = _read(tmp_path / "out")
    assert docs[0] == {"id": "1", "title": "Preliminary Report-International Algebraic Language",
                       "body": "", "author": "Perlis, A. J.; Samelson,K."}
    assert docs[1]["body"] == "An abstract."
    assert queries == [["1", "What articles deal with TSS?"], ["2", "Articles by Prieve"]]
    assert qrels == ["1 0 1410 1", "1 0 2 1", "2 0 1 1"]


LISA_DOCS = """Document    1
THE INDIAN COUNCIL OF LIBRARY AND INFORMATION SERVICES RESEARCH AND TRAINING:
A PROPOSAL FOR CONSIDERATION.

CRITICALLY EXAMINES THE INDIAN LIBRARY SCENE. THE MANAGEMENT, OPERATION, AND
SERVICES OF MOST LIBRARIES IS INEFFICIENT.
********************************************
Document    2
THE LINGERING FRAGRANCE.
     
PAPERS AND PROCEEDINGS FROM THE CONFERENCE.
********************************************
"""

# the damage of the real LISA.REL after query 21: a cut list, an orphan block, a duplicate
LISA_REL = """Query 1
2 Relevant Refs:
3392 3396 -1

Query 21
21 Relevant Refs:
434 882 1429
1 Relevant Refs:
3384 -1

Query 35
2 Relevant Refs:
738 1217 -1

Query 24
1 Relevant Refs:
2410 -1

Query 35
2 Relevant Refs:
738 1217 -1
"""


def test_lisa(tmp_path: Path) -> None:
    src = _files(tmp_path / "lisa", {
        "LISA": LISA_DOCS, "LISA.REL": LISA_REL,
        "LISA.QUE": "1\nI AM INTERESTED IN NOVEL\nCOMPUTER ARCHITECTURES. #\n"
                    "2\nNON-USERS OF LIBRARIES. #\n"})
    tc.convert_lisa(src, tmp_path / "out")
    docs, queries, qrels = _read(tmp_path / "out")
    assert docs == [
        {"id": "1", "title": "THE INDIAN COUNCIL OF LIBRARY AND INFORMATION SERVICES RESEARCH "
         "AND TRAINING:\nA PROPOSAL FOR CONSIDERATION.",
         "body": "CRITICALLY EXAMINES THE INDIAN LIBRARY SCENE. THE MANAGEMENT, OPERATION, "
                 "AND\nSERVICES OF MOST LIBRARIES IS INEFFICIENT."},
        {"id": "2", "title": "THE LINGERING FRAGRANCE.",
         "body": "PAPERS AND PROCEEDINGS FROM THE CONFERENCE."}]
    assert queries == [["1", "I AM INTERESTED IN NOVEL COMPUTER ARCHITECTURES."],
                       ["2", "NON-USERS OF LIBRARIES."]]
    # query 21 keeps its listed refs, the orphan 3384 is dropped, 35 appears once
    assert qrels == ["1 0 3392 1", "1 0 3396 1", "21 0 434 1", "21 0 882 1", "21 0 1429 1",
                     "35 0 738 1", "35 0 1217 1", "24 0 2410 1"]


def test_npl(tmp_path: Path) -> None:
    src = _files(tmp_path / "npl", {
        "doc-text": "1\ncompact memories have flexible capacities  a digital data storage\n"
                    "system is described\n   /\n2\nan electronic analogue computer\n   /\n",
        "query-text": "1\nMEASUREMENT OF DIELECTRIC CONSTANT OF LIQUIDS\n/\n2\nWAVEGUIDES\n/\n",
        "rlv-ass": "1\n 1239  1502  4462\n   2\n/\n2\n  414\n/\n"})
    tc.convert_npl(src, tmp_path / "out")
    docs, queries, qrels = _read(tmp_path / "out")
    assert docs == [{"id": "1", "title": "", "body": "compact memories have flexible capacities "
                     "a digital data storage\nsystem is described"},
                    {"id": "2", "title": "", "body": "an electronic analogue computer"}]
    assert queries == [["1", "MEASUREMENT OF DIELECTRIC CONSTANT OF LIQUIDS"],
                       ["2", "WAVEGUIDES"]]
    assert qrels == ["1 0 1239 1", "1 0 1502 1", "1 0 4462 1", "1 0 2 1", "2 0 414 1"]


CF_DOCS = """PN 74001
RN 00001 
TI Pseudomonas infection in cystic fibrosis.  Occurrence of
   precipitating antibodies.
MJ CYSTIC-FIBROSIS: co.
AB The significance of Pseudomonas infection in the
   respiratory tract.
RF Hoiby N             77     ...

PN 74002
RN 00002 
TI Amylase in saliva.
E\xe0 Salivar\xf9 amylas\xe5
   level\xf3 wer\xe5 determined.
"""
CF_QUERIES = """QN 00001 
QU What are the effects of calcium on the physical properties of mucus
   from CF patients? 
NR 00003
RD    1 1222    2 0001 1239 2
    011

QN 00002 
QU Amylase?
NR 00001
RD    2 1000
"""


def test_cf_sums_the_judges_and_reads_pairs_across_lines(tmp_path: Path) -> None:
    parts = {name: "" for name in tc.REQUIRED["cf"]}
    src = _files(tmp_path / "cf", {**parts, "cf74": CF_DOCS, "cfquery": CF_QUERIES})
    stats = tc.convert_cf(src, tmp_path / "out")
    docs, queries, qrels = _read(tmp_path / "out")
    assert docs == [{"id": "1", "title": "Pseudomonas infection in cystic fibrosis.  "
                     "Occurrence of precipitating antibodies.",
                     "body": "The significance of Pseudomonas infection in the respiratory "
                     "tract."},
                    # a damaged tag: the abstract is dropped, the title kept
                    {"id": "2", "title": "Amylase in saliva.", "body": ""}]
    assert queries == [["1", "What are the effects of calcium on the physical properties of "
                        "mucus from CF patients?"], ["2", "Amylase?"]]
    # "1239 2" then "011" on the next line: the score may wrap, pairs are read across lines
    assert qrels == ["1 0 1 7", "1 0 2 1", "1 0 1239 2", "2 0 2 1"]
    assert stats["judged_queries"] == 2


def test_scifact_joins_the_sentences_and_dedupes_the_claims(tmp_path: Path) -> None:
    import zipfile
    (tmp_path / "sf").mkdir()
    with zipfile.ZipFile(tmp_path / "sf" / "scifact.zip", "w") as z:
        z.writestr("corpus_train.csv",
                   'doc_id,title,abstract,structured\n'
                   '4983,Microstructural development.,"[\'Alterations of the brain.\'\n'
                   ' \'A line scan (MRI) was used.\' ""It\'s 3.0%.""]",False\n'
                   '5836,Induction of myelodysplasia.,[\'One sentence.\'],False\n')
        z.writestr("claims_validation.csv",
                   "id,claim,evidence_doc_id,evidence_label,evidence_sentences,cited_doc_ids\n"
                   "3,\"1,000 genomes project enables mapping.\",4983,SUPPORT,[2 5],[4983]\n"
                   "3,\"1,000 genomes project enables mapping.\",4983,SUPPORT,[7],[4983]\n"
                   "36,A deficiency of vitamin B12.,,,[],[ 5836  4983]\n")
    tc.convert_scifact(tmp_path / "sf", tmp_path / "out")
    docs, queries, qrels = _read(tmp_path / "out")
    assert docs == [{"id": "4983", "title": "Microstructural development.",
                     "body": "Alterations of the brain. A line scan (MRI) was used. It's 3.0%."},
                    {"id": "5836", "title": "Induction of myelodysplasia.",
                     "body": "One sentence."}]
    assert queries == [["3", "1,000 genomes project enables mapping."],
                       ["36", "A deficiency of vitamin B12."]]
    assert qrels == ["3 0 4983 1", "36 0 4983 1", "36 0 5836 1"]


def _story(newid: int, split: str, topics: list[str], topics_yes: str = "YES") -> str:
    labels = "".join(f"<D>{t}</D>" for t in topics)
    return (f'<REUTERS TOPICS="{topics_yes}" LEWISSPLIT="{split}" CGISPLIT="X" OLDID="1" '
            f'NEWID="{newid}">\n<DATE>26-FEB-1987 15:01:01.79</DATE>\n'
            f"<TOPICS>{labels}</TOPICS>\n<PLACES></PLACES>\n<TEXT>&#2;\n"
            f"<TITLE>STORY &amp; {newid}</TITLE>\n<DATELINE> X - </DATELINE>"
            f"<BODY>Body of {newid}.\n Reuter\n&#3;</BODY></TEXT>\n</REUTERS>\n")


def test_reuters_topics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tc, "MIN_STORIES", 2)
    monkeypatch.setattr(tc, "MAX_STORIES", 3)
    stories = [_story(1, "TEST", ["money-fx", "castor-oil"]), _story(2, "TEST", ["money-fx"]),
               _story(3, "TRAIN", ["money-fx"]), _story(4, "TEST", ["castor-oil", "earn"]),
               _story(5, "TEST", ["earn"]), _story(6, "TEST", ["earn"]),
               _story(7, "TEST", ["earn"]), _story(8, "TEST", [], "NO"),
               _story(9, "TEST", ["zinc"])]
    src = _files(tmp_path / "reuters21578", {
        "reut2-000.sgm": '<!DOCTYPE lewis SYSTEM "lewis.dtd">\n' + "".join(stories),
        "cat-descriptions_120396.txt":
            "intro (NOT-A-TOPIC)\n****Subject Codes (135)\n\nMoney/Foreign Exchange (MONEY-FX)\n"
            "**Commodity Codes (78)\n\nCASTOR-OIL\nZINC\n__________\n"
            "@heading[Organization Codes (56)]\nAfrican Development Bank (ADB-AFRICA)@*\n"})
    stats = tc.convert_reuters(src, tmp_path / "out")
    docs, queries, qrels = _read(tmp_path / "out")
    # the ModApte test split with TOPICS="YES" only: not 3 (TRAIN) nor 8 (TOPICS="NO")
    assert [d["id"] for d in docs] == ["1", "2", "4", "5", "6", "7", "9"]
    assert docs[0] == {"id": "1", "title": "STORY & 1", "body": "Body of 1.\n Reuter"}
    # earn (4 stories) is above the maximum, zinc (1) below the minimum
    assert queries == [["castor-oil", "castor oil"], ["money-fx", "Money/Foreign Exchange"]]
    assert qrels == ["castor-oil 0 1 1", "castor-oil 0 4 1", "money-fx 0 1 1",
                     "money-fx 0 2 1"]
    assert stats["judged_queries"] == 2


def test_missing_names_the_absent_file(tmp_path: Path) -> None:
    reason = tc.missing(tmp_path / "corpora", tmp_path / "data", "lisa")
    assert reason is not None and "raw/lisa/LISA absent" in reason
    assert "fetch-collections" in reason
    assert tc.convert(tmp_path / "corpora", tmp_path / "data", ("lisa", "npl")) == {}


def test_fetch_collections_reads_the_recorded_commit(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    repo = tmp_path / "mirror" / "someone+adi-copy" / "repo"
    (repo / "adi").mkdir(parents=True)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for name in ("ADI.ALL", "ADI.QRY", "ADI.REL"):
        (repo / "adi" / name).write_text(f"{name} v1\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "v1"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    (repo / "adi" / "ADI.ALL").write_text("changed later\n")
    subprocess.run([*git, "commit", "-qam", "v2"], check=True)
    sources = {"adi": ("someone/adi-copy", commit, {f"adi/{n}": n
                                                    for n in ("ADI.ALL", "ADI.QRY", "ADI.REL")})}
    monkeypatch.setattr(tc, "SOURCES", sources)
    done = tc.fetch_collections(tmp_path / "mirror", tmp_path / "data", ("adi",))
    assert done["adi"]["commit"] == commit
    assert (tmp_path / "data" / "raw" / "adi" / "ADI.ALL").read_text() == "ADI.ALL v1\n"


# -- the real collections, when their raw files are there ------------------------------------

REAL = {"adi": (82, 35, 35), "cacm": (3204, 64, 52), "lisa": (6004, 35, 33),
        "npl": (11429, 93, 93), "cf": (1239, 100, 100), "scifact": (5183, 300, 300)}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_collection(name: str, tmp_path: Path) -> None:
    reason = tc.missing(CORPORA, DATA, name)
    if reason:
        pytest.skip(reason)
    stats = tc.CONVERTERS[name](tc.source(CORPORA, DATA, name), tmp_path / name)
    assert (stats["docs"], stats["queries"], stats["judged_queries"]) == REAL[name]
    ids = {json.loads(line)["id"]
           for line in (tmp_path / name / "docs.jsonl").read_text("utf-8").splitlines()}
    judged = {line.split()[2]
              for line in (tmp_path / name / "qrels.txt").read_text("utf-8").splitlines()}
    assert judged <= ids  # every judged doc id names a document


def test_real_reuters_topics(tmp_path: Path) -> None:
    reason = tc.missing(CORPORA, DATA, "reuters")
    if reason:
        pytest.skip(reason)
    stats = tc.convert_reuters(tc.source(CORPORA, DATA, "reuters"), tmp_path / "r")
    assert stats["docs"] == 3299  # the ModApte test split
    queries = dict(line.split("\t") for line in
                   (tmp_path / "r" / "queries.tsv").read_text("utf-8").splitlines())
    assert queries["money-fx"] == "Money/Foreign Exchange" and "earn" not in queries
