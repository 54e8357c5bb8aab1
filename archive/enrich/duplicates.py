"""Wire copy and near-duplicates: articles whose text is (almost) the same share a cluster.
One idea: the clusters, kept as articles come and go (``DuplicateFinder``).

Similarity is the Jaccard index of the sets of word 3-grams ("shingles") of the normalised
title and body (lower-cased, punctuation removed), estimated with MinHash and searched with
MinHashLSH so adding an article does not compare it with every other one.

Threshold 0.8 (Jaccard over word 3-grams). Changing one sentence of a 20-sentence story keeps
roughly 0.85-0.9 of its 3-grams. On the BBC corpus, lightly edited re-runs (new headline, a
sentence added or cut) score 0.89-0.998, re-written versions of one story 0.6-0.82, and
different stories about the same event (same names, same quotes) at most about 0.4. 0.8 keeps
only the clear re-runs: a cluster should mean "the same copy", not "the same news". 3-grams
rather than single words because stories on one topic share most of their vocabulary but few
word triples.

Clusters are the connected groups of a graph whose edges join two articles that either have
identical signatures (as identical shingle sets always do: looked up in a dict keyed by the
signature, so exact copies cluster whatever LSH's probabilistic recall) or that LSH proposes
and whose estimated Jaccard is at least the threshold. Each edge depends only on its two
articles, so the groups, and their ids (the smallest article id in the group), are the same
whatever order articles are added in. Because groups are connected components, A ~ B ~ C puts
A and C together even when A and C are less alike than the threshold: successive updates of
one story stay one cluster.

The MinHash and LSH arithmetic itself (datasketch's, reproduced) is ``archive.enrich.minhash``.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np

from archive.article import Article
from archive.enrich import finder_files, minhash
from archive.enrich.minhash import Signature

DEFAULT_THRESHOLD = 0.8
DEFAULT_NUM_PERM = 128
SHINGLE_SIZE = 3
#: LSH looks for candidates this far below the threshold, then each candidate's estimated
#: Jaccard is checked against the threshold itself. LSH tuned to the threshold proper finds
#: only about half of the pairs just above it (its S-curve is centred there).
CANDIDATE_MARGIN = 0.15
#: the whole finder is written again once its deltas hold more than 1/this of its articles
_DELTA_SHARE = 4
#: signatures taken at once when a finder is written
_SAVE_PIECE = 1 << 15
#: Bump when the shingling, hash function, scheme or file layout changes: old files are refused.
_FORMAT_VERSION = 1
_NON_WORD = re.compile(r"[\W_]+")


def normalise(text: str) -> list[str]:
    """Lower-cased words with punctuation removed: "U.S.-led" -> ["u", "s", "led"]."""
    return _NON_WORD.sub(" ", text.lower().replace("'", "").replace("\u2019", "")).split()


def shingles(text: str, size: int = SHINGLE_SIZE) -> set[str]:
    """Word ``size``-grams of the normalised text; a shorter text is one shingle of all of it."""
    words = normalise(text)
    if len(words) < size:
        return {" ".join(words)} if words else set()
    return {" ".join(gram) for gram in zip(*(words[i:] for i in range(size)))}


def article_text(article: Article) -> str:
    """What counts as an article's content for duplicate detection: its title and body."""
    return f"{article.title}\n{article.body}"


