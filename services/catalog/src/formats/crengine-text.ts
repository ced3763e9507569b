// The text nodes KOReader's engine (crengine) makes of an XHTML body, so XPointers can be written in
// its numbering. Facts followed (crengine's parser and DOM, as published):
// - text between two pieces of markup is one node; a comment, CDATA section or processing
//   instruction ends it, and a run longer than 8,192 characters is cut after its last space;
// - outside <pre> (and its kin) every tab, CR and LF becomes a space and a run of spaces written as
//   such collapses to its first (a space from an entity does not collapse); the newline right after
//   <pre> or <textarea> is dropped;
// - white space alone as the first child of a block is never stored, nor text in elements that take
//   none (table rows, images, svg outside its text elements…);
// - when a block holds both blocks and inline content, white-space-only nodes are removed unless
//   both their neighbours are inline; an inline element holding blocks loses the white space next to
//   them when it has other inline content.
// Display is crengine's default per element name (style sheets are not read).

const BLOCK = new Set(
  (
    'html head body hr form pre blockquote div h1 h2 h3 h4 h5 h6 p output section ol ul li dl dt dd address article aside ' +
    'canvas fieldset figcaption figure footer header hgroup legend main nav noscript video center dir menu multicol noframes ' +
    'search listing textarea plaintext xmp details dialog summary frame frameset iframe noembed template select button ' +
    'marquee applet optgroup datalist map area track input keygen param audio source title caption th td table thead ' +
    'tbody tfoot tr colgroup col'
  ).split(' '),
);
const NONE = new Set('style script base basefont bgsound meta link'.split(' '));
const NO_TEXT = new Set(
  'html head applet area track input keygen param audio source table colgroup col thead tbody tfoot tr svg object embed img image base basefont bgsound meta link'.split(' '),
);
const PRE = new Set('pre listing textarea plaintext xmp'.split(' '));
const STRIP_NEWLINE = new Set(['pre', 'textarea']);
const SVG_TEXT = new Set('style text tspan textpath title desc metadata'.split(' '));
const SPLIT = 8192;

type Display = 'block' | 'inline' | 'none';

export interface CrNode {
  /** UTF-16 offsets into the run */
  start: number;
  end: number;
  /** [from, to) pairs left out of crengine's text */
  cuts: number[];
  kept: boolean;
}

type Kid = { el: true; display: Display } | { el: false; ws: boolean; node: CrNode };

interface Frame {
  name: string;
  display: Display;
  kids: Kid[];
  pre: boolean;
  noText: boolean;
  svg: boolean;
  stripNl: boolean;
}

/** One piece of text as the source writes it: crengine reads each as its own node (or several). */
export interface Piece {
  raw: string;
  /** CDATA (or broken markup read as text): no entities */
  literal: boolean;
}

/** A character of a run as the offsets count it, with where it came from. */
export interface RunChar {
  ch: string;
  /** a tab, CR, LF or space written as such (an entity's is not) */
  lit: boolean;
  piece: number;
  /** code points of its piece's source before it (for crengine's 8,192-character cut) */
  raw: number;
}

const ENTITY = /&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,8});/iy;

/** The characters of a run of pieces, decoded, CRLF as one (what the locator's offsets count). */
export function runChars(pieces: Piece[], decode: (s: string) => string): RunChar[] {
  const out: RunChar[] = [];
  pieces.forEach((p, piece) => {
    let raw = 0;
    for (let i = 0; i < p.raw.length; ) {
      if (!p.literal && p.raw[i] === '&') {
        ENTITY.lastIndex = i;
        const m = ENTITY.exec(p.raw);
        if (m) {
          for (const ch of decode(m[0])) for (const u of unitsOf(ch)) out.push({ ch: u, lit: false, piece, raw });
          raw += m[0].length;
          i += m[0].length;
          continue;
        }
      }
      const cp = p.raw.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      const lit = ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
      for (const u of unitsOf(ch)) out.push({ ch: u, lit, piece, raw });
      raw += 1;
      i += ch.length;
    }
  });
  // XML line ends: CRLF is one LF, a lone CR is LF
  const norm: RunChar[] = [];
  for (let i = 0; i < out.length; i++) {
    const c = out[i]!;
    if (c.ch === '\r') {
      if (out[i + 1]?.ch === '\n') continue;
      norm.push({ ...c, ch: '\n' });
    } else norm.push(c);
  }
  return norm;
}

const unitsOf = (s: string): string[] => (s.length === 1 ? [s] : s.split(''));

/** Where crengine cuts a long piece: code-point indexes of its source where a new node starts. */
function splitsOf(raw: string): number[] {
  if (raw.length < SPLIT) return [];
  const cps = Array.from(raw);
  const out: number[] = [];
  let s = 0;
  while (cps.length - s >= SPLIT) {
    let at = s + SPLIT;
    for (let j = s + SPLIT - 1; j >= s; j--) {
      const ch = cps[j];
      const next = j + 1 < s + SPLIT ? cps[j + 1] : undefined;
      if (ch === ' ' || (ch === '\r' && next !== '\n') || (ch === '\n' && next !== '\r')) {
        at = j + 1;
        break;
      }
    }
    out.push(at);
    s = at;
  }
  return out;
}

