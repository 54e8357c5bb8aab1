"""The on-disk Whoosh store and the incremental indexer, used directly (no CLI)."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest

from archive import analysis, store
from archive.article import Article
from archive.indexer import Indexer
from archive.search import Archive


def analyse(text: str) -> list[str]:
    return [token.text for token in analysis.news_analyzer()(text)]


# --- analysis and schema ---------------------------------------------------------------------------

def test_analyzer_lowercases_drops_stop_words_and_stems() -> None:
    assert analyse("The running of the bulls and their riders") == ["run", "bull", "rider"]


def test_analyzer_keeps_us_the_country_and_reads_curly_apostrophes() -> None:
    assert analyse("US troops") == ["us", "troop"]
    assert analyse("Hezbollah\u2019s fighters didn\u2019t retreat") == \
        analyse("Hezbollah's fighters didn't retreat") == ["hezbollah", "fighter", "retreat"]


def test_analyzer_joins_dotted_abbreviations_and_drops_lone_letters() -> None:
    # "U.S." and "US" meet; an initial or a stray letter is no word; "J.Smith" is no acronym
    assert analyse("U.S. troops") == analyse("US troops") == ["us", "troop"]
    assert analyse("the U.S.-led talks in the U.K.") == ["us", "led", "talk", "uk"]
    assert analyse("J. K. Rowling and J.K. Rowling, J.Smith") == ["rowl", "jk", "rowl", "smith"]
    assert analyse("vitamin C at 3 p.m.") == ["vitamin", "3", "pm"]
    assert analyse("bbc.co.uk 3.5") == ["bbc", "co", "uk", "3", "5"]


def test_schema_boosts_titles_stores_bodies_and_sorts_dates() -> None:
    schema = store.build_schema()
    assert schema["title"].format.field_boost == 2.0
    assert schema["body"].stored and schema["captions"].stored
    assert schema["date"].column_type is not None  # sortable
    assert {"title", "body", "captions", "source", "date", "id", "path"} <= set(schema.names())


# --- documents -------------------------------------------------------------------------------------

FULL = Article(
    id="news-full-abc123", title="Cocoa prices hit record", body="Cocoa rose.\n\nTraders cheered.",
    path="news/full.txt", source="Reuters", date=datetime(2017, 8, 27), date_source="inferred",
    captions=("A trader at work. (Photo: Reuters)", "The port. (Photo: AP)"),
    url="https://example.com/cocoa", author="Jane Doe", credits="Editing by Bob",
    dateline="London", places=("Ivory Coast", "Ghana"), topics=("cocoa",), language="en",
)


def test_an_article_comes_back_from_the_index_unchanged(tmp_path: Path) -> None:
    ix = store.create_index(tmp_path / "index")
    writer = store.open_writer(ix, tmp_path / "index")
    assert store.add_articles(writer, [FULL]) == 1
    writer.commit()
    (back,) = list(store.iter_articles(store.open_index(tmp_path / "index")))
    assert back == replace(FULL, cluster=FULL.id)  # an article is its own cluster by default
    assert back.content_hash == FULL.content_hash


def test_an_index_opened_without_mmap_reads_and_searches_the_same(tmp_path: Path) -> None:
    """The site build opens the index with plain reads (memory), nothing else may differ."""
    ix = store.create_index(tmp_path / "index")
    writer = store.open_writer(ix, tmp_path / "index")
    store.add_articles(writer, [FULL, replace(FULL, id="other-1", title="Another volcano")])
    writer.commit()
    plain = store.open_index(tmp_path / "index", mmap=False)
    assert plain.storage.supports_mmap is False
    assert list(store.iter_articles(plain)) == list(store.iter_articles(
        store.open_index(tmp_path / "index")))
    with Archive(tmp_path / "index", mmap=False) as a, Archive(tmp_path / "index") as b:
        for query in ("volcano", "title:another", FULL.title.split()[0]):
            assert [(h.id, h.score) for h in a.search(query).hits] == \
                [(h.id, h.score) for h in b.search(query).hits]


def test_mapped_segment_files_read_like_bytesio_without_copying() -> None:
    """Whoosh's BufferFile copies every mapped part into a BytesIO; ours reads the mapping."""
    import random
    from io import BytesIO

    from whoosh.filedb import compound

    from archive.store.durable import MappedFile, ViewReader
    assert compound.BufferFile is MappedFile
    data = bytes(random.Random(1).randrange(256) for _ in range(5000)) + b"one\ntwo\nend"
    ours, reference = ViewReader(memoryview(data)), BytesIO(data)
    rng = random.Random(2)
    for _ in range(5000):
        op = rng.choice(["read", "readline", "seek", "seek_cur", "seek_end"])
        if op == "read":
            n = rng.choice([-1, 0, 1, 7, 100, 10000])
            assert ours.read(n) == reference.read(n)
        elif op == "readline":
            n = rng.choice([-1, 3, 50])
            assert ours.readline(n) == reference.readline(n)
        elif op == "seek":
            n = rng.randrange(0, len(data) + 10)
            assert ours.seek(n) == reference.seek(n)
        elif op == "seek_cur":
            n = rng.randrange(0, 20)
            assert ours.seek(n, 1) == reference.seek(n, 1)
        else:
            n = rng.randrange(-100, 0)
            assert ours.seek(n, 2) == reference.seek(n, 2)
        assert ours.tell() == reference.tell()
    buffer = bytearray(10)
    ours.seek(len(data) - 4)
    assert ours.readinto(buffer) == 4 and buffer[:4] == data[-4:]


