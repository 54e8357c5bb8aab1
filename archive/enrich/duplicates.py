"""Wire copy and near-duplicates: articles whose text is (almost) the same share a cluster.

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
    """

    def __init__(self, threshold: float = DEFAULT_THRESHOLD, num_perm: int = DEFAULT_NUM_PERM):
        self.threshold = threshold
        self.num_perm = num_perm
        self._empty = np.full(num_perm, minhash.MAX32, dtype=np.uint64)
        self._lsh = minhash.Bands(*minhash.lsh_params(max(0.1, threshold - CANDIDATE_MARGIN),
                                                      num_perm))
        self._hashes: dict[str, np.ndarray] = {}
        self._exact: dict[bytes, set[str]] = {}
        self._neighbours: dict[str, set[str]] = {}
        self._cluster: dict[str, str] = {}
        self._members: dict[str, set[str]] = {}
        self._changed: dict[str, str] = {}
        # what ``save`` has written: the generation of the newest file (None: nothing yet,
        # the next save writes the whole finder), the articles its deltas carry, and the
        # articles added or removed since
        self._generation: int | None = None
        self._delta_rows = 0
        self._touched: set[str] = set()

    def __len__(self) -> int:
        return len(self._hashes)

    def __contains__(self, article_id: object) -> bool:
        return article_id in self._hashes

    def __iter__(self) -> Iterator[str]:
        """The indexed article ids, sorted."""
        return iter(sorted(self._hashes))

    def signature(self, text: str) -> Signature:
        """MinHash of the text's word 3-grams (see ``shingles``): the values datasketch's
        ``MinHash(num_perm, seed=1, scheme="affine32", hashfunc=crc32).update_batch`` gives,
        computed in one numpy pass (``archive.enrich.minhash``)."""
        return minhash.signature(shingles(text), self.num_perm)

    def add(self, article_id: str, signature: Signature) -> str:
        """Index one article and return its cluster id; re-adding an id replaces it."""
        if article_id in self._hashes:
            self.remove(article_id)
        if (signature.seed, signature.scheme, len(signature)) != (minhash.SEED, minhash.SCHEME,
                                                                    self.num_perm):
            raise ValueError("signature was not made by DuplicateFinder.signature")
        hashes = np.asarray(signature.hashvalues, dtype=np.uint64).copy()
        self._touched.add(article_id)
        empty = self._is_empty(hashes)  # no words: nothing to compare, a cluster of its own
        self._store(article_id, hashes, set() if empty else self._similar(hashes))
        self._recluster({article_id} | self._neighbours[article_id])
        return self._cluster[article_id]

    def add_article(self, article: Article) -> Article:
        """Index an article and return it with its ``cluster`` set."""
        cluster = self.add(article.id, self.signature(article_text(article)))
        return article if article.cluster == cluster else replace(article, cluster=cluster)

    def remove(self, article_id: str) -> None:
        """Forget an article; the rest of its cluster is regrouped (it may split in two)."""
        hashes = self._hashes.pop(article_id, None)
        if hashes is None:
            return
        self._touched.add(article_id)
        if not self._is_empty(hashes):
            self._lsh.remove(article_id, hashes)
            key = hashes.tobytes()
            self._exact[key].discard(article_id)
            if not self._exact[key]:
                del self._exact[key]
        for other in self._neighbours.pop(article_id):
            self._neighbours[other].discard(article_id)
        old = self._cluster.pop(article_id)
        self._changed.pop(article_id, None)
        rest = self._members.pop(old) - {article_id}
        if rest:
            self._recluster(rest)

    def cluster_of(self, article_id: str) -> str:
        """The cluster id of an indexed article (its own id when it has no near-duplicates)."""
        return self._cluster[article_id]

    def members(self, cluster_id: str) -> frozenset[str]:
        """The article ids in a cluster (empty for an unknown cluster id)."""
        return frozenset(self._members.get(cluster_id, ()))

    def clusters(self) -> dict[str, frozenset[str]]:
        """Every cluster with more than one member: cluster id -> article ids."""
        return {c: frozenset(m) for c, m in self._members.items() if len(m) > 1}

    def pop_changes(self) -> dict[str, str]:
        """Articles added earlier whose cluster id has changed since the last call."""
        changes, self._changed = self._changed, {}
        return changes

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

        Uncompressed and as 32-bit values (the affine32 scheme's range; ``load`` widens them
        again): MinHash values are random, so zlib saved little and cost many times the
        write. The cluster counts ride along so a run that changes nothing can report them
        unloaded.
        """
        path = Path(path)
        if self._generation is None or \
                self._delta_rows + len(self._touched) > len(self._hashes) // _DELTA_SHARE:
            generation = 1 + max([finder_files.generation_of(path)] +
                                 [g for g, _ in finder_files.delta_files(path)])
            ids = sorted(self._hashes)
            index = {article_id: i for i, article_id in enumerate(ids)}
            edges = [(index[a], index[b]) for a in ids for b in self._neighbours[a] if a < b]
            finder_files.write_atomically(path, {
                **self._header(generation), **self._rows(ids),
                "edges": np.array(edges, dtype=np.int64).reshape(-1, 2)})
            for _, old in finder_files.delta_files(path):
                old.unlink(missing_ok=True)
            self._delta_rows = 0
        elif self._touched:
            generation = self._generation + 1
            touched = sorted(self._touched)
            ids = [a for a in touched if a in self._hashes]
            names = sorted({b for a in ids for b in self._neighbours[a]} | set(ids))
            index = {article_id: i for i, article_id in enumerate(names)}
            edges = [(index[a], index[b]) for a in ids for b in self._neighbours[a]]
            finder_files.write_atomically(finder_files.delta_path(path, generation), {
                **self._header(generation), **self._rows(ids),
                "touched": np.array(touched, dtype=str), "names": np.array(names, dtype=str),
                "edges": np.array(edges, dtype=np.int64).reshape(-1, 2)})
            self._delta_rows += len(touched)
        else:
            return
        self._generation = generation
        self._touched.clear()

    def _header(self, generation: int) -> dict[str, np.ndarray]:
        sizes = [len(m) for m in self._members.values() if len(m) > 1]
        return {
            "params": np.array([_FORMAT_VERSION, self.num_perm, minhash.SEED]),
            "threshold": np.array([self.threshold]),
            "generation": np.array([generation]),
            "stats": np.array([len(sizes), sum(sizes) - len(sizes)]),
        }

    def _rows(self, ids: list[str]) -> dict[str, np.ndarray]:
        hashes = np.stack([self._hashes[i] for i in ids]) if ids \
            else np.zeros((0, self.num_perm), dtype=np.uint64)
        if not hashes.size or int(hashes.max()) <= np.iinfo(np.uint32).max:
            hashes = hashes.astype(np.uint32)
        return {"ids": np.array(ids, dtype=str), "hashes": hashes}

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
                new_ids = [str(i) for i in data["ids"]]
                position.update((a, len(ids) + i) for i, a in enumerate(new_ids))
                ids.extend(new_ids)
                rows.append(data["hashes"].astype(np.uint64))
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
        hashes = np.concatenate(rows)[live] if rows else np.zeros((0, num_perm), np.uint64)
        finder._restore([a for a, keep in zip(ids, live.tolist()) if keep], hashes, pairs)
        return finder

    def _similar(self, hashes: np.ndarray) -> set[str]:
        """Articles identical to, or LSH candidates at least ``threshold`` similar to, this one."""
        found = set(self._exact.get(hashes.tobytes(), ()))
        for other in self._lsh.query(hashes):
            if other not in found and \
                    minhash.jaccard(hashes, self._hashes[other]) >= self.threshold:
                found.add(other)
        return found

    def _store(self, article_id: str, hashes: np.ndarray, neighbours: set[str]) -> None:
        self._hashes[article_id] = hashes
        self._neighbours[article_id] = set(neighbours)
        for other in neighbours:
            self._neighbours[other].add(article_id)
        if not self._is_empty(hashes):
            self._exact.setdefault(hashes.tobytes(), set()).add(article_id)
            self._lsh.insert(article_id, hashes)

    def _recluster(self, start: set[str]) -> None:
        """Recompute the clusters of everything reachable from ``start``.

        ``start`` must cover whole old clusters (an added article with its neighbours, or the
        rest of a removed article's cluster), so their old entries can simply be replaced.
        """
        groups: list[set[str]] = []
        seen: set[str] = set()
        for article_id in sorted(start):
            if article_id not in seen:
                groups.append(set(_component(self._neighbours, article_id)))
                seen |= groups[-1]
        for member in seen:
            self._members.pop(self._cluster.get(member, ""), None)
        for group in groups:
            cluster = min(group)
            self._members[cluster] = group
            for member in group:
                if self._cluster.get(member, cluster) != cluster:
                    self._changed[member] = cluster
                self._cluster[member] = cluster

    def _restore(self, ids: list[str], hashes: np.ndarray, edges: np.ndarray) -> None:
        empty = (hashes == self._empty).all(axis=1) if len(hashes) else np.zeros(0, bool)
        whole = np.ascontiguousarray(hashes)
        signatures = whole.view(np.dtype((np.void, whole.shape[1] * whole.itemsize))).ravel() \
            .tolist() if len(hashes) else []
        keep = []
        for article_id, row, signature, is_empty in zip(ids, hashes, signatures,
                                                         empty.tolist()):
            self._hashes[article_id] = row
            self._neighbours[article_id] = set()
            if not is_empty:
                self._exact.setdefault(signature, set()).add(article_id)
                keep.append(article_id)
        if keep:
            self._lsh.insert_many(keep, hashes[~empty])
        for a, b in edges:
            self._neighbours[ids[a]].add(ids[b])
            self._neighbours[ids[b]].add(ids[a])
        self._recluster(set(ids))
        self._changed.clear()
        self._touched.clear()

    def _is_empty(self, hashes: np.ndarray) -> bool:
        """True for the signature of a text with no words (every slot at its initial value)."""
        return bool(np.array_equal(hashes, self._empty))


def assign_clusters(articles: Iterable[Article], threshold: float = DEFAULT_THRESHOLD,
                    num_perm: int = DEFAULT_NUM_PERM) -> dict[str, str]:
    """Cluster a batch: article id -> cluster id (its own id when it has no duplicates)."""
    finder = DuplicateFinder(threshold=threshold, num_perm=num_perm)
    ids = []
    for article in articles:
        finder.add(article.id, finder.signature(article_text(article)))
        ids.append(article.id)
    return {article_id: finder.cluster_of(article_id) for article_id in ids}


def _component(neighbours: dict[str, set[str]], start: str) -> Iterator[str]:
    """Every article reachable from ``start`` through similarity edges (breadth first)."""
    seen, queue = {start}, [start]
    while queue:
        current = queue.pop()
        yield current
        for other in neighbours[current] - seen:
            seen.add(other)
            queue.append(other)