class DuplicateFinder:
    """An incremental index of article signatures that keeps near-duplicate clusters.

    ``add`` returns the article's cluster id; adding or removing an article can change the
    cluster id of others already added (a smaller id joins, or a bridge between two halves
    goes), and ``pop_changes`` reports those so stored copies can be updated.

    Held in arrays, because a large archive's finder lives in the indexing process for the
    whole build: each article is a row number, its signature a row of 32-bit values
    (``minhash.SignatureRows``), its LSH bands keys in sorted arrays (``minhash.Bands``). Only
    what is rare gets a Python object: similarity edges, and the cluster of an article that
    has near-duplicates (an article alone is its own cluster, implicitly). Rows are never
    reused: a removed or replaced article's row stays, dead, until the finder is next loaded.
    """

    def __init__(self, threshold: float = DEFAULT_THRESHOLD, num_perm: int = DEFAULT_NUM_PERM):
        self.threshold = threshold
        self.num_perm = num_perm
        self._signatures = minhash.SignatureRows(num_perm)
        self._lsh = minhash.Bands(*minhash.lsh_params(max(0.1, threshold - CANDIDATE_MARGIN),
                                                      num_perm), self._signatures)
        self._ids: list[str | None] = []  # row -> article id (None: removed or replaced)
        self._row_of: dict[str, int] = {}
        self._neighbours: dict[int, set[int]] = {}  # rows with at least one edge only
        self._cluster: dict[int, str] = {}  # rows in a cluster of two or more only
        self._members: dict[str, set[int]] = {}  # clusters of two or more only
        self._changed: dict[str, str] = {}  # article id -> its cluster at the last pop
        # what ``save`` has written: the generation of the newest file (None: nothing yet,
        # the next save writes the whole finder), the articles its deltas carry, and the
        # articles added or removed since
        self._generation: int | None = None
        self._delta_rows = 0
        self._touched: set[str] = set()

    def __len__(self) -> int:
        return len(self._row_of)

    def __contains__(self, article_id: object) -> bool:
        return article_id in self._row_of

    def __iter__(self) -> Iterator[str]:
        """The indexed article ids, sorted."""
        return iter(sorted(self._row_of))

    def signature(self, text: str) -> Signature:
        """MinHash of the text's word 3-grams (see ``shingles``): the values datasketch's
        ``MinHash(num_perm, seed=1, scheme="affine32", hashfunc=crc32).update_batch`` gives,
        computed in one numpy pass (``archive.enrich.minhash``)."""
        return minhash.signature(shingles(text), self.num_perm)

    def add(self, article_id: str, signature: Signature) -> str:
        """Index one article and return its cluster id; re-adding an id replaces it."""
        if article_id in self._row_of:
            self.remove(article_id)
        values = np.asarray(signature.hashvalues)
        if (signature.seed, signature.scheme, len(signature)) != (minhash.SEED, minhash.SCHEME,
                                                                    self.num_perm) \
                or int(values.max(initial=0)) > minhash.MAX32:
            raise ValueError("signature was not made by DuplicateFinder.signature")
        row = self._signatures.append(values)
        self._ids.append(article_id)
        self._row_of[article_id] = row
        self._touched.add(article_id)
        stored = self._signatures[row]
        if not minhash.is_empty(stored):  # no words: nothing to compare, a cluster of its own
            keys = self._lsh.band_keys(stored[None, :])[0]
            similar = self._similar(stored, keys)
            self._lsh.insert(row, keys)
            if similar:
                self._neighbours[row] = similar
                for other in similar:
                    self._neighbours.setdefault(other, set()).add(row)
                self._recluster({row} | similar, new=row)
        return self.cluster_of(article_id)

    def add_article(self, article: Article) -> Article:
        """Index an article and return it with its ``cluster`` set."""
        cluster = self.add(article.id, self.signature(article_text(article)))
        return article if article.cluster == cluster else replace(article, cluster=cluster)

    def remove(self, article_id: str) -> None:
        """Forget an article; the rest of its cluster is regrouped (it may split in two)."""
        row = self._row_of.pop(article_id, None)
        if row is None:
            return
        self._touched.add(article_id)
        self._ids[row] = None
        self._lsh.remove(row)
        for other in self._neighbours.pop(row, ()):
            self._neighbours[other].discard(row)
            if not self._neighbours[other]:
                del self._neighbours[other]
        self._changed.pop(article_id, None)
        old = self._cluster.pop(row, None)
        if old is not None:
            self._recluster(self._members.pop(old) - {row})

    def cluster_of(self, article_id: str) -> str:
        """The cluster id of an indexed article (its own id when it has no near-duplicates)."""
        return self._cluster.get(self._row_of[article_id], article_id)

    def members(self, cluster_id: str) -> frozenset[str]:
        """The article ids in a cluster (empty for an unknown cluster id)."""
        if cluster_id in self._members:
            return frozenset(self._id(row) for row in self._members[cluster_id])
        row = self._row_of.get(cluster_id)
        return frozenset() if row is None or row in self._cluster else frozenset({cluster_id})

    def clusters(self) -> dict[str, frozenset[str]]:
        """Every cluster with more than one member: cluster id -> article ids."""
        return {c: frozenset(self._id(row) for row in rows) for c, rows in self._members.items()}

    def pop_changes(self) -> dict[str, str]:
        """Articles added earlier whose cluster id has changed since the last call: article
        id -> its cluster id now (one that moved and came back, as when the smallest id of
        a cluster is edited, is not a change)."""
        changes, self._changed = self._changed, {}
        now = {a: self.cluster_of(a) for a in changes}
        return {a: cluster for a, cluster in now.items() if cluster != changes[a]}

    def save(self, path: Path) -> None:
        """Write signatures and similarity edges beside ``path``, atomically, file by file.

        Saved at every commit of a run, so what a save writes must not grow with the
        archive: the whole finder goes to ``path`` (the base), and later saves write only the
        articles added or removed since, as numbered delta files beside it
        (``duplicates-000007.npz``), until the deltas hold a quarter as many articles as the
        finder, when the whole is written again and the deltas go (each article is written a
        bounded number of times). Every file carries its generation; ``load`` takes the base
        and the deltas numbered after it in an unbroken run, so a delta that a crash left
        beside a newer base is never applied.

        Uncompressed and as 32-bit values (the affine32 scheme's range): MinHash values are
        random, so zlib saved little and cost many times the write. The cluster counts ride
        along so a run that changes nothing can report them unloaded.
        """
        path = Path(path)
        if self._generation is None or \
                self._delta_rows + len(self._touched) > len(self._row_of) // _DELTA_SHARE:
            generation = 1 + max([finder_files.generation_of(path)] +
                                 [g for g, _ in finder_files.delta_files(path)])
            ids = sorted(self._row_of)
            edges = [(bisect_left(ids, self._id(a)), bisect_left(ids, self._id(b)))
                     for a, others in self._neighbours.items() for b in others
                     if self._id(a) < self._id(b)]
            finder_files.write_atomically(path, {
                **self._header(generation), **self._saved_rows(ids),
                "edges": np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)})
            for _, old in finder_files.delta_files(path):
                old.unlink(missing_ok=True)
            self._delta_rows = 0
        elif self._touched:
            generation = self._generation + 1
            touched = sorted(self._touched)
            ids = [a for a in touched if a in self._row_of]
            linked = {a: sorted(self._id(b) for b in self._neighbours.get(self._row_of[a], ()))
                      for a in ids}
            names = sorted({b for others in linked.values() for b in others} | set(ids))
            index = {article_id: i for i, article_id in enumerate(names)}
            edges = [(index[a], index[b]) for a in ids for b in linked[a]]
            finder_files.write_atomically(finder_files.delta_path(path, generation), {
                **self._header(generation), **self._saved_rows(ids),
                "touched": np.array(touched, dtype=str), "names": np.array(names, dtype=str),
                "edges": np.array(edges, dtype=np.int64).reshape(-1, 2)})
            self._delta_rows += len(touched)
        else:
            return
        self._generation = generation
        self._touched.clear()

    def _header(self, generation: int) -> dict[str, np.ndarray]:
        sizes = [len(m) for m in self._members.values()]
        return {
            "params": np.array([_FORMAT_VERSION, self.num_perm, minhash.SEED]),
            "threshold": np.array([self.threshold]),
            "generation": np.array([generation]),
            "stats": np.array([len(sizes), sum(sizes) - len(sizes)]),
        }

    def _saved_rows(self, ids: list[str]) -> dict[str, np.ndarray | finder_files.Pieces]:
        """The articles' ids and signatures, the signatures a piece at a time (a whole
        finder's would otherwise be copied once more while it is written)."""
        def pieces() -> Iterator[np.ndarray]:
            for start in range(0, len(ids), _SAVE_PIECE):
                yield self._signatures.take(np.array(
                    [self._row_of[i] for i in ids[start:start + _SAVE_PIECE]], dtype=np.int64))

        return {"ids": np.array(ids, dtype=str),
                "hashes": finder_files.Pieces((len(ids), self.num_perm), np.dtype(np.uint32),
                                              pieces)}

    @staticmethod
    def saved_stats(path: Path) -> tuple[int, int] | None:
        """(clusters, extra copies) as last saved at ``path``, read without loading the
        signatures; None when the file is missing, unreadable or older than this field."""
        try:
            chain = finder_files.saved_chain(Path(path))
            with np.load(chain[-1], allow_pickle=False) as data:
                if "stats" not in data.files:
                    return None
                clusters, copies = (int(v) for v in data["stats"])
                return clusters, copies
        except (OSError, ValueError, KeyError):
            return None

    @classmethod
    def load(cls, path: Path) -> DuplicateFinder:
        """Read a finder written by ``save``; the clusters are exactly those that were saved."""
        chain = finder_files.saved_chain(Path(path))
        ids: list[str] = []
        rows: list[np.ndarray] = []
        position: dict[str, int] = {}
        edges: list[np.ndarray] = []
        finder: DuplicateFinder | None = None
        for file in chain:
            with np.load(file, allow_pickle=False) as data:
                version, num_perm, seed = (int(v) for v in data["params"])
                if version != _FORMAT_VERSION or seed != minhash.SEED:
                    raise ValueError(f"{file}: unsupported duplicate index (version {version})")
                if finder is None:
                    finder = cls(threshold=float(data["threshold"][0]), num_perm=num_perm)
                touched = data["touched"].tolist() if "touched" in data.files else []
                for article_id in touched:
                    position.pop(article_id, None)  # its earlier row and edges are dead
                new_ids = data["ids"].tolist()
                position.update((a, len(ids) + i) for i, a in enumerate(new_ids))
                ids.extend(new_ids)
                hashes = data["hashes"]
                if hashes.size and int(hashes.max()) > minhash.MAX32:
                    raise ValueError(f"{file}: signature values out of range")
                rows.append(hashes.astype(np.uint32, copy=False))
                pairs = data["edges"]
                if "names" in data.files:  # a delta's edges name their articles
                    lookup = np.array([position.get(str(n), -1) for n in data["names"]],
                                      dtype=np.int64)
                    pairs = lookup[pairs] if len(pairs) else pairs
                edges.append(pairs.reshape(-1, 2))
                finder._delta_rows += len(touched)
                finder._generation = int(data["generation"][0]) \
                    if "generation" in data.files else 0
        assert finder is not None
        live = np.zeros(len(ids), dtype=bool)
        live[list(position.values())] = True
        renumber = np.cumsum(live) - 1
        pairs = np.concatenate(edges) if edges else np.zeros((0, 2), dtype=np.int64)
        pairs = pairs[(pairs >= 0).all(axis=1)]
        pairs = renumber[pairs[live[pairs].all(axis=1)]]
        hashes = rows[0] if len(rows) == 1 else np.concatenate(rows)
        del rows
        if not live.all():
            hashes = hashes[live]
            ids = [a for a, keep in zip(ids, live.tolist()) if keep]
        finder._restore(ids, hashes, pairs)
        return finder

    def _id(self, row: int) -> str:
        article_id = self._ids[row]
        assert article_id is not None
        return article_id

    def _similar(self, values: np.ndarray, keys: np.ndarray) -> set[int]:
        """Rows that LSH proposes for a signature and whose estimated Jaccard (the share of
        slots that agree) reaches ``threshold`` (identical signatures share every band, so
        exact copies are always among them)."""
        candidates = np.array(sorted(self._lsh.query(values, keys)), dtype=np.int64)
        if not len(candidates):
            return set()
        agree = np.count_nonzero(self._signatures.take(candidates) == values, axis=1)
        return set(candidates[agree / self.num_perm >= self.threshold].tolist())

    def _recluster(self, start: set[int], new: int | None = None) -> None:
        """Recompute the clusters of everything reachable from ``start``.

        ``start`` must cover whole old clusters (an added article with its neighbours, or the
        rest of a removed article's cluster), so their old entries can simply be replaced.
        ``new`` is the row just added: it had no cluster, so its own is not a change.
        """
        groups: list[set[int]] = []
        seen: set[int] = set()
        for row in start:
            if row not in seen:
                groups.append(set(_component(self._neighbours, row)))
                seen |= groups[-1]
        for member in seen:
            self._members.pop(self._cluster.get(member, ""), None)
        for group in groups:
            cluster = min(self._id(member) for member in group)
            if len(group) > 1:
                self._members[cluster] = group
            for member in group:
                old = self._cluster.get(member, self._id(member))
                if member != new and old != cluster:
                    self._changed.setdefault(self._id(member), old)
                if len(group) > 1:
                    self._cluster[member] = cluster
                else:
                    self._cluster.pop(member, None)

    def _restore(self, ids: list[str], hashes: np.ndarray, edges: np.ndarray) -> None:
        rows = self._signatures.adopt(hashes)
        self._ids = list(ids)
        self._row_of = dict(zip(ids, rows))
        self._lsh.insert_many(np.flatnonzero(~minhash.is_empty(hashes)))
        for a, b in edges.tolist():
            self._neighbours.setdefault(a, set()).add(b)
            self._neighbours.setdefault(b, set()).add(a)
        self._recluster(set(self._neighbours))
        self._changed.clear()
        self._touched.clear()


def assign_clusters(articles: Iterable[Article], threshold: float = DEFAULT_THRESHOLD,
                    num_perm: int = DEFAULT_NUM_PERM) -> dict[str, str]:
    """Cluster a batch: article id -> cluster id (its own id when it has no duplicates)."""
    finder = DuplicateFinder(threshold=threshold, num_perm=num_perm)
    ids = []
    for article in articles:
        finder.add(article.id, finder.signature(article_text(article)))
        ids.append(article.id)
    return {article_id: finder.cluster_of(article_id) for article_id in ids}


def _component(neighbours: dict[int, set[int]], start: int) -> Iterator[int]:
    """Every article reachable from ``start`` through similarity edges (breadth first)."""
    seen, queue = {start}, [start]
    while queue:
        current = queue.pop()
        yield current
        for other in neighbours.get(current, set()) - seen:
            seen.add(other)
            queue.append(other)
