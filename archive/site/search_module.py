"""The site's static search, behind the one small interface the builder uses.

``build`` writes the search bundle and client files into the output folder; ``page_markup``
is what the search page embeds. Swapping the engine means changing this module only.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from markupsafe import Markup

from archive.search import Archive
from archive.site import static_search
from archive.site.files import OutputFolder


def build(archive: Archive, folder: OutputFolder, procs: int | None = None) -> dict[str, Any]:
    report = static_search.build_bundle(archive, folder, procs=procs)
    for relative, data in static_search.asset_files().items():
        folder.write(relative, data)
    return asdict(report)


def page_markup(root: str) -> Markup:
    return static_search.page_markup(root)
