// The locator index of an EPUB (locator/src/locator.ts says what it holds): the spine in
// order with hrefs and linear flags, and per content document the shape of its body — elements,
// their ids, and runs of text with their UTF-16 lengths — which is all the reading service needs to
// map EPUB CFIs, KOReader XPointers, restore handles and percentages onto one another. The XHTML is
// scanned with a small tokenizer rather than a DOM: only tags, ids and text lengths matter here.
import { CrTree, krEntry, type Piece, runChars } from './crengine-text';
import { decodeEntities } from './text';
import { attr, child, decodeXml, elements, type XmlElement } from './xml';
import type { ZipArchive } from './zip';
import { dirOf, resolveHref } from './zip-path';
import type * as Locator from '@bindery/locator';

type LocatorIndex = Locator.LocatorIndex;
type DocIndex = Locator.DocIndex;

/** a content document larger than this is left out of the index (its positions keep their percentage) */
const MAX_DOC_BYTES = 16 * 1024 * 1024;
const VOID = new Set('area base br col embed hr img input link meta param source track wbr'.split(' '));

/**
 * Builds the index from the package document; unreadable documents are null, never a failed book.
 * `texts`, when given, receives each spine item's body text (the characters the offsets count).
 */
export async function buildLocatorIndex(zip: ZipArchive, pkg: XmlElement, opfPath: string, texts?: string[]): Promise<LocatorIndex> {
  const base = dirOf(opfPath);
  const manifest = new Map<string, string>();
  for (const item of elements(child(pkg, 'manifest'), 'item')) {
    const id = attr(item, 'id')?.trim();
    const href = attr(item, 'href');
    if (id && href) manifest.set(id, href.trim());
  }
  const names: string[] = [];
  const nameIds = new Map<string, number>();
  const spine: LocatorIndex['spine'] = [];
  const docs: (DocIndex | null)[] = [];
  const seen = new Map<string, { doc: DocIndex | null; text: string }>();
  for (const ref of elements(child(pkg, 'spine'), 'itemref')) {
    const idref = attr(ref, 'idref')?.trim() ?? '';
    const href = manifest.get(idref);
    if (!href) continue; // an itemref to nothing is no spine item any reader shows
    spine.push([idref, href, attr(ref, 'linear')?.trim().toLowerCase() === 'no' ? 0 : 1]);
    const path = resolveHref(base, href.split('#')[0]!) ?? href;
    if (!seen.has(path)) {
      let doc: DocIndex | null = null;
      const parts: string[] | undefined = texts ? [] : undefined;
      try {
        const entry = zip.find(path);
        if (entry) doc = indexDocument(decodeXml(await zip.read(entry, MAX_DOC_BYTES)), names, nameIds, parts);
      } catch {
        doc = null;
      }
      seen.set(path, { doc, text: doc && parts ? parts.join('') : '' });
    }
    docs.push(seen.get(path)!.doc);
    texts?.push(seen.get(path)!.text);
  }
  return { v: 2, names, spine, docs };
}

