"""One indexing run: walk the inputs, read what changed, enrich it, write it, commit.
One idea: the run and the report every step of it writes into.

Incremental by design: a file whose size and mtime match the manifest is not opened; one whose
bytes hash the same is not parsed; a changed file is read again, and of its articles only those
new or different from the committed ones are written, while those it no longer yields are
deleted (so a JSONL file that lost a record loses that article); a file gone from a folder that
was indexed before has its articles deleted. Commits happen every ``commit_every`` articles, so an
interrupted run keeps what it committed and the next run carries on from there.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from archive import columns, store
from archive.article import Article
from archive.enrich.duplicates import DuplicateFinder
from archive.reading import Examined, examine
from archive.sources import Discovery, IngestError, PassedOver, ReaderOptions, SourceFile, \
    discover
from archive.store import statistics


@dataclass
class IndexReport:
    """What a run did, for the summary line and ``--json``."""

    added: int = 0          # articles from files new to the index
    updated: int = 0        # articles from files whose content changed
    removed: int = 0        # articles whose file disappeared or lost them
    unchanged: int = 0      # articles in files that did not change
    files_read: int = 0
    passed_over: list[PassedOver] = field(default_factory=list)  # non-article files, and why
    clusters: int = 0       # wire-copy clusters (stories held more than once)
    copies: int = 0         # articles beyond the first in those clusters
    repaired: int = 0       # extra copies of articles the index held twice (damage), deleted
    skipped: list[IngestError] = field(default_factory=list)   # files that gave no article
    warnings: list[IngestError] = field(default_factory=list)  # problems that lost less
    #: a run on a Dask cluster: its scheduler, workers, batches and how segments travelled
    dask: dict[str, object] | None = None

    def passed_over_by_rule(self, names: int = 3) -> list[tuple[str, int, list[str]]]:
        """(rule, how many files, the first few of them) for each rule that passed files over."""
        by_rule: dict[str, list[str]] = {}
        for passed in self.passed_over:
            by_rule.setdefault(passed.rule, []).append(passed.path)
        return [(rule, len(paths), paths[:names]) for rule, paths in by_rule.items()]

    def to_dict(self) -> dict[str, object]:
        return {
            "added": self.added, "updated": self.updated, "removed": self.removed,
            "unchanged": self.unchanged, "files_read": self.files_read,
            "passed_over": len(self.passed_over),
            "passed_over_files": [{"path": printable(p.path), "rule": p.rule}
                                  for p in self.passed_over],
            "clusters": self.clusters,
            "copies": self.copies, "repaired": self.repaired,
            "skipped": [{"path": printable(e.path), "line": e.line, "reason": e.reason}
                        for e in self.skipped],
            "warnings": [{"path": printable(e.path), "line": e.line, "reason": e.reason}
                         for e in self.warnings],
            **({"dask": self.dask} if self.dask else {}),
        }


def printable(path: str) -> str:
    """A file name as JSON can carry it: bytes that were not UTF-8 (kept by the file system
    layer as lone surrogates) become U+FFFD."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace") \
        if any("\udc80" <= c <= "\udcff" for c in path) else path


Progress = Callable[[SourceFile], None]

#: where the wire-copy clusters' MinHash signatures live, beside the Whoosh segments
DUPLICATES = "duplicates.npz"


@dataclass
class _Pending:
    """Files whose articles are written but not yet committed."""

    states: dict[str, store.FileState] = field(default_factory=dict)
    gone: list[str] = field(default_factory=list)
    articles: int = 0


