// Query analysis identical to archive/store.py news_analyzer(), so queries meet indexed
// terms. tests/test_js_analysis.py checks it against Python.

/** archive.analysis.STOP_WORDS (Snowball's list without "us", plus the letters a-z). */
export const STOP_WORDS = new Set(`a about above after again against all am an and any are aren't
as at be because been before being below between both but by can can't cannot could couldn't did
didn't do does doesn't doing don't down during each few for from further had hadn't has hasn't
have haven't having he he'd he'll he's her here here's hers herself him himself his how how's i
i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no
nor not of off on once only or other ought our ours ourselves out over own same shan't she she'd
she'll she's should shouldn't so some such than that that's the their theirs them themselves then
there there's these they they'd they'll they're they've this those through to too under until up
very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which
while who who's whom why why's will with won't would wouldn't you you'd you'll you're you've your
yours yourself yourselves
a b c d e f g h i j k l m n o p q r s t u v w x y z`.split(/\s+/));

// TOKEN_PATTERN r"[^\W\d_](?:\.[^\W\d_])+(?!\w)\.?|\w+(?:['\u2019]\w+)*"; Python's \w =
// isalnum() or "_": L*, N*, not marks; [^\W\d_] (a letter) = L*, Nl, No (\d is Nd).
const WORD = /[\p{L}\p{Nl}\p{No}](?:\.[\p{L}\p{Nl}\p{No}])+(?![\p{L}\p{N}_])\.?|[\p{L}\p{N}_]+(?:['\u2019][\p{L}\p{N}_]+)*/gu;

/** Words of `text`, lower-cased, ’ made ', dots dropped ("U.S." -> "us"), stop words kept. */
export function tokenize(text) {
  // Per token, as Whoosh: lower() can change what is a word ("İ" -> "i" + combining dot).
  return Array.from(text.matchAll(WORD), (m) => m[0].toLowerCase().replace(/\u2019/g, "'").replace(/\./g, ""));
}

/** Index terms of `text`: tokens, minus stop words, stemmed. */
export function analyze(text) {
  const out = [];
  for (const t of tokenize(text)) if (!STOP_WORDS.has(t)) out.push(stem(t));
  return out;
}

// --- Snowball 3.0 english.sbl (Porter2), as in PyStemmer 3.1 ---------------------------------
// `among` takes the longest matching suffix, never a shorter one if its condition fails:
// so does an end-anchored regex (leftmost match = longest).

const REGION = /[aeiouy][^aeiouy]/g;
// exception1: whole words with a fixed stem, or kept as they are.
const EXCEPTIONS = {
  skis: "ski", skies: "sky", idly: "idl", gently: "gentl", ugly: "ugli", early: "earli",
  only: "onli", singly: "singl",
};
const INVARIANT = /^(?:sky|news|howe|atlas|cosmos|bias|andes)$/;
// R1 starts right after these (generate/general, universe/university, ...).
const PREFIX = /^(?:gener|commun|arsen|past|univers|later|emerg|organ|inter)/;

const STEP2 = {
  tional: "tion", enci: "ence", anci: "ance", abli: "able", entli: "ent", izer: "ize",
  ization: "ize", ational: "ate", ation: "ate", ator: "ate", alism: "al", aliti: "al",
  alli: "al", fulness: "ful", ousli: "ous", ousness: "ous", iveness: "ive", iviti: "ive",
  biliti: "ble", bli: "ble", ogist: "og", ogi: "og", fulli: "ful", lessli: "less", li: "",
};
const STEP3 = {
  tional: "tion", ational: "ate", alize: "al", icate: "ic", iciti: "ic", ical: "ic",
  ful: "", ness: "", ative: "",
};
const suffixes = (table) => new RegExp(`(?:${Object.keys(table).join("|")})$`);
const STEP2_RE = suffixes(STEP2);
const STEP3_RE = suffixes(STEP3);
const STEP4_RE = /(?:al|ance|ence|er|ic|able|ible|ant|ement|ment|ent|ism|ate|iti|ous|ive|ize|ion)$/;

// A short syllable ends at `end` (and "past": pasted -> paste).
const shortv = (w, end) =>
  /(?:^[aeiouy][^aeiouy]|[^aeiouy][aeiouy][^aeiouywxY]|past)$/.test(w.slice(0, end));

// libstemmer counts code points, JS UTF-16 units; the stemmer ignores non-ASCII, so each
// astral character stands in as one lone surrogate (never in a token).
const ASTRAL = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;

/** PyStemmer's stemWord for one lower-case word. */
export function stem(word) {
  const astral = word.match(ASTRAL);
  if (!astral) return porter2(word);
  let i = 0;
  return porter2(word.replace(ASTRAL, "\uD800")).replace(/\uD800/g, () => astral[i++]);
}

function porter2(w) {
  if (Object.hasOwn(EXCEPTIONS, w)) return EXCEPTIONS[w];
  if (w.length < 3 || INVARIANT.test(w)) return w;

  // Prelude: drop a leading '; y at the start or after a vowel is a consonant, "Y".
  if (w[0] === "'") w = w.slice(1);
  let yFound = false;
  w = w.replace(/^y|([aeiouy])y/g, (m, v) => ((yFound = true), (v || "") + "Y"));

  // R1, R2 start after the first, second vowel + non-vowel pair (or at the end).
  const n = w.length;
  const region = (from) => {
    REGION.lastIndex = from;
    const m = REGION.exec(w);
    return m ? m.index + 2 : n;
  };
  const pre = PREFIX.exec(w);
  const p1 = pre ? pre[0].length : region(0);
  const p2 = region(p1);
  let m;

  // Step 1a: possessives, then plurals.
  w = w.replace(/'(?:s'?)?$/, "");
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (/ie[ds]$/.test(w)) w = w.slice(0, -3) + (w.length > 4 ? "i" : "ie");
  else if (/[^su]s$/.test(w) && /[aeiouy]/.test(w.slice(0, -2))) w = w.slice(0, -1);

  // Step 1b: -eed, -ed, -ing and their -ly forms.
  m = /(?:eed|ed|ing)(?:ly)?$/.exec(w);
  if (m) {
    const base = w.slice(0, m.index);
    let general = true;
    if (m[0] === "eed" || m[0] === "eedly") {
      general = false;
      if (m.index >= p1 && !/^(?:proc|exc|succ)$/.test(base)) w = base + "ee";
    } else if (m[0] === "ing") {
      if (/^[^aeiouy]y$/.test(base)) {
        // dying -> die, lying -> lie, tying -> tie, vying -> vie
        general = false;
        w = base[0] + "ie";
      } else if (/^(?:inn|out|cann|herr|earr|even)$/.test(base)) {
        // inning, outing, ... are left alone
        general = false;
      }
    }
    if (general && /[aeiouy]/.test(base)) {
      w = base;
      if (/(?:at|bl|iz)$/.test(w)) w += "e";
      else if (/(?:bb|dd|ff|gg|mm|nn|pp|rr|tt)$/.test(w)) {
        // but "add", "egg", "odd"
        if (!/^[aeo]..$/.test(w)) w = w.slice(0, -1);
      } else if (w.length === p1 && shortv(w, w.length)) w += "e";
    }
  }

  // Step 1c: final y after a consonant (not the first letter) becomes i.
  if (/[^][^aeiouy][yY]$/.test(w)) w = w.slice(0, -1) + "i";

  // Step 2: suffixes in R1.
  m = STEP2_RE.exec(w);
  if (m && m.index >= p1) {
    const prev = w[m.index - 1];
    if (m[0] === "ogi" ? prev === "l" : m[0] !== "li" || "cdeghkmnrt".includes(prev)) {
      w = w.slice(0, m.index) + STEP2[m[0]];
    }
  }

  // Step 3: suffixes in R1 ("ative" in R2).
  m = STEP3_RE.exec(w);
  if (m && m.index >= p1 && (m[0] !== "ative" || m.index >= p2)) {
    w = w.slice(0, m.index) + STEP3[m[0]];
  }

  // Step 4: suffixes in R2 deleted; "ion" only after s or t.
  m = STEP4_RE.exec(w);
  if (m && m.index >= p2 && (m[0] !== "ion" || /[st]$/.test(w.slice(0, m.index)))) {
    w = w.slice(0, m.index);
  }

  // Step 5: e in R2, or in R1 after no short syllable; ll in R2 -> l.
  const last = w.length - 1;
  if (w[last] === "e") {
    if (last >= p2 || (last >= p1 && !shortv(w, last))) w = w.slice(0, last);
  } else if (w[last] === "l" && last >= p2 && w[last - 1] === "l") {
    w = w.slice(0, last);
  }

  return yFound ? w.replace(/Y/g, "y") : w;
}
