"""The browser client: its sources in ``client/`` beside this module, served in a derived form.

The sources stay as written (analysis.js an ES module the JS tests import, comments and
indentation for readers); what a visitor fetches is ``assets/search/search.js`` (analysis.js
as a classic script, then engine.js and ui.js), ``counts.js`` and ``chart.js``, each less its
whole-line comments, indentation and blank lines.
"""

from __future__ import annotations

import importlib.resources
import re

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
#: The first line of the classic wrapper. It names the module that wrote it before the
#: search package existed; it stays as it is so the served file keeps its bytes.
_GENERATED = "// Generated from analysis.js by archive/site/search/client.py: do not edit.\n"


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
    return (f"{_GENERATED}(function (root) {{\n\"use strict\";\n{body}\n"
            f"root.ArchiveAnalysis = {{ {exported} }};\n}})(typeof globalThis !== \"undefined\" "
            f"? globalThis : this);\n")


_COMMENT_LINE = re.compile(r"^[ \t]*//.*\n", re.M)
_DOC_COMMENT = re.compile(r"^[ \t]*/\*(?:[^*]|\*(?!/))*\*/[ \t]*\n", re.M)


def without_comments(source: str) -> str:
    """The client as served: the same code, less its whole-line comments, indentation and
    blank lines.

    Only lines that hold nothing but a comment (``// ...``, ``/** ... */``) go, and the
    leading blanks of lines outside a template literal; code, names and line breaks stay as
    written, so the served file is still readable, and the bytes a visitor fetches before
    the first result are code. The sources keep them (the first line, naming the file's role
    and its source, is kept too)."""
    head, _, rest = source.partition("\n")
    code = _DOC_COMMENT.sub("", _COMMENT_LINE.sub("", rest))
    lines, in_template = [], False
    for line in code.split("\n"):
        if not in_template:
            line = line.strip()
            if not line:
                continue
        lines.append(line)
        if line.count("`") % 2:
            in_template = not in_template
    return head + "\n" + "\n".join(lines) + "\n"


def asset_files() -> dict[str, bytes]:
    """Client files the site needs, by path relative to the site root: ``search.js`` (the
    classic-script form of analysis.js, then engine.js and ui.js, each as written less its
    whole-line comments), ``counts.js`` and ``chart.js``."""
    parts = [classic_analysis((ASSET_FOLDER / "analysis.js").read_text("utf-8"))]
    parts += [(ASSET_FOLDER / name).read_text("utf-8") for name in CLIENT_FILES]
    files = {CLIENT_PREFIX + CLIENT_SCRIPT: "".join(map(without_comments, parts)).encode("utf-8")}
    for name in (COUNTS_SCRIPT, CHART_SCRIPT):
        files[CLIENT_PREFIX + name] = without_comments(
            (ASSET_FOLDER / name).read_text("utf-8")).encode("utf-8")
    return files
