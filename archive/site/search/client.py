"""The browser client: its sources in ``client/`` beside this module, served in a derived form.

The sources stay as written (analysis.js an ES module the JS tests import, comments and
indentation for readers); what a visitor fetches is ``assets/search/search.js`` (analysis.js
as a classic script, then engine.js and ui.js), ``counts.js`` and ``chart.js``, each
minified: comments and the whitespace the code does not need go (rjsmin, a whitespace and
comment minifier: names and code stay as written), so the client keeps within its budget
(issue 7: under 15 KB gzipped, all of it).
"""

from __future__ import annotations

import importlib.resources
import re

import rjsmin

#: The client's sources, found through the package: a checkout's folders are not installed.
ASSET_FOLDER = importlib.resources.files("archive.site.search") / "client"
#: The client, in load order: served as one file, search.js (one request, and gzip sees them
#: together); counts.js, the filter panel's code, is fetched only when that panel opens.
CLIENT_FILES = ("engine.js", "ui.js")
CLIENT_SCRIPT = "search.js"
COUNTS_SCRIPT = "counts.js"
#: The bar chart: fetched by ui.js after a query's first results are shown (so it adds nothing
#: to them), and loaded by the home page and /live, which draw their own data with it.
CHART_SCRIPT = "chart.js"
CLIENT_PREFIX = "assets/search/"

_EXPORT = re.compile(r"^export\s+(?=(?:const|let|function|class)\b)", re.M)
_EXPORTED = re.compile(r"^export\s+(?:const|let|function|class)\s+([A-Za-z_$][\w$]*)", re.M)


def classic_analysis(source: str) -> str:
    """analysis.js (an ES module) as a classic script defining ``ArchiveAnalysis``.

    Chromium refuses module scripts from ``file://``, so the site loads classic scripts; the
    module stays the single source of truth and this wrapper is derived from it at build time.
    """
    names = _EXPORTED.findall(source)
    if "export default" in source or re.search(r"^\s*(?:import|export)\b(?!\s+(?:const|let|"
                                               r"function|class))", source, re.M):
        raise ValueError("analysis.js uses an export form the classic wrapper cannot convert")
    body = _EXPORT.sub("", source)
    exported = ", ".join(names)
    return (f"(function (root) {{\n\"use strict\";\n{body}\n"
            f"root.ArchiveAnalysis = {{ {exported} }};\n}})(typeof globalThis !== \"undefined\" "
            f"? globalThis : this);\n")


def served(source: str) -> bytes:
    """A client file as a visitor fetches it: minified, ending in a line break."""
    return (rjsmin.jsmin(source) + "\n").encode("utf-8")


def asset_files() -> dict[str, bytes]:
    """Client files the site needs, by path relative to the site root: ``search.js`` (the
    classic-script form of analysis.js, then engine.js and ui.js), ``counts.js`` and
    ``chart.js``, each minified (``served``)."""
    parts = [classic_analysis((ASSET_FOLDER / "analysis.js").read_text("utf-8"))]
    parts += [(ASSET_FOLDER / name).read_text("utf-8") for name in CLIENT_FILES]
    files = {CLIENT_PREFIX + CLIENT_SCRIPT: served("\n".join(parts))}
    for name in (COUNTS_SCRIPT, CHART_SCRIPT):
        files[CLIENT_PREFIX + name] = served((ASSET_FOLDER / name).read_text("utf-8"))
    return files
