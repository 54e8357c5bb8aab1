"""The record reader: JSON Lines, JSON arrays and CSV/TSV into Articles."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archive.article import Article
from archive.sources import IngestError, ReaderOptions, SourceFile
from archive.sources import fields, records

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
needs_corpora = pytest.mark.skipif(not CORPORA.exists(),
                                   reason="needs ../shared/corpora (CI has it)")


def source_for(path: Path, **options: dict[str, str]) -> SourceFile:
    return SourceFile(path, f"fixtures/{path.name}", ReaderOptions(**options))


def read_all(path: Path, **options: dict[str, str]) -> tuple[list[Article], SourceFile]:
    source = source_for(path, **options)
    return list(records.read(source)), source


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


# --- JSON Lines --------------------------------------------------------------------------------

def test_jsonl_common_field_names(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "news.jsonl", [
        {"Headline": "Markets rally", "Story": "Stocks rose.", "pubDate":
         "Tue, 05 Mar 2024 10:00:00 +0200", "Link": "https://ex.com/1", "Publisher": "Ex",
         "Byline": "Jane Doe", "Tags": "Markets, Stock Exchange", "Locations": ["Paris", "Rome"],
         "guid": "abc-1"},
        {"title": "Second", "content": "More text.", "published_at": "2024-03-06T12:30:00Z",
         "categories": ["World"], "places": "New York; Washington, D.C."},
    ])
    first, second = read_all(path)[0]
    assert first.title == "Markets rally" and first.body == "Stocks rose."
    assert first.date == datetime(2024, 3, 5, 8, 0) and first.date_source == "explicit"
    assert (first.url, first.source, first.author) == ("https://ex.com/1", "Ex", "Jane Doe")
    assert first.topics == ("markets", "stock-exchange")
    assert first.places == ("Paris", "Rome")
    assert first.external_id == "abc-1"
    assert first.id == source_for(path).article_id(1) and first.path == "fixtures/news.jsonl"
    assert second.id == source_for(path).article_id(2)
    assert second.date == datetime(2024, 3, 6, 12, 30)
    assert second.places == ("New York", "Washington, D.C.")
    assert second.topics == ("world",)


def test_jsonl_bad_lines_are_warned_and_the_rest_goes_in(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"title": "One", "body": "a"}\n'
                    '{"title": broken\n'
                    '\n'
                    '["not", "an", "object"]\n'
                    '{"url": "https://no-text.example"}\n'
                    '{"title": "Two", "body": "b", "date": "the day after tomorrow"}\n',
                    encoding="utf-8")
    articles, source = read_all(path)
    assert [a.title for a in articles] == ["One", "Two"]
    assert articles[1].date is None and articles[1].date_source == "unknown"
    assert [w.line for w in source.warnings] == [2, 4, 5, 6]
    assert "bad JSON" in source.warnings[0].reason
    assert "neither title nor body" in source.warnings[2].reason
    assert "unreadable date" in source.warnings[3].reason


def test_jsonl_gz_is_transparent(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl.gz"
    rows = [{"title": f"Story {n}", "body": f"Text {n}."} for n in range(1, 4)]
    with gzip.open(path, "wt", encoding="utf-8") as stream:
        stream.write("\n".join(json.dumps(r) for r in rows))
    articles, _ = read_all(path)
    assert [a.title for a in articles] == ["Story 1", "Story 2", "Story 3"]


def test_truncated_gz_keeps_what_was_read(tmp_path: Path) -> None:
    rows = "".join(json.dumps({"title": f"T{n}", "body": "x" * 200}) + "\n" for n in range(2000))
    data = gzip.compress(rows.encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    articles, source = read_all(path)
    assert 0 < len(articles) < 2000
    assert "cannot decompress" in source.warnings[-1].reason


def test_field_map_overrides_names(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "mapped.jsonl",
                       [{"title": "ignored name", "hed": "Mapped title", "copy": "Body text"}])
    (article,), _ = read_all(path, field_map={"title": "hed", "body": "copy"})
    assert (article.title, article.body) == ("Mapped title", "Body text")


def test_title_from_lead_when_only_body(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "lead.jsonl", [{"text": "The lead sentence. Then more."}])
    (article,), _ = read_all(path)
    assert article.title == "The lead sentence"


def test_empty_and_all_bad_files_are_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(IngestError):
        read_all(empty)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("nope\n{}\n", encoding="utf-8")
    with pytest.raises(IngestError, match="2 unusable records"):
        read_all(bad)


# --- the export round trip ---------------------------------------------------------------------

ROUND_TRIP = [
    Article(id="a-1", title="Élan vital: ünïcode “quotes”", body="Para one.\n\nPara two.",
            path="in/a.txt", source="Reuters", date=datetime(1987, 2, 26, 15, 1, 1, 790000),
            date_source="explicit", captions=("A photo (Photo: X)",), url="https://e.x/a",
            author="Jane Doe", credits="Reporting by A; Editing by B", dateline="Beirut",
            places=("El Salvador", "USA"), topics=("cocoa", "money-fx"), language="en",
            external_id="17"),
    Article(id="b-2", title="No date", body="Body, with a comma; and a semicolon.",
            path="in/b.txt", places=("Washington, D.C.",), topics=("world",)),
    Article(id="c-3", title="Inferred", body="x", path="in/c.txt",
            date=datetime(2004, 8, 12), date_source="inferred", external_id=""),
]
COMPARED = ("title", "body", "date", "date_source", "source", "url", "author", "places",
            "topics", "captions", "external_id", "dateline", "credits", "language")


def test_export_round_trip(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "export.jsonl", [a.to_dict() for a in ROUND_TRIP])
    back, source = read_all(path)
    assert not source.warnings
    for original, copy in zip(ROUND_TRIP, back, strict=True):
        for name in COMPARED:
            assert getattr(copy, name) == getattr(original, name), name
        assert copy.content_hash == original.content_hash


# --- JSON documents ----------------------------------------------------------------------------

def test_json_array_streams_and_warns_per_element(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text('[\n  {"title": "A", "body": "a"},\n  42,\n  {"headline": "B"}\n]\n',
                    encoding="utf-8")
    articles, source = read_all(path)
    assert [a.title for a in articles] == ["A", "B"]
    assert articles[1].id == source.article_id(3)
    assert [(w.line, "not an object" in w.reason) for w in source.warnings] == [(3, True)]


def test_json_array_large_elements_cross_chunks(tmp_path: Path) -> None:
    rows = [{"title": f"T{n}", "body": "word " * 5000, "n": 12345678901234567890}
            for n in range(40)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    articles, source = read_all(path)
    assert [a.title for a in articles] == [f"T{n}" for n in range(40)] and not source.warnings


def test_json_syntax_error_after_good_records_keeps_them(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_text('[{"title": "A", "body": "a"},\n{"title": "B", "body": "b"},\n{"title": ',
                    encoding="utf-8")
    articles, source = read_all(path)
    assert [a.title for a in articles] == ["A", "B"]
    assert source.warnings and source.warnings[-1].line == 3


def test_json_object_with_articles_list(tmp_path: Path) -> None:
    path = tmp_path / "feed.json"
    path.write_text(json.dumps({"status": "ok", "Articles": [
        {"title": "A", "description": "a", "source": {"id": None, "name": "Wire"}}]}),
        encoding="utf-8")
    (article,), _ = read_all(path)
    assert (article.title, article.body, article.source) == ("A", "a", "Wire")


def test_json_object_without_articles_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"colour": "blue"}', encoding="utf-8")
    with pytest.raises(IngestError, match="no list"):
        read_all(path)


def test_json_file_holding_json_lines(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "lines.json", [{"title": "A", "body": "a"},
                                                 {"title": "B", "body": "b"}])
    articles, _ = read_all(path)
    assert [a.title for a in articles] == ["A", "B"]


# --- CSV / TSV ---------------------------------------------------------------------------------

def test_csv_with_header(tmp_path: Path) -> None:
    path = tmp_path / "news.csv"
    path.write_text('Title,Description,Date,Category,URL\n'
                    '"Hello, world","Body ""quoted""\nsecond line",2024-01-02,Tech,https://x\n'
                    ',,2024-01-03,,\n'
                    'Last,Body,not a date,,\n', encoding="utf-8")
    articles, source = read_all(path)
    assert [a.title for a in articles] == ["Hello, world", "Last"]
    assert articles[0].body == 'Body "quoted"\nsecond line'
    assert articles[0].date == datetime(2024, 1, 2) and articles[0].topics == ("tech",)
    assert articles[1].id == source.article_id(3)
    assert [(w.line, "neither" in w.reason) for w in source.warnings][:1] == [(4, True)]
    assert source.warnings[1].line == 5 and "unreadable date" in source.warnings[1].reason


def test_csv_of_papers_or_dumps_with_their_own_column_names(tmp_path: Path) -> None:
    """CORD-19's metadata.csv names its columns publish_time, authors and abstract."""
    path = tmp_path / "metadata.csv"
    path.write_text("cord_uid,title,abstract,publish_time,authors\n"
                    'ug7v899j,Airborne rhinovirus,BACKGROUND: Rhinovirus,2003-01-13,'
                    '"Myatt, Theodore A; Johnston, Sebastian L"\n', encoding="utf-8")
    (article,), _ = read_all(path)
    assert (article.body, article.date, article.author) == (
        "BACKGROUND: Rhinovirus", datetime(2003, 1, 13), "Myatt, Theodore A; Johnston, Sebastian L")


