"""Related articles and site lists computed in one pass give what the per-article Whoosh
searches give: ``Archive.related_lists`` against Whoosh's ``more_like`` (``related_ids``),
and ``Archive.browse`` against a sorted Whoosh search under each filter.

Real indexes on disk: a BBC topic folder and two Reuters-21578 files (stories with no body
among them), several segments and deleted articles included.
"""

from __future__ import annotations

import json
import random
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from whoosh import query as wq, sorting

from archive import store
from archive.query import Filters
from archive.search import Archive
from archive.site import related_cache
from archive.store import statistics
from cli_checks import index_folder

pytestmark = pytest.mark.corpus


index = index_folder


@pytest.fixture(scope="module")
def reuters_index(tmp_path_factory: pytest.TempPathFactory, corpora_dir: Path) -> Path:
    folder = tmp_path_factory.mktemp("reuters")
    files = folder / "files"
    files.mkdir()
    for name in ("reut2-000.sgm", "reut2-001.sgm"):
        shutil.copy(corpora_dir / "reuters21578" / name, files / name)
    ix = index([files], folder / "index")
    # a second segment and deleted articles: edit one file so its changed stories are replaced
    text = (files / "reut2-001.sgm").read_bytes().replace(b"<BODY>", b"<BODY>Revised. ", 40)
    (files / "reut2-001.sgm").write_bytes(text)
    return index([files], ix)


@pytest.fixture(scope="module")
def bbc_index(tmp_path_factory: pytest.TempPathFactory, corpora_dir: Path) -> Path:
    folder = tmp_path_factory.mktemp("bbc")
    return index([corpora_dir / "bbc" / "business", corpora_dir / "bbc" / "tech"],
                 folder / "index")


@pytest.mark.parametrize("which", ["reuters_index", "bbc_index"])
def test_related_lists_equal_whoosh_more_like(which: str, request: pytest.FixtureRequest) -> None:
    """Weighed by statistics taken from the index as it is, the lists are Whoosh's."""
    folder = request.getfixturevalue(which)
    statistics.renew(folder, store.open_index(folder), force=True)
    with Archive(folder) as archive:
        reader = archive.searcher.reader()
        ids = [archive.searcher.stored_fields(d)["id"] for d in reader.all_doc_ids()]
        assert reader.has_deletions() or which == "bbc_index"
        lists = archive.related_lists(ids, limit=5)
        assert set(lists) == set(ids)
        sample = random.Random(7).sample(sorted(ids), 150)  # not in docnum order, which varies
        for article_id in sample:
            assert lists[article_id] == archive.related_ids(article_id, 5), article_id
        assert sum(1 for i in ids if lists[i]) > len(ids) // 2
        no_body = [i for i in ids if not archive.article(i).body]
        if which == "reuters_index":
            assert no_body and all(lists[i] == [] for i in no_body)


@pytest.mark.parametrize("which", ["reuters_index", "bbc_index"])
def test_related_lists_from_the_columns_equal_those_from_whoosh(
        which: str, request: pytest.FixtureRequest) -> None:
    """The one pass reads the body postings from the columnar sidecars when the index has
    them: every article's list is the one the pass over Whoosh's own postings gives."""
    folder = request.getfixturevalue(which)
    with Archive(folder, use_columns=False) as archive:
        ids = [archive.searcher.stored_fields(d)["id"]
               for d in archive.searcher.reader().all_doc_ids()]
        from_whoosh = archive.related_lists(ids, limit=5)
    with Archive(folder) as archive:
        assert archive.column_index() is not None
        assert archive.related_lists(ids, limit=5) == from_whoosh
        listings = archive.listings()   # by document number, as the site builder asks
        assert archive.related_by_number({n: listed.id for n, listed in listings.items()},
                                         limit=5) == from_whoosh
    assert sum(1 for found in from_whoosh.values() if found) > len(ids) // 2


def live_ids(archive: Archive) -> list[str]:
    return [archive.searcher.stored_fields(d)["id"]
            for d in archive.searcher.reader().all_doc_ids()]


def three_hundred_business_stories(tmp_path: Path, corpora_dir: Path
                                   ) -> tuple[Path, list[Path], Path]:
    """An index of 300 BBC business stories copied into a folder: (that folder, the
    business stories' paths, the index)."""
    files = tmp_path / "files"
    files.mkdir()
    business = sorted((corpora_dir / "bbc" / "business").glob("*.txt"))
    for path in business[:300]:
        shutil.copy(path, files / path.name)
    return files, business, index([files], tmp_path / "index")


