// Reading positions: one canonical form and the notations clients speak, converted both ways.
// Pure functions over a book's locator index (built by the catalog at scan time); no I/O.
//
// The canonical position of a reflowable (EPUB) book is `{spine, offset}`: the spine item's index
// counting non-linear items (0-based), and the UTF-16 offset into that document's body text (all the
// character data under <body>, in document order, white space included, entities decoded). Every
// notation maps to and from it:
//
//   cfiToCanonical(index, 'epubcfi(/6/4[c1]!/4/2[p1]/1:10)')   → {pos: {spine: 1, offset: 10}, healed: []} | null
//   canonicalToCfi(index, pos)                                  → 'epubcfi(/6/4[c1]!/4/2[p1]/1:10)'
//   canonicalToCfiRange(index, start, end)                      → 'epubcfi(/6/4[c1]!/4/2[p1],/1:3,/1:10)'
//   xpointerToCanonical(index, '/body/DocFragment[2]/body/p/text().10') → {pos, healed} | null
//   canonicalToXPointer(index, pos)                             → '/body/DocFragment[2]/body/p/text().10'
//   restoreToCanonical(index, {anchor_href, css_selector, char_offset}) → {pos, healed} | null
//   canonicalToRestore(index, pos)                              → {anchor_href, css_selector, char_offset}
//   canonicalToPercentage(index, pos)                           → 0..1
//   percentageToCanonical(index, fraction)                      → pos
//   isXPointer(s), parseCfi(s), pageToFraction(page, count), fractionToPage(fraction, count)
//
// `healed` lists what had to change for the notation to point into the book (a step past the last
// child, an offset past the end of its text, a stale spine step or element found again by its id),
// each as a code to act on and the words to show; null means the text is not that notation at all.
// Conversions never throw on hostile input.
//
// Notation rules:
// - EPUB CFI: `/6/<2(spine+1)>[idref]!/<body step>[id]/<element steps>[id]/<odd text step>:<utf16 offset>`.
//   Spine steps count non-linear items. Element steps carry `[id]` when the element has one; a text
//   step names the run of character data between two element children (a comment does not split it).
//   A position inside a document with no text is the body step alone.
// - KOReader XPointer: `/body/DocFragment[<spine+1>]/body/<name>[<n>]/…/text()[<k>].<offset>`: names
//   indexed 1-based among same-name siblings (`[n]` left out when the name is alone), text nodes in
//   crengine's numbering (the index's `kr`: the text nodes KOReader's engine keeps, split where it
//   splits them, at comments and every 8,192 characters), offsets in Unicode code points into the text
//   as crengine stores it (white space runs collapsed to one space outside <pre>). An element pointer
//   `…/<name>.<N>` is the point before that element's N-th child (its start for `.0`); one is written
//   where a position is at an image (img, svg, object…) before any text, as crengine writes it when a
//   page begins with one. A document with no text is `/body/DocFragment[<n>].0`.
// - Restore handles: `anchor_href` the spine item's href as the package document writes it;
//   `css_selector` the innermost element around the position (`#id` when it has an id, else a
//   `>` path of `name:nth-child(k)` from the nearest ancestor with an id, or from `body`);
//   `char_offset` UTF-16 units into that element's text.
// - Percentage: the share of the book's text before the position; every spine item weighs its text
//   length (at least 1, so a page of pictures counts), non-linear items included.

/** The catalog's per-EPUB index. JSON; compact enough to keep thousands in memory. */
export interface LocatorIndex {
  /** 2: with crengine's text nodes (`kr`); 1 (no longer made) had none */
  v: 1 | 2;
  /** element names (lower case, no prefix) referenced by number from `DocIndex.t` */
  names: string[];
  /** the spine in order, non-linear items included: [idref, href as the package writes it, linear 1|0] */
  spine: [string, string, 0 | 1][];
  /** one per spine item, same order; null when that document could not be read */
  docs: (DocIndex | null)[];
}

export interface DocIndex {
  /** the CFI step of <body> under <html>: 4 after a <head>, 2 without one */
  b: number;
  /** body text length in UTF-16 units */
  n: number;
  /**
   * The body's subtree in document order, body itself left out. `k >= 0` opens an element named
   * `names[k]`, `-1` closes it; `k <= -2` is a run of character data: length `(-k - 2) >> 1`, white
   * space only when `(-k - 2) & 1`.
   */
  t: number[] | Int32Array;
  /** element ids, flat: [element ordinal, id, …]; the body is ordinal 0, the others count in document order */
  ids?: (number | string)[];
  /** runs holding characters beyond the BMP: [run ordinal, UTF-16 offsets of each surrogate pair…] per run */
  sp?: number[][];
  /**
   * crengine's text nodes (KOReader's engine), for the runs where they are not simply "one node, kept
   * as written, unless the run is white space only": `[run ordinal, …nodes]`, each node the ones
   * crengine keeps as `start, end, cut count, …cuts` (UTF-16 offsets into the run; a cut `from, to`
   * is characters crengine's text leaves out: white space after the first of a run, the newline
   * after <pre>). A listed run with no nodes is dropped whole.
   */
  kr?: number[][];
}