const NAME = /^[A-Za-z_][\w.:-]*/;
/** one attribute: its name, then a quoted value (or none: an HTML-style bare attribute) */
const ATTR = /([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?/g;

/**
 * One XHTML document's body. CRLF counts as one character (XML line-end handling), entities count
 * as what they decode to, comments and processing instructions do not split a run of text (they do
 * split crengine's text nodes, which `kr` records).
 */
export function indexDocument(src: string, names: string[], nameIds: Map<string, number>, texts?: string[]): DocIndex | null {
  const t: number[] = [];
  const ids: (number | string)[] = [];
  const sp: number[][] = [];
  const kr: number[][] = [];
  const cr = new CrTree();
  const wsRuns: boolean[] = [];
  const runLen: number[] = [];
  const stack: string[] = [];
  /** element children seen so far, per open element (to find the body's step) */
  const kids: number[] = [0];
  let bodyStep = 0;
  let inBody = false;
  let bodyDepth = 0;
  let ord = 0;
  let runs = 0;
  let n = 0;
  /** the text since the last tag, as the pieces crengine reads one by one (a comment between two) */
  let pending: Piece[] = [];
  let broken = true;
  const add = (raw: string, literal: boolean) => {
    if (raw === '') return;
    const last = pending[pending.length - 1];
    if (last && !broken && last.literal === literal) last.raw += raw;
    else pending.push({ raw, literal });
    broken = literal;
  };
  const cut = () => {
    broken = true;
  };
  const flush = () => {
    const pieces = pending;
    pending = [];
    broken = true;
    if (!inBody || pieces.length === 0) return;
    const chars = runChars(pieces, decodeEntities);
    const text = chars.map((c) => c.ch).join('');
    const len = text.length;
    if (len === 0) return;
    texts?.push(text);
    const ws = /^[ \t\n]*$/.test(text);
    cr.text(runs, chars, pieces);
    wsRuns[runs] = ws;
    t.push(-2 - (len * 2 + (ws ? 1 : 0)));
    const pairs: number[] = [];
    for (let i = 0; i < len; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
        pairs.push(i);
        i++;
      }
    }
    if (pairs.length) sp.push([runs, ...pairs]);
    runLen[runs] = len;
    runs++;
    n += len;
  };
  const nameId = (name: string) => {
    let k = nameIds.get(name);
    if (k === undefined) {
      k = names.length;
      names.push(name);
      nameIds.set(name, k);
    }
    return k;
  };
  let i = 0;
  const L = src.length;
  while (i < L) {
    const lt = src.indexOf('<', i);
    if (lt < 0) {
      add(src.slice(i), false);
      break;
    }
    if (lt > i) add(src.slice(i, lt), false);
    if (src.startsWith('<!--', lt)) {
      const end = src.indexOf('-->', lt + 4);
      i = end < 0 ? L : end + 3;
      cut();
      continue;
    }
    if (src.startsWith('<![CDATA[', lt)) {
      const end = src.indexOf(']]>', lt + 9);
      cut();
      add(src.slice(lt + 9, end < 0 ? L : end), true);
      i = end < 0 ? L : end + 3;
      cut();
      continue;
    }
    if (src.startsWith('<?', lt)) {
      const end = src.indexOf('?>', lt + 2);
      i = end < 0 ? L : end + 2;
      cut();
      continue;
    }
    if (src.startsWith('<!', lt)) {
      // a DOCTYPE, perhaps with an internal subset in brackets
      let j = lt + 2;
      let depth = 0;
      for (; j < L; j++) {
        const c = src[j];
        if (c === '[') depth++;
        else if (c === ']') depth--;
        else if (c === '>' && depth <= 0) break;
      }
      i = j + 1;
      continue;
    }
    const gt = tagEnd(src, lt + 1);
    if (gt < 0) {
      // a broken tag at the end: the rest is not markup we can read
      break;
    }
    const inner = src.slice(lt + 1, gt);
    i = gt + 1;
    if (inner.startsWith('/')) {
      const m = NAME.exec(inner.slice(1).trim());
      if (!m) continue;
      const name = localName(m[0]);
      const at = stack.lastIndexOf(name);
      if (at < 0) continue;
      flush();
      while (stack.length > at) {
        stack.pop();
        kids.pop();
        if (inBody) {
          if (stack.length < bodyDepth) {
            inBody = false;
            return done();
          }
          t.push(-1);
          cr.close();
        }
      }
      continue;
    }
    const m = NAME.exec(inner);
    if (!m) {
      add(`<${inner}>`, true); // a stray "<" in text (broken markup): it is text to a reader too
      continue;
    }
    flush();
    const name = localName(m[0]);
    const selfClosing = inner.endsWith('/') || VOID.has(name);
    const parentKids = kids.length - 1;
    kids[parentKids] = (kids[parentKids] ?? 0) + 1;
    if (!inBody && name === 'body' && bodyStep === 0) {
      bodyStep = kids[parentKids]! * 2;
      inBody = true;
      cr.open('body');
      const id = idOf(inner.slice(m[0].length));
      if (id !== undefined) ids.push(0, id);
      if (selfClosing) return done();
      stack.push(name);
      kids.push(0);
      bodyDepth = stack.length;
      continue;
    }
    if (inBody) {
      ord++;
      t.push(nameId(name));
      cr.open(name);
      const id = idOf(inner.slice(m[0].length));
      if (id !== undefined) ids.push(ord, id);
      if (selfClosing) {
        t.push(-1);
        cr.close();
        continue;
      }
    }
    if (!selfClosing) {
      stack.push(name);
      kids.push(0);
    }
  }
  flush();
  // an unclosed body (a truncated file): close what is open
  while (inBody && stack.length > bodyDepth) {
    stack.pop();
    t.push(-1);
  }
  return done();

  function done(): DocIndex | null {
    if (bodyStep === 0) return null;
    cr.finish();
    for (let r = 0; r < runs; r++) {
      const e = krEntry(r, runLen[r]!, wsRuns[r]!, cr.nodes[r] ?? []);
      if (e) kr.push(e);
    }
    const d: DocIndex = { b: bodyStep, n, t };
    if (ids.length) d.ids = ids;
    if (sp.length) d.sp = sp;
    if (kr.length) d.kr = kr;
    return d;
  }
}

/** A tag's id (its attributes after the name), decoded; undefined when it has none or an empty one. */
/** The `id` (or `xml:id`) attribute's value, read attribute by attribute so text inside another attribute's value is never taken for it. */
export function idOf(attrs: string): string | undefined {
  for (const m of attrs.matchAll(ATTR)) {
    const name = m[1]!;
    if (name !== 'id' && name !== 'xml:id') continue;
    const raw = m[2] ?? m[3];
    return raw ? decodeEntities(raw) : undefined;
  }
  return undefined;
}

export const localName = (qname: string) => qname.toLowerCase().replace(/^.*:/, '');

/** The `>` that ends a tag, skipping quoted attribute values. */
export function tagEnd(src: string, from: number): number {
  let q = '';
  for (let j = from; j < src.length; j++) {
    const c = src[j];
    if (q) {
      if (c === q) q = '';
    } else if (c === '"' || c === "'") q = c;
    else if (c === '>') return j;
  }
  return -1;
}