def test_the_index_keeps_its_statistics_until_the_collection_has_moved(
        tmp_path: Path, corpora_dir: Path) -> None:
    """``archive index`` takes the statistics snapshot with the first articles and again
    only once the number of articles has moved by more than ``RENEW_AFTER``; with the
    snapshot kept, an old article's list changes only where a new article ranks into it
    (the old articles it lists keep their order, the last ones pushed out)."""
    files, _, folder = three_hundred_business_stories(tmp_path, corpora_dir)
    taken = statistics.read(folder)
    assert taken is not None and taken.articles == 300
    with Archive(folder) as archive:
        before = archive.related_lists(live_ids(archive))
    tech = sorted((corpora_dir / "bbc" / "tech").glob("*.txt"))
    for path in tech[:25]:   # about 8% more: the snapshot stays
        shutil.copy(path, files / ("tech-" + path.name))
    index([files], folder)
    kept = statistics.read(folder)
    assert kept is not None and kept.fingerprint == taken.fingerprint
    with Archive(folder) as archive:
        after = archive.related_lists(live_ids(archive))
    new = set(after) - set(before)
    assert len(new) == 25
    entered = [i for i in before if after[i] != before[i]]
    assert entered and len(entered) < len(before) // 2
    for article_id in before:
        old_ones = [i for i in after[article_id] if i not in new]
        assert old_ones == before[article_id][:len(old_ones)], article_id
        assert after[article_id] == before[article_id] or new & set(after[article_id])
    for path in tech[25:60]:   # past the share: taken again, from the index as it is
        shutil.copy(path, files / ("tech-" + path.name))
    index([files], folder)
    renewed = statistics.read(folder)
    assert renewed is not None and renewed.articles == 360
    assert renewed.fingerprint != taken.fingerprint


def test_merging_new_articles_into_a_builds_candidates_ranks_as_a_fresh_pass(
        tmp_path: Path, corpora_dir: Path) -> None:
    """A site build keeps every article's ranked candidates (``site.related_cache``); after
    articles are added and edited, the next ranks only the changed articles (and those an
    edited candidate left short), merging the rest and taking the unchanged articles' key
    terms as they were: every list, candidate, score and key term is what ranking every
    article afresh gives."""
    files, business, folder = three_hundred_business_stories(tmp_path, corpora_dir)
    with Archive(folder) as archive:
        listings = archive.listings()
        lists, ranked, keys = archive.related_ranked({n: x.id for n, x in listings.items()})
        basis = [related_cache.FORMAT, 5, archive.related_statistics().fingerprint]
        key = related_cache.collection_key(5, basis[2], listings)
        cache = json.loads(json.dumps(related_cache.remember(key, basis, listings, lists, ranked,
                                                            keys)))
    for path in sorted((corpora_dir / "bbc" / "tech").glob("*.txt"))[:20]:
        shutil.copy(path, files / ("tech-" + path.name))
    tech = sorted((corpora_dir / "bbc" / "tech").glob("*.txt"))[100:]
    for n, path in enumerate(business[:300:30]):   # ten edited: taken out of the lists naming
        text = path.read_text("latin-1")           # them, five of them rewritten whole so
        if n % 2:                                  # they leave those lists
            text = text.split("\n", 1)[0] + "\n" + tech[n].read_text("latin-1").split("\n", 1)[1]
        (files / path.name).write_text(text + "\nThis story was updated.\n", "utf-8")
    index([files], folder)
    with Archive(folder) as archive:
        listings = archive.listings()
        numbers = {n: x.id for n, x in listings.items()}
        key = related_cache.collection_key(5, basis[2], listings)
        assert archive.related_statistics().fingerprint == basis[2] and key != cache["collection"]
        earlier = related_cache.earlier(cache, key, basis, listings)
        assert earlier.lists is None and len(earlier.changed) == 30
        # every unchanged article's candidates, those naming an edited one with a bound
        bounded = [n for n, found in earlier.previous.items() if found.bound is not None]
        assert len(earlier.previous) == len(listings) - 30 and len(bounded) > 10
        assert earlier.keys is not None and len(set(earlier.keys.docs)) > len(listings) // 2
        merged_lists, merged, merged_keys = archive.related_ranked(
            numbers, 5, earlier.previous, earlier.changed, earlier.keys)
        fresh_lists, fresh, fresh_keys = archive.related_ranked(numbers, 5)
    assert merged_lists == fresh_lists
    assert sum(1 for i in fresh_lists if fresh_lists[i]) > len(numbers) // 2
    for number, found in fresh.items():
        assert merged[number].numbers[:10].tolist() == found.numbers[:10].tolist(), number
        assert merged[number].scores.tolist() == found.scores.tolist(), number
    # the unchanged articles' key terms, taken from the cache, are the ones picked afresh
    assert [merged_keys.words[t] for t in merged_keys.terms] == \
        [fresh_keys.words[t] for t in fresh_keys.terms]
    assert merged_keys.docs.tolist() == fresh_keys.docs.tolist()
    assert merged_keys.weights.tolist() == fresh_keys.weights.tolist()


