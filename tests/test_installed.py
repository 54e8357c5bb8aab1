"""The wheel, installed into a fresh virtual environment, runs the README's main job.

Tests that import ``archive`` from the checkout (or an editable install of it) cannot see what
a real install leaves out: package data reached through the source tree worked there and
crashed ``archive site`` from a wheel. So this builds the wheel from a copy of the sources,
installs it with its dependencies into a new venv, and runs the installed ``archive`` command
from a folder outside the checkout that holds only a copy of ``seeds/``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SEEDS

pytestmark = pytest.mark.installed

#: What a local run may have left in the checkout, at its top (a stale ``build/`` would go
#: into the wheel; ``archive/site`` must not be mistaken for a built ``site/``).
NOT_SOURCES_AT_TOP = {".git", "build", "dist", "index", "site", ".venv", ".pytest_cache",
                      ".hypothesis"}


def not_sources(folder: str, names: list[str]) -> set[str]:
    """``shutil.copytree``'s ignore: caches anywhere, run leftovers at the top."""
    left = {n for n in names if n == "__pycache__" or n.endswith(".egg-info")}
    return left | (NOT_SOURCES_AT_TOP & set(names) if Path(folder) == REPO else set())


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run a command; fail the test with its output when it exits non-zero."""
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-2000:])
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` folder of a fresh venv holding only the wheel and its dependencies."""
    root = tmp_path_factory.mktemp("installed")
    sources = root / "src"
    shutil.copytree(REPO, sources, ignore=not_sources)
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", root / "dist", sources,
        cwd=root)
    (wheel,) = (root / "dist").glob("newsarchive-*.whl")
    run(sys.executable, "-m", "venv", root / "venv", cwd=root)
    bin_dir = root / "venv" / "bin"
    # --no-compile: byte-compiling every dependency up front took as long as installing them
    run(bin_dir / "python", "-m", "pip", "install", "-q", "--no-compile", wheel, cwd=root)
    shutil.rmtree(sources)   # nothing the installed command does may need the sources
    return bin_dir


@pytest.fixture
def clean_env(installed: Path) -> dict[str, str]:
    """The environment, less whatever could lead the command back to the checkout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "ARCHIVE_INDEX")}
    env["PATH"] = f"{installed}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_installed_command_indexes_searches_and_builds_the_site(
        installed: Path, clean_env: dict[str, str], tmp_path: Path) -> None:
    work = tmp_path / "elsewhere"
    shutil.copytree(SEEDS, work / "seeds")
    assert REPO not in work.resolve().parents

    where = run(installed / "python", "-c", "import archive; print(archive.__file__)",
                cwd=work, env=clean_env)
    assert Path(where.strip()).is_relative_to(installed.parent), where

    run("archive", "index", cwd=work, env=clean_env)
    found = run("archive", "search", 'Hezbollah AND "Islamic State"', cwd=work, env=clean_env)
    assert found.startswith("1 article matches"), found
    assert "Hezbollah" in found
    run("archive", "site", cwd=work, env=clean_env)

    site = work / "site"
    assert {p.name for p in (site / "assets" / "search").iterdir()} >= {"search.js",
                                                                       "counts.js"}
    assert (site / "assets" / "style.css").is_file()
    assert "archive-search" in (site / "search" / "index.html").read_text("utf-8")
