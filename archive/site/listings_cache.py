"""What a site build remembers of every article's ``Listed`` record, so the next one reads
only the documents new since.

A build needs every live article's record (its digests tell which pages changed), and
reading them means reading every stored document. A Whoosh segment's stored fields never
change, so a record read from a document is kept under the document's key (segment id and
number in it: ``Archive.document_keys``) and is good for as long as that document is live.
"""

from __future__ import annotations

import json
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import Any

from archive import __version__
from archive.search import Listed

LISTINGS_CACHE = ".archive-listings.json"
#: the layout of a row: another one (or another version's digests) is not read
FORMAT = 1
_NAMES = [f.name for f in fields(Listed)]
_DATE = _NAMES.index("date")


def _header() -> list[Any]:
    return [__version__, FORMAT, _NAMES]


def read(root: Path) -> dict[str, Listed]:
    """The records the last build into ``root`` left, by document key (none when it left
    none, or another layout)."""
    try:
        cache = json.loads((root / LISTINGS_CACHE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    rows = cache.get("rows") if isinstance(cache, dict) and \
        cache.get("header") == _header() else None
    if not isinstance(rows, dict):
        return {}
    found = {}
    for key, row in rows.items():
        try:
            if row[_DATE] is not None:
                row[_DATE] = datetime.fromisoformat(row[_DATE])
            found[key] = Listed(*row)
        except (TypeError, ValueError):
            continue  # a damaged row: that document is read again
    return found


def remember(root: Path, keys: dict[int, str], listings: dict[int, Listed]) -> None:
    """Write the records of the live documents for the next build's ``read``. A record whose
    date would not come back as the same value (anything but a datetime) is left out, and
    read again next time."""
    rows = {}
    for docnum, listed in listings.items():
        row = [getattr(listed, name) for name in _NAMES]
        if isinstance(row[_DATE], datetime):
            row[_DATE] = row[_DATE].isoformat()
        elif row[_DATE] is not None:
            continue
        rows[keys[docnum]] = row
    temp = root / (LISTINGS_CACHE + ".tmp")
    temp.write_text(json.dumps({"header": _header(), "rows": rows}), "utf-8")
    temp.replace(root / LISTINGS_CACHE)
