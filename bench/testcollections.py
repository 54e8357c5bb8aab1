"""Convert the CISI and Cranfield test collections to JSON Lines + queries TSV + TREC qrels.

Output per collection in ``bench/data/<name>/``: ``docs.jsonl`` (one record per document:
``id`` = the document number from ``.I``, ``title`` from ``.T``, ``body`` from ``.W``,
``author`` from ``.A``), ``queries.tsv`` (``qid<TAB>text``, text from ``.W``) and ``qrels.txt``
(``qid 0 docid grade``).

Id quirks (see each collection's PROVENANCE.md):

* CISI: query ids are the ``.I`` numbers (1..112, consecutive); CISI.REL lines are
  ``qid docid 0 0.000000``: every listed pair is relevant (grade 1). Only 76 queries are judged.
* Cranfield: ``cran.qry`` numbers its queries 001..365 with gaps, but ``cranqrel`` numbers them
  1..225 by position in the file, so the qid written here is the position. ``cranqrel`` grades
  are Cleverdon's 1 (complete answer) .. 4 (minimum interest): written as grade 5 - rel (4..1)
  so that higher is better for nDCG; its one ``-1`` line per query is written as grade 0
  (judged, not relevant).

The other collections are read from ``bench/data/raw/<name>/`` (git-ignored; ``python -m bench
fetch-collections --from /work/.mirror`` re-creates it, see ``SOURCES``) and Reuters-21578 from
the shared corpora. Provenance (repository, path, commit; licence where the repository states
one -- the collections themselves carry no licence file, they are the classic Glasgow/SMART
distributions copied into these repositories):

* ADI (82 docs, 35 queries): lailaglez/belief-network-irs @ 9094e4cde738bd93ed1747dc958b5acb0e0fa684,
  ``adi/ADI.ALL``, ``adi/ADI.QRY``, ``adi/ADI.REL`` (repository licence: MIT, for its code).
  Same format as CISI (``.I/.T/.A/.W``, CRLF line ends); REL lines ``qid docid 0 0.000000``,
  grade 1.
* CACM (3,204 docs, 64 queries): charlesdlrsa/moteur_recherche_fri @
  2c6c0d9860eb3ff230fedce9a66eeeed4d751e4a, ``cacm/cacm.all``, ``cacm/query.text``,
  ``cacm/qrels.text`` (no licence stated). Docs ``.T`` title, ``.W`` abstract (many of the
  docs have none: title only), ``.A`` authors; ``.B/.N/.X/.K/.C`` dropped. Queries: ``.W``
  only (``.A/.N`` are the requester's names). qrels ``01 1410 0 0``: the qid is zero-padded
  (``01``) while query.text says ``.I 1``, so qids are written without leading zeros; grade
  1. 52 of the 64 queries are judged.
* LISA (6,004 docs, 35 queries): Mounir-charef/ri-indexer @
  0021c16f7327576b7c27710a36d14cefff32dda6, ``lisa/collection/LISA`` (the Glasgow files
  LISA0.001..LISA5.850 concatenated), ``lisa/LISA.QUE``, ``lisa/LISA.REL`` (no licence
  stated). Records ``Document N``, the title up to the first blank line, then the abstract,
  ended by a line of asterisks; in 3,500 of the records that "blank" line holds spaces, and
  is taken as blank (read as text, it made the whole abstract part of the title). Queries ``N`` then text ending in `` #``. REL blocks
  ``Query N`` / ``k Relevant Refs:`` / ids ending in ``-1``. Quirk: the REL file is damaged
  after query 21 (21 refs announced, 15 listed, then an orphan ``1 Relevant Refs: 3384`` with
  no ``Query`` line, then a second copy of query 35 where 22/23 should be): query 21 keeps
  its 15 listed refs, the orphan block is dropped (its query is unknown), the duplicate of 35
  is merged; queries 22 and 23 are therefore unjudged (33 judged).
* NPL / Vaswani (11,429 docs, 93 queries): eferos93/LatentSemanticIndexing_IRProject @
  8b85e649541cef4ebb4b76b8ba459460a6457ca9, ``data/npl/doc-text``, ``data/npl/query-text``,
  ``data/npl/rlv-ass`` (repository licence: MIT, for its code). Records: the number on its own
  line, the text, then a line ``/`` (documents are lower case, without titles: ``title`` is
  empty, ``body`` is the text). rlv-ass: ``qid`` then the relevant doc ids, ``/``; grade 1.
* Reuters-21578 topics (``reuters``, from ``/work/shared/corpora/reuters21578``): docs are the
  ModApte *test* split (``LEWISSPLIT="TEST" TOPICS="YES"``: 3,299 stories; title + body);
  one query per TOPICS category with 5..300 test stories, the query text being the
  category's description in ``cat-descriptions_120396.txt`` (``Money/Foreign Exchange`` for
  ``money-fx``) or, for a bare commodity code, the code itself with ``-`` as a space
  (``castor-oil`` -> ``castor oil``); relevant (grade 1) = the test stories labelled with it.
  Why the test split: ``TOPICS="YES"`` marks stories the indexers did assign categories to,
  so an unlabelled story there is a judged non-relevant one (stories outside it were never
  categorised), and ModApte's test split is the standard one for these labels; it also keeps
  the run short. Doc ids are the stories' ``NEWID``.

Two more collections are only measured on (``CHECKS``): no lever, parameter or analyzer is
picked with them (``python -m bench relevance`` scores them; the lever selection leaves them out
and reports the setting in use beside its pick there). They were fetched on 2026-12-07, after
every setting above had been chosen:

* CF, Cystic Fibrosis (Shaw, Wood, Wood and Tibbo 1991; 1,239 docs, 100 queries, all judged):
  brse01/information-retrieval @ 80f3552231f437e367c39c6d7ab930a361703417, ``cfc/cf74`` ..
  ``cfc/cf79``, ``cfc/cfquery`` (no licence stated; the files carry the distribution's 1989
  copyright note). Tagged records (``RN`` record number, ``TI`` title, ``AB`` abstract or, in
  454 records, ``EX`` extract; continuation lines indented); ``RN``/``QN`` zero-padded with a
  trailing space, written without the zeros. Judgments (``RD``) are pairs of doc number and a
  four-digit score, one digit (0-2) per judge; the grade written is their sum (1-8), every
  listed pair relevant. The pairs wrap across lines and a four-digit doc number can touch the
  score before it, so the block is split on whitespace and read in pairs. Record 124 of
  ``cf74`` has a damaged abstract tag (high bits set in the distribution itself): its
  abstract is left out, its title kept.
* SciFact (Wadden et al. 2020; 5,183 abstracts, 300 claims): sumithra-p-v/claimverifier @
  b42f1c3444b28884ddcfadffafbfe223646c6c37, ``data/scifact.zip`` (the allenai CSV export; no
  licence stated in the repository). Docs from ``corpus_train.csv`` (``doc_id``, ``title``,
  ``abstract`` a printed list of quoted sentences, joined with spaces); queries the distinct
  claims of ``claims_validation.csv`` (BEIR's test split: a row per evidence set, so claims
  repeat), relevant (grade 1) the ``cited_doc_ids`` of each (339 pairs).
"""