export interface Canonical {
  /** spine index, counting non-linear items, 0-based */
  spine: number;
  /** UTF-16 offset into that document's body text */
  offset: number;
}

/** What a heal did, to act on without reading its words. */
export type HealCode =
  /** the CFI had no epubcfi( ) wrapper */
  | 'cfi-wrapper'
  /** a CFI range was read as its start */
  | 'cfi-range'
  /** a spine step named another item than its idref: the idref won */
  | 'spine-stale'
  /** a spine step (or DocFragment) past the spine: the end of the book */
  | 'spine-past-end'
  /** a spine step that disagreed with anchor_href: the href won */
  | 'spine-href'
  /** the path does not start at the document body: the start of the document */
  | 'not-body'
  /** an element step missed its [id]: the id was followed */
  | 'id-moved'
  /** a step past the last child (or text) of its element: the element's end */
  | 'past-last-child'
  /** a character offset past the end of its text: the text's end */
  | 'offset-past-end'
  /** a css_selector that names nothing in the document: its start */
  | 'selector-missing'
  /** an anchor_href that is no document of the book: the restore handles were dropped */
  | 'href-unknown'
  /** a notation that is no place in this book: kept as sent */
  | 'not-a-place'
  /** the text the reader saw (context or highlighted) is elsewhere: moved there */
  | 'text-moved'
  /** a position known by its percentage alone was placed by its text */
  | 'text-placed'
  /** a highlight sent as a point where its text starts: its end was set where the text ends */
  | 'text-end'
  /** a percentage that disagreed with the position: set from the position */
  | 'percentage'
  /** a page past the book's last page: the last page */
  | 'page-past-end'
  /** a span whose end came before its start: the two were swapped */
  | 'span-reversed';

export interface Heal {
  code: HealCode;
  message: string;
}

export interface Resolved {
  pos: Canonical;
  healed: Heal[];
}

export const heal = (code: HealCode, message: string): Heal => ({ code, message });
/** The words of heals, as the API reports them. */
export const healMessages = (h: readonly Heal[]): string[] => h.map((x) => x.message);

export interface RestoreHandles {
  anchor_href: string;
  css_selector: string;
  char_offset: number;
}

// ---------------------------------------------------------------- the expanded tree (cached per index)

interface El {
  name: string;
  id?: string;
  parent: El | null;
  children: Node[];
  /** crengine's children: the elements and the text nodes it keeps */
  kids: (El | KNode)[];
  /** 0-based among element siblings */
  elIndex: number;
  /** element children so far (while the tree is built) */
  nEl: number;
  start: number;
  end: number;
}
interface Run {
  parent: El;
  /** element siblings before it: its CFI step is 2 * slot + 1 */
  slot: number;
  start: number;
  len: number;
  ws: boolean;
  /** UTF-16 offsets of surrogate pairs in the run */
  sp?: number[];
}
/** A text node crengine keeps: a part of a run, with the characters its text leaves out. */
interface KNode {
  parent: El;
  run: Run;
  /** canonical offsets of its first character and after its last */
  start: number;
  end: number;
  /** canonical [from, to) pairs left out of crengine's text, in order */
  cuts: number[];
}
type Node = El | Run;
const isEl = (n: Node | KNode): n is El => 'children' in n;

interface Doc {
  body: El;
  runs: Run[];
  len: number;
  byId: Map<string, El>;
  /** crengine's text nodes in document order */
  knodes: KNode[];
  /** the elements in document order (their starts never decrease) */
  els: El[];
}

const trees = new WeakMap<DocIndex, Doc>();

function expand(index: LocatorIndex, spine: number): Doc | null {
  const d = index.docs[spine];
  if (!d) return null;
  const got = trees.get(d);
  if (got) return got;
  const ids = new Map<number, string>();
  for (let i = 0; i + 1 < (d.ids?.length ?? 0); i += 2) ids.set(Number(d.ids![i]), String(d.ids![i + 1]));
  const pairs = new Map<number, number[]>();
  for (const s of d.sp ?? []) if (s.length > 1) pairs.set(s[0]!, s.slice(1));
  const kr = new Map<number, number[]>();
  for (const k of d.kr ?? []) if (k.length > 0) kr.set(k[0]!, k);
  const body: El = { name: 'body', parent: null, children: [], kids: [], elIndex: 0, nEl: 0, start: 0, end: 0 };
  if (ids.has(0)) body.id = ids.get(0)!;
  const byId = new Map<string, El>();
  if (body.id) byId.set(body.id, body);
  const runs: Run[] = [];
  const knodes: KNode[] = [];
  const els: El[] = [];
  let cur = body;
  let pos = 0;
  let ord = 0;
  for (const k of d.t) {
    if (k >= 0) {
      const el: El = { name: index.names[k] ?? '?', parent: cur, children: [], kids: [], elIndex: cur.nEl++, nEl: 0, start: pos, end: pos };
      ord += 1;
      els.push(el);
      cur.kids.push(el);
      const id = ids.get(ord);
      if (id !== undefined) {
        el.id = id;
        if (!byId.has(id)) byId.set(id, el);
      }
      cur.children.push(el);
      cur = el;
    } else if (k === -1) {
      cur.end = pos;
      if (cur.parent) cur = cur.parent;
    } else {
      const len = (-k - 2) >> 1;
      const run: Run = { parent: cur, slot: cur.nEl, start: pos, len, ws: ((-k - 2) & 1) === 1 };
      const sp = pairs.get(runs.length);
      if (sp) run.sp = sp;
      for (const kn of crNodes(run, kr.get(runs.length))) {
        knodes.push(kn);
        cur.kids.push(kn);
      }
      runs.push(run);
      cur.children.push(run);
      pos += len;
    }
  }
  // close whatever a truncated list left open
  for (let e: El | null = cur; e; e = e.parent) e.end = pos;
  const doc: Doc = { body, runs, len: pos, byId, knodes, els };
  trees.set(d, doc);
  return doc;
}

