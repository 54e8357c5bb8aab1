"""Where each page of the static site lives.

Paths are relative to the site root and always end in ``index.html`` (or a file name), so the
site works from a web server and straight from disk (``file://``) alike; canonical URLs drop
the ``index.html`` for pretty links. Every path is built from slugs, so nothing taken from an
article can climb out of the output folder.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from pathlib import PurePosixPath
from urllib.parse import urlsplit

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


def list_page(folder: str, page: int | None) -> str:
    """A browse list's landing page (``page`` None: its newest articles) or its numbered page.

    Pages are numbered from the oldest article (page 1 holds the list's first ``page_size``
    articles by date), so an article added after the others joins only the last page and
    the landing page, and every other page keeps its address and its bytes.
    """
    return f"{folder}/index.html" if page is None else f"{folder}/page/{page}/index.html"


def facet_path(field: str, value: str, page: int | None = None) -> str:
    return list_page(f"{FACET_FOLDERS[field]}/{slugify(value, 60) or 'unnamed'}", page)


def facet_feed_path(field: str, value: str) -> str:
    return f"{FACET_FOLDERS[field]}/{slugify(value, 60) or 'unnamed'}/feed.xml"


def facet_index_path(field: str) -> str:
    return f"{FACET_FOLDERS[field]}/index.html"


def year_path(year: int) -> str:
    return f"dates/{year:04d}/index.html"


def month_path(year: int, month: int, page: int | None = None) -> str:
    return list_page(f"dates/{year:04d}/{month:02d}", page)


def undated_path(page: int | None = None) -> str:
    return list_page("dates/undated", page)


def root_prefix(path: str) -> str:
    """The relative way back to the site root from the page at ``path``."""
    depth = len(PurePosixPath(path).parts) - 1
    return "../" * depth


def pretty(path: str) -> str:
    """``path`` as it is linked from outside: a folder's ``index.html`` left to the server."""
    return path[: -len("index.html")] if path.endswith("index.html") else path


def canonical(base_url: str, path: str) -> str:
    """The page's absolute address, or ``""`` when the site has no base URL.

    Without one, the address the site will be published at is unknown; naming any other (the
    preview server's, say) would send readers and crawlers somewhere the site is not.
    """
    if not base_url:
        return ""
    return base_url.rstrip("/") + "/" + pretty(path)


def link(base_url: str, from_path: str, to_path: str) -> str:
    """How the file at ``from_path`` (a feed) names the page at ``to_path``: absolutely under
    a base URL, else relative to the file, which feed readers resolve against its address."""
    return canonical(base_url, to_path) or root_prefix(from_path) + pretty(to_path) or "./"


def stable_id(site_title: str, key: str) -> str:
    """A permanent ``urn:uuid:`` name for a feed or an entry when the site has no address.

    Atom ids must be absolute IRIs, never a relative link; one derived from the site's title
    and the article id (or feed path) is the same on every build, so readers do not show an
    entry twice.
    """
    return uuid.uuid5(uuid.NAMESPACE_URL, f"newsarchive:{site_title}:{key}").urn


def check_base_url(text: str) -> str:
    """``text`` as a site's base URL, ending in ``/``; ValueError unless it is an absolute
    http(s) address with no query, fragment or whitespace (every page address is appended
    to it, in HTML, XML and robots.txt alike)."""
    try:
        parts = urlsplit(text)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        problem = "is not an absolute http:// or https:// address"
    elif "?" in text or "#" in text:
        problem = "has a query or fragment"
    elif any(c.isspace() or not c.isprintable() for c in text):
        problem = "contains spaces or control characters"
    else:
        return text if text.endswith("/") else text + "/"
    raise ValueError(f"base URL {text!r} {problem}; give the address the site will be "
                     "published at, e.g. https://example.org/news/")


def is_safe(path: str) -> bool:
    """True when ``path`` stays inside the site: relative, no ``..``, no empty parts."""
    parts = PurePosixPath(path).parts
    return bool(parts) and not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)