from __future__ import annotations

import ast
import csv
import html
import io
import json
import re
import subprocess
import zipfile
from pathlib import Path
from typing import Any

COLLECTIONS = ("cisi", "cranfield", "adi", "cacm", "lisa", "npl", "reuters")
CHECKS = ("cf", "scifact")
"""Collections only measured on, never picked with (see the module docstring)."""
SHARED = {"cisi": "cisi", "cranfield": "cranfield", "reuters": "reuters21578"}
"""Collections read from the shared corpora folder (name -> folder); the rest from raw."""
MIN_STORIES, MAX_STORIES = 5, 300
"""Reuters topics used as queries: those with this many ModApte test stories."""
_FIELD = re.compile(r"^\.([A-Z])\b ?(.*)$")


def parse_dotted(text: str) -> list[tuple[str, dict[str, str]]]:
    """SMART-style records (``.I n`` then ``.X`` field markers) -> [(number, {letter: text})]."""
    records: list[tuple[str, dict[str, str]]] = []
    current: dict[str, list[str]] | None = None
    letter = ""
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        m = _FIELD.match(raw)
        if m and m.group(1) == "I":
            current = {}
            records.append((m.group(2).strip(), current))  # type: ignore[arg-type]
            letter = ""
            continue
        if m and current is not None:
            letter = m.group(1)
            current.setdefault(letter, [])
            if m.group(2).strip():
                current[letter].append(m.group(2))
            continue
        if current is not None and letter:
            current[letter].append(raw)
    return [(number, {k: _clean(v) for k, v in fields.items()})  # type: ignore[misc]
            for number, fields in records]


