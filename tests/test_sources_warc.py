"""The WARC reader: archived HTML pages as articles, streamed, surviving damage."""

from __future__ import annotations

import gzip
import io
import tracemalloc
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from archive.article import Article
from archive.sources import IngestError, SourceFile
from archive.sources.warc import read
from fuzzing import mutate

DATED_PAGE = b"""<!DOCTYPE html><html lang="en"><head>
<title>Harbour bridge reopens | The Coastal Herald</title>
<meta property="og:title" content="Harbour bridge reopens after repairs">
<meta property="og:site_name" content="The Coastal Herald">
<meta property="article:published_time" content="2023-05-14T09:30:00+02:00">
<link rel="canonical" href="https://herald.example.com/news/bridge">
</head><body><nav><a href="/">Home</a> <a href="/news">News</a></nav><article>
<h1>Harbour bridge reopens after repairs</h1>
<p>The harbour bridge reopened to traffic on Sunday morning after a two-year repair programme
that cost the city more than forty million euros, officials said on Sunday.</p>
<p>Engineers replaced the corroded steel cables and resurfaced the deck, which had been closed
since an inspection found cracks in two of the main supports.</p>
</article><footer>Copyright 2023 The Coastal Herald</footer></body></html>"""

UNDATED_PAGE = b"""<html><head><title>Storm closes schools across the north</title></head>
<body><div class="story">
<p>Schools across the north were closed on Tuesday as a storm brought winds of more than a
hundred kilometres an hour and heavy snow to the region, the education office said.</p>
<p>Parents were told to keep children at home until the roads had been cleared and power
restored to the affected towns, which could take until the end of the week.</p>
</div></body></html>"""


def response(writer: WARCWriter, url: str, payload: bytes, *, status: str = "200 OK",
             content_type: str = "text/html; charset=utf-8",
             date: str = "2024-01-09T06:15:00Z") -> None:
    http = StatusAndHeaders(status, [("Content-Type", content_type)], protocol="HTTP/1.1")
    writer.write_record(writer.create_warc_record(
        url, "response", payload=io.BytesIO(payload), http_headers=http,
        warc_headers_dict={"WARC-Date": date}))


def build_warc(gz: bool) -> bytes:
    """warcinfo, request, two pages, an image, a 404 page, an XHTML page (records 1-7)."""
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=gz)
    writer.write_record(writer.create_warcinfo_record("crawl.warc", {"software": "tests"}))
    writer.write_record(writer.create_warc_record(
        "https://herald.example.com/news/bridge", "request",
        payload=io.BytesIO(b"GET /news/bridge HTTP/1.1\r\nHost: herald.example.com\r\n\r\n")))
    response(writer, "https://herald.example.com/news/bridge?utm=1", DATED_PAGE)
    response(writer, "https://daily.example.org/storm", UNDATED_PAGE)
    response(writer, "https://daily.example.org/logo.png", b"\x89PNG\r\n" + bytes(500),
             content_type="image/png")
    response(writer, "https://daily.example.org/gone", UNDATED_PAGE, status="404 Not Found")
    response(writer, "https://daily.example.org/x", UNDATED_PAGE.replace(b"Tuesday", b"Monday"),
             content_type="application/xhtml+xml", date="2024-01-08T23:00:00.500Z")
    return buffer.getvalue()


def source_for(tmp_path: Path, name: str, data: bytes) -> SourceFile:
    path = tmp_path / name
    path.write_bytes(data)
    return SourceFile(path, f"crawl/{name}")


@pytest.mark.parametrize("name, gz", [("crawl.warc", False), ("crawl.warc.gz", True)])
def test_html_responses_become_articles(tmp_path: Path, name: str, gz: bool) -> None:
    source = source_for(tmp_path, name, build_warc(gz))
    bridge, storm, xhtml = read(source)
    assert [a.id for a in (bridge, storm, xhtml)] == [source.article_id(n) for n in (3, 4, 7)]
    assert bridge.path == "crawl/" + name
    assert bridge.title == "Harbour bridge reopens after repairs"
    assert bridge.url == "https://herald.example.com/news/bridge"  # canonical beats capture URL
    assert bridge.date == datetime(2023, 5, 14, 7, 30)  # the page's date beats the capture's
    assert bridge.source == "The Coastal Herald"
    assert "Home" not in bridge.body and "Copyright" not in bridge.body
    assert storm.url == "https://daily.example.org/storm"
    assert storm.date == datetime(2024, 1, 9, 6, 15)  # WARC-Date fallback
    assert storm.date_source == "explicit"
    assert storm.body.count("\n\n") == 1
    assert xhtml.date == datetime(2024, 1, 8, 23, 0, 0, 500000)
    assert source.warnings == []