/** The text nodes crengine keeps of one run: as the index lists them, else the whole run unless it is white space only. */
function crNodes(run: Run, listed: number[] | undefined): KNode[] {
  if (!listed) return run.ws || run.len === 0 ? [] : [{ parent: run.parent, run, start: run.start, end: run.start + run.len, cuts: [] }];
  const out: KNode[] = [];
  for (let i = 1; i + 2 < listed.length; ) {
    const a = Math.min(Math.max(0, listed[i]!), run.len);
    const b = Math.min(Math.max(a, listed[i + 1]!), run.len);
    const nc = Math.max(0, listed[i + 2]!);
    const cuts: number[] = [];
    for (let c = 0; c < nc; c++) {
      const from = listed[i + 3 + 2 * c];
      const to = listed[i + 4 + 2 * c];
      if (from === undefined || to === undefined) break;
      const f = Math.min(Math.max(a, from), b);
      const t = Math.min(Math.max(f, to), b);
      if (t > f && (cuts.length === 0 || f >= cuts[cuts.length - 1]! - run.start)) cuts.push(run.start + f, run.start + t);
    }
    out.push({ parent: run.parent, run, start: run.start + a, end: run.start + b, cuts });
    i += 3 + 2 * nc;
  }
  return out;
}

/** The run holding the character at `offset` (or the last run, at the document's end). */
function runAt(doc: Doc, offset: number): Run | null {
  const runs = doc.runs;
  if (runs.length === 0) return null;
  let lo = 0;
  let hi = runs.length - 1;
  // last run whose start <= offset, then skip empty runs forward while the offset is at their end
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (runs[mid]!.start <= offset) lo = mid;
    else hi = mid - 1;
  }
  let r = runs[lo]!;
  while (offset >= r.start + r.len && lo + 1 < runs.length && runs[lo + 1]!.start <= offset) r = runs[++lo]!;
  return r;
}

const clampPos = (index: LocatorIndex, pos: Canonical): Canonical => {
  const spine = Math.min(Math.max(0, Math.trunc(pos.spine)), Math.max(0, index.spine.length - 1));
  const len = index.docs[spine]?.n ?? 0;
  return { spine, offset: Math.min(Math.max(0, Math.trunc(pos.offset)), len) };
};

const pathOf = (el: El): El[] => {
  const out: El[] = [];
  for (let e: El | null = el; e && e.parent; e = e.parent) out.unshift(e);
  return out;
};

// ---------------------------------------------------------------- EPUB CFI

export interface CfiSteps {
  /** the CFI as read: wrapped in epubcfi( ), a range collapsed to its start */
  cfi: string;
  /** the itemref step (even, 2 = the first spine item) */
  spineStep: number;
  spineAssert?: string;
  /** steps inside the content document, from its root element */
  steps: { n: number; id?: string }[];
  /** the terminal character offset, when there is one */
  offset?: number;
  /** what was changed to read it: a missing wrapper, a range collapsed to its start */
  healed: Heal[];
  /** a range's end (the CFI itself reads as its start) */
  end?: CfiSteps;
}

/** Reads a CFI's steps. A range reads as its start, with its end in `end`. Null when it is not an EPUB CFI into a spine item. */
export function parseCfi(raw: string): CfiSteps | null {
  if (typeof raw !== 'string' || raw.length > 4096) return null;
  const healed: Heal[] = [];
  let s = raw.trim();
  const m = /^epubcfi\((.*)\)$/s.exec(s);
  if (m) s = m[1]!;
  else healed.push(heal('cfi-wrapper', 'epubcfi: added the epubcfi( ) wrapper'));
  const parts = splitTop(s, ',');
  if (parts === null) return null;
  if (parts.length === 3) {
    const start = parsePath(parts[0]! + parts[1]!, healed);
    const end = parsePath(parts[0]! + parts[2]!, []);
    if (!start || !end) return null;
    healed.push(heal('cfi-range', 'epubcfi: a range was collapsed to its start'));
    return { ...start, end };
  }
  if (parts.length !== 1) return null;
  return parsePath(s, healed);
}