def test_empty_fields_are_left_out_of_the_document() -> None:
    bare = Article(id="a", title="T", body="B", path="a.txt")
    doc = store.to_document(bare)
    assert "source" not in doc and "date" not in doc and "captions" not in doc
    assert doc["date_source"] == "unknown"


# --- manifest --------------------------------------------------------------------------------------

def test_manifest_round_trips_and_leaves_no_temp_files(tmp_path: Path) -> None:
    files = {"news/a.txt": store.FileState(10, 123, "ab" * 32, 1),
             "news/b.jsonl": store.FileState(99, 456, "cd" * 32, 7)}
    store.write_manifest(tmp_path, files)
    assert store.read_manifest(tmp_path) == files
    assert sorted(p.name for p in tmp_path.iterdir()) == [store.MANIFEST]


@pytest.mark.parametrize("content", ["{not json", '{"files": {"a": {"size": 1}}}', "[]"])
def test_a_damaged_manifest_reads_as_empty(tmp_path: Path, content: str) -> None:
    (tmp_path / store.MANIFEST).write_text(content)
    assert store.read_manifest(tmp_path) == {}


def test_a_missing_manifest_reads_as_empty(tmp_path: Path) -> None:
    assert store.read_manifest(tmp_path) == {}


# --- opening, locking --------------------------------------------------------------------------------

def test_opening_a_folder_without_an_index_says_to_run_archive_index(tmp_path: Path) -> None:
    with pytest.raises(store.IndexMissing, match="run `archive index` first"):
        store.open_index(tmp_path / "nothing-here")
    assert not store.exists(tmp_path)


def test_a_second_writer_gives_up_after_the_lock_timeout(tmp_path: Path) -> None:
    ix = store.create_index(tmp_path / "index")
    holder = ix.writer()
    try:
        with pytest.raises(store.IndexBusy, match="locked"):
            store.open_writer(store.open_index(tmp_path / "index"), tmp_path / "index",
                              lock_timeout=0.3)
    finally:
        holder.cancel()
    store.open_writer(ix, tmp_path / "index", lock_timeout=0.3).cancel()  # free again


def test_the_index_lock_makes_its_folder_and_excludes_other_holders_and_writers(
        tmp_path: Path) -> None:
    folder = tmp_path / "new" / "index"  # not there yet: the lock comes before the index
    with store.IndexLock(folder, timeout=0.3):
        assert (folder / store.WRITE_LOCK).exists() and not store.exists(folder)
        with pytest.raises(store.IndexBusy, match=r"locked .*waited 0\.3s"):
            store.IndexLock(folder, timeout=0.3).acquire()
        ix = store.create_index(folder)
        with pytest.raises(store.IndexBusy):  # a writer with a lock of its own waits too
            store.open_writer(ix, folder, lock_timeout=0.3)
    store.IndexLock(folder, timeout=0.3).acquire().release()  # free again
    store.open_writer(ix, folder, lock_timeout=0.3).cancel()


def test_repeated_ids_finds_live_copies_not_replaced_articles(tmp_path: Path) -> None:
    """A replaced article counts twice in the id term's statistics until a merge; only live
    copies count as held twice."""
    folder = tmp_path / "index"
    ix = store.create_index(folder)
    first, second = (Article(id=f"story-{n}", title=f"Story {n}", body="Words.",
                             path=f"news/{n}.txt") for n in (1, 2))
    writer = ix.writer()
    store.add_articles(writer, [first, second])
    writer.commit()
    writer = ix.writer()
    writer.update_document(**store.to_document(replace(first, title="Story 1, revised")))
    writer.add_document(**store.to_document(second))
    writer.commit(merge=False)
    with store.open_index(folder).searcher() as searcher:
        reader = searcher.reader()
        assert reader.doc_frequency("id", "story-1") == 2 and reader.doc_count() == 3
        assert list(store.repeated_ids(reader)) == ["story-2"]
        assert len(store.repeated_ids(reader)["story-2"]) == 2


