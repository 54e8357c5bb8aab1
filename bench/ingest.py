"""Ingest accuracy on real files nobody on this project wrote (``tests/data/ingest``).

Every file goes through the archive's own reader choice, as the indexer does it: ``discover``
on each layout folder, ``classify``, ``read_articles``, then ``enrich``. Each row of
``truth.jsonl`` (written by reading the files, see PROVENANCE.md) is matched to the article the
archive produced for that file: the ``entry``-th (0-based) of a multi-article file, the first
article when ``entry`` is null. A file the archive skips, passes over or fails on yields no
article, and every field of its rows counts as wrong; the reason is reported.

Rows fall into three parts, by layout: ``tuning`` (built against), ``seen holdout`` (held out
at first, then looked at to fix its misses, so no longer a blind check) and ``new holdout``
(rows with ``"split": "new holdout"``: truth written by reading the files before any reader
ran on them, measured once, and no code changed after that but for crashes).

Field definitions (each is a share of the rows it applies to):

* title: rows whose truth has a title; right when equal after Unicode NFKC, case folding and
  collapsing whitespace.
* date: every row. Truth ``YYYY-MM-DD`` is the calendar day the source states in its own time
  zone; the article's date (naive UTC) is right when it falls inside that day widened by 14
  hours each side (the largest UTC offsets), so converting to UTC is never counted wrong.
  Truth null means the file gives no date for the article: right only when the article has no
  date either (a date made up is wrong).
* author: rows whose truth has an author; right when the normalised names are equal, or when
  both split on ``,`` ``;`` ``&`` ``and`` into the same set of names.
* body: rows whose truth has ``first_words``; right when those words, normalised (NFKC, case
  folded, every run of non-alphanumeric characters one space), begin the normalised body.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import REPO

SET = REPO / "tests" / "data" / "ingest"
FIELDS = ("title", "date", "author", "body")
SPLITS = ("tuning", "seen holdout", "new holdout")

COLUMNS = [("split", "split", ""), ("layout", "layout", ""), ("files", "files", "d"),
           ("articles", "articles", "d"), ("matched", "matched", "d"),
           ("title", "title", ".2f"), ("date", "date", ".2f"), ("author", "author", ".2f"),
           ("body", "body", ".2f")]


@dataclass
class FileResult:
    """What the archive made of one file."""

    relative: str
    format: str | None = None
    articles: list[Any] = field(default_factory=list)
    problem: str = ""  # why it yielded nothing (or stopped early)


def split_of(row: dict[str, Any]) -> str:
    """A row's part of the table: tuning, the first holdout (since looked at while fixing its
    misses, so no longer unseen) or a holdout added later and measured once, unseen."""
    if not row.get("holdout"):
        return "tuning"
    return row.get("split") or "seen holdout"


def load_truth(root: Path = SET) -> list[dict[str, Any]]:
    rows = []
    with open(root / "truth.jsonl", encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if line.strip():
                row = json.loads(line)
                row["line"] = number
                rows.append(row)
    return rows


def read_layouts(root: Path, layouts: Iterable[str]) -> dict[str, FileResult]:
    """Every file under each layout folder, read the way the indexer reads it; never raises."""
    from archive.enrich import enrich
    from archive.sources import Discovery, IngestError, classify, discover, read_articles

    results: dict[str, FileResult] = {}
    for layout in sorted(set(layouts)):
        report = Discovery()
        try:
            sources = list(discover([root / layout], report))
        except Exception as exc:  # noqa: BLE001 - a walk that fails is a result, not a crash
            results[f"{layout}/"] = FileResult(f"{layout}/", problem=f"discover failed: {exc!r}")
            continue
        for passed in report.passed_over:
            results[passed.path] = FileResult(passed.path, problem=f"passed over: {passed.rule}")
        for problem in report.problems:
            results[problem.path] = FileResult(problem.path, problem=f"skipped: {problem.reason}")
        for source in sources:
            result = FileResult(source.relative)
            results[source.relative] = result
            try:
                fmt, rule = classify(source)
            except Exception as exc:  # noqa: BLE001
                result.problem = f"classify failed: {exc!r}"
                continue
            result.format = fmt
            if fmt is None:
                result.problem = f"passed over: {rule}"
                continue
            try:
                for article in read_articles(source, fmt):
                    result.articles.append(enrich(article))
            except IngestError as exc:
                result.problem = f"{type(exc).__name__}: {exc.reason}"
            except Exception as exc:  # noqa: BLE001 - a reader bug is reported, as the indexer does
                result.problem = f"reader failed: {exc!r}"
            if not result.articles and not result.problem:
                result.problem = "no articles found"
    return results


# --- comparing ----------------------------------------------------------------------------------

def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").casefold()


def norm_title(text: str) -> str:
    return " ".join(_nfkc(text).split())


def norm_words(text: str) -> str:
    return " ".join(re.sub(r"[\W_]+", " ", _nfkc(text)).split())


def _names(text: str) -> frozenset[str]:
    parts = re.split(r"[,;&]|\band\b", _nfkc(text))
    return frozenset(n for n in (norm_words(p) for p in parts) if n)


def title_right(truth: str, article: Any) -> bool:
    return article is not None and norm_title(article.title) == norm_title(truth)


def date_right(truth: str | None, article: Any) -> bool:
    if article is None:
        return False
    date = article.date
    if truth is None:
        return date is None
    if date is None:
        return False
    day = datetime.strptime(truth, "%Y-%m-%d")
    naive = date.replace(tzinfo=None) if isinstance(date, datetime) else \
        datetime(date.year, date.month, date.day)
    return day - timedelta(hours=14) <= naive < day + timedelta(days=1, hours=14)


def author_right(truth: str, article: Any) -> bool:
    if article is None or not article.author:
        return False
    return norm_words(article.author) == norm_words(truth) \
        or _names(article.author) == _names(truth)


def body_right(truth: str, article: Any) -> bool:
    if article is None:
        return False
    want = norm_words(truth)
    return bool(want) and norm_words(article.body).startswith(want)


def judge(row: dict[str, Any], article: Any) -> dict[str, bool | None]:
    """Per field: True/False, or None where the row does not count for that field."""
    return {
        "title": title_right(row["title"], article) if row.get("title") else None,
        "date": date_right(row.get("date"), article),
        "author": author_right(row["author"], article) if row.get("author") else None,
        "body": body_right(row["first_words"], article) if row.get("first_words") else None,
    }


# --- the run --------------------------------------------------------------------------------------

def _share(values: Sequence[bool | None]) -> float | None:
    counted = [v for v in values if v is not None]
    return round(sum(counted) / len(counted), 4) if counted else None


def _summary(split: str, layout: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"split": split, "layout": layout,
                           "files": len({r["file"] for r in rows}), "articles": len(rows),
                           "matched": sum(r["matched"] for r in rows)}
    for name in FIELDS:
        out[name] = _share([r["right"][name] for r in rows])
        out[f"{name}_rows"] = sum(r["right"][name] is not None for r in rows)
    return out


def run(root: Path = SET) -> dict[str, Any]:
    """Read the set, judge every truth row; the per-layout table, the rows and the problems."""
    truth = load_truth(root)
    layouts = {row["file"].split("/", 1)[0] for row in truth}
    results = read_layouts(root, layouts)
    judged = []
    for row in truth:
        result = results.get(row["file"])
        index = row["entry"] if row.get("entry") is not None else 0
        article = None
        if result is not None and index < len(result.articles):
            article = result.articles[index]
        if result is None:
            reason = "not found by discover"
        elif article is None:
            reason = result.problem or f"file yielded {len(result.articles)} articles"
        else:
            reason = ""
        judged.append({
            "file": row["file"], "entry": row.get("entry"), "layout": row["file"].split("/")[0],
            "holdout": bool(row.get("holdout")), "split": split_of(row),
            "matched": article is not None,
            "format": result.format if result else None, "reason": reason,
            "right": judge(row, article),
            "got": None if article is None else {
                "title": article.title,
                "date": article.date.isoformat() if article.date else None,
                "author": article.author, "body": article.body[:120]},
            "want": {k: row.get(k) for k in ("title", "date", "author", "first_words")},
        })
    table = []
    for split in SPLITS:
        part = [r for r in judged if r["split"] == split]
        for layout in sorted({r["layout"] for r in part}):
            table.append(_summary(split, layout, [r for r in part if r["layout"] == layout]))
        if part:
            table.append(_summary(split, "(all)", part))
    table.append(_summary("overall", "(all)", judged))
    problems = sorted({(r["file"], r["reason"]) for r in judged if r["reason"]})
    notes = sorted((res.relative, res.problem) for res in results.values()
                   if res.problem and res.articles)
    return {"set": str(root), "table": table, "rows": judged,
            "problems": [{"file": f, "reason": why} for f, why in problems],
            "partial_reads": [{"file": f, "reason": why} for f, why in notes]}
