"""Near-duplicate clusters: exact and edited copies, removal, persistence, the BBC corpus."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from archive.article import Article
from archive.enrich.duplicates import (DuplicateFinder, article_text, assign_clusters,
                                       shingles)
from archive.sources import SourceFile
from archive.sources.text import read

REPO = Path(__file__).resolve().parents[1]
CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
SEED = REPO / "seeds" / "000_ded2ed7496c25a53.txt"

UNRELATED = " ".join([
    "The town library will open on Sundays from next month, the council said.",
    "A petition signed by thousands of readers asked for longer opening hours.",
    "Volunteers will staff the reading room, and the children's corner gets new shelves.",
    "The mayor thanked the staff and said the budget for books would rise next year.",
    "Critics said the money should have gone to repairing the leaking roof instead.",
] * 2)


@pytest.fixture(scope="module")
def seed() -> Article:
    return next(read(SourceFile(SEED, "seeds/000_ded2ed7496c25a53.txt")))


def copy_of(article: Article, new_id: str, **changes: str) -> Article:
    fields = {"title": article.title, "body": article.body, **changes}
    return Article(id=new_id, path=f"news/{new_id}.txt", **fields)


def edited(body: str) -> str:
    """The body with its third paragraph replaced by a different sentence."""
    paragraphs = body.split("\n\n")
    paragraphs[2] = "Officials declined to comment on the details of the agreement on Monday."
    return "\n\n".join(paragraphs)


def finder_with(*articles: Article) -> DuplicateFinder:
    finder = DuplicateFinder()
    for a in articles:
        finder.add(a.id, finder.signature(article_text(a)))
    return finder


def test_shingles_ignore_case_and_punctuation() -> None:
    assert shingles("The Syrian army, it said.") == shingles("the syrian ARMY it said")
    assert shingles("two words") == {"two words"}
    assert shingles("  ...  ") == set()


def test_exact_copy_clusters(seed: Article) -> None:
    finder = finder_with(seed, copy_of(seed, "b-copy"))
    assert finder.cluster_of("b-copy") == finder.cluster_of(seed.id)


def test_copy_differing_only_in_punctuation_clusters_at_any_threshold(seed: Article) -> None:
    shouted = copy_of(seed, "z", title=seed.title.upper(), body=seed.body.replace(",", ""))
    finder = DuplicateFinder(threshold=0.99, num_perm=16)
    for a in (seed, shouted):
        finder.add(a.id, finder.signature(article_text(a)))
    assert finder.cluster_of("z") == finder.cluster_of(seed.id)


def test_lightly_edited_copy_clusters(seed: Article) -> None:
    finder = finder_with(seed, copy_of(seed, "b-edit", body=edited(seed.body)))
    assert finder.cluster_of("b-edit") == finder.cluster_of(seed.id)


def test_unrelated_article_does_not_cluster(seed: Article) -> None:
    other = copy_of(seed, "b-other", title="Library extends opening hours", body=UNRELATED)
    finder = finder_with(seed, other)
    assert finder.cluster_of("b-other") == "b-other"
    assert finder.clusters() == {}


def test_cluster_id_is_the_smallest_member_whatever_the_order(seed: Article) -> None:
    articles = [copy_of(seed, i) for i in ("m", "c", "x")] + [
        copy_of(seed, "q", title="Library", body=UNRELATED)]
    for order in (articles, articles[::-1], [articles[1], articles[3], articles[2], articles[0]]):
        assert assign_clusters(order) == {"m": "c", "c": "c", "x": "c", "q": "q"}


def test_add_reports_changed_clusters_of_earlier_members(seed: Article) -> None:
    finder = finder_with(copy_of(seed, "m"), copy_of(seed, "x"))
    finder.pop_changes()
    assert finder.add("c", finder.signature(article_text(seed))) == "c"
    assert finder.pop_changes() == {"m": "c", "x": "c"}


def test_removal_keeps_clusters_consistent(seed: Article) -> None:
    base = copy_of(seed, "b")
    finder = finder_with(copy_of(seed, "a"), base, copy_of(seed, "c", body=edited(seed.body)))
    assert set(finder.members("a")) == {"a", "b", "c"}
    finder.pop_changes()
    finder.remove("a")
    assert "a" not in finder
    assert finder.cluster_of("b") == finder.cluster_of("c") == "b"
    assert finder.members("a") == frozenset()
    assert finder.members("b") == {"b", "c"}
    assert finder.pop_changes() == {"b": "b", "c": "b"}
    finder.remove("b")
    assert finder.cluster_of("c") == "c"
    assert finder.clusters() == {}


def test_removing_a_bridge_splits_the_cluster() -> None:
    """a ~ m ~ z (Jaccard about 0.67 each) but a !~ z (0.43): without m they part."""
    words = [f"w{i}" for i in range(420)]
    texts = {"a": words[:300], "m": words[60:360], "z": words[120:]}
    finder = DuplicateFinder(threshold=0.55, num_perm=256)
    for article_id, text in texts.items():
        finder.add(article_id, finder.signature(" ".join(text)))
    assert finder.cluster_of("z") == "a"
    finder.remove("m")
    assert (finder.cluster_of("a"), finder.cluster_of("z")) == ("a", "z")


def test_readding_an_id_replaces_it(seed: Article) -> None:
    finder = finder_with(seed, copy_of(seed, "b"))
    assert finder.add("b", finder.signature(UNRELATED)) == "b"
    assert len(finder) == 2 and finder.clusters() == {}


def test_add_article_sets_the_cluster_field(seed: Article) -> None:
    finder = DuplicateFinder()
    finder.add_article(copy_of(seed, "a"))
    assert finder.add_article(copy_of(seed, "b")).cluster == "a"


def test_empty_text_is_its_own_cluster() -> None:
    finder = DuplicateFinder()
    assert finder.add("a", finder.signature("...")) == "a"
    assert finder.add("b", finder.signature("")) == "b"
    finder.remove("a")
    assert len(finder) == 1


def test_foreign_signature_is_refused() -> None:
    finder, other = DuplicateFinder(num_perm=128), DuplicateFinder(num_perm=64)
    with pytest.raises(ValueError):
        finder.add("a", other.signature("some words here"))


def test_save_load_round_trip(seed: Article, tmp_path: Path) -> None:
    finder = finder_with(seed, copy_of(seed, "b"), copy_of(seed, "c", body=edited(seed.body)),
                         copy_of(seed, "d", title="Library", body=UNRELATED))
    finder.add("e", finder.signature(""))
    path = tmp_path / "index" / "duplicates.npz"
    finder.save(path)
    finder.save(path)  # overwriting works, and leaves no temporary file behind
    assert [p.name for p in path.parent.iterdir()] == ["duplicates.npz"]

    loaded = DuplicateFinder.load(path)
    assert (loaded.threshold, loaded.num_perm, len(loaded)) == (0.8, 128, 5)
    assert loaded.clusters() == finder.clusters()
    assert all(loaded.cluster_of(i) == finder.cluster_of(i) for i in [seed.id, *"bcde"])
    assert loaded.pop_changes() == {}
    assert loaded.add("a", loaded.signature(article_text(seed))) == "a"
    loaded.remove(seed.id)
    assert loaded.members("a") == {"a", "b", "c"}


def test_empty_finder_round_trip(tmp_path: Path) -> None:
    DuplicateFinder(threshold=0.7, num_perm=32).save(tmp_path / "d.npz")
    loaded = DuplicateFinder.load(tmp_path / "d.npz")
    assert (loaded.threshold, loaded.num_perm, len(loaded)) == (0.7, 32, 0)


@pytest.mark.skipif(not (CORPORA / "bbc").is_dir(),
                    reason="needs ../shared/corpora/bbc (absent in a fresh clone)")
def test_bbc_duplicates_and_copies() -> None:
    """2,225 files, 2,127 distinct: every byte-identical pair clusters; copies add no clusters."""
    root = CORPORA / "bbc"
    paths = sorted(root.glob("*/*.txt"))
    articles = [next(read(SourceFile(p, f"bbc/{p.relative_to(root).as_posix()}"))) for p in paths]
    assert len(articles) == 2225
    by_bytes: dict[bytes, list[str]] = {}
    for path, a in zip(paths, articles):
        by_bytes.setdefault(path.read_bytes(), []).append(a.id)
    exact_pairs = [ids for ids in by_bytes.values() if len(ids) > 1]
    assert len(by_bytes) == 2127 and len(exact_pairs) == 98

    finder = DuplicateFinder()
    signatures = {a.id: finder.signature(article_text(a)) for a in articles}
    order = list(signatures)
    random.Random(7).shuffle(order)
    for article_id in order:
        finder.add(article_id, signatures[article_id])
    assert all(finder.cluster_of(a) == finder.cluster_of(b) for a, b in exact_pairs)
    sizes = Counter(len(m) for m in finder.clusters().values())
    assert 98 <= sum(sizes.values()) <= 170 and set(sizes) == {2}
    before = {finder.cluster_of(i) for i in order}

    for article_id in order:  # a second copy of each: same text, another id
        finder.add(f"{article_id}~copy", signatures[article_id])
    assert len(finder) == 2 * 2225
    assert {finder.cluster_of(i) for i in finder} == before
    assert all(finder.cluster_of(f"{i}~copy") == finder.cluster_of(i) for i in order)



def test_saves_write_what_changed_and_load_back_the_same_finder(
        seed: Article, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Saved at every commit, the finder writes only the articles added or removed since
    (numbered delta files), and the whole again only once the deltas hold a quarter of it:
    the rows written over a run stay within a few times the articles, where writing the
    whole at every save wrote a number growing with the square of the commits. After every
    save, loading gives the same clusters and the same counts."""
    from archive.enrich import finder_files

    written: list[int] = []
    write = finder_files.write_atomically
    monkeypatch.setattr(finder_files, "write_atomically",
                        lambda path, arrays: written.append(len(arrays["ids"]))
                        or write(path, arrays))
    rng = random.Random(7)
    paragraphs = seed.body.split("\n\n")
    finder, path, live = DuplicateFinder(), tmp_path / "index" / "duplicates.npz", []
    for commit in range(40):
        for n in range(25):
            article_id = f"a{commit:02d}-{n:02d}"
            if rng.random() < 0.3:  # a copy or an edited copy of a story: a cluster
                body = "\n\n".join(rng.sample(paragraphs, 3)) if rng.random() < 0.5 \
                    else seed.body
            else:
                body = " ".join(rng.sample(UNRELATED.split(), 30)) + f" story {article_id}"
            finder.add(article_id, finder.signature(f"Title {n % 5}\n{body}"))
            live.append(article_id)
        for gone in rng.sample(live, 4):  # removed, or edited (removed and added again)
            finder.remove(gone)
            live.remove(gone)
            if rng.random() < 0.5:
                finder.add(gone, finder.signature(seed.body))
                live.append(gone)
        finder.pop_changes()
        finder.save(path)
        loaded = DuplicateFinder.load(path)
        assert loaded.clusters() == finder.clusters() and len(loaded) == len(finder)
        assert all(loaded.cluster_of(a) == finder.cluster_of(a) for a in live)
        clusters = finder.clusters()
        assert DuplicateFinder.saved_stats(path) == \
            (len(clusters), sum(len(m) - 1 for m in clusters.values()))
    assert len(finder.clusters()) > 3
    assert len(written) == 40 and sum(written) <= 6 * len(finder)
    assert 1 <= len(list(path.parent.glob("duplicates-*.npz"))) < 10


