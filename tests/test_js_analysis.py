"""The browser search client analyses queries exactly as the index does.

archive/site/search/client/analysis.js re-implements news_analyzer() in JavaScript (regex
tokeniser, lower-casing, stop list, Snowball English stemmer). Any difference means a query
term that can never match its own word in the index, so this test computes the expected
output with Python and has ``node --test tests/js/analysis.test.mjs`` compare:

* the stop list;
* whole tricky sentences through news_analyzer(), and through the tokeniser alone;
* the stem of every distinct token in the shared corpora, plus generated words aimed at the
  stemmer's edge cases (suffix chains, y/Y, apostrophes, non-ASCII and astral characters);
* tokenising and lower-casing of every assigned Unicode code point, one at a time;
* token counts over the corpora files, which node reads itself.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import unicodedata
from collections import Counter
from pathlib import Path

import pytest
import Stemmer
from whoosh.analysis import (LowercaseFilter, PyStemmerFilter, RegexTokenizer, StopFilter,
                             SubstitutionFilter)

from archive.analysis import STOP_WORDS, TOKEN_PATTERN, news_analyzer

ROOT = Path(__file__).resolve().parents[1]
JS_TEST = ROOT / "tests" / "js" / "analysis.test.mjs"
CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
#: (glob under CORPORA, encoding the way the archive reads that source)
CORPUS_FILES = (("bbc/**/*.txt", "utf-8"), ("reuters21578/*.sgm", "latin1"),
                ("agnews/test.csv", "utf-8"), ("cisi/CISI.ALL", "utf-8"),
                ("cranfield/cran.all.1400", "utf-8"))

_TOKENIZER = re.compile(TOKEN_PATTERN)  # what RegexTokenizer compiles (re.UNICODE is implied)

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH: cannot run the JS test")

SENTENCES = [
    "The dog's owners didn't say—they’re “generally” running",
    "It's the BBC’s job; don't you think it’s fair? Rock 'n' roll, the 80s' hits, o'clock",
    "James' car, the Joneses' house, boss’s boss's, ’tis 'twas ''quoted'' ‘single’",
    "can't CANNOT won’t Won't shan’t let’s us US U.S. u.s.a.",
    "U.S.-led U.K.'s e.g. i.e, J.K. Rowling J.Smith x.y. a.b.c.d A.1 1.A ².³ Ⅻ.ⅻ é.ü. İ.S.",
    "3 p.m. Washington D.C. bbc.co.uk file.txt No.1 U.S._x U.S.A. x..y .a.b. a.b.c1 ǅ.ǈ",
    "state-of-the-art, e-mail, co-operate — re-elected; well‐known (U+2010 hyphen)",
    "Profits rose 1.5bn to £3,400.25m (12.5%) in Q3 2004/05; 10,000 jobs, 3rd-quarter",
    "snake_case __init__ _private trailing_ a_b_c",
    "Café naïve résumé Zürich São Paulo Ægir Øresund Łódź İstanbul ŞIŞLI DİYARBAKIR",
    "decomposed: Cafe\u0301 nai\u0308ve, ligatures ﬁnance ﬂow, ß STRASSE Straße, ǅ ǈ",
    "Greek ΟΔΟΣ ΟΔΟΣ’Σ ΣΑΣ Σ σ ς ΑΣ'Σ, Cyrillic Москва ЁЛКА, Armenian Երևան",
    "中文新闻 日本語のニュース 한국어 뉴스 ９０％ 一二三 ¼ ½ ² ³ Ⅻ ⅻ ① ⑳ ٣٤٥ ४२",
    "emoji 🎉 party🎉time 👍🏽 ok, flags 🇬🇧, math 𝐁𝐨𝐥𝐝 𝔉𝔯𝔞𝔨𝔱𝔲𝔯 𝟙𝟚𝟛, 𠀀𠀁 ext-B",
    "hindi हिन्दी समाचार, thai ข่าวไทย, arabic الأخبار العربية, hebrew חדשות",
    "apostrophes: rock'n'roll, o’neill O'Neill d'Artagnan l’homme ‘quoted’ don''t x'",
    "generously generations communism arsenic pasted pasting universal lateral emergency "
    "organic international internship inning innings outing canning herring earring evening",
    "proceed proceeded exceedingly succeeding dying lying tying vying skies skis sky news "
    "howe atlas cosmos bias andes idly gently ugly early only singly",
    "biologist geologies fullness hopefully relational conditional rationalities "
    "sensibilities effectiveness happiness probate rated hopping filing agreed feed bled",
    "YES Yesterday's yelled yay sayings YOUTHS Boy's toys' playing enjoyed yyyy ayy",
    "tabs\tand\nnewlines\r\nand\u00a0nbsp\u2028line-sep\u200bzero-width\u200djoin\ufeffbom",
    "numbers 007 1,000,000 3.14159 0x1F 2e10 1st 2nd 22nd 1990s 1990's mid-1990s",
    "a an the and OR Not into through yourselves ours ourselves won't can't cannot",
    "",
    "   ",
    "’'’",
    "x",
    "I",
]

#: Suffixes the stemmer treats specially, appended to corpus words to exercise the rules
#: in combinations the corpora may not contain.
SUFFIXES = ("", "s", "es", "ies", "ied", "sses", "ss", "us", "'", "'s", "'s'", "ed", "eed",
            "edly", "eedly", "ing", "ingly", "ly", "y", "Y", "ational", "tional", "enci",
            "anci", "abli", "entli", "izer", "ization", "ation", "ator", "alism", "aliti",
            "alli", "fulness", "ousli", "ousness", "iveness", "iviti", "biliti", "bli", "ogist",
            "ogi", "fulli", "lessli", "li", "alize", "icate", "iciti", "ical", "ful", "ness",
            "ative", "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
            "ent", "ism", "ate", "iti", "ous", "ive", "ize", "ion", "sion", "tion", "e", "l",
            "ll", "at", "bl", "iz", "bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
PREFIXES = ("", "y", "'", "gener", "commun", "arsen", "past", "univers", "later", "emerg",
            "organ", "inter", "proc", "exc", "succ", "sk", "é", "𝐀")


def _ranges(codepoints: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for cp in codepoints:
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def _char_table() -> dict:
    word = re.compile(r"\w")
    chars = [chr(cp) for cp in range(0x110000)]
    words = [cp for cp, ch in enumerate(chars) if word.match(ch)]
    return {
        "unicode": unicodedata.unidata_version,
        "word": _ranges(words),
        "assigned": _ranges([cp for cp, ch in enumerate(chars)
                             if unicodedata.category(ch) != "Cn"]),
        "lower": {cp: chars[cp].lower() for cp in words if chars[cp].lower() != chars[cp]},
    }


def _generated_words(vocabulary: list[str]) -> set[str]:
    """Corpus words and random letter strings with the stemmer's prefixes and suffixes."""
    rng = random.Random(20240601)
    words = set()
    sample = rng.sample(vocabulary, min(len(vocabulary), 2000)) if vocabulary else []
    bases = sample + ["run", "hop", "fil", "agr", "bl", "sky", "d", "ly", "ty", "pas", "a"]
    for base in bases:
        for suffix in SUFFIXES:
            words.add(base + suffix)
    for prefix in PREFIXES:
        for suffix in SUFFIXES:
            words.add(prefix + suffix)
    letters = "aeiouybcdlstnrgmpwxY'é𝐀_1"
    for _ in range(60_000):
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(1, 9))))
    return words


