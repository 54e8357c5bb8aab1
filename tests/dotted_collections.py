"""CISI and Cranfield, read from their native SMART-style files into JSON Lines for a test.

The archive has no reader for the ``.I``/``.T``/``.W`` format of these IR test collections (it
is not a news format), so a test that wants them in the archive converts them to JSON Lines,
the format a user would produce with a one-off script. ``bench/testcollections.py`` does the
same for the benchmarks; this copy keeps the tests independent of the benchmark package.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

_FIELD_LINE = re.compile(r"^\.([A-Z])\b ?(.*)$")


def read_dotted(path: Path) -> list[tuple[str, dict[str, str]]]:
    """``(number, {field letter: text})`` for each ``.I n`` record of ``path``, in file order.

    The files are Latin-1 with CRLF (CISI) or LF (Cranfield) line endings; a field's lines are
    stripped and joined with newlines, so an empty field is an empty string.
    """
    records: list[tuple[str, dict[str, list[str]]]] = []
    letter = ""
    for line in path.read_text("latin-1").splitlines():
        marker = _FIELD_LINE.match(line)
        if marker and marker.group(1) == "I":
            records.append((marker.group(2).strip(), {}))
            letter = ""
        elif marker and records:
            letter = marker.group(1)
            records[-1][1].setdefault(letter, [])
            if marker.group(2).strip():
                records[-1][1][letter].append(marker.group(2).strip())
        elif records and letter:
            records[-1][1][letter].append(line.strip())
    return [(number, {k: "\n".join(v).strip() for k, v in fields.items()})
            for number, fields in records]


def write_jsonl(records: list[tuple[str, dict[str, str]]], out: Path) -> Path:
    """One JSON object per record: ``id`` from ``.I``, ``title`` ``.T``, ``body`` ``.W``,
    ``author`` ``.A`` (several authors on several lines become one ``; ``-joined string)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as stream:
        for number, fields in records:
            record = {"id": number, "title": fields.get("T", ""), "body": fields.get("W", ""),
                      "author": fields.get("A", "").replace("\n", "; ")}
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    return out
