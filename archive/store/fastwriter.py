"""The writer's fast path, and every other use of Whoosh's private names, in one room.
One idea: the one place that knows Whoosh's internals.

This module re-implements parts of Whoosh's writer (SegmentWriter.add_document, the W3
postings writer's block set-up) and reads parts of its readers (the W3 matcher's blocks, a
compound file's directory) through names Whoosh does not publish. That is why Whoosh is
pinned to one version (``whoosh-reloaded==2.7.5`` in ``pyproject.toml``): before moving the
pin, read this module against the new Whoosh and run ``tests/test_indexer_speed.py``, which
compares every posting, stored field and search result with Whoosh's own writer. The rest of
the package asks for what it needs through the public functions here (``finalize_segment``,
``release``, ``whoosh_writer``, ``toc_reader``, ``compound_part_ends``, ``posting_blocks``).
Outside this module only ``durable.py`` touches Whoosh's private members, where its
subclasses override them (FileIndex's TOC reading, the mapped BufferFile): those go with the
job they serve.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from pickle import loads
from typing import Any

from whoosh import fields, formats, index
from whoosh.codec.base import OutOfOrderError
from whoosh.codec.whoosh3 import (LENGTHS_COLUMN, W3Codec, W3FieldWriter, W3PerDocReader,
                                  _lenfield)
from whoosh.filedb.filestore import FileStorage
from whoosh.index import TOC, FileIndex
from whoosh.reading import SegmentReader
from whoosh.util.numeric import byte_to_length
from whoosh.writing import MERGE_SMALL, IndexingError, PostingPool, SegmentWriter

from archive.analysis import FastText

# --- the writer's fast path ----------------------------------------------------------------------
#
# Whoosh analyses a text field through a chain of generators that re-set one Token object per
# word (tokenizer -> lower-case -> substitution -> stop list -> stemmer), then analyses it a
# second time, unstemmed, for the spelling words; at commit it looks up every posting's field
# length, which costs an os.stat per posting for fields that keep no lengths. For indexing
# only, ArchiveWriter computes exactly the same postings in one pass over the words, with the
# analysis of each distinct word cached, and caches the absence of length columns. The schema,
# and so every query-time analysis, is untouched; tests/test_indexer_speed.py compares every
# posting, stored field and search result with Whoosh's own path.

class _LengthsReader(W3PerDocReader):
    """The per-document reader the writer's flush uses: a field without a length column
    (ID, KEYWORD, the spelling fields) is looked up once, not with an os.stat per posting."""

    def __init__(self, storage: FileStorage, segment: Any):
        super().__init__(storage, segment)
        self._lengths: dict[str, Any] = {}

    def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> Any:
        if docnum > self._doccount:
            raise IndexError("Asked for docnum %r of %d" % (docnum, self._doccount))
        try:
            reader = self._lengths[fieldname]
        except KeyError:
            reader = self._lengths[fieldname] = self._cached_reader(_lenfield(fieldname),
                                                                    LENGTHS_COLUMN)
        if reader is None:
            return default
        lbyte = reader[docnum]
        if lbyte:
            return byte_to_length(lbyte)
        return None  # as Whoosh's: a zero byte falls through

    def lengths_list(self, fieldname: str) -> list[int | None] | None:
        """Every document's length in ``fieldname`` as doc_field_length gives it (None for
        a zero byte), or None when the field keeps no lengths (every lookup gives 0)."""
        reader = self._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
        if reader is None:
            return None
        table = [byte_to_length(b) if b else None for b in range(256)]
        return [table[reader[docnum]] for docnum in range(self._doccount)]


def _write_postings(fw: W3FieldWriter, schema: fields.Schema, lengths: _LengthsReader,
                    items: Iterable[tuple[str, bytes, int, Any, bytes | None]],
                    tap: Any = None) -> None:
    """Whoosh's FieldWriter.add_postings for W3FieldWriter, a term at a time.

    Whoosh hands every posting to W3PostingsWriter.add_posting (four isinstance asserts, a
    length lookup through the column reader, block statistics updated per posting). Here a
    term's postings are gathered first and each block of ``blocklimit`` is set up whole,
    with the same statistics, before Whoosh's own ``_write_block``/``finish_term`` write it:
    the bytes written are the same. ``tap`` (a ``columns.PostingsTap``), if given, is handed
    each term of its fields as written, and for a field with positions their positions
    (``position_arrays``), a batch of terms at a time: most terms have a posting or two, and
    decoded one term at a time they would pay numpy's per-call overhead each.
    """
    from array import array

    tapped = tap.fields if tap is not None else frozenset()
    pending: list[bytes] = []  # the value bytes of postings whose positions are not handed on
    position_format: Any = None  # the field's format when the tap takes its positions

    lastfn: str | None = None
    lasttext: bytes | None = None
    docs: list[int] = []
    weights: list[Any] = []
    values: list[bytes | None] = []
    field_lengths: list[int | None] | None = None
    pw: Any = None

    def flush_term() -> None:
        fw.start_term(lasttext)
        limit = pw._blocklimit
        count = len(docs)
        for start in range(0, count, limit):
            end = min(start + limit, count)
            chunk = docs[start:end]
            pw._ids = array("I", chunk)
            block_weights = weights[start:end]
            pw._weights = array("f", block_weights)
            pw._values = [v for v in values[start:end] if v]
            pw._maxweight = max(0, max(block_weights))
            if field_lengths is not None:
                present = [n for n in (field_lengths[d] for d in chunk) if n]
            else:
                present = []
            pw._minlength = min(present) if present else None
            pw._maxlength = max(present) if present else 0
            if end < count:  # Whoosh writes a full block when the next posting arrives
                pw._write_block()
        fw.finish_term()
        if lastfn in tapped:
            tap.add(lastfn, lasttext, docs, weights)
            if position_format is not None:
                pending.extend(values)
                if len(pending) >= _POSITIONS_BATCH:
                    flush_positions()
        docs.clear()
        weights.clear()
        values.clear()

    def flush_positions() -> None:
        if pending:
            tap.add_positions(lastfn, *position_arrays(position_format, pending))
            pending.clear()

    for fieldname, btext, docnum, weight, value in items:
        if fieldname != lastfn:
            if lastfn is not None and fieldname < lastfn:
                raise OutOfOrderError("Field %r .. %r" % (lastfn, fieldname))
            if lasttext is not None:
                flush_term()
            flush_positions()
            if lastfn is not None:
                fw.finish_field()
            fw.start_field(fieldname, schema[fieldname])
            pw = fw._postwriter
            field_lengths = lengths.lengths_list(fieldname) if lengths is not None else None
            lastfn, lasttext = fieldname, None
            field_format = schema[fieldname].format
            position_format = field_format if fieldname in tapped and field_format and \
                field_format.supports("positions") else None
        elif lasttext and btext < lasttext:
            raise OutOfOrderError("Term %s:%r .. %s:%r" % (lastfn, lasttext, fieldname, btext))
        if docnum == -1:  # Whoosh's marker for spelling-only words: no posting
            continue
        if btext != lasttext:
            if lasttext is not None:
                flush_term()
            lasttext = btext
        if lengths is not None and docnum > lengths._doccount:  # as doc_field_length checks
            raise IndexError("Asked for docnum %r of %d" % (docnum, lengths._doccount))
        docs.append(docnum)
        weights.append(weight)
        values.append(value)
    if lasttext is not None:
        flush_term()
    flush_positions()
    if lastfn is not None:
        fw.finish_field()


#: postings whose positions the writer decodes in one go for the tap (bounds the bytes held)
_POSITIONS_BATCH = 50_000


class ArchiveWriter(SegmentWriter):
    """Whoosh's SegmentWriter with the fast path above; everything else is Whoosh's own.

    ``lock=False`` takes no lock of Whoosh's own (the caller holds one, or is a forked
    segment writer whose parent does)."""

    def __init__(self, ix: index.Index, *, lock: bool = True, tap: Any = None,
                 **kwargs: Any):
        super().__init__(ix, _lk=lock, **kwargs)
        self.tap = tap  # a columns.PostingsTap: the segment's sidecar from its postings
        self._tapped = False
        self._fast: dict[str, FastText | None] = {}
        for name in self.schema.names():
            self._fast[name] = FastText.for_field(self.schema[name])

    def per_document_reader(self) -> Any:
        if not self.perdocwriter.is_closed:
            raise IndexingError("Per-doc writer is still open")
        if type(self.codec) is not W3Codec:
            return super().per_document_reader()
        return _LengthsReader(self.storage, self.get_segment())

    def _flush_segment(self) -> None:
        self.perdocwriter.close()
        pdr = self.per_document_reader() if self.codec.length_stats else None
        postings = self.pool.iter_postings()
        if type(self.fieldwriter) is W3FieldWriter and \
                (pdr is None or type(pdr) is _LengthsReader):
            _write_postings(self.fieldwriter, self.schema, pdr, postings, self.tap)
            self._tapped = self.tap is not None
        else:
            self.fieldwriter.add_postings(self.schema, pdr, postings)
        self.fieldwriter.close()
        if pdr:
            pdr.close()

    def add_document(self, **fields_: Any) -> None:
        """SegmentWriter.add_document, with FastText for the text fields."""
        self._check_state()
        perdocwriter = self.perdocwriter
        schema = self.schema
        docnum = self.docnum
        posts: list[tuple[str, bytes, int, Any, bytes | None]] = []
        add_post = posts.append  # into the pool in one go, below
        names: set[str] = set()
        fast = self._fast

        docboost = self._doc_boost(fields_)
        fieldnames = sorted(name for name in fields_ if not name.startswith("_"))
        self._check_fields(schema, fieldnames)

        perdocwriter.start_doc(docnum)
        try:
            for fieldname in fieldnames:
                value = fields_.get(fieldname)
                if value is None:
                    continue
                field = schema[fieldname]
                plan = fast.get(fieldname) if isinstance(value, str) else None
                length = 0
                spellwords = None
                vbytes = None
                if field.indexed:
                    fieldboost = self._field_boost(fields_, fieldname, docboost)
                    before = len(posts)
                    if plan is not None:
                        items, spellwords = plan.postings(value)
                    else:
                        items = field.index(value)
                    scorable = field.scorable
                    for tbytes, freq, weight, vbytes in items:
                        weight *= fieldboost
                        if scorable:
                            length += freq
                        add_post((fieldname, tbytes, docnum, weight, vbytes))
                    if len(posts) > before:
                        names.add(fieldname)

                if field.separate_spelling():
                    spellfield = field.spelling_fieldname(fieldname)
                    if spellwords is None:
                        spellwords = field.spellable_words(value)
                    for word in spellwords:
                        # Whoosh passes on the last posting's value bytes here: so do we
                        add_post((spellfield, word.encode("utf-8"), 0, 1, vbytes))
                    if spellwords:
                        names.add(spellfield)

                vformat = field.vector
                if vformat:
                    vitems = vformat.word_values(value, field.analyzer, mode="index")
                    vitems = sorted((text, weight, vb) for text, _, weight, vb in vitems)
                    perdocwriter.add_vector_items(fieldname, field, vitems)

                customval = fields_.get("_stored_%s" % fieldname, value)
                sv = customval if field.stored else None
                perdocwriter.add_field(fieldname, field, sv, length)

                column = field.column_type
                if column and customval is not None:
                    cv = field.to_column_value(customval)
                    perdocwriter.add_column_value(fieldname, column, cv)
        except Exception:
            perdocwriter.cancel_doc()
            raise

        pool = self.pool
        if type(pool) is PostingPool:
            # PostingPool.add, for the whole document: the same items and memory accounting
            # (the size estimate only decides when a sorted run goes to disk)
            pool.fieldnames.update(names)
            pool.currentsize += 160 * len(posts) + sum(
                [2 * len(item[1]) + len(item[4] or b"") for item in posts])
            pool.current.extend(posts)
            if pool.currentsize > pool.limit:
                pool.save()
        else:
            for item in posts:
                pool.add(item)
        perdocwriter.finish_doc()
        self._added = True
        self.docnum += 1

    def commit(self, mergetype: Any = None, optimize: Any = None, merge: Any = None,
               more_segments: Any = None) -> None:
        """SegmentWriter.commit; ``more_segments``, if given, is called once this writer's own
        segment is written and returns segments to list after it in the new TOC."""
        self._check_state()
        if mergetype is None and not (optimize if optimize is not None else self.optimize) \
                and (merge if merge is not None else self.merge):
            mergetype = merge_small_segments  # where Whoosh would take MERGE_SMALL
        finalsegments = self._merge_segments(mergetype, optimize, merge)
        if self._added:
            finalsegments.append(self._finalize_segment())
        else:
            self._close_segment()
        if more_segments is not None:
            finalsegments.extend(more_segments())
        self._commit_toc(finalsegments)
        self._finish()

    def _finalize_segment(self) -> Any:
        """Whoosh's, then the tapped postings' sidecar, read against the whole segment."""
        segment = super()._finalize_segment()
        if self._tapped:
            reader = SegmentReader(self.storage, self.schema, segment)
            try:
                self.tap.finish(reader)
            finally:
                reader.close()
        return segment

    def finalize_segment(self) -> Any:
        """Write this writer's documents as a whole segment, but no TOC: a forked writer
        hands the segment to the parent, which lists it in its commit."""
        return self._finalize_segment()


#: A segment with at least this many live documents is left as it is at every commit.
SETTLED_SEGMENT_DOCS = 1_000


def merge_small_segments(writer: SegmentWriter, segments: list[Any]) -> list[Any]:
    """The archive's merge policy: Whoosh's MERGE_SMALL over the small segments only.

    Merging a segment costs more per document than writing it did (Whoosh reads every
    posting back, sorts them all again and writes them), and MERGE_SMALL, weighing every
    segment, merges ever larger ones as an index grows: a big build paid for the same
    documents again and again, so its cost grew faster than the number of articles. Here a
    segment of ``SETTLED_SEGMENT_DOCS`` live documents or more (what a bulk commit writes)
    is never merged again, while the small segments of day-by-day runs are still merged
    among themselves, so they do not pile up; a settled segment that edits and removals
    have emptied below the mark is small again, and merging it drops its deleted documents.
    Queries run on every segment's columns at once, so the segments left unmerged cost them
    little. The segments kept keep their order in the TOC.
    """
    small = [s for s in segments if s.doc_count() < SETTLED_SEGMENT_DOCS]
    kept = {id(s) for s in MERGE_SMALL(writer, small)}
    return [s for s in segments if s.doc_count() >= SETTLED_SEGMENT_DOCS or id(s) in kept]


def release(w: SegmentWriter) -> None:
    """Release a Whoosh writer's lock and files without committing or cancelling (what its
    ``commit`` and ``cancel`` end with): for a writer whose ``cancel`` failed."""
    w._finish()


def whoosh_writer(ix: index.Index, *, lock: bool = True, **kwargs: Any) -> SegmentWriter:
    """Whoosh's own SegmentWriter (the reference ArchiveWriter is tested against);
    ``lock=False`` as for ArchiveWriter."""
    return ix.writer(_lk=lock, **kwargs)


# --- reading what Whoosh keeps to itself -----------------------------------------------------

def toc_reader(storage: FileStorage, toc: TOC) -> Any:
    """A reader over the segments of ``toc`` as they are, without opening the index (which
    would read the newest TOC, whatever state it is in)."""
    return FileIndex._reader(storage, toc.schema, list(toc.segments), toc.generation)


def segments_reader(ix: Any, segments: list[Any], generation: int) -> Any:
    """A fresh reader over ``segments`` of an open index, on file handles of its own (what a
    forked child needs: its parent's handles share their read offsets with it)."""
    return ix._reader(ix.storage, ix.schema, segments, generation)


def compound_part_ends(compound: Any) -> list[int]:
    """Where each part of an open CompoundStorage ends, by its own directory (written last):
    a file shorter than the largest is truncated."""
    return [part["offset"] + part["length"] for part in compound._dir.values()]


def segment_mapping(leaf: Any) -> Any:
    """The memory map a segment reader reads its compound file through, or None (a segment
    of separate files, or an index opened with plain reads)."""
    storage = leaf.storage() if hasattr(leaf, "storage") else None
    compound = getattr(storage, "a", storage)   # an OverlayStorage puts the compound file first
    return getattr(compound, "_source", None)


def posting_blocks(matcher: Any) -> Iterator[tuple[Any, Any]] | None:
    """A term's postings a block at a time, (document numbers, weights) arrays, through the
    W3 matcher's block API; None for a matcher without one (a rare term's inlined postings
    come as a plain list matcher)."""
    if not hasattr(matcher, "_next_block"):
        return None
    return _blocks(matcher)


def _blocks(matcher: Any) -> Iterator[tuple[Any, Any]]:
    while matcher.is_active():
        matcher._read_ids()
        matcher._read_weights()
        yield matcher._ids, matcher._weights
        matcher._next_block()


def field_postings(leaf: Any, fieldname: str, start: bytes = b"",
                   stop: bytes | None = None) -> Iterator[tuple[bytes, Any, Any, Any]]:
    """Every term of a field in one segment, in word order, with its postings as numpy
    arrays: (word, term info, document numbers, weights). Deleted documents are included;
    callers mask them with the reader's live set. ``start``/``stop`` keep the words in
    [start, stop) only, so separate tasks can each take a range of the term list.

    Whoosh's matcher hands postings out one at a time, and looking a term up again for its
    matcher costs a hash-table probe; a whole-field pass (related articles for every article)
    instead walks the term list once and reads each on-disk posting list a block at a time,
    the same arrays the matcher's ``id()`` and ``weight()`` index into. Any other segment or
    matcher type takes Whoosh's public one-at-a-time path.
    """
    for word, info, ids, weights, _values in _walk_postings(leaf, fieldname, start, stop,
                                                            False):
        yield word, info, ids, weights


def key_postings(leaf: Any, fieldname: str) -> Iterator[tuple[bytes, Any]]:
    """Every term of a key field (an article id: each names one document, but for an edited
    article's deleted copy) in one segment, in word order, with its document numbers as a
    numpy array, deleted ones included. A term of one posting is answered from its term
    info, which holds its first document; only the others open their posting list, so a
    pass over every id reads no posting block."""
    import numpy as np

    for word, info in leaf.iter_field(fieldname):
        if info.doc_frequency() == 1 and info.min_id() is not None:
            yield word, np.array([info.min_id()], dtype=np.int64)
        else:   # the term's own list, read as ``field_postings`` reads it
            for _word, _info, ids, _weights, _values in _walk_postings(
                    leaf, fieldname, word, word + b"\x00", False):
                yield word, ids


def field_postings_values(leaf: Any, fieldname: str
                          ) -> Iterator[tuple[bytes, Any, Any, list[bytes]]]:
    """``field_postings`` with each posting's value bytes too (what a field with positions
    keeps them in: ``position_arrays`` decodes them): (word, document numbers, weights,
    values), read in the same pass over the blocks."""
    for word, _info, ids, weights, values in _walk_postings(leaf, fieldname, b"", None,
                                                            True):
        yield word, ids, weights, values


def _walk_postings(leaf: Any, fieldname: str, start: bytes, stop: bytes | None,
                   with_values: bool) -> Iterator[tuple[bytes, Any, Any, Any, list[bytes]]]:
    import numpy as np
    from whoosh.codec.whoosh3 import W3LeafMatcher

    codec, terms = getattr(leaf, "_codec", None), getattr(leaf, "_terms", None)
    postfile = getattr(terms, "_postfile", None)
    field_format = leaf.schema[fieldname].format
    for word, info in leaf.iter_field(fieldname, start):
        if stop is not None and word >= stop:
            return
        if codec is not None and postfile is not None:
            matcher = codec.postings_reader(postfile, info, field_format,
                                            term=(fieldname, word))
        else:
            matcher = leaf.postings(fieldname, word)
        ids: list[int] = []
        weights: list[float] = []
        values: list[bytes] = []
        if type(matcher) is W3LeafMatcher:
            for block_ids, block_weights in _blocks(matcher):
                ids.extend(block_ids)
                weights.extend(block_weights)
                if with_values:  # the block's data is read already: its values come free
                    matcher._read_values()
                    values.extend(matcher._values)
        else:
            while matcher.is_active():
                ids.append(matcher.id())
                weights.append(matcher.weight())
                if with_values:
                    values.append(matcher.value())
                matcher.next()
        yield (word, info, np.asarray(ids, dtype=np.int64),
               np.asarray(weights, dtype=np.float64), values)


#: what a Positions value starts with: its count (4 bytes, pack_uint) and pickle's PROTO 2
_POSITIONS_HEAD = 6
_PROTO_2 = b"\x80\x02"


def position_arrays(field_format: Any, values: Sequence[bytes]) -> tuple[Any, Any]:
    """Postings' positions from their value bytes (in a field whose format keeps them):
    (how many positions each posting holds, every posting's positions one after the other,
    ascending within each), as int64 numpy arrays.

    Whoosh's ``Positions`` format keeps a posting's positions as a count and a pickled list
    of gaps; unpickling them one posting at a time is a Python call per posting. Every such
    value's pickle is the same frame (the protocol opcode, a body that builds the list,
    STOP), so the bodies joined inside one list's frame unpickle as the list of lists in
    one call; the counts in the values' heads check the result, and anything else (another
    format, a value written some other way) is decoded by the format itself, one value at
    a time. The bytes unpickled are the index's own, as Whoosh unpickles them."""
    import numpy as np

    if values and type(field_format) is formats.Positions:
        found = _joined_positions(values)
        if found is not None:
            return found
    lists = [field_format.decode_positions(value) for value in values]
    counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    return counts, np.fromiter(chain.from_iterable(lists), dtype=np.int64,
                               count=int(counts.sum()))


def _joined_positions(values: Sequence[bytes]) -> tuple[Any, Any] | None:
    import numpy as np

    heads = np.frombuffer(b"".join([v[:_POSITIONS_HEAD] for v in values]), dtype=np.uint8)
    if len(heads) != _POSITIONS_HEAD * len(values) or \
            b"".join([v[-1:] for v in values]) != b"." * len(values):
        return None
    heads = heads.reshape(len(values), _POSITIONS_HEAD)
    if heads[:, 4:].tobytes() != _PROTO_2 * len(values):
        return None
    counts = np.ascontiguousarray(heads[:, :4]).view(">u4").ravel().astype(np.int64)
    # the lists hold no cycles and go when this returns; the collector, set off by so many
    # new containers, would otherwise walk the writer's whole heap again and again
    collecting = gc.isenabled()
    gc.disable()
    try:  # MARK, each value's list, LIST: a list of the lists
        lists = loads(_PROTO_2 + b"(" + b"".join([v[_POSITIONS_HEAD:-1] for v in values])
                      + b"l.")
        if type(lists) is not list or len(lists) != len(values):
            return None
        total = int(counts.sum())
        if not np.array_equal(np.fromiter(map(len, lists), dtype=np.int64,
                                          count=len(lists)), counts):
            return None
        gaps = np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=total)
    except Exception:  # noqa: BLE001 - whatever the joined bytes are, the format decodes
        return None
    finally:
        if collecting:
            gc.enable()
    # each posting's positions are the running sum of its own gaps
    running = np.cumsum(gaps)
    before = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(counts, out=before[1:])
    sums = np.concatenate((np.zeros(1, dtype=np.int64), running))[before[:-1]]
    return counts, running - np.repeat(sums, counts)