def _clean(lines: list[str]) -> str:
    return re.sub(r"[ \t]+", " ", "\n".join(line.strip() for line in lines)).strip()


def _doc_record(number: str, fields: dict[str, str]) -> dict[str, Any]:
    record: dict[str, Any] = {"id": number, "title": fields.get("T", ""),
                              "body": fields.get("W", "")}
    if fields.get("A"):
        record["author"] = fields["A"].replace("\n", "; ")
    return record


def _write(out: Path, docs: list[dict[str, Any]], queries: list[tuple[str, str]],
           qrels: list[tuple[str, str, int]]) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "docs.jsonl", "w", encoding="utf-8") as f:
        for doc in docs:
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    with open(out / "queries.tsv", "w", encoding="utf-8") as f:
        for qid, text in queries:
            f.write(f"{qid}\t{' '.join(text.split())}\n")
    with open(out / "qrels.txt", "w", encoding="utf-8") as f:
        for qid, docid, grade in qrels:
            f.write(f"{qid} 0 {docid} {grade}\n")
    return {"docs": len(docs), "queries": len(queries), "qrels": len(qrels),
            "judged_queries": len({q for q, _, g in qrels if g > 0})}


def convert_cisi(src: Path, out: Path) -> dict[str, int]:
    read = lambda name: (src / name).read_text("latin-1")  # noqa: E731
    docs = [_doc_record(n, f) for n, f in parse_dotted(read("CISI.ALL"))]
    queries = [(n, f.get("W", "")) for n, f in parse_dotted(read("CISI.QRY"))]
    qrels: dict[tuple[str, str], int] = {}
    for line in read("CISI.REL").splitlines():
        parts = line.split()
        if len(parts) >= 2:
            qrels[(parts[0], parts[1])] = 1
    return _write(out, docs, queries, [(q, d, g) for (q, d), g in qrels.items()])


def convert_cranfield(src: Path, out: Path) -> dict[str, int]:
    read = lambda name: (src / name).read_text("latin-1")  # noqa: E731
    docs = [_doc_record(n, f) for n, f in parse_dotted(read("cran.all.1400"))]
    queries = [(str(position), f.get("W", ""))
               for position, (_, f) in enumerate(parse_dotted(read("cran.qry")), 1)]
    qrels: dict[tuple[str, str], int] = {}
    for line in read("cranqrel").splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        rel = int(parts[2])
        grade = 5 - rel if 1 <= rel <= 4 else 0
        key = (parts[0], parts[1])
        qrels[key] = max(grade, qrels.get(key, 0))
    return _write(out, docs, queries, [(q, d, g) for (q, d), g in qrels.items()])


def _binary_qrels(pairs: list[tuple[str, str]]) -> list[tuple[str, str, int]]:
    return [(q, d, 1) for q, d in dict.fromkeys(pairs)]


