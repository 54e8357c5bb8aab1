"""Every query form and search option, run through ``archive search`` against the five fixture
articles (conftest.NEWS): volcano 2016-06-05 Reuters, election 2015-03-03 AP, orchestra
2017-08-12 Reuters, harvest 2017-08-30 "BBC News", library undated with no source."""

from __future__ import annotations

import pytest

from archive.article import make_id

VOLCANO, ELECTION, ORCHESTRA, HARVEST, LIBRARY = (
    make_id(f"news/{name}.txt") for name in ("volcano", "election", "orchestra", "harvest",
                                             "library"))
EVERYTHING = {VOLCANO, ELECTION, ORCHESTRA, HARVEST, LIBRARY}


@pytest.fixture(scope="module")
def search(news_index):  # noqa: ANN001, ANN201
    """``search("query", "--option", ...)`` -> ids of the hits, in order."""
    return news_index.search


# --- the query language --------------------------------------------------------------------------

def test_words_are_anded_by_default(search) -> None:  # noqa: ANN001
    assert search("volcano ash") == [VOLCANO]
    assert search("volcano AND ash") == [VOLCANO]
    assert search("symphony") and search("election")
    assert search('"symphony" election') == []  # each matches something, never both together


def test_bare_words_no_article_has_together_fall_back_to_any_word(news_index) -> None:  # noqa: ANN001
    page = news_index.json("search", "symphony election")
    assert page["relaxed"] is True
    assert set(hit["id"] for hit in page["hits"]) == {ELECTION, ORCHESTRA, HARVEST}
    assert "No article has every word of symphony election" in \
        news_index("search", "symphony election").stdout
    assert news_index.json("search", "volcano ash")["relaxed"] is False


@pytest.mark.parametrize("query", ['title:symphony election', 'symphony -orchestra election',
                                   '"symphony" election', 'symphony AND election'])
def test_queries_with_syntax_are_never_relaxed(news_index, query: str) -> None:  # noqa: ANN001
    page = news_index.json("search", query, exit_code=1)
    assert (page["total"], page["relaxed"]) == (0, False)


def test_relaxed_results_rank_articles_with_more_of_the_words_first(search) -> None:  # noqa: ANN001
    # volcano.txt has "volcano", "fishing" and "village"; election.txt "fishing" and "village"
    ranked = search("volcano fishing village symphony")
    assert ranked[0] == VOLCANO and ranked.index(ELECTION) < ranked.index(ORCHESTRA)


def test_words_no_search_looks_for_are_named(news_index) -> None:  # noqa: ANN001
    page = news_index.json("search", "the of", exit_code=1)
    assert (page["total"], page["unsearched"]) == (0, ["the", "of"])
    result = news_index("search", "the C")
    shown = result.stdout
    assert result.exit_code == 1 and "No articles match the C." in shown
    assert "Not searched: the, C (common words and single letters" in shown
    # a word the index searches is not named; neither are fields, operators or wildcards
    assert news_index.json("search", "volcano ash")["unsearched"] == []
    assert news_index.json("search", 'volcano OR "volcano of ash" OR title:the OR vol*'
                           )["unsearched"] == ["of"]
    # "U.S." is one word the index searches (a dotted abbreviation), "C" a single letter
    assert news_index.json("search", "U.S. vitamin C", exit_code=1)["unsearched"] == ["C"]


def test_a_misspelt_word_is_suggested_from_the_word_as_typed(news_index) -> None:  # noqa: ANN001
    # Whoosh's own correct_query corrects the stems ("vilag"), suggesting words near those
    page = news_index.json("search", "volcanoes vilage erupst")
    assert page["suggestion"] == "volcanoes village erupts"
    assert page["relaxed"] and page["hits"][0]["id"] == VOLCANO  # "volcanoes" alone matched


def test_or_matches_either_word(search) -> None:  # noqa: ANN001
    assert set(search("volcano OR symphony")) == {VOLCANO, ORCHESTRA, HARVEST}


