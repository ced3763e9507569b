// The locator index of one XHTML document built on htmlparser2 (or saxes) instead of the catalog's
// own tokenizer (services/catalog/src/formats/locator-index.ts, `indexDocument`), for `pnpm bench:xhtml`.
// Only the tokenizing changes: `Builder` is the index-building half of `indexDocument` (runs of
// text, CRLF and entities counted as the index counts them, crengine's nodes, the body's step),
// fed by parser events; the production code is not touched. A walker that cannot give the same
// answer as `indexDocument` on a document is a mismatch the bench reports.
import { Parser } from 'htmlparser2';
import { SaxesParser } from 'saxes';
import type * as Locator from '@bindery/locator';
import { CrTree, krEntry, type Piece, runChars } from '../../services/catalog/src/formats/crengine-text';
import { idOf, localName, tagEnd } from '../../services/catalog/src/formats/locator-index';
import { decodeEntities } from '../../services/catalog/src/formats/text';

type DocIndex = Locator.DocIndex;

/** The elements `indexDocument` closes at once, "/" or not. */
export const VOID = new Set('area base br col embed hr img input link meta param source track wbr'.split(' '));

/** What a tokenizer tells the index: text as written, breaks between text nodes, elements. */
export interface Sink {
  text(raw: string, literal: boolean): void;
  cut(): void;
  open(name: string, id: string | undefined, selfClosing: boolean): void;
  close(): void;
  /** true once nothing more is wanted (the body has closed) */
  readonly done: boolean;
}

/** Tokens only: the tokenizer's own cost, nothing built. */
export const NULL_SINK: Sink = { text() {}, cut() {}, open() {}, close() {}, done: false };

/** Index building from tokenizer events, as `indexDocument` does it between its tokens. */
export class Builder implements Sink {
  private t: number[] = [];
  private ids: (number | string)[] = [];
  private sp: number[][] = [];
  private cr = new CrTree();
  private wsRuns: boolean[] = [];
  private runLen: number[] = [];
  /** open elements (ones the index closes at once are not counted) */
  private depth = 0;
  private kids: number[] = [0];
  private bodyStep = 0;
  private inBody = false;
  private bodyDepth = 0;
  private ord = 0;
  private runs = 0;
  private n = 0;
  private pending: Piece[] = [];
  private broken = true;
  /** the body has closed: nothing after it counts */
  done = false;
  result: DocIndex | null = null;

  constructor(
    private names: string[],
    private nameIds: Map<string, number>,
    private texts?: string[],
  ) {}

  /** Text as written (entities not decoded); `literal` for CDATA. */
  text(raw: string, literal: boolean): void {
    if (this.done || raw === '') return;
    const last = this.pending[this.pending.length - 1];
    if (last && !this.broken && last.literal === literal) last.raw += raw;
    else this.pending.push({ raw, literal });
    this.broken = literal;
  }

  /** A comment, CDATA edge or processing instruction: crengine starts a new text node. */
  cut(): void {
    this.broken = true;
  }

  /** `name` local and lower-cased; `id` decoded. */
  open(name: string, id: string | undefined, selfClosing: boolean): void {
    if (this.done) return;
    this.flush();
    const kids = this.kids;
    const parentKids = kids.length - 1;
    kids[parentKids] = (kids[parentKids] ?? 0) + 1;
    if (!this.inBody && name === 'body' && this.bodyStep === 0) {
      this.bodyStep = kids[parentKids]! * 2;
      this.inBody = true;
      this.cr.open('body');
      if (id !== undefined) this.ids.push(0, id);
      if (selfClosing) {
        this.finish();
        return;
      }
      this.depth++;
      kids.push(0);
      this.bodyDepth = this.depth;
      return;
    }
    if (this.inBody) {
      this.ord++;
      this.t.push(this.nameId(name));
      this.cr.open(name);
      if (id !== undefined) this.ids.push(this.ord, id);
      if (selfClosing) {
        this.t.push(-1);
        this.cr.close();
        return;
      }
    }
    if (!selfClosing) {
      this.depth++;
      kids.push(0);
    }
  }

  /** The innermost open element ends. */
  close(): void {
    if (this.done) return;
    this.flush();
    this.depth--;
    this.kids.pop();
    if (this.inBody) {
      if (this.depth < this.bodyDepth) {
        this.inBody = false;
        this.finish();
        return;
      }
      this.t.push(-1);
      this.cr.close();
    }
  }