def test_a_delta_left_beside_a_newer_whole_is_not_applied(seed: Article, tmp_path: Path
                                                          ) -> None:
    """A crash between writing the whole finder and deleting its old deltas (or a rebuild's
    fresh finder over an old run's files) leaves deltas of older generations: they are
    never applied, nor is a delta after a missing one."""
    path = tmp_path / "duplicates.npz"
    old = finder_with(seed, copy_of(seed, "b"), copy_of(seed, "c", title="Library",
                                                        body=UNRELATED))
    old.save(path)
    old.add("d", old.signature(article_text(seed)))
    old.save(path)
    deltas = list(tmp_path.glob("duplicates-*.npz"))
    assert len(deltas) == 1
    kept = deltas[0].read_bytes()
    fresh = finder_with(copy_of(seed, "x", title="Library", body=UNRELATED))
    fresh.save(path)  # the whole, numbered after every file there; the old delta goes
    assert not deltas[0].exists()
    deltas[0].write_bytes(kept)
    assert set(DuplicateFinder.load(path).clusters()) == set() and len(
        DuplicateFinder.load(path)) == 1
    generation = int(deltas[0].name[len("duplicates-"):-len(".npz")])
    deltas[0].rename(tmp_path / f"duplicates-{generation + 5:06d}.npz")  # after a gap
    assert len(DuplicateFinder.load(path)) == 1