def test_not_excludes_a_word(search) -> None:  # noqa: ANN001
    assert set(search("fishing")) == {VOLCANO, ELECTION}
    assert search("fishing NOT volcano") == [ELECTION]


def test_parentheses_group(search) -> None:  # noqa: ANN001
    assert search("(volcano OR election) NOT ash") == [ELECTION]
    assert set(search("volcano OR (election NOT ash)")) == {VOLCANO, ELECTION}


def test_a_phrase_needs_the_words_together_and_in_order(search) -> None:  # noqa: ANN001
    assert set(search("fishing village")) == {VOLCANO, ELECTION}
    assert search('"fishing village"') == [VOLCANO]
    assert search('"village fishing"') == []


def test_a_proximity_phrase_allows_words_between(search) -> None:  # noqa: ANN001
    # election.txt: "fishing quotas for every village" ("for" is a stop word)
    assert search('"fishing village"~1') == [VOLCANO]
    assert set(search('"fishing village"~4')) == {VOLCANO, ELECTION}


def test_wildcards_match_word_beginnings(search) -> None:  # noqa: ANN001
    assert search("volc*") == [VOLCANO]
    assert set(search("symph*")) == {ORCHESTRA, HARVEST}
    assert search("gr?pe") == [HARVEST]


def test_stemming_matches_other_forms_of_a_word(search) -> None:  # noqa: ANN001
    assert search("erupting") == [VOLCANO]
    assert search("orchestras") == [ORCHESTRA]


@pytest.mark.parametrize("typo,expected", [
    ("volcamo~", {VOLCANO}),
    ("symphny~", {ORCHESTRA, HARVEST}),       # stem "symphoni": fuzzy must use the stems
    ("orchestre~", {ORCHESTRA}),
])
def test_fuzzy_terms_forgive_a_typo(search, typo: str, expected: set[str]) -> None:  # noqa: ANN001
    assert search(typo.rstrip("~")) == []
    assert set(search(typo)) == expected


def test_title_field_only_looks_at_titles(search) -> None:  # noqa: ANN001
    assert set(search("symphony")) == {ORCHESTRA, HARVEST}   # harvest has it in its body
    assert search("title:symphony") == [ORCHESTRA]
    assert search('title:"fishing village"') == [VOLCANO]


def test_source_field(search) -> None:  # noqa: ANN001
    assert set(search("source:reuters")) == {VOLCANO, ORCHESTRA}
    assert set(search("source:Reuters")) == {VOLCANO, ORCHESTRA}
    assert search("source:AP") == [ELECTION]
    assert search('source:"BBC News"') == [HARVEST]
    assert search("symphony source:reuters") == [ORCHESTRA]


@pytest.mark.parametrize("query,expected", [
    ("date:2017", {ORCHESTRA, HARVEST}),
    ("date:2016", {VOLCANO}),
    ("date:2017-08", {ORCHESTRA, HARVEST}),
    ("date:2016-06", {VOLCANO}),
    ("date:2017-08-12", {ORCHESTRA}),
    ("date:[2017-08-01 to 2017-08-20]", {ORCHESTRA}),
    ("date:[2015-01-01 to 2016-12-31]", {VOLCANO, ELECTION}),
    ("date:>2017-01-01", {ORCHESTRA, HARVEST}),
    ("date:<2016-01-01", {ELECTION}),
    ("symphony date:2017-08", {ORCHESTRA, HARVEST}),
    ("symphony date:>2017-08-20", {HARVEST}),
])
def test_date_queries(search, query: str, expected: set[str]) -> None:  # noqa: ANN001
    assert set(search(query)) == expected


# --- ordering, paging, filters -------------------------------------------------------------------

def test_relevance_puts_a_title_match_first(search) -> None:  # noqa: ANN001
    assert search("symphony") == [ORCHESTRA, HARVEST]


