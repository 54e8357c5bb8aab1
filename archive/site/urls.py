"""Where each page of the static site lives.

Paths are relative to the site root and always end in ``index.html`` (or a file name), so the
site works from a web server and straight from disk (``file://``) alike; canonical URLs drop
the ``index.html`` for pretty links. Every path is built from slugs, so nothing taken from an
article can climb out of the output folder.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import PurePosixPath

from archive.article import slugify

HOME = "index.html"
SEARCH = "search/index.html"
FACET_FOLDERS = {"source": "sources", "place": "places", "topic": "topics"}


def article_path(article_id: str, title: str, date: datetime | None) -> str:
    """``2017/08/27/syrian-army-and-hezbollah-d028d0/index.html``: readable and permanent.

    The short suffix is the id's own hash part, so two stories with the same headline on the
    same day still get different pages.
    """
    slug = title_slug(title)
    suffix = slugify(article_id.rsplit("-", 1)[-1], 12) or slugify(article_id, 12)
    # %Y is not zero-padded for years before 1000 (glibc), but the search client and the
    # date pages write four digits
    folder = f"{date.year:04d}/{date.month:02d}/{date.day:02d}" if date else "undated"
    return f"{folder}/{slug}-{suffix}/index.html"


def title_slug(title: str) -> str:
    """The readable part of an article's page folder (the search client rebuilds it from the
    headline: engine.js titleSlug)."""
    return slugify(title, 60) or "article"


def facet_path(field: str, value: str, page: int = 1) -> str:
    folder = f"{FACET_FOLDERS[field]}/{slugify(value, 60) or 'unnamed'}"
    return f"{folder}/index.html" if page == 1 else f"{folder}/page/{page}/index.html"


def facet_feed_path(field: str, value: str) -> str:
    return f"{FACET_FOLDERS[field]}/{slugify(value, 60) or 'unnamed'}/feed.xml"


def facet_index_path(field: str) -> str:
    return f"{FACET_FOLDERS[field]}/index.html"


def year_path(year: int) -> str:
    return f"dates/{year:04d}/index.html"


def month_path(year: int, month: int, page: int = 1) -> str:
    folder = f"dates/{year:04d}/{month:02d}"
    return f"{folder}/index.html" if page == 1 else f"{folder}/page/{page}/index.html"


def undated_path(page: int = 1) -> str:
    return "dates/undated/index.html" if page == 1 else f"dates/undated/page/{page}/index.html"


def root_prefix(path: str) -> str:
    """The relative way back to the site root from the page at ``path``."""
    depth = len(PurePosixPath(path).parts) - 1
    return "../" * depth


def canonical(base_url: str, path: str) -> str:
    pretty = path[: -len("index.html")] if path.endswith("index.html") else path
    return base_url.rstrip("/") + "/" + pretty


def is_safe(path: str) -> bool:
    """True when ``path`` stays inside the site: relative, no ``..``, no empty parts."""
    parts = PurePosixPath(path).parts
    return bool(parts) and not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)
