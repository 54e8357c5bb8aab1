"""The installed package must find its own data: templates and the search client's scripts.

A path walked up from a module's ``__file__`` works in a checkout and breaks in an installed
wheel, where the package sits in site-packages with no ``templates/`` beside it. So package
data is reached only through ``importlib.resources``, and these tests hold every module to it.
"""

from __future__ import annotations

import ast
import importlib
from importlib import resources
from pathlib import Path

import archive
from archive import render
from archive.site import search as site_search

PACKAGE = Path(archive.__file__).resolve().parent


def path_escapes(source: str) -> list[str]:
    """What in ``source`` builds a path from the module's location or walks up a folder tree.

    Any of these in a module means it reads files next to its source, which only exist in
    a checkout."""
    found = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name) and node.id == "__file__":
            found.append(f"line {line}: __file__")
        elif (isinstance(node, ast.Attribute) and node.attr == "parent"
              and isinstance(node.value, ast.Attribute) and node.value.attr == "parent"):
            found.append(f"line {line}: .parent.parent")
        elif (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
              and node.value.attr == "parents"):
            found.append(f"line {line}: .parents[...]")
        elif isinstance(node, ast.Attribute) and node.attr == "pardir":
            found.append(f"line {line}: os.pardir")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "dirname" and node.args
              and isinstance(node.args[0], ast.Call)
              and isinstance(node.args[0].func, ast.Attribute)
              and node.args[0].func.attr == "dirname"):
            found.append(f"line {line}: dirname(dirname(...))")
    return found


def test_the_scan_catches_each_way_out_of_a_package() -> None:
    for source in ('ROOT = Path(__file__).parent',
                   'x = Path(p).resolve().parent.parent / "templates"',
                   'x = here.parents[2] / "templates"',
                   'x = os.path.join(here, os.pardir)',
                   'x = os.path.dirname(os.path.dirname(p))'):
        assert path_escapes(source), source
    assert path_escapes('x = files("archive.templates") / "site"\nok = p not in ("..",)') == []


def test_no_module_builds_a_path_out_of_its_package() -> None:
    offenders = {str(path.relative_to(PACKAGE.parent)): found
                 for path in sorted(PACKAGE.rglob("*.py"))
                 if (found := path_escapes(path.read_text("utf-8")))}
    assert offenders == {}


def test_package_data_is_found_through_the_package() -> None:
    """``archive.templates`` imports as a package in an editable install and a wheel alike."""
    templates = resources.files(importlib.import_module("archive.templates"))
    assert (templates / "cli" / "results.txt").is_file()
    assert (resources.files("archive.site.search") / "client" / "analysis.js").is_file()
    assert render.builtin_templates() == templates
    for name in ("analysis.js", *site_search.CLIENT_FILES, site_search.COUNTS_SCRIPT,
                 site_search.CHART_SCRIPT):
        assert (site_search.ASSET_FOLDER / name).read_text("utf-8").strip()
    assert set(site_search.asset_files()) == {"assets/search/search.js",
                                              "assets/search/counts.js",
                                              "assets/search/chart.js"}