def test_a_us_short_date_is_month_first() -> None:
    from archive.sources.fields import parse_date
    assert parse_date("01/30/03") == datetime(2003, 1, 30)


def test_semicolon_csv(tmp_path: Path) -> None:
    path = tmp_path / "eu.csv"
    path.write_text("titel;text\nHallo;Welt, schön\n", encoding="utf-8")
    (article,), _ = read_all(path, field_map={"title": "titel"})
    assert (article.title, article.body) == ("Hallo", "Welt, schön")


def test_tsv_with_header(tmp_path: Path) -> None:
    path = tmp_path / "news.tsv"
    path.write_text("headline\tbody\ttags\nA tab\\there\tLine one\\nline two\tx;y\n",
                    encoding="utf-8")
    (article,), _ = read_all(path)
    assert article.title == "A tab\there" and article.body == "Line one\nline two"
    assert article.topics == ("x", "y")


def test_headerless_csv_with_classes(tmp_path: Path) -> None:
    (tmp_path / "classes.txt").write_text("World\nSports\nBusiness\nSci/Tech\n")
    path = tmp_path / "test.csv"
    path.write_text('"3","Fears for pension","Turner #39;s staff say \\$5 they\\are upset."\n'
                    '"4","Space race","A second\\team of rocketeers\\\\New paragraph\\nThe end."\n',
                    encoding="utf-8")
    articles, _ = read_all(path)
    assert [a.topics for a in articles] == [("business",), ("sci-tech",)]
    assert articles[0].title == "Fears for pension"
    assert articles[0].body == "Turner's staff say $5 they are upset."
    assert articles[1].body == "A second team of rocketeers\n\nNew paragraph\nThe end."