def test_sort_newest_and_oldest_keep_undated_articles_last(search) -> None:  # noqa: ANN001
    assert search("--sort", "newest") == [HARVEST, ORCHESTRA, VOLCANO, ELECTION, LIBRARY]
    assert search("--sort", "oldest") == [ELECTION, VOLCANO, ORCHESTRA, HARVEST, LIBRARY]
    assert search("symphony", "--sort", "oldest") == [ORCHESTRA, HARVEST]


def test_limit_and_page_walk_through_the_results(news_index) -> None:  # noqa: ANN001
    pages = [news_index.json("search", "--sort", "oldest", "--limit", "2", "--page", n)
             for n in (1, 2, 3)]
    assert [[h["id"] for h in p["hits"]] for p in pages] == \
        [[ELECTION, VOLCANO], [ORCHESTRA, HARVEST], [LIBRARY]]
    assert [[h["rank"] for h in p["hits"]] for p in pages] == [[1, 2], [3, 4], [5]]
    assert {(p["total"], p["pages"], p["limit"]) for p in pages} == {(5, 3, 2)}


def test_a_page_past_the_end_is_empty_but_keeps_the_total(news_index) -> None:  # noqa: ANN001
    page = news_index.json("search", "--limit", "2", "--page", "9")
    assert page["hits"] == [] and page["total"] == 5


def test_source_since_and_until_filters(search) -> None:  # noqa: ANN001
    assert set(search("--source", "Reuters")) == {VOLCANO, ORCHESTRA}
    assert set(search("--source", "bbc news")) == {HARVEST}
    assert set(search("--since", "2017")) == {ORCHESTRA, HARVEST}
    assert set(search("--since", "2017-08-13")) == {HARVEST}
    assert set(search("--until", "2016-06-05")) == {ELECTION, VOLCANO}   # the whole day counts
    assert set(search("--until", "2016")) == {ELECTION, VOLCANO}
    assert search("--since", "2016-06-06", "--until", "2017-08-12") == [ORCHESTRA]
    assert search("--source", "reuters", "--since", "2017") == [ORCHESTRA]
    assert search("symphony", "--until", "2017-08-29") == [ORCHESTRA]


def test_an_empty_query_lists_everything(search) -> None:  # noqa: ANN001
    assert set(search()) == EVERYTHING


# --- the --json shape ------------------------------------------------------------------------------

def test_json_results_have_the_documented_shape(news_index) -> None:  # noqa: ANN001
    page = news_index.json("search", "symphony")
    assert {"query", "total", "page", "pages", "limit", "sort", "hits", "facets",
            "suggestion"} <= set(page)
    assert (page["query"], page["total"], page["page"], page["sort"]) == \
        ("symphony", 2, 1, "relevance")
    first = page["hits"][0]
    assert {"id", "title", "date", "date_source", "source", "url", "snippet", "score"} <= \
        set(first)
    assert (first["id"], first["title"], first["date"], first["date_source"], first["source"]) \
        == (ORCHESTRA, "City orchestra premieres a new symphony", "2017-08-12", "inferred",
            "Reuters")
    assert "[symphony]" in first["snippet"]
    assert first["highlights"] == ["symphony"]
    assert first["score"] > page["hits"][1]["score"] > 0
    assert page["suggestion"] is None


def test_sorted_results_have_no_score(news_index) -> None:  # noqa: ANN001
    page = news_index.json("search", "symphony", "--sort", "newest")
    assert [h["score"] for h in page["hits"]] == [None, None]


def test_an_undated_hit_says_so(news_index) -> None:  # noqa: ANN001
    (hit,) = news_index.json("search", "library")["hits"]
    assert (hit["date"], hit["date_source"], hit["source"]) == (None, "unknown", "")