def test_whole_file_gzip_is_read_too(tmp_path: Path) -> None:
    """``gzip crawl.warc`` makes one gzip stream, not one member per record."""
    source = source_for(tmp_path, "crawl.warc.gz", gzip.compress(build_warc(False)))
    assert [a.id for a in read(source)] == [source.article_id(n) for n in (3, 4, 7)]
    assert source.warnings == []


@pytest.mark.parametrize("name, gz", [("cut.warc", False), ("cut.warc.gz", True)])
def test_truncated_file_keeps_records_before_the_damage(tmp_path: Path, name: str,
                                                        gz: bool) -> None:
    data = build_warc(gz)
    source = source_for(tmp_path, name, data[:len(data) // 2])
    articles = list(read(source))
    assert articles and articles[0].id == source.article_id(3)
    assert source.warnings, "the damage must be reported"
    damaged = source.warnings[-1]
    assert damaged.line is not None and damaged.line > len(articles) + 2
    assert str(damaged.line) in damaged.reason


def test_cut_inside_a_later_page_reports_its_record(tmp_path: Path) -> None:
    data = build_warc(False)
    cut = data.index(b"Monday")  # inside record 7's payload
    source = source_for(tmp_path, "cut.warc", data[:cut])
    assert [a.id for a in read(source)] == [source.article_id(3), source.article_id(4)]
    [warning] = source.warnings
    assert warning.line == 7 and "truncated" in warning.reason


def test_cut_inside_a_record_header_is_reported(tmp_path: Path) -> None:
    """warcio stops quietly when the last bytes do not make a header; the reader must not."""
    data = build_warc(False)
    seventh = [n for n in range(len(data)) if data.startswith(b"WARC/1.", n)][6]
    for cut in (seventh + 4, seventh + 40, seventh + 200):
        source = source_for(tmp_path, "cut.warc", data[:cut])
        assert [a.id for a in read(source)] == [source.article_id(3), source.article_id(4)]
        [warning] = source.warnings
        assert warning.line == 7 and "record 7" in warning.reason


def test_truncated_whole_file_gzip_keeps_what_came_before(tmp_path: Path) -> None:
    whole = gzip.compress(build_warc(False))
    source = source_for(tmp_path, "cut.warc.gz", whole[:len(whole) * 9 // 10])
    assert [a.id for a in read(source)] == [source.article_id(3), source.article_id(4)]
    [warning] = source.warnings
    assert "cut short" in warning.reason


@pytest.mark.parametrize("data", [b"", b"not a web archive\n" * 20, gzip.compress(b"junk" * 50)])
def test_unreadable_file_is_an_ingest_error(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(IngestError):
        list(read(source_for(tmp_path, "junk.warc.gz", data)))


def test_archive_without_pages_is_an_ingest_error(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=True)
    writer.write_record(writer.create_warcinfo_record("crawl.warc", {"software": "tests"}))
    response(writer, "https://e.example/a.png", b"\x89PNG" + bytes(100), content_type="image/png")
    with pytest.raises(IngestError, match="none of the 2 WARC records"):
        list(read(source_for(tmp_path, "images.warc.gz", buffer.getvalue())))


def test_memory_does_not_grow_with_the_archive(tmp_path: Path) -> None:
    """40 MB of non-page payload must stream through, never held at once."""
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=False)
    response(writer, "https://daily.example.org/storm", UNDATED_PAGE)
    for n in range(20):
        response(writer, f"https://e.example/{n}.bin", bytes([n]) * 2_000_000,
                 content_type="application/octet-stream")
    source = source_for(tmp_path, "big.warc", buffer.getvalue())
    del buffer
    tracemalloc.start()
    try:
        assert len(list(read(source))) == 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000


EDITS = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1 << 16), st.integers(0, 255)),
                 min_size=1, max_size=8)
FIXTURES = {gz: build_warc(gz) for gz in (False, True)}


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gz=st.booleans(), data=st.one_of(st.none(), st.binary(max_size=512)), edits=EDITS)
def test_fuzz_only_articles_or_ingest_error(tmp_path: Path, gz: bool, data: bytes | None,
                                            edits: list[tuple[int, int, int]]) -> None:
    blob = data if data is not None else mutate(FIXTURES[gz], edits)
    source = source_for(tmp_path, "fuzz.warc.gz" if gz else "fuzz.warc", blob)
    try:
        articles = list(read(source))
    except IngestError:
        return
    assert all(isinstance(a, Article) and a.path == source.relative for a in articles)
