"""An index written by an older version (its schema lacks a field this one needs) is named as
such, with the command that fixes it, instead of failing deep inside a search."""

from __future__ import annotations

from pathlib import Path

from whoosh import index

from archive import store
from conftest import ArchiveCLI, write_news


def old_index(folder: Path) -> None:
    """An index as an earlier release wrote it: no ``dated`` sort helper."""
    schema = store.build_schema()
    schema.remove("dated")
    folder.mkdir(parents=True)
    index.create_in(str(folder), schema, indexname=store.INDEX_NAME)


def test_search_on_an_outdated_index_says_rebuild(cli: ArchiveCLI) -> None:
    old_index(cli.index)
    result = cli("search", "volcano")
    assert result.exit_code == 1
    assert "built by an older version" in result.output and "dated" in result.output
    assert "archive index --rebuild" in result.output
    assert "Traceback" not in result.output


def test_index_refuses_to_update_it_but_rebuild_replaces_it(cli: ArchiveCLI,
                                                            tmp_path: Path) -> None:
    old_index(cli.index)
    news = write_news(tmp_path / "news")
    refused = cli("index", news, "--no-progress")
    assert refused.exit_code != 0 and "older version" in refused.output
    rebuilt = cli("index", news, "--rebuild", "--no-progress")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert cli("search", "volcano").exit_code == 0