def test_resolve_index_prefers_the_option_then_the_environment(monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    monkeypatch.delenv("ARCHIVE_INDEX", raising=False)
    assert store.resolve_index(None) == Path("index")
    monkeypatch.setenv("ARCHIVE_INDEX", "/srv/news-index")
    assert store.resolve_index(None) == Path("/srv/news-index")
    assert store.resolve_index("mine") == Path("mine")


# --- the indexer ---------------------------------------------------------------------------------------

def count(folder: Path) -> int:
    with Archive(folder) as archive:
        return archive.search("").total


def test_first_run_adds_every_article_and_records_every_file(tmp_path: Path, news_dir: Path
                                                             ) -> None:
    news = news_dir
    report = Indexer(tmp_path / "index").run([news])
    assert (report.added, report.files_read, report.unchanged) == (5, 5, 0)
    manifest = store.read_manifest(tmp_path / "index")
    assert sorted(manifest) == sorted(f"news/{p.name}" for p in news.iterdir())
    assert all(state.articles == 1 for state in manifest.values())
    assert count(tmp_path / "index") == 5


def test_a_touched_but_identical_file_is_hashed_not_parsed(tmp_path: Path, news_dir: Path) -> None:
    news = news_dir
    Indexer(tmp_path / "index").run([news])
    volcano = news / "volcano.txt"
    os.utime(volcano, ns=(volcano.stat().st_atime_ns, volcano.stat().st_mtime_ns + 10**9))
    report = Indexer(tmp_path / "index").run([news])
    assert (report.unchanged, report.files_read, report.updated, report.added) == (5, 0, 0, 0)
    state = store.read_manifest(tmp_path / "index")["news/volcano.txt"]
    assert state.mtime_ns == volcano.stat().st_mtime_ns  # the new mtime is remembered


def test_an_interrupted_run_keeps_its_commits_and_the_next_run_finishes(tmp_path: Path,
                                                                       news_dir: Path) -> None:
    news = news_dir
    seen: list[str] = []

    def crash_on_the_third_file(source: object) -> None:
        seen.append(source.relative)  # type: ignore[attr-defined]
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Indexer(tmp_path / "index", commit_every=2).run([news], progress=crash_on_the_third_file)
    assert count(tmp_path / "index") == 2                  # the first commit survived
    assert len(store.read_manifest(tmp_path / "index")) == 2

    report = Indexer(tmp_path / "index").run([news])
    assert (report.unchanged, report.added, report.files_read) == (2, 3, 3)
    assert count(tmp_path / "index") == 5                  # nothing lost, nothing doubled


def test_rebuild_waits_for_the_lock_instead_of_wiping_a_busy_index(tmp_path: Path,
                                                                   news_dir: Path) -> None:
    news = news_dir
    Indexer(tmp_path / "index").run([news])
    holder = store.open_index(tmp_path / "index").writer()
    try:
        with pytest.raises(store.IndexBusy):
            Indexer(tmp_path / "index", lock_timeout=0.3).run([news], rebuild=True)
    finally:
        holder.cancel()
    assert count(tmp_path / "index") == 5
    assert len(store.read_manifest(tmp_path / "index")) == 5


def test_the_manifest_on_disk_is_plain_json(tmp_path: Path, news_dir: Path) -> None:
    Indexer(tmp_path / "index").run([news_dir])
    data = json.loads((tmp_path / "index" / store.MANIFEST).read_text("utf-8"))
    assert data["version"] == 1
    assert set(data["files"]["news/volcano.txt"]) == {"size", "mtime_ns", "sha256", "articles"}


def test_commits_merge_small_segments_only(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Settled segments (as many live documents as a bulk commit writes) are never merged
    again, where Whoosh's MERGE_SMALL would merge them all once ten had piled up; small ones
    (a day's run) are still merged among themselves, and a settled segment emptied by
    deletions below the mark is merged with them. Searches see every article throughout."""
    from archive.store import fastwriter

    monkeypatch.setattr(fastwriter, "SETTLED_SEGMENT_DOCS", 30)
    folder = tmp_path / "index"
    ix = store.create_index(folder)
    number, deleted = 0, 0

    def commit(count: int) -> list[int]:
        nonlocal number
        writer = store.open_writer(store.open_index(folder), folder)
        for _ in range(count):
            number += 1
            store.add_articles(writer, [Article(id=f"story-{number}", title=f"Story {number}",
                                                body=f"Words about story {number}.",
                                                path=f"news/{number}.txt")])
        writer.commit()
        with store.open_index(folder).searcher() as searcher:
            assert searcher.doc_count() == number - deleted
        return [s.doc_count_all() for s in store.open_index(folder)._segments()]

    for _ in range(12):  # MERGE_SMALL merges ten segments of 30 into one
        sizes = commit(30)
    assert sizes == [30] * 12
    for _ in range(30):
        sizes = commit(2)
    assert sizes[:12] == [30] * 12 and 2 < len(sizes) - 12 < 20 and sum(sizes) == number
    assert max(sizes[12:]) > 2  # small ones merged among themselves
    # the first segment emptied below the mark: merged into the next small merge
    writer = store.open_writer(ix, folder)
    for n in range(1, 25):
        writer.delete_by_term("id", f"story-{n}")
    writer.commit()
    deleted = 24
    for _ in range(30):
        sizes = commit(2)
    assert sizes[:11] == [30] * 11 and 30 not in sizes[11:]
    assert sum(sizes) == number - deleted