  /** The end of the source; elements still open were closed by `close` (parsers do that at the end). */
  end(): DocIndex | null {
    if (!this.done) {
      this.flush();
      this.finish();
    }
    return this.result;
  }

  private nameId(name: string): number {
    let k = this.nameIds.get(name);
    if (k === undefined) {
      k = this.names.length;
      this.names.push(name);
      this.nameIds.set(name, k);
    }
    return k;
  }

  private flush(): void {
    const pieces = this.pending;
    this.pending = [];
    this.broken = true;
    if (!this.inBody || pieces.length === 0) return;
    const chars = runChars(pieces, decodeEntities);
    const text = chars.map((c) => c.ch).join('');
    const len = text.length;
    if (len === 0) return;
    this.texts?.push(text);
    const ws = /^[ \t\n]*$/.test(text);
    const runs = this.runs;
    this.cr.text(runs, chars, pieces);
    this.wsRuns[runs] = ws;
    this.t.push(-2 - (len * 2 + (ws ? 1 : 0)));
    const pairs: number[] = [];
    for (let i = 0; i < len; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
        pairs.push(i);
        i++;
      }
    }
    if (pairs.length) this.sp.push([runs, ...pairs]);
    this.runLen[runs] = len;
    this.runs++;
    this.n += len;
  }

  private finish(): void {
    this.done = true;
    if (this.bodyStep === 0) return;
    this.cr.finish();
    const kr: number[][] = [];
    for (let r = 0; r < this.runs; r++) {
      const e = krEntry(r, this.runLen[r]!, this.wsRuns[r]!, this.cr.nodes[r] ?? []);
      if (e) kr.push(e);
    }
    const d: DocIndex = { b: this.bodyStep, n: this.n, t: this.t };
    if (this.ids.length) d.ids = this.ids;
    if (this.sp.length) d.sp = this.sp;
    if (kr.length) d.kr = kr;
    this.result = d;
  }
}

/**
 * `indexDocument` on htmlparser2: XML mode (no HTML tree-building rules; CDATA and "/>" as XML
 * has them), entities left as written so the index decodes and counts them itself, tag names
 * lower-cased. The index's void elements close at once; their closing events are ignored.
 */
export function indexDocumentHtmlparser2(src: string, names: string[], nameIds: Map<string, number>, texts?: string[]): DocIndex | null {
  const b = new Builder(names, nameIds, texts);
  tokensHtmlparser2(src, b);
  return b.end();
}

/** `indexDocument`'s tokenizer (the loop of locator-index.ts as it stands) feeding a sink: with
 * `Builder` it must give exactly `indexDocument`'s answer (the bench checks), with `NULL_SINK` it
 * times the tokenizing alone. */
export function indexDocumentOwnTokens(src: string, names: string[], nameIds: Map<string, number>, texts?: string[]): DocIndex | null {
  const b = new Builder(names, nameIds, texts);
  tokensBindery(src, b);
  return b.end();
}

const NAME = /^[A-Za-z_][\w.:-]*/;