class Indexer:
    """Incrementally brings the index at ``folder`` in line with the given input paths."""

    def __init__(self, folder: Path, *, lock_timeout: float = 10.0, commit_every: int = 5000,
                 options: ReaderOptions | None = None, procs: int | None = None,
                 split_min: int = store.SPLIT_MIN_DOCS, columns_from: str | None = "writer"):
        self.folder = folder
        self.lock_timeout = lock_timeout
        self.commit_every = commit_every
        self.options = options or ReaderOptions()
        #: writer processes: a commit of at least ``split_min`` new articles is written as
        #: that many segments at once (store.SplitWriter); 1 writes everything here
        self.procs = store.default_procs() if procs is None else max(1, procs)
        self.split_min = split_min
        #: where the columnar sidecars come from: "writer" (tapped from the postings as they
        #: are written, the rest read back at the end), "segments" (all read back at the end)
        #: or None (none written: searches use Whoosh). The last two are for measuring.
        if columns_from not in ("writer", "segments", None):
            raise ValueError(f"columns_from: {columns_from!r} is not writer, segments or None")
        self.columns_from = columns_from
        self._lock: store.IndexLock | None = None  # held while ``run`` runs

    def _writer(self, ix):  # noqa: ANN001, ANN202
        return store.open_writer(ix, self.folder, self.lock_timeout, procs=self.procs,
                                 split_min=self.split_min, lock=self._lock,
                                 tap=partial(columns.PostingsTap,
                                             self.folder / columns.COLUMNS_DIR)
                                 if self.columns_from == "writer" else None)

    def run(self, paths: Sequence[str | Path], *, rebuild: bool = False,
            progress: Progress | None = None,
            on_total: Callable[[int], None] | None = None) -> IndexReport:
        report = IndexReport()
        discovery = Discovery()
        sources = list(discover(paths, discovery, self.options))
        if on_total:
            on_total(len(sources))
        report.skipped.extend(discovery.problems)
        report.passed_over.extend(discovery.passed_over)
        # One lock for the whole run, taken before the folder is looked at: a second run
        # waits, then finds the index, manifest and finder this one committed (store.IndexLock)
        with store.IndexLock(self.folder, self.lock_timeout) as lock:
            self._lock = lock
            self._update(paths, sources, rebuild, progress, report)
            # the columnar sidecars of the segments this run left (archive.columns.sync)
            ix = store.open_index(self.folder)
            if self.columns_from is not None:
                columns.sync_columns(self.folder, ix)
            # the statistics related-article lists are weighed by, when due (store.statistics)
            statistics.renew(self.folder, ix, force=rebuild)
        return report

    def _update(self, paths: Sequence[str | Path], sources: list[SourceFile], rebuild: bool,
                progress: Progress | None, report: IndexReport) -> None:
        """The run proper, under the lock."""
        # created here when there is none: safe under the lock (two unlocked runs could both)
        fresh = rebuild or not store.exists(self.folder)
        ix = store.create_index(self.folder) if fresh else store.open_index(self.folder)
        read = {} if rebuild else store.read_manifest(self.folder)
        # The duplicate finder is loaded on first use: a run that reads and deletes nothing
        # never pays for loading (and re-saving) the signatures of the whole archive.
        # (A rebuild starts from an empty one, saved whatever happens, so no stale file stays.)
        self._ix, self._rebuild = ix, rebuild
        self._finder: DuplicateFinder | None = DuplicateFinder() if rebuild else None
        self.restamp: dict[str, str] = {}
        self.recheck: set[str] = set()  # files to read again whatever the manifest says
        self.old_searcher = ix.searcher()
        # The index is the truth, the manifest may lag it (a run killed between a commit and
        # the manifest write): a path already in the index is replaced, never added twice.
        self.indexed = store.indexed_paths(self.old_searcher)
        manifest = {name: state for name, state in read.items()
                    if name in self.indexed or not state.articles}
        self._manifest_stale = manifest != read or rebuild
        self._written = False  # whether the open writer holds any addition or deletion
        w = self._writer(ix)
        try:
            # Articles held twice show as more live documents than the manifest lists: only
            # then (or when a crash left the manifest behind) pay for the pass over every id
            if self.old_searcher.doc_count() != sum(s.articles for s in manifest.values()):
                self._remove_repeated_ids(w, report)
            pending = _Pending()
            seen = {source.relative for source in sources}
            w = self.index_sources(w, sources, manifest, pending, report, progress)
            self._remove_missing(w, paths, manifest, seen, pending, report)
            if self._written or rebuild or getattr(ix, "broken", None) \
                    or not store.toc_generations(self.folder):
                self.commit(w)
            else:  # nothing to write: leave the segments and the TOC as they are
                store.discard_writer(w, self.folder)
        except BaseException:
            store.abandon_writer(w)
            raise
        finally:
            self.old_searcher.close()
        self._settle(manifest, pending)
        self._restamp_clusters(ix)
        stats = None if self._finder is not None else \
            DuplicateFinder.saved_stats(self.folder / DUPLICATES)
        if stats is None:
            clusters = self.finder.clusters()
            stats = len(clusters), sum(len(m) - 1 for m in clusters.values())
        report.clusters, report.copies = stats

    def index_sources(self, w, sources: list[SourceFile], manifest: dict[str, store.FileState],
                      pending: _Pending, report: IndexReport, progress: Progress | None):  # noqa: ANN001, ANN201
        """Bring every source into the open writer, committing every ``commit_every``
        articles; the writer open at the end. (A distributed run reads on workers instead.)"""
        for source in sources:
            self._index_file(w, source, manifest, pending, report)
            if progress:
                progress(source)
            if pending.articles >= self.commit_every:
                w = self.commit_and_reopen(w, manifest, pending)
        return w

    def commit_and_reopen(self, w, manifest: dict[str, store.FileState], pending: _Pending):  # noqa: ANN001, ANN201
        """Commit, record the committed files in the manifest, open the next writer."""
        self.commit(w)
        self._written = False
        self._settle(manifest, pending)
        return self._writer(self._ix)

    def commit(self, w) -> None:  # noqa: ANN001
        """Commit the writer (a distributed run adds its workers' segments here)."""
        w.commit()

    @property
    def finder(self) -> DuplicateFinder:
        """The wire-copy clusters of the index being written, loaded on first use."""
        if self._finder is None:
            self._finder = self._load_finder(self._ix, self._rebuild)
        return self._finder

    def _remove_repeated_ids(self, w, report: IndexReport) -> None:
        """Delete every copy but the newest of each article the index holds more than once.

        Only damage leaves such copies (two runs that created one index at once, before
        store.IndexLock), and ``archive check`` names them; deleting the extras here lets the
        next run converge instead of calling every file unchanged over a damaged index. The
        files of the copies kept are read again, so a kept copy that is not what its file
        holds now is replaced like any edited article.
        """
        reader = self.old_searcher.reader()
        repeated = store.repeated_ids(reader)
        for docnums in repeated.values():
            for docnum in docnums[:-1]:  # numbered as in this writer: both opened under the lock
                w.delete_document(docnum)
                report.repaired += 1
            self.recheck.add(reader.stored_fields(docnums[-1]).get("path", ""))
        if repeated:
            self._written = True
            report.warnings.append(IngestError(
                str(self.folder), f"{len(repeated):,} articles were held more than once "
                f"(damage); removed {report.repaired:,} extra copies"))

    # -- one file ---------------------------------------------------------------------------

    def _index_file(self, w, source: SourceFile, manifest: dict[str, store.FileState],
                    pending: _Pending, report: IndexReport) -> None:
        old = self.manifest_entry(source.relative, manifest)
        info = self.stat_if_changed(source, old, report)
        if info is None:
            return
        found = examine(source, info.st_size, info.st_mtime_ns, old.sha256 if old else None)
        self.take(w, found, old, pending, report)

    @staticmethod
    def stat_if_changed(source: SourceFile, old: store.FileState | None,
                        report: IndexReport) -> os.stat_result | None:
        """The file's stat when it must be read; None, counted in ``report``, when it cannot
        be stat'ed (skipped) or its size and mtime are the manifest's (unchanged)."""
        try:
            info = source.path.stat()
        except OSError as exc:
            report.skipped.append(IngestError(source.relative, f"cannot read: {exc.strerror}"))
            return None
        if old and old.size == info.st_size and old.mtime_ns == info.st_mtime_ns:
            report.unchanged += old.articles
            return None
        return info

    def manifest_entry(self, relative: str, manifest: dict[str, store.FileState]) \
            -> store.FileState | None:
        """What the manifest says of a file, unless the run reads it again whatever it says."""
        return None if relative in self.recheck else manifest.get(relative)

    def take(self, w, found: Examined, old: store.FileState | None, pending: _Pending,  # noqa: ANN001
             report: IndexReport) -> None:
        """Apply what reading one file found: count it, delete what it lost, add what is new."""
        relative, articles, error = found.relative, found.articles, found.error
        if not found.digest:  # could not be read at all
            report.skipped.append(error)
            return
        if found.same:
            pending.states[relative] = store.FileState(found.size, found.mtime_ns,
                                                       found.digest, old.articles)
            report.unchanged += old.articles
            return
        if found.read:
            report.files_read += 1
            report.warnings.extend(found.warnings)
        format_name, rule = found.format_name, found.rule
        if format_name is None:  # never an article; articles an older run took from it go
            report.passed_over.append(PassedOver(relative, rule))
            if old or relative in self.indexed:
                self._forget(w, relative)
                report.removed += old.articles if old else 0
                pending.gone.append(relative)
            return
        if error is not None and not articles:
            report.skipped.append(error)
            if old or relative in self.indexed:  # the file broke: keep nothing stale
                self._forget(w, relative)
                report.removed += old.articles if old else 0
                pending.gone.append(relative)
            return
        if error is not None:
            report.warnings.append(error)
        count = len(articles)
        # in the index already (also when a run was killed before recording it in the manifest)
        if old or relative in self.indexed:
            articles = self._replace_changed(w, relative, articles, report)
        else:
            report.added += count
        if articles:
            self.add_new(w, articles)
            self._written = True
            pending.articles += len(articles)
        pending.states[relative] = store.FileState(
            found.size, found.mtime_ns, found.digest, count)

    def add_new(self, w, articles: list) -> None:  # noqa: ANN001
        """Give new or changed articles their clusters and write them."""
        articles = [self.finder.add_article(a) for a in articles]
        self.restamp.update(self.finder.pop_changes())
        store.add_articles(w, articles)

    def same_as_committed(self, article, stored: dict) -> bool:  # noqa: ANN001
        """Whether an article read again is exactly what the index holds for its id."""
        return _same_article(article, stored)

    def _replace_changed(self, w, relative: str, articles: list,
                         report: IndexReport) -> list:
        """Delete the file's articles that changed or went; return those to (re-)add.

        A record-level edit in a file of many records (a JSON Lines dump, a feed, a Reuters
        SGML file of 1,000 stories) re-indexes that record, not the whole file: an article
        whose id and every field are as committed stays untouched.
        """
        committed = {stored["id"]: stored
                     for stored in self.old_searcher.documents(path=relative)}
        fresh: list[Article] = []
        for article in articles:
            stored = committed.pop(article.id, None)
            if stored is None:
                report.added += 1
            elif self.same_as_committed(article, stored):
                report.unchanged += 1
                continue
            else:
                report.updated += 1
                self._delete(w, article.id)
            fresh.append(article)
        for article_id in committed:  # records the file no longer has
            report.removed += 1
            self._delete(w, article_id)
        return fresh

    def _delete(self, w, article_id: str) -> None:
        w.delete_by_term("id", article_id)
        self.finder.remove(article_id)
        self.restamp.update(self.finder.pop_changes())
        self._written = True

    def _forget(self, w, relative: str) -> None:
        """Delete a file's articles from the index and from the duplicate finder."""
        ids = [stored["id"] for stored in self.old_searcher.documents(path=relative)]
        if ids:
            for article_id in ids:
                self.finder.remove(article_id)
            self.restamp.update(self.finder.pop_changes())
        w.delete_by_term("path", relative)
        self._written = True

    def _load_finder(self, ix, rebuild: bool) -> DuplicateFinder:
        """The saved wire-copy clusters; rebuilt from the index if missing or unreadable."""
        path = self.folder / DUPLICATES
        if not rebuild:
            try:
                return DuplicateFinder.load(path)
            except (OSError, ValueError, KeyError):
                pass
        finder = DuplicateFinder()
        if not rebuild:
            for article in store.iter_articles(ix):
                finder.add_article(article)
            finder.pop_changes()
        return finder

    def _restamp_clusters(self, ix) -> None:
        """Give earlier articles the cluster ids that this run's additions changed.

        A cluster is named after its smallest member id, so a new copy can rename a cluster
        whose other members are already committed; they are updated in one extra commit.
        """
        if not self.restamp:
            return
        w = store.open_writer(ix, self.folder, self.lock_timeout, lock=self._lock)
        try:
            with ix.searcher() as searcher:
                for article_id, cluster in sorted(self.restamp.items()):
                    stored = searcher.document(id=article_id)
                    if stored and stored.get("cluster") != cluster:
                        article = replace(store.from_stored(stored), cluster=cluster)
                        w.update_document(**store.to_document(article))
            w.commit()
        except BaseException:
            if not w.is_closed:
                w.cancel()
            raise
        self.restamp.clear()

    # -- deletions and commits ------------------------------------------------------------

    def _remove_missing(self, w, paths: Iterable[str | Path],
                        manifest: dict[str, store.FileState], seen: set[str],
                        pending: _Pending, report: IndexReport) -> None:
        """Delete articles of files that were in an indexed folder and are gone now."""
        roots = {Path(p).resolve().name + "/" for p in paths if Path(p).is_dir()}
        for name, state in manifest.items():
            if name not in seen and any(name.startswith(r) for r in roots):
                self._forget(w, name)
                report.removed += state.articles
                pending.gone.append(name)
        for name in sorted(self.indexed - seen - manifest.keys()):  # committed, then lost
            if any(name.startswith(r) for r in roots):
                self._forget(w, name)

    def _settle(self, manifest: dict[str, store.FileState], pending: _Pending) -> None:
        """Record committed files in the manifest (only ever after the commit).

        The duplicate finder is saved first: if a crash falls between the two saves, the
        manifest still lacks the files, so the next run reads them again and the finder
        simply replaces their entries.
        """
        if self._finder is not None:  # not loaded: nothing was added or removed
            self._finder.save(self.folder / DUPLICATES)
        if pending.states or pending.gone or self._manifest_stale \
                or not (self.folder / store.MANIFEST).exists():
            manifest.update(pending.states)
            for name in pending.gone:
                manifest.pop(name, None)
            store.write_manifest(self.folder, manifest)
            self._manifest_stale = False
        pending.states.clear()
        pending.gone.clear()
        pending.articles = 0


def _same_article(article: Article, stored: dict) -> bool:
    """Whether the committed document holds exactly what this article would write.

    Both sides go through ``to_document`` (the cluster is the finder's, not the reader's), so
    any field a reader or an enrichment step changed makes the article count as edited.
    """
    committed = store.from_stored(stored)
    return store.to_document(replace(article, cluster=committed.cluster)) == \
        store.to_document(committed)
