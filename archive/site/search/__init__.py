"""The static site's own search: a bundle of small script files built from the archive's index,
a browser client, and the search page's form.

Why not a general static-search engine: a news archive needs the CLI's query language and the
CLI's ranking, and the search must work when the site is opened from disk. So the archive
exports what its Whoosh index already knows, precomputed and split so a browser fetches little.
Python, JavaScript and the form's template live together here (as MkDocs' search plugin
keeps its own), one module per job:

- ``format``: the bundle's file format, mirrored by ``client/engine.js``;
- ``postings``: articles numbered in date order, shard files;
- ``segments``: each Whoosh segment's term and pair lists (what updates in place);
- ``pairs``: adjacent-word pairs (phrases) of an article's fields;
- ``articles``: the one pass over the articles: article files, facets, day tables;
- ``bundle``: ``build_bundle``, in one process or two;
- ``helper``: the second process, a ``processes.Child`` that talks with its parent;
- ``client``: the client's sources in ``client/``, served in their derived form.

The site builder uses ``build`` and ``page_markup``; swapping the engine means changing this
package only.
"""

from __future__ import annotations

from typing import Any

import jinja2
from markupsafe import Markup

from archive import render
from archive.search import Archive
from archive.site.files import OutputFolder
from archive.site.search.bundle import BundleReport, build_bundle
from archive.site.search.client import ASSET_FOLDER, CHART_SCRIPT, CLIENT_FILES, \
    CLIENT_PREFIX, CLIENT_SCRIPT, COUNTS_SCRIPT, asset_files, classic_analysis
from archive.site.search.format import BUNDLE_PREFIX, FACETS, decode_fielded, \
    encode_fielded, parse_script, read_varints, varints
from archive.site.search.helper import BundleProcessFailed

__all__ = [
    "ASSET_FOLDER", "BUNDLE_PREFIX", "CHART_SCRIPT", "CLIENT_FILES", "CLIENT_PREFIX", "CLIENT_SCRIPT",
    "COUNTS_SCRIPT", "FACETS", "FORM_TEMPLATE", "BundleProcessFailed",
    "BundleReport", "asset_files", "build", "build_bundle", "classic_analysis",
    "decode_fielded", "encode_fielded", "page_markup", "parse_script", "read_varints",
    "varints",
]

#: The search form's template: a theme restyles the form by giving its own of this name.
FORM_TEMPLATE = "_search_form.html"


def build(archive: Archive, folder: OutputFolder, procs: int | None = None) -> dict[str, Any]:
    """Write the search bundle and the client files into the output folder; its report."""
    return build_bundle(archive, folder, procs=procs).to_dict()


def page_markup(root: str, prefix: str = BUNDLE_PREFIX,
                env: jinja2.Environment | None = None) -> Markup:
    """The search page's form, results region and scripts (``root`` leads back to the site
    root), rendered from ``FORM_TEMPLATE`` with ``env`` (the site's, so a theme's own form
    wins; the built-in templates when None).

    Without JavaScript the form still submits ``q`` to this page, and the noscript note says
    search needs scripts; with it, ui.js reads the URL and runs the search.
    """
    if env is None:
        env = render.environment("site", html=True)
    return Markup(env.get_template(FORM_TEMPLATE).render(
        root=root, bundle=root + prefix + "/", script=root + CLIENT_PREFIX + CLIENT_SCRIPT))
