"""``archive check``: verify an index end to end and say plainly what, if anything, is damaged.

Checks, in order: the newest TOC reads; every segment file it names is present and as long as
its own directory says; every live document's stored fields load; every indexed field's
postings can be walked; no id is held twice; the manifest agrees with the index; the writer
lock is free (an ``fcntl`` lock is dropped by the kernel when its holder dies, so a held lock
always means a live writer).

Damage (exit 1) is anything that loses or corrupts articles. Notes (exit 0) are states a
crash leaves on purpose and the next ``archive index`` run resolves: a manifest lagging the
index, a temporary file left by a killed writer.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whoosh.filedb.compound import CompoundStorage
from whoosh.index import TOC

from archive.store.durable import TOC_TEMP_RE, DurableStorage, toc_generations
from archive.store.errors import IndexMissing
from archive.store.fastwriter import compound_part_ends, posting_blocks, toc_reader
from archive.store.lock import WRITE_LOCK
from archive.store.manifest import read_manifest
from archive.store.schema import INDEX_NAME, repeated_ids

REPAIR_HINT = "run `archive index --rebuild PATHS` to restore it from the inputs"


@dataclass
class CheckReport:
    """What ``check_index`` found; ``ok`` is False when the index is damaged."""

    index: str
    generation: int | None = None
    segments: int = 0
    files: int = 0                 # segment files checked
    articles: int = 0              # live documents whose stored fields loaded
    deleted: int = 0               # deleted documents still held by segments
    postings: int = 0              # postings decoded
    terms: int = 0                 # terms read (all of them)
    terms_walked: int = 0          # terms whose postings were decoded
    manifest_files: int = 0
    manifest_articles: int = 0
    problems: list[str] = field(default_factory=list)   # damage
    notes: list[str] = field(default_factory=list)      # harmless, resolved by the next run
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index, "ok": self.ok, "generation": self.generation,
            "segments": self.segments, "files": self.files, "articles": self.articles,
            "deleted": self.deleted, "terms": self.terms,
            "terms_walked": self.terms_walked, "postings": self.postings,
            "manifest_files": self.manifest_files, "manifest_articles": self.manifest_articles,
            "problems": self.problems, "notes": self.notes,
            "hint": None if self.ok else REPAIR_HINT, "seconds": round(self.seconds, 3),
        }


#: terms whose postings a default check decodes (about 2 s); beyond, an even sample
MAX_TERMS = 30_000


def check_index(folder: Path, *, full: bool = False) -> CheckReport:
    """Verify the index at ``folder``; raises ``IndexMissing`` if there is none.

    ``full`` decodes the postings of every term, however long that takes."""
    started = time.perf_counter()
    report = CheckReport(index=str(folder))
    generations = toc_generations(folder)
    if not generations:
        raise IndexMissing(folder)
    report.generation = generations[0]
    try:
        _check(folder, generations[0], report, None if full else MAX_TERMS)
    finally:
        report.seconds = time.perf_counter() - started
    return report


def _check(folder: Path, gen: int, report: CheckReport, max_terms: int | None) -> None:
    storage = DurableStorage(str(folder))
    toc_name = f"_{INDEX_NAME}_{gen}.toc"
    try:
        toc = TOC.read(storage, INDEX_NAME, gen=gen)
    except Exception as exc:  # truncated or garbled: Whoosh raises assorted types
        report.problems.append(f"{toc_name}: the table of contents cannot be read ({exc!r})")
        _note_older(folder, gen, report)
        return
    report.segments = len(toc.segments)
    if not _check_files(folder, storage, toc, report):
        _note_older(folder, gen, report)
        return
    paths = _check_documents(storage, toc, report, max_terms)
    if paths is not None:
        _check_manifest(folder, paths, report)
    _check_columns(folder, storage, toc, report)
    _check_leftovers(folder, report)
    _check_lock(storage, report)


def _check_columns(folder: Path, storage: DurableStorage, toc: TOC,
                   report: CheckReport) -> None:
    """Every segment's columnar sidecar present and matching it (``archive.columns``).

    A missing or stale sidecar loses nothing (searches answer from Whoosh until the next
    ``archive index`` writes it), so it is a note, not damage."""
    from archive.columns import column_status

    try:
        reader = toc_reader(storage, toc)
    except Exception:  # unreadable segments are reported as damage above
        return
    try:
        status = column_status(folder, reader)
    finally:
        reader.close()
    if status.missing:
        report.notes.append(
            f"columns: {len(status.missing)} of {len(status.missing) + len(status.present)} "
            f"segment(s) without a current columnar sidecar ({', '.join(status.missing)}); "
            "searches use Whoosh's slower path until the next `archive index` writes them")
    if status.orphans:
        report.notes.append(
            f"columns: sidecars of segments no longer in the index ({', '.join(status.orphans)});"
            " the next `archive index` removes them")


def _check_files(folder: Path, storage: DurableStorage, toc: TOC,
                 report: CheckReport) -> bool:
    """Every segment file present and as long as its compound directory says."""
    whole = True
    names = os.listdir(folder)
    for segment in toc.segments:
        if not segment.is_compound():
            own = [n for n in names if n.startswith(segment.segment_id() + ".")]
            report.files += len(own)
            if not own:
                report.problems.append(f"{segment.segment_id()}.*: segment files missing")
                whole = False
            continue
        name = segment.make_filename(segment.COMPOUND_EXT)
        report.files += 1
        try:
            size = (folder / name).stat().st_size
        except FileNotFoundError:
            report.problems.append(f"{name}: segment file missing")
            whole = False
            continue
        try:
            compound = CompoundStorage(storage.open_file(name), use_mmap=False)
        except Exception:
            report.problems.append(f"{name}: segment file truncated or garbled "
                                   f"({size:,} bytes, its directory cannot be read)")
            whole = False
            continue
        try:
            end = max(compound_part_ends(compound), default=0)
        finally:
            compound.close()
        if end > size:
            report.problems.append(f"{name}: segment file truncated ({size:,} bytes, "
                                   f"its directory needs {end:,})")
            whole = False
    return whole


def _check_documents(storage: DurableStorage, toc: TOC, report: CheckReport,
                     max_terms: int | None) -> Counter[str] | None:
    """Load every live document's stored fields, read every term of every indexed field, and
    decode the postings of every term (or, past ``max_terms`` terms, of an evenly spread
    sample: a full walk of a large index takes Whoosh a long time).

    Returns the number of live documents per input path, or None if the segments failed.
    """
    try:
        reader = toc_reader(storage, toc)
    except Exception as exc:
        report.problems.append(f"the segments cannot be opened ({exc!r})")
        return None
    no_id = 0
    paths: Counter[str] = Counter()
    try:
        leaves = []
        for sub, _offset in reader.leaf_readers():
            name = sub.segment().make_filename(".seg") if sub.segment() else "segment"
            try:
                for docnum in sub.all_doc_ids():
                    stored = sub.stored_fields(docnum)
                    no_id += "id" not in stored
                    paths[stored.get("path", "")] += 1
                    report.articles += 1
                report.deleted += sub.doc_count_all() - sub.doc_count()
            except Exception as exc:
                report.problems.append(f"{name}: stored fields cannot be read ({exc!r})")
                continue
            fieldname = ""
            try:
                lexicons = [(fieldname, list(sub.lexicon(fieldname)))
                            for fieldname in sub.indexed_field_names()]
            except Exception as exc:
                report.problems.append(f"{name}: terms of field {fieldname!r} cannot be read "
                                       f"({exc!r})")
                continue
            report.terms += sum(len(terms) for _, terms in lexicons)
            leaves.append((sub, name, lexicons))
        stride = 1 if not max_terms else max(1, -(-report.terms // max_terms))
        for sub, name, lexicons in leaves:
            limit = sub.doc_count_all()
            fieldname = ""
            try:
                for fieldname, terms in lexicons:
                    chosen = terms[::stride] if stride > 1 else terms
                    if stride > 1 and terms and chosen[-1] != terms[-1]:
                        chosen.append(terms[-1])
                    for term in chosen:
                        report.postings += _walk_postings(sub.postings(fieldname, term), limit)
                        report.terms_walked += 1
            except Exception as exc:
                report.problems.append(f"{name}: postings of field {fieldname!r} cannot be "
                                       f"read ({exc!r})")
        try:
            twice = sorted(repeated_ids(reader))  # what the next run repairs
        except Exception as exc:
            report.problems.append(f"the id field's postings cannot be read ({exc!r})")
            twice = []
    finally:
        reader.close()
    if twice:
        report.problems.append(f"{len(twice):,} article ids held more than once "
                               f"(e.g. {', '.join(twice[:3])}); the next `archive index` "
                               "removes the extra copies")
    if no_id:
        report.problems.append(f"{no_id:,} documents without an id")
    return paths


def _walk_postings(matcher: Any, limit: int) -> int:
    """Decode every block of one term's postings (ids and weights); returns their number.

    Block at a time through the W3 matcher's block API (a per-posting loop in Python would
    take far longer); inlined postings of rare terms come as a plain list matcher.
    """
    count = 0
    blocks = posting_blocks(matcher)
    if blocks is None:
        for docnum in matcher.all_ids():
            if not 0 <= docnum < limit:
                raise ValueError(f"posting for document {docnum} of {limit}")
            count += 1
        return count
    for ids, _weights in blocks:
        if len(ids) and not (0 <= ids[0] and ids[-1] < limit):
            raise ValueError(f"posting for document {ids[-1]} of {limit}")
        count += len(ids)
    return count


def _check_manifest(folder: Path, paths: Counter[str], report: CheckReport) -> None:
    manifest = read_manifest(folder)
    report.manifest_files = len(manifest)
    report.manifest_articles = sum(s.articles for s in manifest.values())
    listed = {name: state.articles for name, state in manifest.items() if state.articles}
    behind = sorted(set(paths) - set(listed))
    ahead = sorted(set(listed) - set(paths))
    differ = sorted(n for n in set(listed) & set(paths) if listed[n] != paths[n])
    # The manifest is written after each commit, so a killed run leaves it behind the index:
    # harmless (the next run re-reads those files and replaces their articles), so a note.
    if behind:
        report.notes.append(f"{len(behind):,} indexed files not yet in the manifest "
                            f"(e.g. {behind[0]}): an interrupted run; the next "
                            "`archive index` reconciles them")
    if ahead or differ:
        example = (ahead or differ)[0]
        report.notes.append(f"{len(ahead) + len(differ):,} files whose article count in the "
                            f"manifest differs from the index (e.g. {example}): the next "
                            "`archive index` re-reads them")


def _check_leftovers(folder: Path, report: CheckReport) -> None:
    names = os.listdir(folder)
    temps = [n for n in names if TOC_TEMP_RE.match(n)]
    if temps:
        report.notes.append(f"{len(temps)} temporary TOC file(s) from an interrupted commit "
                            f"(e.g. {temps[0]}); the next `archive index` removes them")


def _check_lock(storage: DurableStorage, report: CheckReport) -> None:
    lock = storage.lock(WRITE_LOCK)
    try:
        free = lock.acquire()
    except OSError as exc:
        report.notes.append(f"the writer lock cannot be tested ({exc.strerror})")
        return
    if free:
        lock.release()
    else:
        report.notes.append("an `archive index` run is writing the index now (its lock is "
                            "held by a live process); this check saw its last commit")


def _note_older(folder: Path, gen: int, report: CheckReport) -> None:
    older = [g for g in toc_generations(folder) if g < gen]
    if older:
        report.notes.append(f"older generation(s) {', '.join(map(str, older))} present; "
                            "searches fall back to the newest whole one")