def convert_adi(src: Path, out: Path) -> dict[str, int]:
    read = lambda name: (src / name).read_text("latin-1")  # noqa: E731
    docs = [_doc_record(n, f) for n, f in parse_dotted(read("ADI.ALL"))]
    queries = [(n, f.get("W", "")) for n, f in parse_dotted(read("ADI.QRY"))]
    pairs = [(p[0], p[1]) for p in (line.split() for line in read("ADI.REL").splitlines())
             if len(p) >= 2]
    return _write(out, docs, queries, _binary_qrels(pairs))


def convert_cacm(src: Path, out: Path) -> dict[str, int]:
    read = lambda name: (src / name).read_text("latin-1")  # noqa: E731
    docs = [_doc_record(n, f) for n, f in parse_dotted(read("cacm.all"))]
    queries = [(n, f.get("W", "")) for n, f in parse_dotted(read("query.text"))]
    pairs = [(str(int(p[0])), str(int(p[1])))
             for p in (line.split() for line in read("qrels.text").splitlines()) if len(p) >= 2]
    return _write(out, docs, queries, _binary_qrels(pairs))


_LISA_DOC = re.compile(r"^Document\s+(\d+)\s*$")


def parse_lisa_docs(text: str) -> list[dict[str, Any]]:
    """``Document N``, title lines up to a blank line, abstract, a line of asterisks."""
    docs: list[dict[str, Any]] = []
    for chunk in re.split(r"(?m)^\*{10,}\s*$", text.replace("\r\n", "\n")):
        lines = chunk.strip("\n").split("\n")
        while lines and not lines[0].strip():
            lines.pop(0)
        if not lines or not (m := _LISA_DOC.match(lines[0])):
            continue
        rest = "\n".join(lines[1:]).strip("\n")
        # the separating line is often not empty but spaces (3,500 of the 6,004 documents)
        title, _, body = re.sub(r"\n[ \t]+\n", "\n\n", rest).partition("\n\n")
        docs.append({"id": m.group(1), "title": _clean(title.split("\n")),
                     "body": _clean(body.split("\n"))})
    return docs


def parse_lisa_queries(text: str) -> list[tuple[str, str]]:
    """``N`` on its own line, then the text up to `` #``."""
    queries: list[tuple[str, str]] = []
    for block in text.replace("\r\n", "\n").split("#"):
        lines = [line for line in block.split("\n") if line.strip()]
        if lines and lines[0].strip().isdigit():
            queries.append((lines[0].strip(), " ".join(line.strip() for line in lines[1:])))
    return queries


def parse_lisa_rel(text: str) -> list[tuple[str, str]]:
    """``Query N`` / ``k Relevant Refs:`` / ids ... ``-1``. A ``Relevant Refs`` header that
    does not follow a ``Query`` line starts an orphan block (LISA.REL's damage after query
    21): its ids are dropped, since their query is unknown."""
    pairs: list[tuple[str, str]] = []
    qid: str | None = None
    after_query = False
    for line in text.replace("\r\n", "\n").split("\n"):
        words = line.split()
        if not words:
            continue
        if words[0] == "Query" and len(words) > 1:
            qid, after_query = words[1], True
            continue
        if "Refs:" in words:
            if not after_query:
                qid = None
            after_query = False
            continue
        after_query = False
        for word in words:
            if word == "-1":
                qid = None
            elif qid is not None and word.isdigit():
                pairs.append((qid, word))
    return pairs


def convert_lisa(src: Path, out: Path) -> dict[str, int]:
    read = lambda name: (src / name).read_text("latin-1")  # noqa: E731
    docs = parse_lisa_docs(read("LISA"))
    queries = parse_lisa_queries(read("LISA.QUE"))
    return _write(out, docs, queries, _binary_qrels(parse_lisa_rel(read("LISA.REL"))))