def test_headerless_csv_without_classes_keeps_class_in_extra(tmp_path: Path) -> None:
    path = tmp_path / "plain.csv"
    path.write_text('"2","Title here","Body here"\n', encoding="utf-8")
    (article,), _ = read_all(path)
    assert article.topics == () and article.extra == {"class": "2"}


def test_headerless_two_and_many_columns(tmp_path: Path) -> None:
    two = tmp_path / "two.csv"
    two.write_text("A title,A body\n", encoding="utf-8")
    assert [(a.title, a.body) for a in read_all(two)[0]] == [("A title", "A body")]
    many = tmp_path / "many.csv"
    many.write_text("17,Short,A much longer column that is clearly the body,x\n",
                    encoding="utf-8")
    (article,), _ = read_all(many)
    assert (article.title, article.body) == ("Short",
                                             "A much longer column that is clearly the body")


@pytest.mark.corpus
@needs_corpora
def test_ag_news_corpus() -> None:
    path = CORPORA / "agnews" / "test.csv"
    source = SourceFile(path, "agnews/test.csv")
    articles = list(records.read(source))
    assert len(articles) == 7600 and not source.warnings
    assert Counter(a.topics for a in articles) == {
        (t,): 1900 for t in ("world", "sports", "business", "sci-tech")}
    assert articles[0].title == "Fears for T N pension after talks"
    assert not any("\\" in a.body for a in articles)
    assert len({a.id for a in articles}) == 7600


# --- dates -------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("2024-03-05", datetime(2024, 3, 5)),
    ("2024-03-05T10:00:00+02:00", datetime(2024, 3, 5, 8)),
    ("2024-03-05T10:00:00Z", datetime(2024, 3, 5, 10)),
    ("Tue, 05 Mar 2024 10:00:00 GMT", datetime(2024, 3, 5, 10)),
    ("March 5, 2024", datetime(2024, 3, 5)),
    ("5 March 2024", datetime(2024, 3, 5)),
    ("26-FEB-1987 15:01:01.79", datetime(1987, 2, 26, 15, 1, 1, 790000)),
    (1709632800, datetime(2024, 3, 5, 10)),
    ("soon", None), ("", None), (None, None), (True, None),
])
def test_parse_date(value: object, expected: datetime | None) -> None:
    assert fields.parse_date(value) == expected


# --- fuzz --------------------------------------------------------------------------------------

SEEDS = {
    "jsonl": b'{"title": "A", "body": "a", "date": "2024-01-01", "tags": ["x"]}\n'
             b'{"headline": "B", "story": "b"}\n',
    "json": b'[{"title": "A", "body": "a"}, {"headline": "B", "places": "P; Q"}]',
    "csv": b'title,body,date\n"A","a, b",2024-01-01\nB,b,x\n',
    "tsv": b"title\tbody\nA\ta\n",
}


@st.composite
def record_files(draw: st.DrawFn) -> tuple[str, bytes]:
    extension = draw(st.sampled_from(sorted(SEEDS)))
    if draw(st.booleans()):
        return extension, draw(st.binary(max_size=300))
    data = bytearray(SEEDS[extension])
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        data[at:at + draw(st.integers(0, 4))] = draw(st.binary(max_size=4))
    return extension, bytes(data)


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=record_files())
def test_fuzz_only_articles_or_ingest_error(tmp_path: Path, case: tuple[str, bytes]) -> None:
    extension, data = case
    path = tmp_path / f"fuzz.{extension}"
    path.write_bytes(data)
    try:
        articles = list(records.read(source_for(path)))
    except IngestError:
        return
    assert articles and all(isinstance(a, Article) for a in articles)
