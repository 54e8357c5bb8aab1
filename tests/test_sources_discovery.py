"""Which files of a folder are articles: no article is dropped by a guess, and every file
passed over is named in the summary with the rule that decided it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from cli_checks import assert_clean, invoke


def write_stories(folder: Path, count: int) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for n in range(count):
        name = f"story{n}.txt"
        (folder / name).write_text(f"Harbour story number {n}\n\nThe harbour reopened after "
                                   f"repairs, officials said on day {n}.\n", encoding="utf-8")
        names.append(name)
    return names


def index_json(folder: Path, index: Path) -> dict:
    result = invoke("index", folder, "--index", index, "--json")
    assert_clean(result)
    return json.loads(result.stdout)


def test_txt_articles_beside_a_manifest_and_a_checksum_list_all_go_in(tmp_path: Path) -> None:
    news = tmp_path / "news"
    names = write_stories(news, 4)
    (news / "manifest.json").write_text(json.dumps(
        [{"file": n, "sha256": hashlib.sha256(n.encode()).hexdigest()} for n in names]))
    (news / "SHA256SUMS").write_text("".join(
        f"{hashlib.sha256((news / n).read_bytes()).hexdigest()}  {n}\n" for n in names))
    (news / "files.md5").write_text("d41d8cd98f00b204e9800998ecf8427e  story0.txt\n")
    (news / "LICENSE").write_text("Permission is hereby granted, free of charge...\n")
    report = index_json(news, tmp_path / "index")
    assert report["added"] == 4 and report["skipped"] == [] and report["warnings"] == []
    assert {(p["path"], p["rule"]) for p in report["passed_over_files"]} == {
        ("news/manifest.json", "manifest or data file"), ("news/SHA256SUMS", "checksum list"),
        ("news/files.md5", "checksum list"), ("news/LICENSE", "documentation")}
    assert report["passed_over"] == 4


def test_a_checksum_list_is_known_by_its_lines_whatever_its_name(tmp_path: Path) -> None:
    news = tmp_path / "news"
    write_stories(news, 2)
    (news / "hashes.txt").write_text(
        "SHA256 (story0.txt) = " + "ab" * 32 + "\n" + "cd" * 20 + " *story1.txt\n")
    report = index_json(news, tmp_path / "index")
    assert report["added"] == 2
    assert report["passed_over_files"] == [{"path": "news/hashes.txt", "rule": "checksum list"}]


def test_the_summary_names_a_few_files_per_rule(tmp_path: Path) -> None:
    news = tmp_path / "news"
    write_stories(news, 2)
    for n in range(5):
        (news / f"photo{n}.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00")
    (news / "SHA1SUMS").write_text("da39a3ee5e6b4b0d3255bfef95601890afd80709  story0.txt\n")
    result = invoke("index", news, "--index", tmp_path / "index", "--no-progress")
    assert_clean(result)
    lines = result.stdout.splitlines()
    assert "passed over (not an article format): news/photo0.png, news/photo1.png, " \
           "news/photo2.png and 2 more" in lines
    assert "passed over (checksum list): news/SHA1SUMS" in lines


def test_notes_beside_a_collection_are_passed_over_and_named(tmp_path: Path) -> None:
    """Reuters-21578's layout: many .sgm files with a few .txt word lists and notes."""
    data = tmp_path / "collection"
    data.mkdir()
    story = ('<REUTERS NEWID="{n}"><DATE>26-FEB-1987 15:01:01.79</DATE><TEXT>'
             '<TITLE>STORY {n}</TITLE><BODY>Cocoa prices rose on day {n}.</BODY></TEXT></REUTERS>')
    for n in range(3):
        (data / f"reut2-00{n}.sgm").write_text(story.format(n=n + 1))
    (data / "all-topics-strings.lc.txt").write_text("acq\nalum\ncocoa\n")
    report = index_json(data, tmp_path / "index")
    assert report["added"] == 3
    assert report["passed_over_files"] == [
        {"path": "collection/all-topics-strings.lc.txt", "rule": "notes beside a collection"}]


def test_a_file_indexed_before_it_was_known_as_a_checksum_list_leaves_the_index(
        tmp_path: Path) -> None:
    news = tmp_path / "news"
    write_stories(news, 2)
    sums = news / "hashes"
    sums.write_text("Checksums follow\n\n" + "ab" * 32 + "  story0.txt\n")  # read as an article
    first = index_json(news, tmp_path / "index")
    assert first["added"] == 3
    sums.write_text("ab" * 32 + "  story0.txt\n" + "cd" * 32 + "  story1.txt\n")
    second = index_json(news, tmp_path / "index")
    assert second["removed"] == 1
    assert second["passed_over_files"] == [{"path": "news/hashes", "rule": "checksum list"}]