/** One path (no range) after the wrapper. */
function parsePath(s: string, healed: Heal[]): CfiSteps | null {
  const STEP = /^\/(\d{1,9})(?:\[((?:[^\]^]|\^.)*)\])?/s;
  const TERMINAL = /^(?::(\d{1,9})(?:\[(?:[^\]^]|\^.)*\])?)?(?:~\d+(?:\.\d+)?)?(?:@\d+(?:\.\d+)?:\d+(?:\.\d+)?)?$/s;
  const outer: { n: number; id?: string }[] = [];
  const inner: { n: number; id?: string }[] = [];
  let into = outer;
  let rest = s;
  let offset: number | undefined;
  let bangs = 0;
  for (;;) {
    const st = STEP.exec(rest);
    if (st) {
      const step: { n: number; id?: string } = { n: Number(st[1]) };
      const id = assertionId(st[2]);
      if (id) step.id = id;
      into.push(step);
      rest = rest.slice(st[0].length);
      continue;
    }
    if (rest.startsWith('!')) {
      bangs += 1;
      if (bangs > 1) break; // a further indirection (an iframe): the position is its host element
      into = inner;
      rest = rest.slice(1);
      continue;
    }
    const term = TERMINAL.exec(rest);
    if (!term) return null;
    if (term[1] !== undefined) offset = Number(term[1]);
    break;
  }
  if (outer.length !== 2 || outer[0]!.n !== 6 || outer[1]!.n % 2 !== 0 || outer[1]!.n === 0) return null;
  const out: CfiSteps = { cfi: `epubcfi(${s})`, spineStep: outer[1]!.n, steps: inner, healed };
  if (outer[1]!.id) out.spineAssert = outer[1]!.id;
  if (offset !== undefined && bangs === 1) out.offset = offset;
  return out;
}

/** `[id]` or `[id;s=b]`: the id part, unescaped. */
function assertionId(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const id = unescapeCfi(raw.split(/(?<!\^);/)[0]!);
  return id || undefined;
}
const unescapeCfi = (s: string) => s.replace(/\^(.)/gs, '$1');
const escapeCfi = (s: string) => s.replace(/[\^[\](),;=]/g, '^$&');

function splitTop(s: string, sep: string): string[] | null {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '^' && i + 1 < s.length) {
      cur += c + s[++i];
      continue;
    }
    if (c === '[') depth++;
    if (c === ']') depth--;
    if (depth < 0) return null;
    if (c === sep && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  if (depth !== 0) return null;
  out.push(cur);
  return out;
}

/** The spine item a CFI's step names, healing a stale step by its idref. */
function spineOf(index: LocatorIndex, step: number, assert: string | undefined, healed: Heal[]): number | null {
  const at = step / 2 - 1;
  if (assert !== undefined && index.spine[at]?.[0] !== assert) {
    const found = index.spine.findIndex((s) => s[0] === assert);
    if (found >= 0) {
      healed.push(heal('spine-stale', `epubcfi: spine step ${step} was stale; [${assert}] is spine step ${(found + 1) * 2}`));
      return found;
    }
  }
  if (at >= index.spine.length) {
    healed.push(heal('spine-past-end', `epubcfi: spine step ${step} is past the end of the spine (${items(index.spine.length)}); moved to the end of the book`));
    return null;
  }
  return at;
}

/**
 * A CFI (as text, or as parseCfi read it: parsed once) to the canonical position. Null when it is
 * not a CFI; a spine step past the spine ends the book.
 */
export function cfiToCanonical(index: LocatorIndex, cfi: string | CfiSteps): Resolved | null {
  const p = typeof cfi === 'string' ? parseCfi(cfi) : cfi;
  if (!p) return null;
  const healed = [...p.healed];
  const spine = spineOf(index, p.spineStep, p.spineAssert, healed);
  if (spine === null) return { pos: endOfBook(index), healed };
  const doc = expand(index, spine);
  const d = index.docs[spine];
  if (!doc || !d) return { pos: { spine, offset: 0 }, healed };
  const steps = p.steps;
  if (steps.length === 0) return { pos: { spine, offset: 0 }, healed };
  if (steps[0]!.n !== d.b) {
    healed.push(heal('not-body', `epubcfi: /${steps[0]!.n} is not the document's body (/${d.b}); moved to the start of the document`));
    return { pos: { spine, offset: 0 }, healed };
  }
  let el = doc.body;
  let trail = `/${d.b}`;
  for (let i = 1; i < steps.length; i++) {
    const st = steps[i]!;
    if (st.n % 2 === 0) {
      const kids = el.children.filter(isEl);
      const next: El | undefined = st.n === 0 ? undefined : kids[st.n / 2 - 1];
      if (st.id !== undefined && next?.id !== st.id) {
        const byId = doc.byId.get(st.id);
        if (byId) {
          const path = `/${d.b}${cfiPath(byId)}`;
          healed.push(heal('id-moved', `epubcfi: [${st.id}] was not at ${trail}/${st.n}; followed its id to ${path}`));
          trail = path;
          el = byId;
          continue;
        }
      }
      if (!next) {
        healed.push(heal('past-last-child', `epubcfi: ${trail}/${st.n} is past the last child of its element; moved to the element's end`));
        return { pos: { spine, offset: el.end }, healed };
      }
      el = next;
      trail += `/${st.n}`;
      if (i === steps.length - 1) return { pos: { spine, offset: el.start }, healed };
    } else {
      // a text step: the character data after `slot` element children
      const slot = (st.n - 1) / 2;
      const kids = el.children.filter(isEl);
      if (slot > kids.length) {
        healed.push(heal('past-last-child', `epubcfi: ${trail}/${st.n} is past the last child of its element; moved to the element's end`));
        return { pos: { spine, offset: el.end }, healed };
      }
      const run = el.children.find((c): c is Run => !isEl(c) && c.slot === slot);
      const base = run ? run.start : slot === 0 ? el.start : kids[slot - 1]!.end;
      const len = run ? run.len : 0;
      let off = p.offset ?? 0;
      if (off > len) {
        healed.push(heal('offset-past-end', `epubcfi: character offset ${off} is past the end of its text (${len} characters); moved to its end`));
        off = len;
      }
      return { pos: { spine, offset: base + off }, healed };
    }
  }
  return { pos: { spine, offset: el.start }, healed };
}

