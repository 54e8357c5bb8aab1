"""Topics: one slug spelling per topic, and the folder a file was filed under."""

from __future__ import annotations

import pytest

from archive.article import Article
from archive.enrich.topics import folder_topics, normalise_topics


def article(path: str = "news/a.txt", topics: tuple[str, ...] = ()) -> Article:
    return Article(id="a", title="T", body="B", path=path, topics=topics)


def test_topics_become_deduplicated_slugs_in_order() -> None:
    raw = ("Business", "Mergers & Acquisitions", "business ", "", "Crude Oil", "BUSINESS")
    assert normalise_topics(article(topics=raw)).topics == (
        "business", "mergers-acquisitions", "crude-oil")


def test_normalised_topics_leave_the_article_alone() -> None:
    original = article(topics=("earn", "crude-oil"))
    assert normalise_topics(original) is original


@pytest.mark.parametrize("path, topics", [
    ("bbc/business/001.txt", ("business",)),
    ("reuters/2017/World News/x.txt", ("world-news",)),
    ("bbc\\sport\\002.txt", ("sport",)),
    ("seeds/x.txt", ()),
    ("x.txt", ()),
])
def test_folder_topic(path: str, topics: tuple[str, ...]) -> None:
    assert folder_topics(article(path=path)).topics == topics


def test_folder_topic_does_not_override_reader_topics() -> None:
    original = article(path="bbc/business/001.txt", topics=("earn",))
    assert folder_topics(original) is original
