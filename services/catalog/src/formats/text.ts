// Small text rules shared by the readers: cleaning, entities, HTML to text, ISBNs, years, names.

/** Collapses whitespace; empty becomes null. */
export function clean(s: string | null | undefined): string | null {
  if (s == null) return null;
  const t = s
    .replace(/[\u0000-\u0008\u000e-\u001f\u007f]/gu, '')
    .replace(/[\s\u00a0]+/gu, ' ')
    .trim();
  return t === '' ? null : t;
}

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  ndash: '\u2013',
  mdash: '\u2014',
  hellip: '\u2026',
  lsquo: '\u2018',
  rsquo: '\u2019',
  ldquo: '\u201c',
  rdquo: '\u201d',
  laquo: '\u00ab',
  raquo: '\u00bb',
  copy: '\u00a9',
  reg: '\u00ae',
  trade: '\u2122',
  shy: '\u00ad',
  bull: '\u2022',
};

/** XML's five entities, numeric references and a few common HTML ones; anything else is left as written. */
export function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,8});/giu, (whole, ref: string) => {
    if (ref[0] === '#') {
      const cp = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : whole;
    }
    return NAMED[ref] ?? NAMED[ref.toLowerCase()] ?? whole;
  });
}

const HTML_TAGS = new Set(
  (
    'a abbr address article aside b big blockquote body br caption center cite code col colgroup dd del div dl dt em ' +
    'figcaption figure font footer h1 h2 h3 h4 h5 h6 head header hr html i img ins kbd li link meta ol p pre q s ' +
    'section small span strike strong sub sup table tbody td tfoot th thead title tr tt u ul ' +
    // FB2's inline markup, which its annotations use.
    'emphasis empty-line epigraph poem stanza strikethrough subtitle text-author v'
  ).split(' '),
);
const BLOCKS = /^(p|div|li|h[1-6]|blockquote|tr|dd|dt|pre|subtitle|v|stanza|epigraph|text-author)$/u;

/** HTML (as found in descriptions) to plain text: block ends become line breaks, HTML tags go,
 * entities are decoded. Only real HTML tag names are removed, so a plain-text "Rock <Live>" survives. */
export function htmlToText(html: string): string | null {
  const text = decodeEntities(
    html
      .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/giu, ' ')
      .replace(/<!--[\s\S]*?-->/gu, '')
      .replace(/<(\/?)([a-z][a-z0-9-]*)(?![a-z0-9-])[^<>]*>/giu, (tag, close: string, name: string) => {
        const n = name.toLowerCase();
        if (!HTML_TAGS.has(n)) return tag;
        return n === 'br' || n === 'empty-line' || (close && BLOCKS.test(n)) ? '\n' : '';
      }),
  );
  const lines = text.split('\n').map((l) => l.replace(/[ \t\r\f\v\u00a0]+/gu, ' ').trim());
  const joined = lines
    .filter((l, i) => l !== '' || (i > 0 && lines[i - 1] !== ''))
    .join('\n')
    .trim();
  return joined === '' ? null : joined;
}

/** Digits (and a final X) only; null unless 10 or 13 long. The check digit is not verified:
 * real files carry mistyped ISBNs that still identify the book. */
export function normalizeIsbn(s: string | null | undefined): string | null {
  if (!s) return null;
  const v = s
    .replace(/^\s*(urn:)?isbn[:\s]*/iu, '')
    .replace(/[\s-]/gu, '')
    .toUpperCase();
  if (/^\d{13}$/u.test(v) || /^\d{9}[\dX]$/u.test(v)) return v;
  return null;
}

/** The first stand-alone four-digit number from 1000 to 2999 ("1893-07-01", "c. 1901", "2019"). */
export function yearOf(s: string | null | undefined): number | null {
  if (!s) return null;
  const m = /(?<!\d)([12]\d{3})(?!\d)/u.exec(s);
  return m?.[1] ? Number(m[1]) : null;
}

export function numberOf(s: string | null | undefined): number | null {
  const t = clean(s);
  if (t === null || !/^[+-]?(\d+(\.\d*)?|\.\d+)$/u.test(t)) return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

/** "A; B", "John Smith & Jane Doe", "John Smith and Jane Doe" name two people; "Simon & Schuster"
 * does not, so '&' and 'and' split only when every part has at least two words. */
export function splitPersonNames(s: string): string[] {
  const out: string[] = [];
  for (const part of s.split(';')) {
    const p = clean(part);
    if (!p) continue;
    const pieces = p.split(/\s+(?:&|and)\s+/u).map((x) => x.trim());
    if (pieces.length > 1 && pieces.every((x) => x.split(/\s+/u).length >= 2)) out.push(...pieces);
    else out.push(p);
  }
  return out;
}

export function splitList(s: string | null | undefined, separator: RegExp = /[,;]/u): string[] {
  if (!s) return [];
  return s
    .split(separator)
    .map((x) => clean(x))
    .filter((x): x is string => x !== null);
}

export function unique<T>(items: T[], key: (t: T) => string = String): T[] {
  const seen = new Set<string>();
  return items.filter((t) => {
    const k = key(t);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