def reference_pages(archive: Archive, filters: Filters, sort: str, size: int) -> list[list[str]]:
    """The lists as one sorted Whoosh search per filter gives them (the former path)."""
    sortedby = sorting.MultiFacet([sorting.FieldFacet("dated", reverse=True),
                                   sorting.FieldFacet("date", reverse=sort == "newest")])
    results = archive.searcher.search(wq.Every(), limit=None, sortedby=sortedby,
                                      filter=filters.query())
    ids = [hit["id"] for hit in results]
    return [ids[i:i + size] for i in range(0, len(ids), size)] or [[]]


def test_browse_lists_equal_a_sorted_search_per_filter(reuters_index: Path) -> None:
    with Archive(reuters_index) as archive:
        everything = archive.search("", page_size=1, all_copies=True)
        filters = [Filters(), Filters(undated=True), Filters(year="1987")]
        for name in ("source", "place", "topic"):
            filters += [Filters(**{name: f.key}) for f in everything.facets[name][:6]]
        # a month as the site lists it (read from the day table), a day's part of one, and
        # days with a facet (both searched)
        end = datetime(1987, 3, 31) + (timedelta(days=1) - timedelta(microseconds=1))
        filters += [Filters(since=datetime(1987, 3, 1), until=end),
                    Filters(since=datetime(1987, 3, 2, 12), until=end),
                    Filters(since=datetime(1987, 3, 1), until=end, place="usa")]
        checked = 0
        for f in filters:
            for sort in ("newest", "oldest"):
                pages = list(archive.browse(f, 20, sort))
                got = [[h.id for h in page.hits] for page in pages]
                assert got == reference_pages(archive, f, sort, 20), (f, sort)
                ranks = [h.rank for page in pages for h in page.hits]
                assert ranks == list(range(1, len(ranks) + 1))
                assert all(page.total == len(ranks) for page in pages)
                checked += len(ranks)
        assert checked > 1000


def test_the_related_cache_leaves_out_rows_naming_an_article_without_a_row() -> None:
    """A row whose candidates name an article the build did not rank cannot be merged into
    later (its candidate has no number to come back as): it is left out, and so is a row
    naming it in turn; the others come back as they were, less what changed since."""
    from archive.related import KeyTerms, Ranked
    from archive.search import Listed

    def listed(number: int, digest: int = 0) -> Listed:
        return Listed(f"a{number}", "", None, "", "", "", f"{digest or number:024d}", "")

    ranked = {1: Ranked(np.array([99]), np.array([2.0])),        # 99 was not ranked
              2: Ranked(np.array([1, 3]), np.array([3.0, 1.0])),  # names the row left out
              3: Ranked(np.array([4]), np.array([0.5])),
              4: Ranked(np.array([3]), np.array([0.5])),
              5: Ranked(np.zeros(0, np.int64), np.zeros(0))}
    keys = KeyTerms(np.array([2, 3, 3, 4]), np.array([2, 0, 1, 1]),
                    np.array([1.0, 0.5, 1.0, 1.0]), [b"x", b"y", b"z"])
    basis = [related_cache.FORMAT, 1, "snapshot"]
    cache = json.loads(json.dumps(related_cache.remember(
        "k", basis, {n: listed(n) for n in ranked}, {}, ranked, keys)))
    assert cache["ids"] == ["a3", "a4", "a5"]
    # article 4 edited since: taken out of 3's candidates, its key terms not kept
    now = {n: listed(n, 40 if n == 4 else 0) for n in ranked}
    earlier = related_cache.earlier(cache, "other", basis, now)
    assert sorted(earlier.previous) == [3, 5] and earlier.changed == [1, 2, 4]
    assert earlier.previous[3].numbers.tolist() == [] and earlier.previous[3].bound is None
    assert earlier.keys is not None and earlier.keys.docs.tolist() == [3, 3]
    assert [earlier.keys.words[t] for t in earlier.keys.terms] == [b"x", b"y"]
    assert earlier.keys.weights.tolist() == [0.5, 1.0]
