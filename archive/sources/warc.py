"""Web archives (``.warc``, ``.warc.gz``): every archived HTML page becomes an article.

Records are streamed with warcio, one at a time, so memory stays flat however large the
archive. Only ``response`` records for an HTML page fetched with HTTP 200 are read; each goes
through the HTML reader's ``article_from_html`` with the capture's URL and date as fallbacks.
The record number (1-based, counting every record) is the article id's record key.

A damaged archive keeps what came before the damage: a record cut short (a truncated
download) or a record warcio cannot parse is reported as a warning and reading stops there.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from datetime import datetime
from typing import Any, BinaryIO

from archive.article import Article
from archive.sources import IngestError, SourceFile
from archive.sources.html import article_from_html

#: pages larger than this are skipped (trafilatura refuses them anyway)
MAX_PAGE_BYTES = 20_000_000
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_CHUNK = 1 << 16
_GZIP_MAGIC = b"\x1f\x8b"


class _NotChunkedGzip(Exception):
    """The .warc.gz is one gzip stream rather than one gzip member per record."""


def read(source: SourceFile) -> Iterator[Article]:
    found = 0
    records = 0
    for number, record in _records(source):
        records = number
        article = _record_article(record, number, source)
        if article is not None:
            found += 1
            yield article
    if records == 0:
        raise IngestError(source.relative, "no WARC records could be read")
    if found == 0:
        raise IngestError(source.relative, f"none of the {records} WARC records is an HTML "
                                           "page with article text")


def _records(source: SourceFile) -> Iterator[tuple[int, Any]]:
    """(record number, record) for every record, stopping with a warning at damage.

    A ``.warc.gz`` is normally one gzip member per record, which warcio reads from the raw
    file; a whole-file gzip is read again through a decompressing stream, skipping the
    records already seen.
    """
    try:
        yield from _iterate(source, _open_raw(source), skip=0, size=_size_on_disk(source))
    except _NotChunkedGzip as restart:
        last = seen = int(str(restart))
        stream = _GunzipStream(open(source.path, "rb"))
        for last, record in _iterate(source, stream, skip=seen):  # type: ignore[arg-type]
            yield last, record
        if stream.truncated and not any(w.line == last for w in source.warnings):
            source.warn(f"the gzip stream is cut short after record {last}; any later "
                        "records are lost", line=last + 1)


class _GunzipStream:
    """Decompresses (possibly concatenated) gzip data and treats a cut-off end as EOF.

    ``gzip.GzipFile`` raises EOFError on a truncated stream, which warcio takes for "no more
    records" even when a whole block of decompressed records was still to come; this reader
    hands out everything that can be decompressed and notes the truncation instead. Output is
    produced a bounded chunk at a time, so a highly compressed payload cannot balloon.
    """

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
        self.carry = b""  # input left over after one gzip member, for the next
        self.in_member = False
        self.truncated = False
        self.trailing = False
        self.offset = 0
        self.pending = b""

    def read(self, size: int = -1) -> bytes:
        want = size if size is not None and size >= 0 else 1 << 62
        while len(self.pending) < want and self._inflate_more():
            pass
        data, self.pending = self.pending[:want], self.pending[want:]
        self.offset += len(data)
        return data

    def _inflate_more(self) -> bool:
        """Decompress up to one chunk more into ``pending``; False at the end of the data."""
        data, self.carry = self.carry or self.inflater.unconsumed_tail \
            or self.raw.read(_CHUNK), b""
        if not data:
            self.truncated = self.in_member
            return False
        if not self.in_member and not _GZIP_MAGIC.startswith(data[:2]):
            self.trailing = True  # padding or junk after the last member, as gzip(1) allows
            return False
        self.in_member = True
        self.pending += self.inflater.decompress(data, _CHUNK)
        if self.inflater.eof:  # member complete; another may follow
            self.carry = self.inflater.unused_data
            self.inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
            self.in_member = False
        return True

    def tell(self) -> int:
        return self.offset

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> _GunzipStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _size_on_disk(source: SourceFile) -> int | None:
    """The file's size as stored, the unit warcio's offsets count in over the raw file."""
    try:
        return source.path.stat().st_size
    except OSError:
        return None


def _open_raw(source: SourceFile) -> BinaryIO:
    """The file as stored: warcio detects and undoes per-record gzip itself."""
    try:
        return open(source.path, "rb") if source.is_gzip else source.open_binary()
    except OSError as exc:
        raise IngestError(source.relative, f"cannot read: {exc}") from exc


def _iterate(source: SourceFile, stream: BinaryIO, skip: int,
             size: int | None = None) -> Iterator[tuple[int, Any]]:
    """Records from ``stream``; ``size`` (bytes on disk) enables the cut-off-header check."""
    from warcio.archiveiterator import ArchiveIterator

    with stream:
        iterator = ArchiveIterator(stream, arc2warc=True)  # ARC headers read as WARC ones
        number = 0
        while True:
            try:
                record = next(iterator)
            except StopIteration:
                _check_complete(source, number, iterator.offset, size)
                return
            except Exception as exc:  # warcio, gzip and zlib all raise on damaged input
                _stop(source, number + 1, exc, first_pass=skip == 0)
                return
            number += 1
            if record.length is None:  # no Content-Length: the header is cut short or garbled
                source.warn(f"record {number} has an incomplete header; stopped reading there",
                            line=number)
                return
            if number > skip:
                yield number, record


def _check_complete(source: SourceFile, number: int, offset: int, size: int | None) -> None:
    """Warn when the file ends inside a record's header.

    warcio ends the iteration quietly when the bytes after the last whole record do not make
    a header; its offset then falls short of the file size.
    """
    if size is not None and number and offset < size:
        source.warn(f"record {number + 1} is cut short ({size - offset} bytes at the end of "
                    "the file do not make a whole record)", line=number + 1)


def _stop(source: SourceFile, number: int, exc: Exception, first_pass: bool) -> None:
    """Report the record warcio failed on; restart a whole-file gzip instead."""
    message = str(exc).strip()
    if "non-chunked gzip" in message and first_pass:
        raise _NotChunkedGzip(number - 1) from exc
    if number == 1 and first_pass:
        raise IngestError(source.relative, f"not a readable WARC file: {_describe(exc)}",
                          1) from exc
    source.warn(f"record {number} is damaged ({_describe(exc)}); stopped reading there",
                line=number)


def _describe(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _record_article(record: Any, number: int, source: SourceFile) -> Article | None:
    """The record's page as an Article; None (with a warning if it is damaged) otherwise."""
    html = _is_html_page(record)
    try:
        payload = record.content_stream().read(MAX_PAGE_BYTES + 1) if html else b""
        complete = _drain(record)
    except Exception as exc:  # decompressors and de-chunking raise on damaged payloads
        source.warn(f"record {number}: cannot read the payload: {_describe(exc)}", line=number)
        return None
    if not complete:
        source.warn(f"record {number} is truncated (the file ends inside it)", line=number)
        return None
    if not html:
        return None
    if len(payload) > MAX_PAGE_BYTES:
        source.warn(f"record {number}: page larger than {MAX_PAGE_BYTES} bytes; skipped",
                    line=number)
        return None
    headers = record.rec_headers
    url = str(headers.get_header("WARC-Target-URI") or "").strip("<>")
    try:
        return article_from_html(payload, source, url=url,
                                 fallback_date=_capture_date(headers.get_header("WARC-Date")),
                                 record=number)
    except IngestError as exc:
        source.warn(f"record {number}: {exc.reason}", line=number)
        return None


def _is_html_page(record: Any) -> bool:
    if record.rec_type != "response" or record.http_headers is None:
        return False
    if str(record.http_headers.get_statuscode()) != "200":
        return False
    content_type = str(record.http_headers.get_header("Content-Type") or "").lower()
    return content_type.split(";", 1)[0].strip() in _HTML_TYPES


def _drain(record: Any) -> bool:
    """Read what is left of the record's block in chunks; False if it ends early.

    warcio does not complain when a file is cut off inside a record: the block just comes
    up short of its declared length, which is what this detects. Chunked reading keeps an
    oversized record from costing memory.
    """
    raw = record.raw_stream
    while raw.read(_CHUNK):
        pass
    return getattr(raw, "limit", 0) <= 0


def _capture_date(value: str | None) -> datetime | None:
    """WARC-Date (ISO 8601 UTC) as naive UTC; None when absent or malformed."""
    from warcio.timeutils import iso_date_to_datetime

    if not value:
        return None
    try:
        return iso_date_to_datetime(value.strip())  # type: ignore[no-any-return]
    except (ValueError, IndexError, TypeError):
        return None
