"""Article numbers and shard files.

- Articles are **numbered in date order** (oldest first, undated last, ties by id), so date
  filters and date sorts are number ranges and need no per-article dates in the browser,
  and a day's new articles take the next numbers without moving the others.
- Posting lists live in **term-hashed shard files** (CRC-32 of the term: no dictionary to
  download); a long list's tail sits in tier files (``format.make_fielded_entry``), and a
  very long list is kept again in number blocks (``format.number_blocks``).
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING

import numpy as np

from archive import store
from archive.search import Archive
from archive.site.files import Writes
from archive.site.search.format import FieldedEntry, block_name, script, tail_name

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
        # the sort key per document number, in arrays (a tuple per article left the heap
        # of both bundle processes hundreds of MB larger at a million articles): undated
        # (0 or 1), Whoosh's sortable date value (0 when undated), the id as UTF-8 (whose
        # byte order is the id's character order), and whether the document has an id
        undated = np.ones(total, dtype=np.int8)
        when = np.zeros(total, dtype=np.int64)
        segment_of = np.zeros(total, dtype=np.int32)
        has_key = np.zeros(total, dtype=bool)
        parts: list[tuple[np.ndarray, np.ndarray]] = []
        if total:  # an empty index's reader has no columns at all
            raw = reader.column_reader("date", translate=False)
            dated = reader.column_reader("dated", translate=True)
            pages = store.MappedPages.of_reader(reader, every=1)
            for s, (leaf, offset) in enumerate(reader.leaf_readers()):
                pages.step()
                if "id" not in leaf.schema:
                    continue
                words, docs = [], []
                for word, ids in store.key_postings(leaf, "id"):
                    words.append(word)
                    docs.append(ids)
                if not docs:
                    continue
                docnums = offset + np.concatenate(docs).astype(np.int64)
                parts.append((docnums, np.repeat(np.array(words, dtype=np.bytes_),
                                                 [len(ids) for ids in docs])))
                has = np.fromiter((bool(dated[d]) for d in docnums.tolist()), dtype=bool,
                                  count=len(docnums))
                undated[docnums] = ~has
                when[docnums[has]] = np.fromiter((raw[d] for d in docnums[has].tolist()),
                                                 dtype=np.int64, count=int(has.sum()))
                segment_of[docnums] = s
                has_key[docnums] = True
        width = max((words.itemsize for _, words in parts), default=1)
        id_of = np.zeros(total, dtype=f"S{width}")
        for docnums, words in parts:
            id_of[docnums] = words
        del parts
        live = np.fromiter(reader.all_doc_ids(), dtype=np.int64)
        order = np.lexsort((live, id_of[live], when[live], undated[live]))
        ranked = live[order]
        self.docnums = array("I", ranked.astype(np.uint32).tobytes())
        number_of = np.full(total, -1, dtype=np.int32)
        number_of[ranked] = np.arange(len(ranked), dtype=np.int32)
        # a deleted copy takes its live article's number (same key) in another segment
        dead = np.flatnonzero((number_of < 0) & has_key)
        if len(dead):
            keyed = ranked[has_key[ranked]]
            matched = keyed[np.isin(id_of[keyed], id_of[dead])]
            number_by_key = {(undated[d], when[d], id_of[d]): int(number_of[d])
                             for d in matched.tolist()}
            for docnum in dead.tolist():
                number = number_by_key.get((undated[docnum], when[docnum], id_of[docnum]))
                if number is not None and \
                        segment_of[self.docnums[number]] != segment_of[docnum]:
                    number_of[docnum] = number
        self.number_of = array("i", number_of.tobytes())
        self.dated = int((undated[live] == 0).sum())

    def __len__(self) -> int:
        return len(self.docnums)


def write_shards(out: Writes, prefix: str, namespace: str,
                 shards: dict[int, list[FieldedEntry]]) -> int:
    """Write the given shards (empty ones too, so a lookup never misses a file), their tails
    and number blocks; the files written."""
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
            if entry.blocks:
                bname = block_name(namespace, shard, index)
                out.write(f"{prefix}/{bname}.js", script(bname, entry.block_index()))
                for block, (_, data) in enumerate(entry.blocks):
                    bname = block_name(namespace, shard, index, block)
                    out.write(f"{prefix}/{bname}.js", script(bname, data))
                files += 1 + len(entry.blocks)
    return files
