// The site's search engine: the CLI's query language answered from the static bundle that
// archive/site/search/ writes (format.py). A classic script (not a module) so it also runs from
// file://; it defines `ArchiveSearch` and needs `ArchiveAnalysis` (analysis-classic.js).
// tests/support/static_search_reference.py is the specification: same parse, same scores (sums
// run left to right in float64), same order (score, then article number).
(function (root) {
  "use strict";

  class QueryError extends Error {}

  // --- bundle loading: every file is a script calling __archiveBundle(name, data) -----------

  /** A loader that injects <script> elements: works over http:// and file:// alike. */
  function scriptLoader(base) {
    const waiting = new Map();
    const previous = root.__archiveBundle;
    root.__archiveBundle = (name, data) => {
      const w = waiting.get(name);
      if (w) { waiting.delete(name); w.resolve(data); }
      else if (previous) previous(name, data);
    };
    return (name) => new Promise((resolve, reject) => {
      waiting.set(name, { resolve, reject });
      const s = document.createElement("script");
      s.src = base + name + ".js";
      // A script runs before its load event, so by then the callback has resolved us.
      s.onload = () => { s.remove(); if (waiting.delete(name)) reject(new Error(`bad bundle file ${name}`)); };
      s.onerror = () => { s.remove(); waiting.delete(name); reject(new Error(`cannot load ${name}`)); };
      document.head.appendChild(s);
    });
  }

  /** Wraps a loader with a cache and a byte/request tally (the bench reads it). */
  function cached(load) {
    const files = new Map();
    const get = (name) => {
      let p = files.get(name);
      if (!p) {
        p = load(name);
        files.set(name, p);
        // a failed file may be retried later
        p.catch(() => files.delete(name));
        get.requests.push(name);
      }
      return p;
    };
    get.requests = [];
    return get;
  }

  // --- small decoders (mirrors of the Python encoders) ---------------------------------------

  function bytesOf(b64) {
    const s = atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }

  /** Reads `count` varints from `data` at `pos`; returns [values, pos]. */
  function varints(data, count, pos = 0) {
    const out = new Array(count);
    for (let k = 0; k < count; k++) {
      let v = 0, shift = 0, b;
      do { b = data[pos++]; v += (b & 0x7f) * 2 ** shift; shift += 7; } while (b >= 0x80);
      out[k] = v;
    }
    return [out, pos];
  }

  /** Delta-coded article numbers (the first is stored + 1), as absolute numbers. */
  function undelta(deltas) {
    let last = -1;
    for (let i = 0; i < deltas.length; i++) deltas[i] = last += deltas[i];
    return deltas;
  }

  const CRC = Array.from({ length: 256 }, (_, c) => {
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c;
  });

  /** CRC-32 of the UTF-8 bytes (Python's zlib.crc32): which shard holds a term. */
  function keyHash(text) {
    let c = -1;
    for (const b of new TextEncoder().encode(text)) c = CRC[(c ^ b) & 255] ^ (c >>> 8);
    return (c ^ -1) >>> 0;
  }

  // --- query parsing (static_search_reference.py: tokenize_query, _Parser) ------------------

  const FIELDS = ["source", "place", "topic", "date", "year"];
  const WORD_END = /[\s()"]/g;
  const FIELD = /([A-Za-z_]+):/y;
  const DATE = /^(\d{4})(?:[-/.]?(\d{1,2})(?:[-/.]?(\d{1,2}))?)?$/;
  const isSpace = (c) => /\s/.test(c);

  function wordEnd(text, i) {
    WORD_END.lastIndex = i;
    const m = WORD_END.exec(text);
    return m ? m.index : text.length;
  }

  function tokenizeQuery(text) {
    const tokens = [];
    const n = text.length;
    let i = 0;
    while (i < n) {
      const c = text[i];
      if (isSpace(c)) i++;
      else if (c === "(" || c === ")") { tokens.push({ kind: c }); i++; }
      else if (c === '"') {
        let end = text.indexOf('"', i + 1);
        if (end < 0) end = n;
        tokens.push({ kind: "phrase", text: text.slice(i + 1, end) });
        i = end + 1;
        if (i < n && text[i] === "~") {
          throw new QueryError('proximity searches ("..."~N) are not supported here; use a plain "phrase"');
        }
      } else if ((c === "-" || c === "+") && i + 1 < n && !isSpace(text[i + 1])) {
        if (c === "-") tokens.push({ kind: "neg" });
        i++;
      } else {
        FIELD.lastIndex = i;
        const m = FIELD.exec(text);
        if (m && FIELD.lastIndex < n && !isSpace(text[FIELD.lastIndex])) {
          i = fieldToken(text, m[1].toLowerCase(), FIELD.lastIndex, tokens);
        } else {
          const j = wordEnd(text, i);
          const word = text.slice(i, j);
          i = j;
          tokens.push(word === "AND" || word === "OR" || word === "NOT"
            ? { kind: "op", text: word } : { kind: "word", text: checkWord(word) });
        }
      }
    }
    return tokens;
  }

  function fieldToken(text, name, i, tokens) {
    const n = text.length;
    let value;
    if (text[i] === '"' || text[i] === "[") {
      const close = text[i] === '"' ? '"' : "]";
      let end = text.indexOf(close, i + 1);
      if (end < 0) end = n;
      value = close === '"' ? text.slice(i + 1, end) : text.slice(i, end + 1);
      i = end + 1;
    } else {
      const j = wordEnd(text, i);
      value = text.slice(i, j);
      i = j;
    }
    if (!FIELDS.includes(name)) {
      throw new QueryError(`the site search has no ${name}: field; use source:, place:, topic: or date:`);
    }
    tokens.push({ kind: "field", text: value, name });
    return i;
  }

  function checkWord(word) {
    if (word.includes("*") || word.includes("?")) throw new QueryError(`wildcards (${word}) are not supported here; type whole words`);
    if (/~\d*$/.test(word)) throw new QueryError(`fuzzy terms (${word}) are not supported here; check the spelling`);
    if (word.includes("^")) throw new QueryError(`boosts (${word}) are not supported here`);
    return word;
  }

  function group(op, kids) {
    const kept = kids.filter((k) => k !== null);
    if (!kept.length) return null;
    return kept.length === 1 ? kept[0] : { op, kids: kept };
  }

  const analyze = (text) => root.ArchiveAnalysis.analyze(text);

  function phrase(text) {
    const stems = analyze(text);
    if (!stems.length) return null;
    if (stems.length === 1) return { op: "term", key: stems[0] };
    return { op: "phrase", keys: stems.slice(1).map((b, i) => `${stems[i]} ${b}`) };
  }

  function field(name, value) {
    if (name === "date" || name === "year") {
      const [lo, hi] = parseDateRange(value);
      return { op: "date", lo, hi };
    }
    return { op: "facet", facet: name, key: value.trim().toLowerCase() };
  }

  /** Recursive descent with Whoosh's precedence: NOT > AND > OR > adjacency. */
  class Parser {
    constructor(tokens) { this.tokens = tokens; this.pos = 0; }
    peek() { return this.pos < this.tokens.length ? this.tokens[this.pos] : null; }
    take() { return this.tokens[this.pos++]; }
    sequence(nested) {
      const kids = [];
      let t;
      while ((t = this.peek()) !== null) {
        if (t.kind === ")") {
          if (nested) break;
          // a stray ")" is ignored
          this.take();
          continue;
        }
        if (t.kind === "op" && (t.text === "AND" || t.text === "OR")) { this.take(); continue; }
        kids.push(this.disjunction());
      }
      return group("and", kids);
    }
    disjunction() {
      const kids = [this.conjunction()];
      while (this.op("OR")) kids.push(this.conjunction());
      return group("or", kids);
    }
    conjunction() {
      const kids = [this.unary()];
      while (this.op("AND")) kids.push(this.unary());
      return group("and", kids);
    }
    op(name) {
      const t = this.peek();
      const next = this.pos + 1 < this.tokens.length ? this.tokens[this.pos + 1] : null;
      if (t && t.kind === "op" && t.text === name && next && next.kind !== ")" &&
          !(next.kind === "op" && (next.text === "AND" || next.text === "OR"))) {
        this.take();
        return true;
      }
      return false;
    }
    unary() {
      const t = this.peek();
      if (t === null) return null;
      if (t.kind === "neg" || (t.kind === "op" && t.text === "NOT")) {
        this.take();
        const kid = this.unary();
        return kid === null ? null : { op: "not", kid };
      }
      return this.primary();
    }
    primary() {
      const t = this.take();
      if (t.kind === "(") {
        const inner = this.sequence(true);
        if (this.peek() && this.peek().kind === ")") this.take();
        return inner;
      }
      if (t.kind === "phrase") return phrase(t.text);
      if (t.kind === "field") return field(t.name, t.text);
      if (t.kind === "word") return group("and", analyze(t.text).map((key) => ({ op: "term", key })));
      return null;
    }
  }

  const daysIn = (y, m) => new Date(Date.UTC(y, m, 0)).getUTCDate();

  function day(text, end) {
    const m = DATE.exec(text.trim());
    if (!m) {
      throw new QueryError(`cannot read '${text}' as a date: use e.g. date:2017, date:2017-08, ` +
        "date:[2017-08-01 to 2017-08-31] or date:>2017-01-01");
    }
    const y = parseInt(m[1], 10);
    if (m[2] === undefined) return y * 10000 + (end ? 1231 : 101);
    const mo = parseInt(m[2], 10);
    if (mo < 1 || mo > 12) throw new QueryError(`bad month in date '${text}'`);
    if (m[3] === undefined) return y * 10000 + mo * 100 + (end ? daysIn(y, mo) : 1);
    const d = parseInt(m[3], 10);
    if (d < 1 || d > daysIn(y, mo)) throw new QueryError(`bad day in date '${text}'`);
    return y * 10000 + mo * 100 + d;
  }

  /** Inclusive [first day, last day] as YYYYMMDD; >X starts at X's start, <X ends at X's end. */
  function parseDateRange(value) {
    value = value.trim();
    if (value.startsWith("[")) {
      const inner = value.replace(/^\[+|\]+$/g, "").trim();
      const parts = inner.split(/\s+to\s+|^to\s+|\s+to$/i);
      if (parts.length !== 2) throw new QueryError(`cannot read date range '${value}': use [2017-01 to 2017-06]`);
      return [parts[0].trim() ? day(parts[0], false) : 0, parts[1].trim() ? day(parts[1], true) : 99999999];
    }
    if (value.startsWith(">")) return [day(value.replace(/^[>=]+/, ""), false), 99999999];
    if (value.startsWith("<")) return [0, day(value.replace(/^[<=]+/, ""), true)];
    return [day(value, false), day(value, true)];
  }

  /** The query tree, or null when nothing is left to search (e.g. only stop words). */
  function parseQuery(text) {
    if (!text.trim()) return { op: "all" };
    return new Parser(tokenizeQuery(text)).sequence(false);
  }

  function filterNodes(filters) {
    const out = [];
    for (const name of ["source", "place", "topic", "year"]) {
      if (filters && filters[name]) out.push(field(name === "year" ? "date" : name, filters[name]));
    }
    return out;
  }

  // --- evaluation with bounds -----------------------------------------------------------------
  // A leaf knows some articles exactly (`known`: number -> score); if it is not `complete`, any
  // other article may still match it with a score of at most `bound`. Evaluating a node for an
  // article gives [status, lo, hi] with status YES / MAYBE / NO, so the search can stop as soon
  // as no uncertain article could reach the page being shown.

  const NO = 0, MAYBE = 1, YES = 2;

  function evalNode(node, n) {
    switch (node.op) {
      case "leaf": {
        const s = node.known.get(n);
        if (s !== undefined) return [YES, s, s];
        return node.complete || absent(node, n) ? [NO, 0, 0] : [MAYBE, 0, node.bound];
      }
      case "range":
        return n >= node.from && n < node.to ? [YES, 0, 0] : [NO, 0, 0];
      case "not": {
        const [st] = evalNode(node.kid, n);
        return [st === YES ? NO : st === NO ? YES : MAYBE, 0, 0];
      }
      case "and": {
        let st = YES, lo = 0, hi = 0;
        for (const kid of node.kids) {
          const r = evalNode(kid, n);
          if (r[0] === NO) return [NO, 0, 0];
          if (r[0] === MAYBE) st = MAYBE;
          lo += r[1]; hi += r[2];
        }
        return [st, lo, hi];
      }
      // or: the score is the sum of the kids that match
      default: {
        let st = NO, lo = 0, hi = 0;
        for (const kid of node.kids) {
          const r = evalNode(kid, n);
          if (r[0] === YES) { st = YES; lo += r[1]; hi += r[2]; }
          else if (r[0] === MAYBE) { if (st === NO) st = MAYBE; hi += r[2]; }
        }
        return [st, lo, hi];
      }
    }
  }

  /** Whether a list's part may hold article n among its unread postings: it has tiers left,
   * is of n's unit (`h`: where a list showed n) and has not read n's number block. */
  const unread = (p, n, h) => p.next < p.tiers.length && (h === undefined || h === p.segid) && !(p.got && p.got.has(upperBound(p.firsts, n) - 1));
  const absent = (leaf, n) => n >= 0 && leaf.parts && !leaf.parts.some((p) => unread(p, n, leaf.home.get(n)));

  /** The same for an article no leaf has seen yet (-1 is in no range and no known set). */
  const evalUnseen = (node) => evalNode(node, -1);

  function leaves(node, out = []) {
    if (node.op === "leaf" || node.op === "range") out.push(node);
    else if (node.op === "not") leaves(node.kid, out);
    else if (node.kids) node.kids.forEach((k) => leaves(k, out));
    return out;
  }

  // --- the engine ---------------------------------------------------------------------------

  class Engine {
    /** `load(name)` resolves a bundle file's data; default: script elements under `base`. */
    constructor(load) {
      this.load = cached(load);
      this.lists = new Map();
      this.home = new Map();
      this.meta = null;
    }

    async init() {
      if (!this.meta) {
        this.meta = await this.load("meta");
        this.years = this.meta.years.map((y) => y[0]);
        this.yearFirsts = this.meta.years.map((y) => y[1]);
      }
      return this.meta;
    }

    /** A term's ("t") or pair's ("p") posting list over the live segments as a leaf, the
     * heads loaded: one part per segment holding the key. A phrase's pairs after its first
     * score their second word only (`from` 1), so each of its words counts once, as the CLI
     * scores a phrase. */
    async list(ns, key, from = 0) {
      const id = ns + from + key;
      if (!this.lists.has(id)) this.lists.set(id, this.openList(ns, key, from));
      return this.lists.get(id);
    }

    async openList(ns, key, from) {
      const hash = keyHash(key);
      const found = await Promise.all(this.meta.segs.map(async ([segid, ts, ps]) => {
        const space = `s/${segid}/${ns}`;
        const shard = hash % (ns === "t" ? ts : ps);
        const rows = await this.load(`${space}/${shard}`);
        const index = rows.findIndex((r) => r[0] === key);
        return index < 0 ? null : { segid, space, shard, index, row: rows[index] };
      }));
      const leaf = { op: "leaf", known: new Map(), complete: true, bound: 0, parts: [], from, home: this.home };
      const nf = this.meta.avg.length, arity = ns === "t" ? 1 : 2;
      const dfs = new Array(nf * arity).fill(0);
      let count = 0;
      for (const f of found) if (f) { f.row[1].forEach((d, i) => { dfs[i] += d; }); count += f.row[2]; }
      // a word's idf over its fields comes from its largest document frequency among them;
      // a pair's words are scored per field
      leaf.idf = arity === 1 ? idfOf(this.meta, Math.max(...dfs)) : dfs.map((df) => idfOf(this.meta, df));
      leaf.arity = arity;
      // one word alone: its postings are the exact total (when no copy is deleted)
      if (!found.some((f) => f && this.deleted(f.segid).size)) leaf.df = count;
      for (const f of found) {
        if (!f) continue;
        const [, , c, head, tiers = []] = f.row;
        const part = { ...f, tiers, next: 0, leaf };
        leaf.parts.push(part);
        this.addPostings(leaf, part, head, c - tiers.reduce((a, t) => a + t[0], 0));
      }
      this.setBound(leaf);
      return leaf;
    }

    /** Numbers a segment's lists hold for deleted copies (meta.x), skipped there. */
    deleted(segid) {
      if (!this.skip) this.skip = new Map();
      if (!this.skip.has(segid)) {
        const set = new Set();
        const data = this.meta.x[segid];
        if (data) {
          const bytes = bytesOf(data);
          let pos = 0, last = -1;
          while (pos < bytes.length) { const [[d], p] = varints(bytes, 1, pos); pos = p; set.add(last += d); }
        }
        this.skip.set(segid, set);
      }
      return this.skip.get(segid);
    }

    addPostings(leaf, part, b64, count) {
      const data = bytesOf(b64);
      const nf = this.meta.avg.length;
      let [numbers, pos] = varints(data, count);
      undelta(numbers);
      const skip = this.deleted(part.segid);
      for (let i = 0; i < count; i++) {
        const fields = [];
        for (let f = 0; f < nf; f++) {
          const [[first], p] = varints(data, 1, pos);
          pos = p;
          if (first === 0) { fields.push(null); continue; }
          const [rest, q] = varints(data, leaf.arity, pos);
          pos = q;
          fields.push([first, ...rest]);
        }
        if (!skip.has(numbers[i])) { leaf.known.set(numbers[i], fieldedScore(this.meta, leaf, fields)); this.home.set(numbers[i], part.segid); }
      }
    }

    /** The best score any posting not fetched yet could have: per part, the highest of its
     * remaining tiers' per-field bounds (highest weights, shortest length) scored (tiers are
     * cut by a segment-local order, so a later tier may bound higher). */
    setBound(leaf) {
      leaf.complete = true;
      leaf.bound = 0;
      for (const part of leaf.parts) {
        part.bound = 0;
        for (let t = part.next; t < part.tiers.length; t++) {
          const b = boundScore(this.meta, leaf, part.tiers[t][1], this.meta.rho[part.segid]);
          if (b > part.bound) part.bound = b;
        }
        if (part.next < part.tiers.length) { leaf.complete = false; if (part.bound > leaf.bound) leaf.bound = part.bound; }
      }
    }

    /** Fetch the next tail tier (postings of lower scores) of the leaf's part whose unseen
     * postings could score highest. */
    async more(leaf) {
      let part = null;
      for (const p of leaf.parts) if (p.next < p.tiers.length && (!part || p.bound > part.bound)) part = p;
      if (part) await this.tier(part);
    }

    async tier(part) {
      const t = part.next;
      const data = await this.load(`${part.space}/${part.shard}-${part.index}-${t + 1}`);
      // another caller got there first
      if (part.next !== t) return;
      this.addPostings(part.leaf, part, data, part.tiers[t][0]);
      part.next = t + 1;
      this.setBound(part.leaf);
    }

    /** Settle the articles in the page's way (`waiting`: [n, hi]). Per list part that may hold
     * them (their unit's: `home`), read the number blocks (row[5]: postings a block;
     * format.number_blocks) of the best `most` where blocks are fewer postings than the
     * part's next tier, else that tier: for a negated list, blocks for the best `most` (an
     * article it settles drops out or is sure); for another, blocks for all that wait on it
     * (an article it settles may still miss the page, and the tier lowers every one's
     * bound). A block also shows articles no list showed yet, which would wait in turn while
     * unseen articles could still reach the page (`open`): then only negated lists are read
     * here (where those cannot match). False: nothing read. */
    async resolve(all, waiting, most, open, negated) {
      const want = new Map();
      for (const [n] of waiting.sort((a, b) => b[1] - a[1])) {
        for (const l of all) if (!l.known.has(n) && !(open && !negated.includes(l))) for (const p of l.parts || []) if (unread(p, n, this.home.get(n))) want.has(p) ? want.get(p).push(n) : want.set(p, [n]);
      }
      await Promise.all([...want].map(async ([p, ns]) => {
        const size = p.row[5], name = `${p.space}/${p.shard}-${p.index}-b`;
        if (!size || (negated.includes(p.leaf) ? Math.min(ns.length, most) : ns.length) * size >= p.tiers[p.next][0]) return this.tier(p);
        p.firsts ||= undelta(varints(bytesOf(await this.load(name)), Math.ceil(p.row[2] / size))[0]);
        // (an article before the first block is in none)
        p.got ||= new Set([-1]);
        const blocks = new Set(ns.slice(0, most).map((n) => upperBound(p.firsts, n) - 1).filter((j) => j >= 0));
        await Promise.all([...blocks].map(async (j) => { this.addPostings(p.leaf, p, await this.load(name + j), Math.min(size, p.row[2] - j * size)); p.got.add(j); }));
      }));
      return want.size > 0;
    }

    async completeLeaf(leaf) {
      if (leaf.complete || leaf.op !== "leaf") return;
      const pending = [];
      for (const part of leaf.parts || []) {
        for (let t = part.next; t < part.tiers.length; t++) {
          pending.push(this.load(`${part.space}/${part.shard}-${part.index}-${t + 1}`));
        }
      }
      await Promise.all(pending);
      while (!leaf.complete) await this.more(leaf);
    }

    /** A facet value's articles; its file is named by the key's hash (buckets: meta.fb). */
    async facetLeaf(facet, key) {
      const leaf = { op: "leaf", known: new Map(), complete: true, bound: 0, tiers: [], next: 0 };
      const buckets = this.meta.fb[facet];
      if (!buckets) return leaf;
      const row = (await this.load(`f/${facet}/${keyHash(key) % buckets}`)).find((r) => r[0] === key);
      if (row) for (const n of undelta(varints(bytesOf(row[2]), row[1])[0])) leaf.known.set(n, 0);
      return leaf;
    }

    /** The first article dated `day` (YYYYMMDD) or later: meta has each year's first number,
     * d/YEAR the year's [mmdd, count, ...] (needed only for a day inside the year). */
    async firstFrom(day) {
      // after Dec 31
      if (day % 10000 > 1231) day = (Math.floor(day / 10000) + 1) * 10000 + 101;
      const y = Math.floor(day / 10000), md = day % 10000;
      const i = lowerBound(this.years, y);
      if (i === this.years.length) return this.meta.dated;
      let first = this.yearFirsts[i];
      if (this.years[i] > y || md <= 101) return first;
      const flat = await this.load(`d/${y}`);
      for (let k = 0; k < flat.length; k += 2) {
        if (flat[k] >= md) return first;
        first += flat[k + 1];
      }
      return i + 1 < this.years.length ? this.yearFirsts[i + 1] : this.meta.dated;
    }

    /** Article numbers [from, to) dated within [lo, hi] (YYYYMMDD): numbers are date order. */
    async dateRange(lo, hi) {
      const [from, to] = await Promise.all([this.firstFrom(lo), this.firstFrom(hi + 1)]);
      return { op: "range", from, to: Math.max(from, to) };
    }

    /** Query tree -> evaluation tree with leaves loaded (heads only). */
    async compile(node) {
      switch (node.op) {
        case "term": return this.list("t", node.key);
        case "phrase": return { op: "and", kids: await Promise.all(node.keys.map((k, i) => this.list("p", k, +!!i))) };
        case "facet": return this.facetLeaf(node.facet, node.key);
        case "date": return this.dateRange(node.lo, node.hi);
        case "all": return { op: "range", from: 0, to: this.meta.n };
        case "not": return { op: "not", kid: await this.compile(node.kid) };
        default: return { op: node.op, kids: await Promise.all(node.kids.map((k) => this.compile(k))) };
      }
    }

    /**
     * Search. Returns {total, exact, hits: [{n, score}], page, pages, facets?}. Without
     * `complete`, stops fetching as soon as the requested page is certain (then `exact` may be
     * false and `total` is a lower bound); with it, reads everything and counts the facets,
     * or with `numbers` too lists every match's article number instead (chart.js).
     */
    async search(text, { sort = "relevance", page = 1, pageSize = 10, filters = {}, complete = false, numbers = false } = {}) {
      await this.init();
      let node = parseQuery(text);
      if (node === null) return { total: 0, exact: true, hits: [], page, pages: 1, stopWordsOnly: true };
      node = group("and", [node, ...filterNodes(filters)]);
      const tree = await this.compile(node);
      const all = leaves(tree).filter((l) => l.op === "leaf");
      const k = page * pageSize;
      // Negated leaves, date sorts and exhaustive queries (e.g. "NOT x") need whole lists
      // (a long negated one is read only where articles wait on it: resolve).
      const whole = complete || sort !== "relevance" || evalNode(mapLeaves(tree), -1)[0] !== NO;
      const negated = [];
      collectNegated(tree, false, negated);
      await Promise.all((whole ? all : negated.filter((l) => !(l.parts || []).some((p) => p.row[5]))).map((l) => this.completeLeaf(l)));
      for (;;) {
        const { sure, pending, unseen } = this.classify(tree, whole);
        const newest = newestFirst(this.meta.dated);
        // Relevance ties (all of a filter-only query) go newest first.
        if (sort === "relevance") sure.sort((a, b) => b[1] - a[1] || newest(a, b));
        else if (sort === "newest") sure.sort(newest);
        else sure.sort((a, b) => a[0] - b[0]);
        // Done when no unsure article, seen (pending) or not (unseen), could reach the page.
        const edge = sure.length >= k ? sure[k - 1][1] : -Infinity;
        const waiting = pending.filter((u) => u[1] >= edge);
        const open = unseen !== null && unseen >= edge;
        if (!open && !waiting.length) {
          // One word alone: its document frequency is the exact total.
          const total = tree.df !== undefined ? tree.df : sure.length;
          const result = {
            total, exact: (!pending.length && unseen === null) || tree.df !== undefined, page, pageSize,
            pages: Math.max(1, Math.ceil(total / pageSize)),
            hits: sure.slice(k - pageSize, k).map(([n, score]) => ({ n, score })),
            // every list read to its end: the whole match set is known at no further cost
            whole: all.every((l) => l.complete),
          };
          // chart.js: every match's number, in date order (instead of the facets)
          if (complete && numbers) result.numbers = sure.map(([n]) => n).sort((a, b) => a - b);
          // counts.js
          else if (complete) result.facets = await this.facetCounts(sure);
          return result;
        }
        if (await this.resolve(all, waiting, 2 * pageSize, open, negated)) continue;
        // Else fetch the next tier of the list whose unseen postings could score highest (a
        // negated one's last: no score).
        let best = null, top = -1;
        for (const l of all) {
          const rank = l.bound + !negated.includes(l) * 1e9;
          if (!l.complete && rank > top) { best = l; top = rank; }
        }
        await this.more(best);
      }
    }

    /** Sure hits (matched, exact score), the unsure seen ones ([n, best score]) and the
     * best score an unseen article could reach (null: none can match). */
    classify(tree, whole) {
      const sure = [], pending = [];
      const seen = new Set();
      const consider = (n) => {
        const [st, lo, hi] = evalNode(tree, n);
        if (st === YES && lo === hi) sure.push([n, lo]);
        else if (st !== NO) pending.push([n, hi]);
      };
      if (whole) {
        for (let n = 0; n < this.meta.n; n++) consider(n);
        return { sure, pending, unseen: null };
      }
      for (const l of leaves(tree)) {
        if (l.op === "range") { for (let n = l.from; n < l.to; n++) if (!seen.has(n)) { seen.add(n); consider(n); } }
        else for (const n of l.known.keys()) if (!seen.has(n)) { seen.add(n); consider(n); }
      }
      const [st, , hi] = evalUnseen(tree);
      return { sure, pending, unseen: st !== NO ? hi : null };
    }

    /** An article's record: {t: title, d: date, s: source, pl, u: page folder, b, c}; empty ones left out. */
    article(n) { return this.load(`a/${n}`); }
  }

  /** The weighting's idf (archive/ranking.py's Lucene idf: the bundle is built with no
   * other) from meta's article count. */
  function idfOf(meta, df) {
    return Math.log(1 + (meta.N - df + 0.5) / (df + 0.5));
  }

  /** A posting's BM25F score (archive/ranking.py), per field holding it ([weight(s)...,
   * length] or null). A word's fields are one term (archive/words.py): each field's weight
   * over its length normalisation, times the field's weight, summed, saturated once, times
   * the word's idf (leaf.idf, a number). A pair's two words are scored per field and summed, as the CLI sums a
   * phrase's fields. */
  function fieldedScore(meta, leaf, fields) {
    const w = meta.w, nf = fields.length;
    let score = 0, tf = 0;
    for (let f = 0; f < nf; f++) {
      const v = fields[f];
      if (!v) continue;
      const B = w.b[f], norm = (1 - B) + B * v[v.length - 1] / meta.avg[f];
      for (let i = leaf.from; i < v.length - 1; i++) {
        if (leaf.arity === 1) tf += w.fw[f] * v[i] / norm;
        else score += w.fw[f] * leaf.idf[i * nf + f] * saturated(w.k1, v[i] / norm);
      }
    }
    return score + (tf && leaf.idf * saturated(w.k1, tf));
  }

  /** BM25's term part: a term frequency over its length normalisation, saturated. */
  const saturated = (K1, x) => x * (K1 + 1) / (x + K1);

  /** The most a posting of a tier can score, a hair over for rounding. A word's: the tier's
   * highest combined term frequency at its unit's own average lengths (segments.py), times
   * `rho` (meta.rho, per unit), the most the collection's averages can raise it. A pair's: per
   * field, each weight's highest and highest weight-to-length ratio (format.field_bound) in
   * BM25's term part. */
  function boundScore(meta, leaf, bound, rho) {
    const w = meta.w, nf = meta.avg.length;
    let score = leaf.arity === 1 ? leaf.idf * saturated(w.k1, bound[nf] * rho) : 0;
    for (let f = 0; f < nf; f++) {
      const B = w.b[f];
      for (let i = 2 * leaf.from; i + 1 < bound[f].length; i += 2) score += w.fw[f] * leaf.idf[(i / 2) * nf + f] * saturated(w.k1, 1 / ((1 - B) / bound[f][i] + B / (bound[f][i + 1] * meta.avg[f])));
    }
    return score * (1 + 1e-9);
  }

  /** The same tree with every leaf made empty and complete: does the query match "nothing"? */
  function mapLeaves(node) {
    if (node.op === "leaf" || node.op === "range") return { op: "leaf", known: new Map(), complete: true, bound: 0 };
    if (node.op === "not") return { op: "not", kid: mapLeaves(node.kid) };
    return { op: node.op, kids: node.kids.map(mapLeaves) };
  }

  function collectNegated(node, under, out) {
    if (node.op === "leaf") { if (under) out.push(node); }
    else if (node.op === "not") collectNegated(node.kid, true, out);
    else if (node.kids) node.kids.forEach((k) => collectNegated(k, under, out));
  }

  const newestFirst = (dated) => (a, b) => {
    const ua = a[0] >= dated, ub = b[0] >= dated;
    if (ua !== ub) return ua ? 1 : -1;
    return ua ? a[0] - b[0] : b[0] - a[0];
  };

  function lowerBound(a, x) { let lo = 0, hi = a.length; while (lo < hi) { const m = (lo + hi) >> 1; if (a[m] < x) lo = m + 1; else hi = m; } return lo; }
  function upperBound(a, x) { let lo = 0, hi = a.length; while (lo < hi) { const m = (lo + hi) >> 1; if (a[m] <= x) lo = m + 1; else hi = m; } return lo; }

  // --- excerpts -----------------------------------------------------------------------------

  // analysis.js's words (a dotted abbreviation whole), marks kept inside a word for excerpts
  const WORD = /[\p{L}\p{Nl}\p{No}](?:\.[\p{L}\p{Nl}\p{No}])+(?![\p{L}\p{N}_])\.?|[\p{L}\p{N}\p{Mn}_]+(?:['\u2019][\p{L}\p{N}_]+)*/gu;

  /** Stems a result should highlight: the query's words and phrases, not negated ones. */
  function highlightStems(text) {
    const out = new Set();
    const walk = (node) => {
      if (!node || node.op === "not") return;
      if (node.op === "term") out.add(node.key);
      else if (node.op === "phrase") node.keys.forEach((k) => k.split(" ").forEach((s) => out.add(s)));
      else if (node.kids) node.kids.forEach(walk);
    };
    try { walk(parseQuery(text)); } catch (e) { /* no highlights for a bad query */ }
    return out;
  }

  /** Where `text`'s words stem to one of `stems`: [[start, end, stem], ...]. */
  function matches(text, stems) {
    const A = root.ArchiveAnalysis;
    const out = [];
    if (!stems.size) return out;
    for (const m of text.matchAll(WORD)) {
      const t = m[0].toLowerCase().replace(/\u2019/g, "'").replace(/\./g, "");
      if (A.STOP_WORDS.has(t)) continue;
      const s = A.stem(t);
      if (stems.has(s)) out.push([m.index, m.index + m[0].length, s]);
    }
    return out;
  }

  /** Text split into [text, isMatch] segments. */
  function segments(text, found) {
    const out = [];
    let at = 0;
    for (const [s, e] of found) {
      if (s > at) out.push([text.slice(at, s), false]);
      out.push([text.slice(s, e), true]);
      at = e;
    }
    if (at < text.length) out.push([text.slice(at), false]);
    return out;
  }

  /** The window of about `size` characters holding the most distinct query words, marked. */
  function excerpt(body, stems, size = 240) {
    const text = body.replace(/\s+/g, " ").trim();
    const found = matches(text, stems);
    let start = 0, best = -1;
    for (let i = 0; i < found.length; i++) {
      const from = Math.max(0, found[i][0] - 60);
      const distinct = new Set(found.filter(([s, e]) => s >= from && e <= from + size).map((f) => f[2])).size;
      if (distinct > best) { best = distinct; start = from; }
    }
    if (start > 0) { const sp = text.indexOf(" ", start); start = sp >= 0 && sp < start + 30 ? sp + 1 : start; }
    let end = Math.min(text.length, start + size);
    if (end < text.length) { const sp = text.lastIndexOf(" ", end); if (sp > start + size / 2) end = sp; }
    const slice = text.slice(start, end);
    const segs = segments(slice, matches(slice, stems));
    if (start > 0) segs.unshift(["\u2026", false]);
    if (end < text.length) segs.push(["\u2026", false]);
    return segs;
  }

  const titleSegments = (title, stems) => segments(title, matches(title, stems));

  /** A headline's page slug (urls.title_slug; only used for ASCII headlines). */
  const titleSlug = (title) => {
    let s = title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
    if (s.length > 60) {
      const cut = s.slice(0, 60), i = cut.lastIndexOf("-");
      s = i > 0 ? cut.slice(0, i) : cut;
    }
    return s || "article";
  };

  /** An article record's page path, relative to the site root (format.page_path). */
  const pagePath = (a) => {
    const name = a.u !== undefined ? a.u : `${titleSlug(a.t)}-${a.h}`;
    return `${a.d ? a.d.replace(/-/g, "/") : "undated"}/${name}/index.html`;
  };

  root.ArchiveSearch = {
    Engine, QueryError, scriptLoader, parseQuery, parseDateRange, keyHash,
    excerpt, titleSegments, highlightStems, pagePath, titleSlug, bytesOf, varints, upperBound,
  };
})(typeof globalThis !== "undefined" ? globalThis : this);
