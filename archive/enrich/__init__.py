"""Enrichment: functions Article -> Article that add what the text implies.

``enrich`` runs the stateless steps in order; each only fills what the reader left empty, so
explicit metadata always wins over inference. Wire-copy clustering keeps state across the
whole archive, so the indexer runs it (``archive.enrich.duplicates.DuplicateFinder``).
"""

from __future__ import annotations

from archive.article import Article
from archive.enrich.dates import infer_date
from archive.enrich.places import find_places
from archive.enrich.topics import folder_topics, normalise_topics


def enrich(article: Article) -> Article:
    article = infer_date(article)
    article = find_places(article)
    article = normalise_topics(article)  # first, so empty or repeated topics are gone...
    return folder_topics(article)        # ...before a folder name fills a missing topic