function cfiPath(el: El): string {
  let out = '';
  for (const e of pathOf(el)) out += `/${(e.elIndex + 1) * 2}${e.id !== undefined ? `[${escapeCfi(e.id)}]` : ''}`;
  return out;
}

/** The steps of the canonical position's CFI, one a token: `/6`, `/4[c1]`, `!`, `/4`, …, `/1:10`. */
function cfiTokens(index: LocatorIndex, pos: Canonical): string[] {
  const p = clampPos(index, pos);
  const item = index.spine[p.spine];
  const out = ['/6', `/${(p.spine + 1) * 2}${item?.[0] ? `[${escapeCfi(item[0])}]` : ''}`];
  const d = index.docs[p.spine];
  const doc = expand(index, p.spine);
  if (!doc || !d) return out;
  out.push('!', `/${d.b}${doc.body.id !== undefined ? `[${escapeCfi(doc.body.id)}]` : ''}`);
  // at an image before any text: the image itself, as a web reader writes a position on a picture
  const { image } = placeOf(doc, p.offset);
  if (image) {
    for (const e of pathOf(image)) out.push(`/${(e.elIndex + 1) * 2}${e.id !== undefined ? `[${escapeCfi(e.id)}]` : ''}`);
    return out;
  }
  const run = runAt(doc, p.offset);
  if (!run) return out;
  for (const e of pathOf(run.parent)) out.push(`/${(e.elIndex + 1) * 2}${e.id !== undefined ? `[${escapeCfi(e.id)}]` : ''}`);
  out.push(`/${run.slot * 2 + 1}:${p.offset - run.start}`);
  return out;
}

/** The canonical position as an EPUB CFI (with id assertions, the way web readers write them). */
export function canonicalToCfi(index: LocatorIndex, pos: Canonical): string {
  return `epubcfi(${cfiTokens(index, pos).join('')})`;
}

/**
 * A span as an EPUB CFI range (`epubcfi(<common parent>,<start>,<end>)`, the way web readers write a
 * highlight); the point's CFI when the span is empty. The parent ends at an element (or at `/6`
 * between two documents), never at an indirection.
 */
export function canonicalToCfiRange(index: LocatorIndex, start: Canonical, end: Canonical): string {
  const a = cfiTokens(index, start);
  const b = cfiTokens(index, end);
  if (a.join('') === b.join('')) return `epubcfi(${a.join('')})`;
  let n = 0;
  while (n < a.length - 1 && n < b.length - 1 && a[n] === b[n]) n++;
  // the parent is a path to an element: not ending in `!` nor just before it (the spine item)
  while (n > 1 && (a[n - 1] === '!' || a[n] === '!')) n--;
  return `epubcfi(${a.slice(0, n).join('')},${a.slice(n).join('')},${b.slice(n).join('')})`;
}

// ---------------------------------------------------------------- KOReader XPointer

/** KOReader's XPointer for reflowable documents (what it sends in kosync's `progress` / our `epubcfi`). */
export const isXPointer = (s: unknown): s is string => typeof s === 'string' && /^\/body\/DocFragment(\[\d+\])?(?:[/.]|$)/.test(s);

/** Elements a page can begin with that hold no text: a position at one is written as a pointer to it. */
const REPLACED = new Set('img image svg object embed video audio iframe canvas'.split(' '));

/** The elements, in document order, whose start lies in [from, to]. */
function elementsFrom(doc: Doc, from: number, to: number): El[] {
  const els = doc.els;
  let lo = 0;
  let hi = els.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (els[mid]!.start < from) lo = mid + 1;
    else hi = mid;
  }
  const out: El[] = [];
  for (let i = lo; i < els.length && els[i]!.start <= to; i++) out.push(els[i]!);
  return out;
}

/** The first text node crengine keeps that holds a character at or after `offset`. */
function knodeFrom(doc: Doc, offset: number): KNode | null {
  const ks = doc.knodes;
  let lo = 0;
  let hi = ks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ks[mid]!.end <= offset) lo = mid + 1;
    else hi = mid;
  }
  return ks[lo] ?? null;
}

/**
 * Where a position is, in the nodes both engines share: the first text crengine keeps at or after it
 * (`node`, `at` its canonical offset; null past the last), and an image met on the way there (the
 * first of img, svg… whose start lies between the position and that text), which is then the place.
 */