/** Follows crengine's tree while the tokenizer walks the body; `nodes` collects each run's nodes. */
export class CrTree {
  private frames: Frame[] = [];
  /** per run ordinal, its nodes (kept or not) */
  readonly nodes: CrNode[][] = [];

  open(name: string): void {
    const parent = this.frames[this.frames.length - 1];
    const svg = Boolean(parent?.svg) || name === 'svg';
    const display: Display = NONE.has(name) ? 'none' : BLOCK.has(name) ? 'block' : 'inline';
    const textInSvg = svg && SVG_TEXT.has(name);
    const frame: Frame = {
      name,
      display,
      kids: [],
      pre: Boolean(parent?.pre) || PRE.has(name) || textInSvg,
      noText: svg ? !textInSvg : NO_TEXT.has(name),
      svg,
      stripNl: STRIP_NEWLINE.has(name),
    };
    if (parent) {
      parent.kids.push({ el: true, display });
      parent.stripNl = false;
    }
    this.frames.push(frame);
  }

  close(): void {
    const f = this.frames.pop();
    if (f) settle(f);
  }

  /** A run of text in the innermost open element: its characters, `ord` its ordinal among runs. */
  text(ord: number, chars: RunChar[], pieces: Piece[]): void {
    const list: CrNode[] = [];
    this.nodes[ord] = list;
    const f = this.frames[this.frames.length - 1];
    if (!f || chars.length === 0) return;
    const splits = pieces.map((p) => splitsOf(p.raw));
    let gs = 0;
    while (gs < chars.length) {
      const first = chars[gs]!;
      const chunk = chunkOf(splits[first.piece]!, first.raw);
      let ge = gs + 1;
      while (ge < chars.length && chars[ge]!.piece === first.piece && chunkOf(splits[first.piece]!, chars[ge]!.raw) === chunk) ge++;
      const node = this.node(f, chars, gs, ge);
      if (node) list.push(node);
      gs = ge;
    }
  }

  private node(f: Frame, chars: RunChar[], gs: number, ge: number): CrNode | null {
    if (f.noText) return null;
    const cuts: number[] = [];
    let ws = true;
    for (let i = gs; i < ge; i++) if (!' \t\n\r'.includes(chars[i]!.ch)) ws = false;
    if (f.pre) {
      if (f.stripNl && chars[gs]!.ch === '\n') cuts.push(gs, gs + 1);
    } else {
      if (ws && f.display === 'block' && f.kids.length === 0) return null;
      let spaces = 0;
      for (let i = gs; i < ge; i++) {
        const c = chars[i]!;
        if (c.lit) {
          if (spaces > 0) {
            if (cuts.length && cuts[cuts.length - 1] === i) cuts[cuts.length - 1] = i + 1;
            else cuts.push(i, i + 1);
          }
          spaces++;
        } else spaces = 0;
      }
    }
    const node: CrNode = { start: gs, end: ge, cuts, kept: true };
    f.kids.push({ el: false, ws, node });
    f.stripNl = false;
    return node;
  }

  /** Closes what is still open (a body that ends the file). */
  finish(): void {
    while (this.frames.length) this.close();
  }
}

const chunkOf = (splits: number[], raw: number): number => {
  let k = 0;
  while (k < splits.length && splits[k]! <= raw) k++;
  return k;
};

const inline = (k: Kid | undefined): boolean => Boolean(k && (!k.el || k.display === 'inline'));
const wsText = (k: Kid | undefined): k is { el: false; ws: boolean; node: CrNode } => Boolean(k && !k.el && k.ws);

/** What crengine removes when it lays an element out (its children all known). */
function settle(f: Frame): void {
  if (f.pre || f.noText) return;
  const kids = f.kids;
  const hasBlock = kids.some((k) => k.el && k.display === 'block');
  if (!hasBlock) return;
  if (f.display === 'block') {
    if (!kids.some(inline)) return;
    for (let i = 0; i < kids.length; ) {
      if (!wsText(kids[i])) {
        i++;
        continue;
      }
      let j = i;
      while (wsText(kids[j + 1])) j++;
      if (!(inline(kids[i - 1]) && inline(kids[j + 1]))) for (let k = i; k <= j; k++) (kids[k] as { node: CrNode }).node.kept = false;
      i = j + 1;
    }
  } else if (f.display === 'inline') {
    if (!kids.some((k) => (k.el && k.display === 'inline') || (!k.el && !k.ws))) return;
    kids.forEach((k, i) => {
      if (!k.el || k.display !== 'block') return;
      for (const n of [kids[i - 1], kids[i + 1]]) if (wsText(n)) n.node.kept = false;
    });
  }
}

/**
 * The index's `kr` entry of one run (`[ordinal, …kept nodes]`), or null when crengine keeps it as the
 * default says: one node as written, unless it is white space only.
 */
export function krEntry(ord: number, len: number, ws: boolean, nodes: CrNode[]): number[] | null {
  const kept = nodes.filter((n) => n.kept && n.end >= n.start);
  if (ws && kept.length === 0) return null;
  if (!ws && kept.length === 1 && kept[0]!.start === 0 && kept[0]!.end === len && kept[0]!.cuts.length === 0) return null;
  const out = [ord];
  for (const n of kept) out.push(n.start, n.end, n.cuts.length / 2, ...n.cuts);
  return out;
}
