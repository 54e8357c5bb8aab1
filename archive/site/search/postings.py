"""Article numbers and shard files.

- Articles are **numbered in date order** (oldest first, undated last, ties by id), so date
  filters and date sorts are number ranges and need no per-article dates in the browser,
  and a day's new articles take the next numbers without moving the others.
- Posting lists live in **term-hashed shard files** (CRC-32 of the term: no dictionary to
  download); a long list's tail sits in tier files (``format.make_fielded_entry``).
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING

from archive import store
from archive.search import Archive
from archive.site.files import Writes
from archive.site.search.format import FieldedEntry, script, tail_name

if TYPE_CHECKING:
    from archive.site.search.helper import OwnReader


class Numbering:
    """Article numbers in date order: oldest first, undated last, ties by article id.

    Ties go by id, not by index order, so an edited article (deleted, added again in a newer
    segment) keeps its number, and so does everything older than a day's new articles. A
    deleted copy in another segment than its article's live one keeps that number too: its
    segment's lists are not rewritten, and the browser skips it by the deletion list."""

    def __init__(self, archive: Archive | OwnReader):
        reader = archive.searcher.reader()
        total = reader.doc_count_all()
        self.number_of = array("i", [-1]) * total
        key_of: list[tuple[int, int, str] | None] = [None] * total
        segment_of = array("i", [0]) * total
        if total:  # an empty index's reader has no columns at all
            raw = reader.column_reader("date", translate=False)
            dated = reader.column_reader("dated", translate=True)
            for s, (leaf, offset) in enumerate(reader.leaf_readers()):
                if "id" not in leaf.schema:
                    continue
                for word, _info, ids, _weights in store.field_postings(leaf, "id"):
                    for d in ids.tolist():
                        docnum = offset + d
                        has_date = bool(dated[docnum])
                        key_of[docnum] = (0 if has_date else 1, raw[docnum] if has_date else 0,
                                          word.decode("utf-8"))
                        segment_of[docnum] = s
        live = sorted((key_of[d] or (1, 0, ""), d) for d in reader.all_doc_ids())
        self.docnums = array("I", (d for _, d in live))
        number_by_key: dict[tuple[int, int, str], int] = {}
        for number, (key, docnum) in enumerate(live):
            self.number_of[docnum] = number
            number_by_key[key] = number
        for docnum in range(total):
            key = key_of[docnum]
            if self.number_of[docnum] >= 0 or key is None or key not in number_by_key:
                continue
            number = number_by_key[key]
            if segment_of[self.docnums[number]] != segment_of[docnum]:
                self.number_of[docnum] = number
        self.dated = sum(1 for key, _ in live if key[0] == 0)

    def __len__(self) -> int:
        return len(self.docnums)


def write_shards(out: Writes, prefix: str, namespace: str,
                 shards: dict[int, list[FieldedEntry]]) -> int:
    """Write the given shards (empty ones too, so a lookup never misses a file) and their
    tails; the files written."""
    files = 0
    for shard, entries in shards.items():
        entries = sorted(entries, key=lambda e: e.key)
        name = f"{namespace}/{shard}"
        out.write(f"{prefix}/{name}.js", script(name, [e.shard_row() for e in entries]))
        files += 1
        for index, entry in enumerate(entries):
            for tier, (_, _, data) in enumerate(entry.tiers):
                tname = tail_name(namespace, shard, index, tier)
                out.write(f"{prefix}/{tname}.js", script(tname, data))
                files += 1
    return files
