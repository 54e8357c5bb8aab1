"""A changed file of many records re-indexes the records that changed, not the whole file.

Editing one story in a 1,000-story dump must not cost 1,000 re-indexed articles (issue 5's
"+1%" step), and what the index holds afterwards must be what a fresh build of the same
files holds: same articles, same fields, same wire-copy clusters, same hits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from archive import store
from archive.indexer import Indexer
from archive.search import Archive

TOPICS = ["harbour strike", "grain harvest", "volcano ash", "election council", "rail tariff"]


def write_dump(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")


def records(count: int = 40) -> list[dict[str, Any]]:
    out = []
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        body = f"Story {i} about the {topic}. " + " ".join(
            f"{topic.split()[0]}{j}" for j in range(i % 7 + 3))
        out.append({"id": f"r{i}", "title": f"{topic.title()} report {i}", "body": body,
                    "date": f"2020-01-{i % 28 + 1:02d}", "source": "Wire"})
    if count > 30:
        out[30]["body"] = out[3]["body"]  # a wire copy inside the dump
    return out


def holdings(folder: Path) -> dict[str, dict[str, Any]]:
    """Every article's stored fields, keyed by id."""
    ix = store.open_index(folder)
    with ix.searcher() as searcher:
        return {d["id"]: d for d in searcher.documents()}


def hit_ids(folder: Path, query: str) -> set[str]:
    with Archive(folder) as archive:
        return {h.id for h in archive.search(query, page_size=100, facets=False).hits}


def test_an_edited_record_is_the_only_one_written_again(tmp_path: Path) -> None:
    news = tmp_path / "news"
    news.mkdir()
    data = records()
    write_dump(news / "dump.jsonl", data)
    first = Indexer(tmp_path / "index").run([news])
    assert first.added == 40

    data[7]["body"] += " A late correction about a tsunami."   # edited
    data[12]["title"] = "Grain harvest revised"                   # edited (title only)
    data[33]["body"] = data[3]["body"]                            # becomes a wire copy
    data.pop()                                                    # the last record goes
    write_dump(news / "dump.jsonl", data)
    report = Indexer(tmp_path / "index").run([news])
    assert (report.updated, report.added, report.removed, report.unchanged) == (3, 0, 1, 36)
    assert report.files_read == 1

    data += [{"id": "r40", "title": "Volcano ash new report", "body": "Fresh ash fell."},
             {"id": "r41", "title": "Rail tariff", "body": data[3]["body"]}]  # a new copy
    write_dump(news / "dump.jsonl", data)
    report = Indexer(tmp_path / "index").run([news])
    assert (report.updated, report.added, report.removed, report.unchanged) == (0, 2, 0, 39)

    Indexer(tmp_path / "fresh").run([news])
    assert holdings(tmp_path / "index") == holdings(tmp_path / "fresh")
    for query in ("tsunami", "grain", "revised", "volcano", "harbour0", "story"):
        assert hit_ids(tmp_path / "index", query) == hit_ids(tmp_path / "fresh", query), query
    assert len(hit_ids(tmp_path / "index", "tsunami")) == 1


def test_a_rewritten_file_with_the_same_records_writes_nothing(tmp_path: Path) -> None:
    news = tmp_path / "news"
    news.mkdir()
    data = records(10)
    write_dump(news / "dump.jsonl", data)
    Indexer(tmp_path / "index").run([news])
    segments = sorted(p.name for p in (tmp_path / "index").glob("*.seg"))
    # same records, other bytes (key order and spacing): read again, nothing re-indexed
    (news / "dump.jsonl").write_text(
        "".join(json.dumps(dict(reversed(list(r.items()))), indent=None,
                           separators=(", ", ":  ")) + "\n" for r in data), "utf-8")
    report = Indexer(tmp_path / "index").run([news])
    assert (report.files_read, report.updated, report.added, report.unchanged) == (1, 0, 0, 10)
    assert sorted(p.name for p in (tmp_path / "index").glob("*.seg")) == segments
