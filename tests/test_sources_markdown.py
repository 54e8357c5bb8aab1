"""The Markdown reader: YAML front matter and markup-free bodies."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archive.article import Article
from archive.sources import IngestError, SourceFile
from archive.sources import markdown

FULL = """---
title: "Rates rise: what now?"
date: 2024-03-05T10:00:00+02:00
source: Example Times
url: https://example.com/a
author: [Jane Doe, John Roe]
tags: [Economy, Interest Rates]
places: Frankfurt; Paris
summary: A short summary.
---
# Rates rise: what now?

FRANKFURT (Reuters) - The **central bank** raised *rates* by a
[quarter point](https://example.com/q) on Tuesday, its `fifth` rise ![chart](c.png) this year.

> A quote, with <b>HTML</b> &amp; entities.

- first item
- second \\*not emphasis\\*

## Subhead

Another_paragraph with snake_case_name and 3 * 4 = 12.
"""


def read_one(path: Path) -> tuple[Article, SourceFile]:
    source = SourceFile(path, f"md/{path.name}")
    (article,) = list(markdown.read(source))
    return article, source


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_front_matter_fields_are_explicit(tmp_path: Path) -> None:
    article, source = read_one(write(tmp_path, "a.md", FULL))
    assert article.title == "Rates rise: what now?"
    assert article.date == datetime(2024, 3, 5, 8, 0) and article.date_source == "explicit"
    assert article.source == "Example Times"  # stated, so it beats the "(Reuters)" dateline
    assert article.url == "https://example.com/a"
    assert article.author == "Jane Doe, John Roe"
    assert article.topics == ("economy", "interest-rates")
    assert article.places == ("Frankfurt", "Paris")
    assert article.dateline == "Frankfurt"
    assert article.extra == {"summary": "A short summary."}
    assert article.id == source.article_id() and article.path == "md/a.md"
    assert not source.warnings


def test_markup_is_stripped(tmp_path: Path) -> None:
    article, _ = read_one(write(tmp_path, "a.md", FULL))
    assert article.body.split("\n\n") == [
        "The central bank raised rates by a quarter point on Tuesday, its fifth rise this year.",
        "A quote, with HTML & entities.",
        "first item",
        "second *not emphasis*",
        "Subhead",
        "Another_paragraph with snake_case_name and 3 * 4 = 12.",
    ]
    assert not re.search(r"[#`>\[\]]|\]\(|<b>|!\[", article.body)


def test_heading_is_the_title_without_front_matter(tmp_path: Path) -> None:
    text = "# Storm hits *coast*\n\nHeavy rain fell.\n\nMore rain.\n\nAP\n"
    article, _ = read_one(write(tmp_path, "b.md", text))
    assert article.title == "Storm hits coast"
    assert article.body == "Heavy rain fell.\n\nMore rain."
    assert article.source == "AP" and article.date is None and article.date_source == "unknown"


def test_front_matter_title_wins_and_other_heading_stays_in_body(tmp_path: Path) -> None:
    text = "---\ntitle: Stated\n---\n# A different heading\n\nBody text here.\n"
    article, _ = read_one(write(tmp_path, "c.md", text))
    assert article.title == "Stated"
    assert article.body == "A different heading\n\nBody text here."


def test_setext_heading_and_plain_text(tmp_path: Path) -> None:
    article, _ = read_one(write(tmp_path, "d.md", "Big news\n========\n\nIt happened.\n"))
    assert (article.title, article.body) == ("Big news", "It happened.")
    article, _ = read_one(write(tmp_path, "e.txt", "Just one sentence of text. And more."))
    assert article.title == "Just one sentence of text"


def test_bad_yaml_is_warned_and_the_text_kept(tmp_path: Path) -> None:
    text = "---\ntitle: [unclosed\ndate: 2024-01-01\n---\nThe story still counts.\n"
    article, source = read_one(write(tmp_path, "f.md", text))
    assert "The story still counts." in article.body
    assert article.date is None
    assert len(source.warnings) == 1 and "YAML" in source.warnings[0].reason


def test_front_matter_that_is_not_a_mapping(tmp_path: Path) -> None:
    article, source = read_one(write(tmp_path, "g.md", "---\n- a\n- b\n---\nText body.\n"))
    assert "Text body." in article.body and "mapping" in source.warnings[0].reason


def test_unreadable_date_is_warned(tmp_path: Path) -> None:
    text = "---\ntitle: T\ndate: next Tuesday\n---\nBody.\n"
    article, source = read_one(write(tmp_path, "h.md", text))
    assert article.date is None and "date" in source.warnings[0].reason


def test_title_only_and_empty_files(tmp_path: Path) -> None:
    article, _ = read_one(write(tmp_path, "i.md", "---\ntitle: Only a title\n---\n"))
    assert (article.title, article.body) == ("Only a title", "")
    with pytest.raises(IngestError):
        read_one(write(tmp_path, "j.md", "---\n---\n\n"))


def test_markdown_to_text_keeps_code_and_drops_definitions() -> None:
    text = markdown.markdown_to_text(
        "Use `a_b` and <https://x.org>.\n\n```\ncode line\n```\n\n[ref]: https://x.org\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert "a_b" in text and "https://x.org" in text and "code line" in text
    assert "[ref]" not in text and "|" not in text and "---" not in text


@st.composite
def markdown_files(draw: st.DrawFn) -> bytes:
    if draw(st.booleans()):
        return draw(st.binary(max_size=300))
    data = bytearray(FULL.encode("utf-8"))
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, len(data)))
        data[at:at + draw(st.integers(0, 10))] = draw(st.binary(max_size=6))
    return bytes(data)


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=markdown_files())
def test_fuzz_only_articles_or_ingest_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.md"
    path.write_bytes(data)
    try:
        articles = list(markdown.read(SourceFile(path, "md/fuzz.md")))
    except IngestError:
        return
    assert len(articles) == 1 and isinstance(articles[0], Article) and articles[0].title


def test_a_posts_file_name_dates_it_when_its_front_matter_does_not(tmp_path: Path) -> None:
    """Jekyll keeps a post's date in its name: ``_posts/2016-03-10-title.md``."""
    text = "---\ntitle: Making it easier to contribute\n---\nWe changed the guide.\n"
    article, _ = read_one(write(tmp_path, "2016-03-10-making-it-easier.md", text))
    assert article.date == datetime(2016, 3, 10) and article.date_source == "explicit"
    stated, _ = read_one(write(tmp_path, "2016-03-10-other.md",
                               "---\ntitle: T\ndate: 2016-03-12\n---\nBody.\n"))
    assert stated.date == datetime(2016, 3, 12)