function placeOf(doc: Doc, offset: number): { node: KNode | null; at: number; image: El | null } {
  const node = knodeFrom(doc, offset);
  const at = node ? Math.max(offset, node.start) : doc.len;
  // a position inside a text node has no element before it; at its start (or in dropped white space) it may
  const image = node && offset > node.start ? null : (elementsFrom(doc, offset, at).find((e) => REPLACED.has(e.name)) ?? null);
  return { node, at, image };
}

/** UTF-16 units from a text node's start to code points of crengine's text (cut characters left out). */
function nodeCodePoints(node: KNode, to: number): number {
  const sp = node.run.sp ?? [];
  const base = node.run.start;
  let n = 0;
  let ci = 0;
  let si = 0;
  for (let u = node.start; u < to && u < node.end; ) {
    while (ci < node.cuts.length && node.cuts[ci + 1]! <= u) ci += 2;
    if (ci < node.cuts.length && node.cuts[ci]! <= u) {
      u = node.cuts[ci + 1]!;
      continue;
    }
    while (si < sp.length && base + sp[si]! < u) si++;
    u += si < sp.length && base + sp[si]! === u ? 2 : 1;
    n++;
  }
  return n;
}

/** Code points of crengine's text to the canonical offset in a text node; null when past its end. */
function nodeUnits(node: KNode, c: number): number | null {
  const sp = node.run.sp ?? [];
  const base = node.run.start;
  let u = node.start;
  let left = c;
  let ci = 0;
  let si = 0;
  while (left > 0) {
    while (ci < node.cuts.length && node.cuts[ci + 1]! <= u) ci += 2;
    if (ci < node.cuts.length && node.cuts[ci]! <= u) {
      u = node.cuts[ci + 1]!;
      continue;
    }
    if (u >= node.end) return null;
    while (si < sp.length && base + sp[si]! < u) si++;
    u += si < sp.length && base + sp[si]! === u ? 2 : 1;
    left--;
  }
  // the point before the next character crengine keeps: past characters it leaves out here
  for (; ci < node.cuts.length; ci += 2) if (node.cuts[ci]! <= u && node.cuts[ci + 1]! > u) u = node.cuts[ci + 1]!;
  return u;
}

