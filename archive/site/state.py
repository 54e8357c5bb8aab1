"""What an output folder remembers between site builds: the fingerprint of the last build's
inputs and the files it produced (so an unchanged index skips the build, and files no page
produces any more are removed), and the builder's own JSON caches.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

from archive import __version__, store
from archive.site import search as site_search

if TYPE_CHECKING:
    from archive.site.builder import SiteConfig

STATE_FILE = ".archive-site.json"


def fingerprint(index_dir: Path, theme: str) -> str:
    """Everything a build depends on: index generation, and the ``theme_fingerprint``."""
    digest = hashlib.sha256(theme.encode())
    ix = store.open_index(index_dir)
    digest.update(f"{ix.latest_generation()}".encode())
    for toc in sorted(index_dir.glob("_*.toc")):
        digest.update(toc.read_bytes())
    return digest.hexdigest()


def theme_fingerprint(env: jinja2.Environment, config: SiteConfig) -> str:
    """Everything a page depends on besides its own content: the package version, the
    config, the templates and assets."""
    digest = hashlib.sha256()
    digest.update(__version__.encode())
    digest.update(json.dumps(asdict(config), sort_keys=True).encode())
    loader = env.loader
    assert isinstance(loader, jinja2.FileSystemLoader)
    for folder in loader.searchpath:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                digest.update(str(path.relative_to(folder)).encode())
                digest.update(path.read_bytes())
    for relative, data in sorted(site_search.asset_files().items()):  # an asset too
        digest.update(relative.encode())
        digest.update(data)
    return digest.hexdigest()


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
        return data if isinstance(data, dict) else {}
    except (FileNotFoundError, ValueError):
        return {}


def write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data), "utf-8")
    tmp.replace(path)


def read_state(out: Path) -> dict[str, Any]:
    return read_json(out / STATE_FILE)


def write_state(out: Path, digest: str, files: set[str]) -> None:
    write_json(out / STATE_FILE, {"fingerprint": digest, "files": sorted(files)})