def _generated_texts() -> list[str]:
    """Random strings for the context-dependent parts of tokenising and lower-casing: Greek
    final sigma next to case-ignorable characters (apostrophes, modifier letters, marks),
    dotted/dotless i, ligatures, soft hyphens, combining marks between letters."""
    rng = random.Random(7)
    alphabet = "ΣΑασς'’ʰˈ·ǅ1_ .-İIıΪ\u0301\u00adﬁßẞ\u0345ΐ𝐀é..ab²Ⅻ"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))
            for _ in range(5000)]


def _tokens_of(text: str) -> list[str]:
    """What news_analyzer()'s stages before the stop list produce, without Token objects (the
    guard test below pins those stages down)."""
    return [t.lower().replace("\u2019", "'").replace(".", "") for t in _TOKENIZER.findall(text)]


def _stems(words) -> dict[str, str]:
    stemmer = Stemmer.Stemmer("english")
    return {w: stemmer.stemWord(w) for w in sorted(words)}


def _run_node(tmp_path: Path, fixture: dict) -> str:
    """Runs the node test on the fixture; fails with node's report (first mismatches)."""
    path = tmp_path / "analysis-fixture.json"
    path.write_text(json.dumps(fixture), encoding="utf-8")
    run = subprocess.run([NODE, "--test", str(JS_TEST)], cwd=ROOT, capture_output=True,
                         text=True, timeout=120,
                         env={**os.environ, "ANALYSIS_FIXTURE": str(path)})
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    sys.stdout.write(report)  # pytest -s shows the diagnostics: how much was compared
    return report


def test_analyzer_is_what_analysis_js_implements():
    """If news_analyzer() changes, analysis.js must change with it: fail loudly here."""
    items = news_analyzer().items
    assert [type(i) for i in items] == [RegexTokenizer, LowercaseFilter, SubstitutionFilter,
                                        SubstitutionFilter, StopFilter, PyStemmerFilter]
    tokenizer, _, apostrophe, dots, stop, stemmer = items
    assert tokenizer.expression.pattern == TOKEN_PATTERN == \
        r"[^\W\d_](?:\.[^\W\d_])+(?!\w)\.?|\w+(?:['\u2019]\w+)*"
    assert (apostrophe.pattern.pattern, apostrophe.replacement) == ("\u2019", "'")
    assert (dots.pattern.pattern, dots.replacement) == (r"\.", "")
    assert (stop.stops, stop.min, stop.max) == (STOP_WORDS, 1, None)
    assert (stemmer.lang, stemmer.ignore) == ("english", frozenset())


def test_js_analysis_sentences_words_and_code_points(tmp_path):
    analyzer = news_analyzer()
    words = _generated_words([])
    for s in SENTENCES:
        words.update(_tokens_of(s))
    _run_node(tmp_path, {
        "stop_words": sorted(STOP_WORDS),
        "analyze": [[s, [t.text for t in analyzer(s)]] for s in SENTENCES],
        "tokenize": [[s, _tokens_of(s)] for s in SENTENCES + _generated_texts()],
        "stem": _stems(words),
        "chars": _char_table(),
    })


@pytest.mark.skipif(not CORPORA.is_dir(), reason=f"shared corpora absent: {CORPORA} "
                    "(sentences, generated words and code points are still checked)")
def test_js_analysis_corpus_vocabulary(tmp_path):
    files, counts = [], Counter()
    for pattern, encoding in CORPUS_FILES:
        for path in sorted(CORPORA.glob(pattern)):
            # errors="replace" as the archive reads UTF-8 sources; U+FFFD is not \w.
            counts.update(_tokens_of(path.read_bytes().decode(encoding, errors="replace")))
            files.append([str(path), encoding])
    vocabulary = sorted(counts)
    _run_node(tmp_path, {
        "corpus": {"files": files, "counts": counts},
        "stem": _stems(set(vocabulary) | _generated_words(vocabulary)),
    })