export function tokensBindery(src: string, sink: Sink): void {
  const stack: string[] = [];
  let i = 0;
  const L = src.length;
  while (i < L && !sink.done) {
    const lt = src.indexOf('<', i);
    if (lt < 0) {
      sink.text(src.slice(i), false);
      break;
    }
    if (lt > i) sink.text(src.slice(i, lt), false);
    if (src.startsWith('<!--', lt)) {
      const end = src.indexOf('-->', lt + 4);
      i = end < 0 ? L : end + 3;
      sink.cut();
      continue;
    }
    if (src.startsWith('<![CDATA[', lt)) {
      const end = src.indexOf(']]>', lt + 9);
      sink.cut();
      sink.text(src.slice(lt + 9, end < 0 ? L : end), true);
      i = end < 0 ? L : end + 3;
      sink.cut();
      continue;
    }
    if (src.startsWith('<?', lt)) {
      const end = src.indexOf('?>', lt + 2);
      i = end < 0 ? L : end + 2;
      sink.cut();
      continue;
    }
    if (src.startsWith('<!', lt)) {
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
    if (gt < 0) break;
    const inner = src.slice(lt + 1, gt);
    i = gt + 1;
    if (inner.startsWith('/')) {
      const m = NAME.exec(inner.slice(1).trim());
      if (!m) continue;
      const at = stack.lastIndexOf(localName(m[0]));
      if (at < 0) continue;
      while (stack.length > at && !sink.done) {
        stack.pop();
        sink.close();
      }
      continue;
    }
    const m = NAME.exec(inner);
    if (!m) {
      sink.text(`<${inner}>`, true);
      continue;
    }
    const name = localName(m[0]);
    const selfClosing = inner.endsWith('/') || VOID.has(name);
    sink.open(name, idOf(inner.slice(m[0].length)), selfClosing);
    if (!selfClosing) stack.push(name);
  }
  // the end of the source closes what is open
  while (stack.length && !sink.done) {
    stack.pop();
    sink.close();
  }
}

/** htmlparser2's events fed to a sink (see `indexDocumentHtmlparser2`). */
export function tokensHtmlparser2(src: string, b: Sink): void {
  /** per element open in the parser: whether the index counts it open too */
  const open: boolean[] = [];
  let cdata = false;
  let id: string | undefined;
  let idSeen = false;
  const parser = new Parser(
    {
      onopentagname() {
        id = undefined;
        idSeen = false;
      },
      onattribute(name, value, quote) {
        // the first id (or xml:id) written with quotes, as `indexDocument` reads it
        if (idSeen || (name !== 'id' && name !== 'xml:id') || (quote !== '"' && quote !== "'")) return;
        idSeen = true;
        id = value ? decodeEntities(value) : undefined;
      },
      onopentag(qname) {
        const name = localName(qname);
        const isVoid = VOID.has(name);
        open.push(!isVoid);
        b.open(name, id, isVoid);
        if (b.done) parser.pause();
      },
      onclosetag() {
        if (open.pop()) b.close();
        if (b.done) parser.pause();
      },
      ontext(data) {
        b.text(data, cdata);
      },
      oncdatastart() {
        b.cut();
        cdata = true;
      },
      oncdataend() {
        cdata = false;
        b.cut();
      },
      oncomment() {
        b.cut();
      },
      onprocessinginstruction(name) {
        if (name.startsWith('?')) b.cut(); // a DOCTYPE ("!") does not end a run in the index
      },
    },
    { xmlMode: true, decodeEntities: false, lowerCaseTags: true },
  );
  parser.write(src);
  if (!b.done) parser.end();
}

/**
 * `indexDocument` on saxes, a strict XML parser, for comparison: its errors (HTML entities, void
 * tags without "/", stray "<") are passed over and it carries on as it can. It decodes entities
 * itself; named ones are handed back as written (so the index decodes them as it does), numeric
 * ones arrive decoded, and CRLF arrives as LF.
 */
export function indexDocumentSaxes(src: string, names: string[], nameIds: Map<string, number>, texts?: string[]): DocIndex | null {
  const b = new Builder(names, nameIds, texts);
  tokensSaxes(src, b);
  return b.end();
}

const AS_WRITTEN = new Proxy({} as Record<string, string>, { get: (_, name) => `&${String(name)};` });

export function tokensSaxes(src: string, b: Sink): void {
  const parser = new SaxesParser({ xmlns: false });
  (parser as unknown as { ENTITIES: Record<string, string> }).ENTITIES = AS_WRITTEN;
  const open: boolean[] = [];
  parser.on('error', () => {});
  parser.on('text', (t) => b.text(t, false));
  parser.on('cdata', (t) => {
    b.cut();
    b.text(t, true);
    b.cut();
  });
  parser.on('comment', () => b.cut());
  parser.on('processinginstruction', () => b.cut());
  parser.on('opentag', (tag) => {
    const name = localName(tag.name);
    const isVoid = VOID.has(name);
    open.push(!isVoid);
    const attrs = tag.attributes as Record<string, string>;
    const raw = attrs.id ?? attrs['xml:id'];
    b.open(name, raw ? decodeEntities(raw) : undefined, isVoid);
  });
  parser.on('closetag', () => {
    if (open.pop()) b.close();
  });
  parser.write(src);
  parser.close();
  while (open.length && !b.done) if (open.pop()) b.close();
}