def parse_slashed(text: str) -> list[tuple[str, str]]:
    """NPL's ``N`` line, text lines, ``/`` line records -> [(N, text)]."""
    records: list[tuple[str, str]] = []
    for block in re.split(r"(?m)^\s*/\s*$", text.replace("\r\n", "\n")):
        lines = [line for line in block.split("\n") if line.strip()]
        if lines and lines[0].strip().isdigit():
            records.append((lines[0].strip(), _clean(lines[1:])))
    return records


def convert_npl(src: Path, out: Path) -> dict[str, int]:
    read = lambda name: (src / name).read_text("latin-1")  # noqa: E731
    docs = [{"id": n, "title": "", "body": text} for n, text in parse_slashed(read("doc-text"))]
    queries = parse_slashed(read("query-text"))
    pairs = [(q, d) for q, ids in parse_slashed(read("rlv-ass")) for d in ids.split()]
    return _write(out, docs, queries, _binary_qrels(pairs))


_STORY = re.compile(r"<REUTERS([^>]*)>(.*?)</REUTERS>", re.S)


def _attr(attrs: str, name: str) -> str:
    m = re.search(rf'{name}="([^"]*)"', attrs)
    return m.group(1) if m else ""


def _tag(text: str, name: str) -> str:
    m = re.search(rf"<{name}>(.*?)</{name}>", text, re.S)
    return html.unescape(m.group(1)).replace("\x03", "").strip() if m else ""


def topic_descriptions(text: str) -> dict[str, str]:
    """``cat-descriptions_120396.txt``'s TOPICS list: ``Description (CODE)`` -> {code:
    description}; a bare commodity code -> {code: the code, ``-`` as a space}."""
    out: dict[str, str] = {}
    inside = False
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("****Subject Codes"):
            inside = True
            continue
        if inside and line.startswith("____"):
            break
        if not inside or not line or line.startswith("*"):
            continue
        m = re.match(r"^(.*?)\s*\(([A-Z0-9-]+)\)$", line)
        if m:
            out[m.group(2).lower()] = m.group(1)
        elif re.fullmatch(r"[A-Z0-9-]+", line):
            out[line.lower()] = line.lower().replace("-", " ")
    return out


def convert_reuters(src: Path, out: Path) -> dict[str, int]:
    docs: list[dict[str, Any]] = []
    labelled: dict[str, list[str]] = {}
    for sgm in sorted(src.glob("reut2-*.sgm")):
        for attrs, body in _STORY.findall(sgm.read_text("latin-1")):
            if _attr(attrs, "LEWISSPLIT") != "TEST" or _attr(attrs, "TOPICS") != "YES":
                continue
            newid = _attr(attrs, "NEWID")
            docs.append({"id": newid, "title": _tag(body, "TITLE"), "body": _tag(body, "BODY")})
            for topic in re.findall(r"<D>(.*?)</D>", _tag(body, "TOPICS")):
                labelled.setdefault(topic, []).append(newid)
    path = src / "cat-descriptions_120396.txt"
    described = topic_descriptions(path.read_text("latin-1")) if path.is_file() else {}
    kept = sorted(t for t, ids in labelled.items() if MIN_STORIES <= len(ids) <= MAX_STORIES)
    queries = [(t, described.get(t, t.replace("-", " "))) for t in kept]
    return _write(out, docs, queries, [(t, d, 1) for t in kept for d in labelled[t]])


_TAGGED = re.compile(r"^([A-Z][A-Z]) (.*)$")


def parse_tagged(text: str, first: str) -> list[dict[str, list[str]]]:
    """CF's records: a line ``XX text`` opens field XX, indented lines continue it, the tag
    ``first`` opens a record. A line that is neither (a damaged tag) ends the field before it
    and its text is dropped."""
    records: list[dict[str, list[str]]] = []
    field: list[str] | None = None
    for line in text.splitlines():
        m = _TAGGED.match(line)
        if m and m.group(1) == first:
            records.append({})
        if not records:
            continue
        if m:
            field = records[-1].setdefault(m.group(1), [])
            field.append(m.group(2).strip())
        elif line.startswith(" ") and field is not None:
            field.append(line.strip())
        elif line.strip():
            field = None
    return records


