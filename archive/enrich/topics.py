"""Topics as facet values: one spelling per topic, and the folder a file was filed under.

Readers copy topics verbatim ("Business", "business ", "Mergers & Acquisitions"); a facet
needs a single spelling per topic, so they become lower-case slugs. Collections laid out as
``category/file.txt`` (the BBC corpus) carry their only topic in the folder name.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePosixPath

from archive.article import Article, slugify


def normalise_topics(article: Article) -> Article:
    """Topics as lower-case slugs, empty ones dropped, duplicates removed, first order kept."""
    topics = tuple(dict.fromkeys(slug for t in article.topics if (slug := slugify(t))))
    return article if topics == article.topics else replace(article, topics=topics)


def folder_topics(article: Article) -> Article:
    """Give a topic-less article the innermost folder below the root folder as its topic.

    ``bbc/business/001.txt`` gets ``business``; ``seeds/x.txt`` sits directly in the folder
    the user named, which says where it was stored, not what it is about, so it gets none.
    """
    if article.topics:
        return article
    folders = PurePosixPath(article.path.replace("\\", "/")).parts[:-1]
    if len(folders) < 2:
        return article
    topic = slugify(folders[-1])
    return replace(article, topics=(topic,)) if topic else article
