"""The failure classes of issue 12, each on real files nobody here wrote.

* wire tags: AG News (the shared corpus, agency descriptions as published) read as records
  and as plain text, ``AP -``, ``NEW YORK (Reuters) -``, ``NAJAF, Iraq -`` off the body;
* corpus markup lines (``.START``) around real text;
* licences beside articles (the Rust blog's ``LICENSE-MIT`` in tests/data/ingest);
* TOML front matter and a date from the post's own path (the Rust blog's posts);
* a single-byte legacy code page that is not Western (charset_normalizer's Turkish sample).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from archive.enrich import enrich
from archive.sources import DOCUMENTATION, Discovery, SourceFile, classify, discover, \
    read_articles
from archive.sources.wire import strip_wire_tags

INGEST = Path(__file__).parent / "data" / "ingest"
AGNEWS_ROWS = 600


@pytest.fixture(scope="module")
def agnews(corpora_dir: Path) -> list[list[str]]:
    with open(corpora_dir / "agnews" / "test.csv", encoding="utf-8", newline="") as fh:
        return [row for _, row in zip(range(AGNEWS_ROWS), csv.reader(fh))]


def words(text: str) -> list[str]:
    return re.sub(r"[\W_]+", " ", text).split()


def read_file(path: Path, relative: str) -> list:
    source = SourceFile(path, relative)
    fmt, rule = classify(source)
    assert fmt, rule
    return [enrich(a) for a in read_articles(source, fmt)]


# --- wire tags ------------------------------------------------------------------------------

#: written from the published shapes, independently of archive/sources/wire.py
REUTERS_DATELINE = re.compile(r"^\s*([A-Z][A-Z .]+?)(?:, [A-Z][\w.]+)? \(Reuters\) - ")
AGENCY_FIRST = re.compile(r"^(AP|AFP|Reuters) - ")


def test_agency_datelines_leave_agnews_bodies_as_records(agnews, tmp_path: Path) -> None:
    path = tmp_path / "agnews.csv"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["class", "title", "description"])
        writer.writerows(agnews)
    articles = read_file(path, "agnews.csv")
    assert len(articles) == len(agnews)
    tagged = agency = 0
    for row, article in zip(agnews, articles):
        text = row[2]
        assert article.body.strip(), row  # a tag never takes the whole text
        if m := REUTERS_DATELINE.match(text):
            tagged += 1
            assert article.source == "Reuters", row
            assert article.dateline == m.group(1).strip().title(), row
            assert not article.body.startswith((m.group(1), "(Reuters)")), row
            assert words(text)[-1] == words(article.body)[-1], row  # the end is kept
        elif m := AGENCY_FIRST.match(text):
            agency += 1
            assert article.source == m.group(1), row
            assert words(article.body)[0] == words(text[m.end():])[0], row
        elif not re.search(r"[-\u2013\u2014]", text[:60]):  # no dash near the start
            assert not article.dateline and not article.source, row
    assert tagged > 20 and agency > 20  # the slice holds both shapes


def test_place_only_datelines_on_real_rows(agnews) -> None:
    by_start = {row[2][:30]: row[2] for row in agnews}
    najaf = next(t for s, t in by_start.items() if s.startswith("NAJAF, Iraq - "))
    tags = strip_wire_tags(najaf)
    assert (tags.dateline, tags.source) == ("Najaf", "")
    assert tags.body.startswith("Explosions and gunfire")
    both = next(t for s, t in by_start.items() if s.startswith("Canadian Press - VANCOUVER"))
    tags = strip_wire_tags(both)
    assert tags.source == "Canadian Press" and tags.dateline == "Vancouver"
    unknown = next(t for s, t in by_start.items() if s.startswith("SPACE.com - "))
    assert strip_wire_tags(unknown).body == unknown.strip()  # not a known outlet: kept


def test_text_reader_takes_the_tags_and_start_markup(agnews, tmp_path: Path) -> None:
    row = next(r for r in agnews if REUTERS_DATELINE.match(r[2]))
    path = tmp_path / "wsj_like.txt"
    # the Penn-style raw layout: a markup line, a blank line, then the story
    path.write_text(f".START \n\n{row[2].strip()}\n", encoding="utf-8")
    [article] = read_file(path, "news/wsj_like.txt")
    assert ".START" not in article.body and ".START" not in article.title
    assert article.source == "Reuters" and article.dateline
    assert not article.body.startswith(article.dateline.upper())


def test_credits_and_signoff_close_the_last_paragraph_only() -> None:
    body = ("TAIPEI (Reuters) -Chipmaker TSMC said on Tuesday that all its sites were operating."
            "\n\nTaiwan lies near the junction of two tectonic plates.\n\n"
            "(Reporting by Ben Blanchard; Editing by Himani Sarkar and Saad Sayeed)")
    tags = strip_wire_tags(body)  # the credits as their own paragraph stay for parse_text
    assert tags.dateline == "Taipei" and tags.source == "Reuters"
    assert tags.body.startswith("Chipmaker TSMC")
    inline = body.replace("\n\n(Reporting", " (Reporting")
    tags = strip_wire_tags(inline)
    assert tags.credits.startswith("Reporting by Ben Blanchard")
    assert tags.body.endswith("tectonic plates.")
    assert strip_wire_tags("He said so. -- Reuters").source == "Reuters"
    assert strip_wire_tags("Smith (centre) - the winner").body == "Smith (centre) - the winner"
    assert strip_wire_tags("The score was 3 -- Smith").source == ""  # not an outlet
    assert strip_wire_tags("Time - it is what they lacked.").source == ""  # prose, not a tag


# --- licences, TOML front matter, legacy code pages -----------------------------------------

def test_a_licence_beside_articles_is_passed_over_and_named(tmp_path: Path) -> None:
    report = Discovery()
    found = [s.relative for s in discover([INGEST / "mixed_folder"], report)]
    assert "mixed_folder/LICENSE-MIT" not in found
    assert ("mixed_folder/LICENSE-MIT", DOCUMENTATION) in \
        {(p.path, p.rule) for p in report.passed_over}
    assert sum(f.endswith(".md") for f in found) == 5  # every article still read
    renamed = tmp_path / "terms.txt"  # the same licence under a name that says nothing
    renamed.write_bytes((INGEST / "mixed_folder" / "LICENSE-MIT").read_bytes())
    assert classify(SourceFile(renamed, "terms.txt")) == (None, DOCUMENTATION)


def test_toml_front_matter_and_the_date_in_the_post_path() -> None:
    path = INGEST / "mixed_folder" / "Fearless-Concurrency.md"
    [article] = read_file(path, "mixed_folder/Fearless-Concurrency.md")
    assert article.title == "Fearless Concurrency with Rust"
    assert article.author == "Aaron Turon"
    assert (article.date.year, article.date.month, article.date.day) == (2015, 4, 10)
    assert article.date_source == "explicit"
    assert "+++" not in article.body and not article.body.startswith("path =")


def test_a_broken_toml_block_is_a_warning_and_the_text_stays(tmp_path: Path) -> None:
    real = (INGEST / "mixed_folder" / "Rust-1.16.md").read_text(encoding="utf-8")
    path = tmp_path / "broken.md"
    path.write_text(real.replace('title = "', 'title = ', 1), encoding="utf-8")
    source = SourceFile(path, "broken.md")
    [article] = list(read_articles(source, "markdown"))
    assert any("not valid TOML" in str(w) for w in source.warnings)
    assert "Rust team is happy" in article.body


def test_a_turkish_code_page_is_chosen_by_the_detector() -> None:
    path = INGEST / "text_legacy" / "sample-turkish.txt"
    source = SourceFile(path, "text_legacy/sample-turkish.txt")
    [article] = list(read_articles(source, "text"))
    assert article.body.startswith("İstanbul, Türkiye'nin en kalabalık")
    assert any("cp1254" in str(w) and "charset-normalizer" in str(w) for w in source.warnings)


def test_western_text_in_windows_1252_stays_windows_1252(corpora_dir: Path) -> None:
    path = corpora_dir / "bbc" / "sport" / "199.txt"  # the BBC's one Latin-1 file
    source = SourceFile(path, "bbc/sport/199.txt")
    [article] = list(read_articles(source, "text"))
    assert "\u00a3" in article.body
    assert any("Windows-1252" in str(w) for w in source.warnings)
    feed = INGEST / "feeds_legacy" / "uolNoticias.rss"  # Portuguese, undeclared Latin-1
    source = SourceFile(feed, "feeds_legacy/uolNoticias.rss")
    bodies = " ".join(a.title + a.body for a in read_articles(source, "feeds"))
    assert re.search(r"[\u00e1\u00e3\u00e7\u00e9\u00ed\u00f3\u00fa]", bodies)
    assert not re.search(r"[\u0100-\u017f]", bodies)  # no Baltic letters from a wrong guess


# --- HTML bylines ----------------------------------------------------------------------------

@pytest.mark.parametrize("name, author", [
    ("html_intl/liberation.html", "LILIAN ALEMAGNA, LAURE BRETTON"),  # "Par ...; ... Envoyés"
    ("html_news/cnn1.html", "Ed Hornick"),  # "Ed Hornick; CNN"
    ("html_news/aolNews.html", "Andrea Stone"),  # "... Senior Washington Correspondent"
    ("html_intl/lefigaro.html", ""),  # the site's domain ("Lefigaro Fr") is nobody
    ("html_intl/elpais.html", ""),  # nor its publisher ("Ediciones El País")
])
def test_html_bylines_keep_only_people(name: str, author: str) -> None:
    [article] = read_file(INGEST / name, name)
    assert article.author == author