/** An XPointer step name: letters, digits, `_`, `-`, a prefix, and dots only inside the name (`.N` ends it). */
const XP_STEP = /^\/([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*(?::[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*)?)(?:\[(\d{1,9})\])?/;
const XP_TEXT = /^\/text\(\)(?:\[(\d{1,9})\])?(?:\.(\d{1,9}))?$/;

/** A KOReader XPointer to the canonical position. Null when it is not an XPointer. */
export function xpointerToCanonical(index: LocatorIndex, xp: string): Resolved | null {
  if (!isXPointer(xp) || xp.length > 4096) return null;
  const healed: Heal[] = [];
  const m = /^\/body\/DocFragment(?:\[(\d{1,9})\])?(.*)$/s.exec(xp);
  if (!m) return null;
  const frag = m[1] === undefined ? 1 : Number(m[1]);
  if (frag < 1) return null;
  let rest = m[2]!;
  if (frag > index.spine.length) {
    healed.push(heal('spine-past-end', `xpointer: DocFragment[${frag}] is past the end of the spine (${items(index.spine.length)}); moved to the end of the book`));
    return { pos: endOfBook(index), healed };
  }
  const spine = frag - 1;
  const doc = expand(index, spine);
  if (!doc) return { pos: { spine, offset: 0 }, healed };
  if (rest === '' || /^\.\d+$/.test(rest)) return { pos: { spine, offset: 0 }, healed };
  const b = /^\/body(?:\[1\])?(?=\/|\.|$)/.exec(rest);
  if (!b) {
    healed.push(heal('not-body', 'xpointer: the path does not go through the document body; moved to the start of the document'));
    return { pos: { spine, offset: 0 }, healed };
  }
  rest = rest.slice(b[0].length);
  let el = doc.body;
  let trail = `/body/DocFragment[${frag}]/body`;
  for (;;) {
    const tx = XP_TEXT.exec(rest);
    if (tx) {
      const k = tx[1] === undefined ? 1 : Number(tx[1]);
      const node = el.kids.filter((c): c is KNode => !isEl(c))[k - 1];
      if (!node) {
        healed.push(heal('past-last-child', `xpointer: ${trail}/text()[${k}] is past the last text of its element; moved to the element's end`));
        return { pos: { spine, offset: el.end }, healed };
      }
      const c = tx[2] === undefined ? 0 : Number(tx[2]);
      const u = nodeUnits(node, c);
      if (u === null) {
        const max = nodeCodePoints(node, node.end);
        healed.push(heal('offset-past-end', `xpointer: character offset ${c} is past the end of its text (${max} characters); moved to its end`));
        return { pos: { spine, offset: node.end }, healed };
      }
      return { pos: { spine, offset: u }, healed };
    }
    const st = XP_STEP.exec(rest);
    if (st) {
      const name = st[1]!.toLowerCase().replace(/^.*:/, '');
      const n = st[2] === undefined ? 1 : Number(st[2]);
      const same = el.children.filter((c): c is El => isEl(c) && c.name === name);
      const next = same[n - 1];
      if (!next) {
        healed.push(heal('past-last-child', `xpointer: ${trail}/${st[0].slice(1)} is past the last child of its element; moved to the element's end`));
        return { pos: { spine, offset: el.end }, healed };
      }
      el = next;
      trail += st[0];
      rest = rest.slice(st[0].length);
      continue;
    }
    // an element pointer: nothing more (the element's start), or `.N`, the point before its N-th child
    if (rest === '') return { pos: { spine, offset: el.start }, healed };
    const dot = /^\.(\d{1,9})$/.exec(rest);
    if (!dot) return null;
    const n = Number(dot[1]);
    if (n === 0) return { pos: { spine, offset: el.start }, healed };
    const kid = el.kids[n];
    if (kid) return { pos: { spine, offset: kid.start }, healed };
    if (n > el.kids.length) healed.push(heal('past-last-child', `xpointer: ${trail}.${n} is past the last child of its element; moved to the element's end`));
    return { pos: { spine, offset: el.end }, healed };
  }
}

/** An element's XPointer path from the document's body, names counted among same-name siblings. */
function xpPath(frag: string, el: El): string {
  let path = `${frag}/body`;
  for (const e of pathOf(el)) {
    const same = e.parent!.children.filter((c): c is El => isEl(c) && c.name === e.name);
    path += `/${e.name}${same.length > 1 ? `[${same.indexOf(e) + 1}]` : ''}`;
  }
  return path;
}

/**
 * The canonical position as a KOReader XPointer, in crengine's node numbering. A position at an image
 * before any text is a pointer to the image (`…/img.0`); one in white space crengine drops lands on
 * the next text it keeps (or the end of the last).
 */
export function canonicalToXPointer(index: LocatorIndex, pos: Canonical): string {
  const p = clampPos(index, pos);
  const frag = `/body/DocFragment[${p.spine + 1}]`;
  const doc = expand(index, p.spine);
  if (!doc) return `${frag}.0`;
  const { node, at, image } = placeOf(doc, p.offset);
  if (image) return `${xpPath(frag, image)}.0`;
  let target = node;
  let u = at;
  if (!target) {
    target = doc.knodes[doc.knodes.length - 1] ?? null;
    u = target?.end ?? 0;
  }
  if (!target) return `${frag}.0`;
  const texts = target.parent.kids.filter((c): c is KNode => !isEl(c));
  return `${xpPath(frag, target.parent)}/text()${texts.length > 1 ? `[${texts.indexOf(target) + 1}]` : ''}.${nodeCodePoints(target, u)}`;
}

// ---------------------------------------------------------------- restore handles

/** CSS.escape, as browsers define it. */
function cssEscape(id: string): string {
  let out = '';
  const cps = [...id];
  cps.forEach((ch, i) => {
    const c = ch.codePointAt(0)!;
    if (c === 0) out += '\ufffd';
    else if ((c >= 1 && c <= 0x1f) || c === 0x7f || (i === 0 && c >= 0x30 && c <= 0x39) || (i === 1 && c >= 0x30 && c <= 0x39 && cps[0] === '-')) out += `\\${c.toString(16)} `;
    else if (i === 0 && ch === '-' && cps.length === 1) out += '\\-';
    else if (c >= 0x80 || ch === '-' || ch === '_' || /[0-9A-Za-z]/.test(ch)) out += ch;
    else out += `\\${ch}`;
  });
  return out;
}
const cssUnescape = (s: string): string =>
  s.replace(/\\([0-9a-fA-F]{1,6})\s?|\\(.)/gsu, (_, hex: string | undefined, ch: string | undefined) =>
    hex ? String.fromCodePoint(Math.min(Number.parseInt(hex, 16), 0x10ffff) || 0xfffd) : ch!,
  );

function selectorOf(el: El): string {
  if (el.id !== undefined) return `#${cssEscape(el.id)}`;
  if (!el.parent) return 'body';
  const steps: string[] = [];
  let e: El = el;
  while (e.parent && e.id === undefined) {
    steps.unshift(`${e.name}:nth-child(${e.elIndex + 1})`);
    e = e.parent;
  }
  return `${e.id !== undefined ? `#${cssEscape(e.id)}` : 'body'} > ${steps.join(' > ')}`;
}

/** Where a reader lands: the document by href, the element by selector, then UTF-16 units into its text. */
export function canonicalToRestore(index: LocatorIndex, pos: Canonical): RestoreHandles {
  const p = clampPos(index, pos);
  const href = index.spine[p.spine]?.[1] ?? '';
  const doc = expand(index, p.spine);
  const image = doc ? placeOf(doc, p.offset).image : null;
  if (image) return { anchor_href: href, css_selector: selectorOf(image), char_offset: 0 };
  const run = doc ? runAt(doc, p.offset) : null;
  const el = run?.parent ?? doc?.body;
  if (!el) return { anchor_href: href, css_selector: 'body', char_offset: 0 };
  return { anchor_href: href, css_selector: selectorOf(el), char_offset: p.offset - el.start };
}

const normHref = (h: string): string => {
  let s = h.split('#')[0]!.replace(/^\.\//, '');
  try {
    s = decodeURIComponent(s);
  } catch {
    // keep it as written
  }
  return s.normalize('NFC');
};

/** The spine item an href names (as the package writes it, decoded, or its end matching an archive path). */
export function spineOfHref(index: LocatorIndex, href: string): number | null {
  const want = normHref(href);
  if (!want) return null;
  let i = index.spine.findIndex((s) => normHref(s[1]) === want);
  if (i < 0) i = index.spine.findIndex((s) => want.endsWith(`/${normHref(s[1])}`) || normHref(s[1]).endsWith(`/${want}`));
  return i < 0 ? null : i;
}

/** Restore handles to the canonical position; null when the href names no spine item. */
export function restoreToCanonical(index: LocatorIndex, h: { anchor_href: string; css_selector?: string; char_offset?: number }): Resolved | null {
  const spine = spineOfHref(index, h.anchor_href);
  if (spine === null) return null;
  const healed: Heal[] = [];
  const doc = expand(index, spine);
  if (!doc) return { pos: { spine, offset: 0 }, healed };
  let el: El | null = doc.body;
  if (h.css_selector) {
    el = select(doc, h.css_selector);
    if (!el) {
      healed.push(heal('selector-missing', `css_selector: ${h.css_selector} was not found in ${index.spine[spine]![1]}; moved to the start of the document`));
      return { pos: { spine, offset: 0 }, healed };
    }
  }
  let off = h.char_offset ?? 0;
  if (off > el.end - el.start) {
    healed.push(heal('offset-past-end', `char_offset: ${off} is past the end of the element's text (${el.end - el.start} characters); moved to its end`));
    off = el.end - el.start;
  }
  return { pos: { spine, offset: el.start + off }, healed };
}

/** The selectors canonicalToRestore writes (`#id`, `body`, `> name:nth-child(k)` chains, `name#id`). */
function select(doc: Doc, selector: string): El | null {
  const parts = selector
    .trim()
    .split(/\s*(?<!\\)>\s*/)
    .filter(Boolean);
  if (parts.length === 0) return null;
  let el: El | null = null;
  for (const [i, part] of parts.entries()) {
    const m = /^([a-zA-Z][\w-]*)?(?:#((?:\\[0-9a-fA-F]{1,6}\s?|\\.|[\w\u00a0-\uffff-])+))?(?::nth-child\((\d{1,6})\))?$/su.exec(part);
    if (!m || (!m[1] && !m[2] && !m[3])) return null;
    const [, name, rawId, nth] = m;
    if (i === 0 && !nth) {
      if (rawId) el = doc.byId.get(cssUnescape(rawId)) ?? null;
      else if (name?.toLowerCase() === 'body') el = doc.body;
      else el = null;
      if (!el || (name && el.name !== name.toLowerCase())) return null;
      continue;
    }
    if (!el || !nth) return null;
    const child: El | undefined = el.children.filter(isEl)[Number(nth) - 1];
    if (!child || (name && child.name !== name.toLowerCase()) || (rawId && child.id !== cssUnescape(rawId))) return null;
    el = child;
  }
  return el;
}

// ---------------------------------------------------------------- percentage

const weightOf = (index: LocatorIndex, i: number) => Math.max(index.docs[i]?.n ?? 0, 1);

/** The share of the book before the position, 0..1. */
export function canonicalToPercentage(index: LocatorIndex, pos: Canonical): number {
  if (index.spine.length === 0) return 0;
  const p = clampPos(index, pos);
  let before = 0;
  let total = 0;
  for (let i = 0; i < index.spine.length; i++) {
    const w = weightOf(index, i);
    if (i < p.spine) before += w;
    total += w;
  }
  const n = index.docs[p.spine]?.n ?? 0;
  const within = n === 0 ? 0 : (p.offset / n) * weightOf(index, p.spine);
  return Math.min(1, (before + within) / total);
}

/** The position a share of the book falls on. */
export function percentageToCanonical(index: LocatorIndex, fraction: number): Canonical {
  if (index.spine.length === 0) return { spine: 0, offset: 0 };
  const f = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
  let total = 0;
  for (let i = 0; i < index.spine.length; i++) total += weightOf(index, i);
  let want = f * total;
  for (let i = 0; i < index.spine.length; i++) {
    const w = weightOf(index, i);
    if (want < w || i === index.spine.length - 1) {
      const n = index.docs[i]?.n ?? 0;
      return { spine: i, offset: Math.min(n, Math.round((Math.min(want, w) / w) * n)) };
    }
    want -= w;
  }
  return endOfBook(index);
}

const items = (n: number) => `${n} item${n === 1 ? '' : 's'}`;

function endOfBook(index: LocatorIndex): Canonical {
  const spine = Math.max(0, index.spine.length - 1);
  return { spine, offset: index.docs[spine]?.n ?? 0 };
}

// ---------------------------------------------------------------- fixed layout (PDF, CBZ, CBR)

/** Page 1 is 0, the last page is 1. */
export const pageToFraction = (page: number, pageCount: number): number => (pageCount <= 1 ? 1 : Math.min(1, Math.max(0, (page - 1) / (pageCount - 1))));

/** The page a fraction of a fixed-layout book falls on (1-based). */
export const fractionToPage = (fraction: number, pageCount: number): number => Math.min(pageCount, Math.max(1, Math.round(fraction * (pageCount - 1)) + 1));