def test_clusters_match_a_brute_force_reference(seed: Article, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The finder's arrays (sorted band keys, an unsorted buffer merged as it fills, rows
    that removals leave dead) give the clusters of the definition, computed here pair by
    pair: an edge where two live articles share one LSH band exactly and their estimated
    Jaccard reaches the threshold; clusters are the connected groups, named by their
    smallest id; ``pop_changes`` names exactly the earlier articles whose cluster moved.
    Random adds, re-adds and removals of stories and their edited copies; the buffer is
    made small so merges happen often; a save and load along the way changes nothing."""
    import numpy as np

    from archive.enrich import minhash

    monkeypatch.setattr(minhash.Bands, "PENDING", 7)
    rng = random.Random(11)
    paragraphs = [p for p in seed.body.split("\n\n") if p.strip()]
    stories = [" ".join(rng.sample(UNRELATED.split(), 40)) + f" story {n}" for n in range(6)]

    def text() -> str:
        roll = rng.random()
        if roll < 0.4:  # a story or a copy of it with a sentence changed
            story = rng.choice(stories)
            return story if rng.random() < 0.5 else story.replace("the", rng.choice("xyz"), 1)
        if roll < 0.6:
            return "\n\n".join(rng.sample(paragraphs, min(3, len(paragraphs))))
        return seed.body if roll < 0.7 else f"{rng.random()} " + UNRELATED[rng.randrange(40):]

    finder = DuplicateFinder()
    bands, rows = minhash.lsh_params(finder.threshold - 0.15, finder.num_perm)
    live: dict[str, np.ndarray] = {}

    def expected() -> dict[str, str]:
        ids = sorted(live)
        link = {a: set() for a in ids}
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                x, y = live[a], live[b]
                if (x == minhash.MAX32).all() or (y == minhash.MAX32).all():
                    continue
                shared = any((x[k:k + rows] == y[k:k + rows]).all()
                             for k in range(0, bands * rows, rows))
                if shared and np.count_nonzero(x == y) / len(x) >= finder.threshold:
                    link[a].add(b)
                    link[b].add(a)
        cluster: dict[str, str] = {}
        for a in ids:
            if a not in cluster:
                group, queue = {a}, [a]
                while queue:
                    for b in link[queue.pop()] - group:
                        group.add(b)
                        queue.append(b)
                for b in group:
                    cluster[b] = min(group)
        return cluster

    before: dict[str, str] = {}
    for step in range(160):
        article_id = f"a{rng.randrange(60):02d}"
        if article_id in live and rng.random() < 0.3:
            finder.remove(article_id)
            del live[article_id]
        else:
            signature = finder.signature(text())
            finder.add(article_id, signature)
            live[article_id] = np.asarray(signature.hashvalues)
        now = expected()
        assert {a: finder.cluster_of(a) for a in live} == now, step
        assert finder.pop_changes() == {a: c for a, c in now.items()
                                        if a in before and before[a] != c and a != article_id}, step
        before = now
        if step == 80:
            finder.save(tmp_path / "d.npz")
            finder = DuplicateFinder.load(tmp_path / "d.npz")
    groups: dict[str, set[str]] = {}
    for a, c in before.items():
        groups.setdefault(c, set()).add(a)
    assert finder.clusters() == {c: g for c, g in groups.items() if len(g) > 1}
    assert len(finder.clusters()) >= 3 and len(finder) == len(live)
