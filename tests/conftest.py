"""Shared test helpers: where the seeds and corpora are, a CLI runner bound to a temp index,
and a handful of small news articles written for the tests.

Nothing here is autouse: a test gets a helper only by asking for it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from archive.cli import main

REPO = Path(__file__).resolve().parent.parent
SEEDS = REPO / "seeds"
CORPORA = REPO.parent / "shared" / "corpora"
CORPORA_REASON = "needs ../shared/corpora (present in CI; absent in a fresh clone)"

#: ``@needs_corpora`` (or ``pytestmark = pytest.mark.needs_corpora``) skips a test, with the
#: reason above, where the shared corpora are not next to the repo.
needs_corpora = pytest.mark.skipif(not CORPORA.is_dir(), reason=CORPORA_REASON)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"needs_corpora: {CORPORA_REASON}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``needs_corpora`` (or ``corpus``) are skipped where the corpora are absent;
    the skip is decided before any fixture runs, so a corpus fixture never starts."""
    if CORPORA.is_dir():
        return
    skip = pytest.mark.skip(reason=CORPORA_REASON)
    for item in items:
        if item.get_closest_marker("needs_corpora") or item.get_closest_marker("corpus"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def seeds_dir() -> Path:
    """The repo's ``seeds/`` folder (the default input of ``archive index``)."""
    return SEEDS


@pytest.fixture(scope="session")
def corpora_dir() -> Path:
    """``../shared/corpora``; the test is skipped where it is absent."""
    if not CORPORA.is_dir():
        pytest.skip(CORPORA_REASON)
    return CORPORA


# --- running the CLI ----------------------------------------------------------------------------

class ArchiveCLI:
    """Runs ``archive ...`` in-process against one index folder.

    ``cli("search", "volcano", "--json")`` runs ``archive search volcano --json --index DIR``.
    Unexpected exceptions are not swallowed: a crash fails the test with its traceback.
    """

    def __init__(self, index: Path):
        self.index = index

    def __call__(self, *args: Any, catch_exceptions: bool = False) -> Result:
        argv = [str(a) for a in args] + ["--index", str(self.index)]
        return CliRunner().invoke(main, argv, catch_exceptions=catch_exceptions)

    def json(self, *args: Any, exit_code: int = 0) -> Any:
        """Run with ``--json``, check the exit status, return the parsed output."""
        result = self(*args, "--json")
        assert result.exit_code == exit_code, (result.exit_code, result.output)
        return json.loads(result.stdout)

    def search(self, *query_and_options: Any) -> list[str]:
        """Ids of the hits of one search, in result order (empty when nothing matched)."""
        result = self("search", *query_and_options, "--json")
        assert result.exit_code in (0, 1), (result.exit_code, result.output)
        return [hit["id"] for hit in json.loads(result.stdout)["hits"]]


@pytest.fixture(scope="session")
def cli_for() -> type[ArchiveCLI]:
    """``cli_for(folder)``: the CLI bound to any index folder (for module-scoped indexes)."""
    return ArchiveCLI


@pytest.fixture
def cli(tmp_path: Path) -> ArchiveCLI:
    """The CLI with ``--index`` pointing at ``tmp_path/index`` (not created yet)."""
    return ArchiveCLI(tmp_path / "index")


# --- fixture articles ---------------------------------------------------------------------------

#: Five short articles with distinct dates (inferred from the text), sources and vocabulary.
#: "fishing village" is a phrase in volcano.txt; election.txt has both words three apart.
NEWS: dict[str, str] = {
    "volcano.txt": """\
Volcano erupts near fishing village

The volcano on the island erupted on June 5, 2016, sending a plume of ash over the fishing
village at its foot, officials said.

Residents left by boat before the eruption reached the harbour.

Reuters
""",
    "election.txt": """\
Coalition wins regional election

By Ana Torres

The governing coalition won the regional election held on March 3, 2015, promising new fishing
quotas for every village on the coast.

Turnout was the highest in a decade.

AP
""",
    "orchestra.txt": """\
City orchestra premieres a new symphony

VIENNA (Reuters) - The city orchestra gave the first performance of a symphony by a young
composer on August 12, 2017, to a sold-out concert hall.

Critics praised the slow movement.

(Reporting by Karl Weber; Editing by Ruth Pitchford)
""",
    "harvest.txt": """\
Grape harvest starts early after heatwave

Growers began picking grapes on August 30, 2017, two weeks earlier than usual, after a summer
heatwave that one farmer called a symphony of sunshine.

BBC News
""",
    "library.txt": """\
Library extends opening hours

The town library will open on Sundays from next month, the council said, after a petition
signed by thousands of readers.
""",
}


def write_news(folder: Path, names: Sequence[str] | None = None) -> Path:
    """Write the fixture articles (all, or those named) into ``folder``; return it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names or NEWS:
        (folder / name).write_text(NEWS[name], encoding="utf-8")
    return folder


@pytest.fixture
def news_dir(tmp_path: Path) -> Path:
    """A fresh ``tmp_path/news`` folder holding the fixture articles, free to modify."""
    return write_news(tmp_path / "news")


@pytest.fixture(scope="session")
def news_index(tmp_path_factory: pytest.TempPathFactory) -> ArchiveCLI:
    """The CLI bound to an index of the fixture articles, built once: treat it as read-only."""
    base = tmp_path_factory.mktemp("news-index")
    indexed = ArchiveCLI(base / "index")
    result = indexed("index", write_news(base / "news"), "--no-progress")
    assert result.exit_code == 0, result.output
    return indexed