def field_length_bytes(leaf: Any, fieldname: str) -> Any:
    """Every document's length byte in ``fieldname`` of one segment, as a numpy uint8 array
    (Whoosh keeps a field's length per document as one byte, decoded by ``byte_to_length``);
    None when the field keeps no lengths. The columnar sidecar keeps these bytes and decodes
    them as Whoosh's scorer does, so its scores are Whoosh's."""
    import numpy as np

    perdoc = getattr(leaf, "_perdoc", None)
    count = leaf.doc_count_all()
    if isinstance(perdoc, W3PerDocReader):
        reader = perdoc._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
        if reader is None:
            return None
        return np.fromiter((reader[d] for d in range(count)), dtype=np.uint8, count=count)
    if not leaf.schema[fieldname].scorable:
        return None
    # another codec: Whoosh's public per-document lookup, encoded back to its byte
    from whoosh.util.numeric import length_to_byte
    return np.fromiter((length_to_byte(leaf.doc_field_length(d, fieldname, 0) or 0)
                        for d in range(count)), dtype=np.uint8, count=count)


def length_table() -> Any:
    """byte -> the field length Whoosh's scorer reads for it (as a float64 numpy array);
    byte 0 reads as 1, the default the scorer asks for (no scored posting has it)."""
    import numpy as np

    return np.array([1.0] + [float(byte_to_length(b)) for b in range(1, 256)])