def convert_cf(src: Path, out: Path) -> dict[str, int]:
    docs = []
    for part in REQUIRED["cf"][:-1]:
        for r in parse_tagged((src / part).read_text("latin-1"), "PN"):
            docs.append({"id": str(int(r["RN"][0].split()[0])),
                         "title": " ".join(r.get("TI", [])),
                         "body": " ".join(r.get("AB", r.get("EX", [])))})
    queries, qrels = [], []
    for r in parse_tagged((src / "cfquery").read_text("latin-1"), "QN"):
        qid = str(int(r["QN"][0].split()[0]))
        queries.append((qid, " ".join(r["QU"])))
        pairs = " ".join(r.get("RD", [])).split()
        qrels += [(qid, str(int(doc)), sum(int(judge) for judge in score))
                  for doc, score in zip(pairs[::2], pairs[1::2])]
    return _write(out, docs, queries, qrels)


_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def convert_scifact(src: Path, out: Path) -> dict[str, int]:
    csv.field_size_limit(1 << 30)
    with zipfile.ZipFile(src / "scifact.zip") as z:
        with z.open("corpus_train.csv") as f:
            docs = [{"id": row["doc_id"], "title": row["title"],
                     "body": " ".join(ast.literal_eval(m.group(0))
                                      for m in _QUOTED.finditer(row["abstract"]))}
                    for row in csv.DictReader(io.TextIOWrapper(f, "utf-8"))]
        with z.open("claims_validation.csv") as f:
            claims = list(csv.DictReader(io.TextIOWrapper(f, "utf-8")))
    queries = list({row["id"]: row["claim"] for row in claims}.items())
    qrels = sorted({(row["id"], doc, 1) for row in claims
                    for doc in row["cited_doc_ids"].strip("[]").split()},
                   key=lambda t: (int(t[0]), int(t[1])))
    return _write(out, docs, queries, qrels)


CONVERTERS = {"cisi": convert_cisi, "cranfield": convert_cranfield, "adi": convert_adi,
              "cacm": convert_cacm, "lisa": convert_lisa, "npl": convert_npl,
              "reuters": convert_reuters, "cf": convert_cf, "scifact": convert_scifact}
REQUIRED = {"cisi": ("CISI.ALL", "CISI.QRY", "CISI.REL"),
            "cranfield": ("cran.all.1400", "cran.qry", "cranqrel"),
            "adi": ("ADI.ALL", "ADI.QRY", "ADI.REL"),
            "cacm": ("cacm.all", "query.text", "qrels.text"),
            "lisa": ("LISA", "LISA.QUE", "LISA.REL"),
            "npl": ("doc-text", "query-text", "rlv-ass"),
            "reuters": ("reut2-000.sgm",),
            "cf": ("cf74", "cf75", "cf76", "cf77", "cf78", "cf79", "cfquery"),
            "scifact": ("scifact.zip",)}

