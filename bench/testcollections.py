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
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

COLLECTIONS = ("cisi", "cranfield")
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


CONVERTERS = {"cisi": convert_cisi, "cranfield": convert_cranfield}


def convert(corpora: Path, data: Path, names: tuple[str, ...] = COLLECTIONS
            ) -> dict[str, dict[str, int]]:
    return {name: CONVERTERS[name](corpora / name, data / name) for name in names}


def paths(data: Path, name: str) -> tuple[Path, Path, Path]:
    """(docs.jsonl, queries.tsv, qrels.txt) of a converted collection."""
    folder = data / name
    return folder / "docs.jsonl", folder / "queries.tsv", folder / "qrels.txt"
