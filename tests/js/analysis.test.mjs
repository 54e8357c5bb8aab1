// Checks archive/site/search/client/analysis.js against expectations computed by the Python
// analyser (archive.analysis.news_analyzer, PyStemmer). Run as
//   ANALYSIS_FIXTURE=/path/fixture.json node --test tests/js/analysis.test.mjs
// tests/test_js_analysis.py builds the fixture and runs this. Without ANALYSIS_FIXTURE a small
// built-in fixture (values taken from PyStemmer 3.1) is used, as a smoke test.
//
// The fixture is a JSON object with any of these keys (a bare list is taken as "analyze",
// a bare {word: stem} object as "stem"):
//   stop_words: [word, ...]                  the Python STOP_WORDS
//   analyze:    [[text, [token, ...]], ...]  news_analyzer() output
//   tokenize:   [[text, [token, ...]], ...]  tokenizer + lower-case + substitution only
//   stem:       {word: stem, ...}            PyStemmer's stemWord
//   chars:      {word: [[lo, hi], ...], assigned: [[lo, hi], ...], lower: {codepoint: str}}
//               code points Python's re \w matches; code points assigned in Python's Unicode
//               database (only these are compared); str.lower() where it changes a \w char
//   corpus:     {files: [[path, "utf-8" | "latin1"], ...], counts: {token: n}}
//               token counts (tokenize) over whole files, read the way Python read them

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  STOP_WORDS, analyze, stem, tokenize,
} from "../../archive/site/search/client/analysis.js";

const BUILT_IN = {
  analyze: [
    ["The dog's owners didn't say—they’re “generally” running",
      ["dog", "owner", "say", "general", "run"]],
    ["1.5bn pasted_items İstanbul", ["1", "5bn", "pasted_item", "i̇stanbul"]],
  ],
  stem: {
    generate: "generat", international: "internat", pasted: "paste", dying: "die", vying: "vie",
    skies: "sky", innings: "inning", proceeded: "proceed", biologist: "biolog", ying: "ying",
    "dogs'": "dog", "news's": "new", cries: "cri", ties: "tie", agreed: "agre", hopping: "hop",
  },
};

function loadFixture() {
  const path = process.env.ANALYSIS_FIXTURE;
  const data = path ? JSON.parse(readFileSync(path, "utf8")) : BUILT_IN;
  if (Array.isArray(data)) return { analyze: data };
  const keys = ["stop_words", "analyze", "tokenize", "stem", "chars", "corpus"];
  return keys.some((k) => k in data) ? data : { stem: data };
}

const fixture = loadFixture();
const show = (v) => JSON.stringify(v);

/** Fails listing the first mismatches, so one run shows the pattern of a bug. */
function report(what, mismatches, checked) {
  if (mismatches.length === 0) return;
  const lines = mismatches.slice(0, 25).map(([input, want, got]) =>
    `  ${show(input)}: expected ${show(want)}, got ${show(got)}`);
  assert.fail(`${what}: ${mismatches.length} of ${checked} differ from Python; first ones:\n` +
    lines.join("\n"));
}

function comparePairs(what, pairs, fn) {
  const bad = [];
  for (const [input, want] of pairs) {
    const got = fn(input);
    if (show(got) !== show(want)) bad.push([input, want, got]);
  }
  report(what, bad, pairs.length);
}

test("STOP_WORDS equals Python's STOP_WORDS", { skip: !fixture.stop_words }, () => {
  assert.deepEqual([...STOP_WORDS].sort(), [...fixture.stop_words].sort());
});

test("analyze() matches news_analyzer()", { skip: !fixture.analyze }, () => {
  comparePairs("analyze", fixture.analyze, analyze);
});

test("tokenize() matches the Whoosh tokenizer + lowercase + substitution",
  { skip: !fixture.tokenize }, () => {
    comparePairs("tokenize", fixture.tokenize, tokenize);
  });

test("stem() matches PyStemmer", { skip: !fixture.stem }, (t) => {
  const entries = Object.entries(fixture.stem);
  comparePairs("stem", entries, stem);
  t.diagnostic(`${entries.length} words stemmed identically`);
});

test("every code point is a word character, and lower-cases, as in Python",
  { skip: !fixture.chars }, (t) => {
    const { word, assigned, lower } = fixture.chars;
    const isWord = new Uint8Array(0x110000);
    for (const [lo, hi] of word) isWord.fill(1, lo, hi + 1);
    const bad = [];
    let checked = 0;
    for (const [lo, hi] of assigned) {
      for (let cp = lo; cp <= hi; cp++) {
        const ch = String.fromCodePoint(cp);
        const want = isWord[cp] ? [lower[cp] ?? ch] : [];
        const got = tokenize(ch);
        checked++;
        if (show(got) !== show(want)) bad.push([`U+${cp.toString(16).toUpperCase()}`, want, got]);
      }
    }
    report("single code points", bad, checked);
    // Characters added to Unicode after the version Python was built with are unassigned
    // (never \w) for Python but may be letters to this JavaScript engine: not comparable.
    const known = new Uint8Array(0x110000);
    for (const [lo, hi] of assigned) known.fill(1, lo, hi + 1);
    let newer = 0;
    for (let cp = 0; cp < 0x110000; cp++) {
      if (!known[cp] && tokenize(String.fromCodePoint(cp)).length) newer++;
    }
    t.diagnostic(`${checked} assigned code points agree; ${newer} code points unassigned in ` +
      `Python's Unicode ${fixture.chars.unicode ?? "?"} are word characters in this engine ` +
      `(Unicode ${process.versions.unicode})`);
  });

test("tokenize() counts the same tokens over the corpora", { skip: !fixture.corpus }, (t) => {
  const counts = new Map();
  for (const [path, encoding] of fixture.corpus.files) {
    const bytes = readFileSync(path);
    // TextDecoder, like Python's errors="replace", turns bad UTF-8 into U+FFFD (not \w).
    const text = encoding === "latin1" ? bytes.toString("latin1") : new TextDecoder().decode(bytes);
    for (const tok of tokenize(text)) counts.set(tok, (counts.get(tok) ?? 0) + 1);
  }
  const want = fixture.corpus.counts;
  const bad = [];
  for (const [tok, n] of Object.entries(want)) {
    if (counts.get(tok) !== n) bad.push([tok, n, counts.get(tok) ?? 0]);
  }
  for (const [tok, n] of counts) if (!Object.hasOwn(want, tok)) bad.push([tok, 0, n]);
  report("corpus token counts", bad, Object.keys(want).length);
  const files = fixture.corpus.files.length;
  t.diagnostic(`${Object.keys(want).length} distinct tokens in ${files} files agree`);
});