# name -> (repository, commit, {path in the repository: file name in bench/data/raw/<name>/})
SOURCES: dict[str, tuple[str, str, dict[str, str]]] = {
    "adi": ("lailaglez/belief-network-irs", "9094e4cde738bd93ed1747dc958b5acb0e0fa684",
            {"adi/ADI.ALL": "ADI.ALL", "adi/ADI.QRY": "ADI.QRY", "adi/ADI.REL": "ADI.REL"}),
    "cacm": ("charlesdlrsa/moteur_recherche_fri", "2c6c0d9860eb3ff230fedce9a66eeeed4d751e4a",
             {"cacm/cacm.all": "cacm.all", "cacm/query.text": "query.text",
              "cacm/qrels.text": "qrels.text", "cacm/README": "README"}),
    "lisa": ("Mounir-charef/ri-indexer", "0021c16f7327576b7c27710a36d14cefff32dda6",
             {"lisa/collection/LISA": "LISA", "lisa/LISA.QUE": "LISA.QUE",
              "lisa/LISA.REL": "LISA.REL"}),
    "npl": ("eferos93/LatentSemanticIndexing_IRProject",
            "8b85e649541cef4ebb4b76b8ba459460a6457ca9",
            {"data/npl/doc-text": "doc-text", "data/npl/query-text": "query-text",
             "data/npl/rlv-ass": "rlv-ass"}),
    "cf": ("brse01/information-retrieval", "80f3552231f437e367c39c6d7ab930a361703417",
           {f"cfc/{name}": name for name in ("cf74", "cf75", "cf76", "cf77", "cf78", "cf79",
                                              "cfquery", "README", "copyright")}),
    "scifact": ("sumithra-p-v/claimverifier", "b42f1c3444b28884ddcfadffafbfe223646c6c37",
                {"data/scifact.zip": "scifact.zip"}),
}


def source(corpora: Path, data: Path, name: str) -> Path:
    """Where a collection's input files are: the shared corpora or ``<data>/raw/<name>``."""
    return corpora / SHARED[name] if name in SHARED else data / "raw" / name


def missing(corpora: Path, data: Path, name: str) -> str | None:
    """Why a collection cannot be converted (one line), or None when its inputs are there."""
    folder = source(corpora, data, name)
    absent = [f for f in REQUIRED[name] if not (folder / f).is_file()]
    if not absent:
        return None
    hint = (" (python -m bench fetch-collections --from /work/.mirror)"
            if name in SOURCES else "")
    return f"{folder}/{absent[0]} absent{hint}"


def empty(data: Path, name: str) -> str | None:
    """Why a converted collection cannot be scored (no documents or no judged query), or None."""
    docs, queries, qrels = paths(data, name)
    if not docs.stat().st_size:
        return f"{docs} holds no documents"
    if not any(line.split()[-1] != "0" for line in qrels.read_text("utf-8").splitlines()
               if line.strip()):
        return f"{qrels} judges no document relevant"
    return None


def convert(corpora: Path, data: Path, names: tuple[str, ...] = COLLECTIONS + CHECKS
            ) -> dict[str, dict[str, int]]:
    """Convert each named collection whose inputs are present; absent ones are left out."""
    return {name: CONVERTERS[name](source(corpora, data, name), data / name)
            for name in names if missing(corpora, data, name) is None}


def _git_dir(mirror: Path, repo: str) -> Path:
    owner, name = repo.split("/")
    for candidate in (mirror / f"{owner}+{name}" / "repo", mirror / f"{owner}+{name}",
                      mirror / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"no copy of {repo} under {mirror} (fetch or git clone it there)")


def fetch_collections(mirror: Path, data: Path, names: tuple[str, ...] = tuple(SOURCES)
                      ) -> dict[str, dict[str, Any]]:
    """Write ``<data>/raw/<name>/`` from local git copies of the source repositories, each
    file read at the recorded commit (``git show COMMIT:PATH``)."""
    done: dict[str, dict[str, Any]] = {}
    for name in names:
        repo, commit, files = SOURCES[name]
        git = _git_dir(mirror, repo)
        out = data / "raw" / name
        out.mkdir(parents=True, exist_ok=True)
        size = 0
        for path, target in files.items():
            blob = subprocess.run(["git", "-C", str(git), "show", f"{commit}:{path}"],
                                  capture_output=True, check=True).stdout
            (out / target).write_bytes(blob)
            size += len(blob)
        done[name] = {"repository": repo, "commit": commit, "files": len(files), "bytes": size}
    return done


def paths(data: Path, name: str) -> tuple[Path, Path, Path]:
    """(docs.jsonl, queries.tsv, qrels.txt) of a converted collection."""
    folder = data / name
    return folder / "docs.jsonl", folder / "queries.tsv", folder / "qrels.txt"