def test_facets_count_sources_and_years_of_all_matches(news_index) -> None:  # noqa: ANN001
    facets = news_index.json("search", "--limit", "1")["facets"]
    assert facets["source"] == [
        {"value": "Reuters", "key": "reuters", "count": 2},
        {"value": "AP", "key": "ap", "count": 1},
        {"value": "BBC News", "key": "bbc news", "count": 1},
    ]
    assert {f["value"]: f["count"] for f in facets["year"]} == {"2017": 2, "2016": 1, "2015": 1}
    narrowed = news_index.json("search", "symphony")["facets"]
    assert {f["key"]: f["count"] for f in narrowed["source"]} == {"reuters": 1, "bbc news": 1}


def test_a_facet_key_works_as_a_query(news_index, search) -> None:  # noqa: ANN001
    for facet in news_index.json("search")["facets"]["source"]:
        assert len(search(f'source:"{facet["key"]}"')) == facet["count"]


def test_a_misspelling_with_no_hits_gets_a_suggestion(news_index) -> None:  # noqa: ANN001
    page = news_index.json("search", "volcanno", exit_code=1)
    assert (page["total"], page["hits"], page["suggestion"]) == (0, [], "volcano")
    result = news_index("search", "volcanno")
    assert result.exit_code == 1
    assert "No articles match volcanno." in result.stdout
    assert "Did you mean: volcano" in result.stdout


def test_no_suggestion_when_nothing_is_close(news_index) -> None:  # noqa: ANN001
    page = news_index.json("search", "xylophonist", exit_code=1)
    assert page["suggestion"] is None


# --- the text output -------------------------------------------------------------------------------

def test_text_results_show_count_title_date_source_id_and_marked_snippet(news_index) -> None:  # noqa: ANN001
    result = news_index("search", "volcano")
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith("1 article matches volcano, sorted by relevance.")
    assert "1. Volcano erupts near fishing village" in out
    assert f"2016-06-05 (inferred) \u00b7 Reuters \u00b7 {VOLCANO}" in out
    assert "The [volcano] on the island erupted" in out
    assert "\x1b[" not in out  # piped output: plain brackets, no terminal colour


def test_text_results_say_which_page(news_index) -> None:  # noqa: ANN001
    out = news_index("search", "--limit", "2", "--page", "2").stdout
    assert out.startswith("5 articles match (page 2 of 3), sorted by relevance.")
    assert out.count("\n\n3. ") == 1 and "\n\n5. " not in out


def test_a_lead_flattens_only_a_prefix_and_reads_as_the_whole_body_flattened() -> None:
    """``_lead`` flattens only as much of a body as its limit needs (lists show the leads of
    hundreds of long articles): it must equal cutting the whole flattened body, whatever the
    runs of whitespace (Unicode ones too) and wherever the prefix ends."""
    import random
    import re

    from archive.search import _flat, _lead

    def whole(body: str, limit: int) -> str:
        flat = re.sub(r"\s+", " ", body)
        return flat if len(flat) <= limit else flat[:limit].rsplit(" ", 1)[0] + "\u2026"

    pick = random.Random(7)
    alphabet = "ab \n\t\r\x0b\x0c\u00a0\u2003\u3000\x1c\x85\u200b"
    for _ in range(20000):
        body = "".join(pick.choice(alphabet) for _ in range(pick.randrange(0, 40)))
        if pick.random() < 0.3:
            body = " " * pick.randrange(0, 80) + body   # a long run where the prefix ends
        limit = pick.randrange(0, 25)
        assert _flat(body) == re.sub(r"\s+", " ", body)
        assert _lead(body, limit) == whole(body, limit), (body, limit)


def test_the_library_opens_an_index_named_by_a_string(news_index) -> None:  # noqa: ANN001
    """``Archive("folder")`` as well as ``Archive(Path("folder"))``: a string path once
    reported the index as damaged and told the user to rebuild it."""
    from archive.search import Archive

    with Archive(str(news_index.index)) as archive:
        assert [hit.id for hit in archive.search("volcano ash").hits] == [VOLCANO]
