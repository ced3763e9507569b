// calibre's stored values to what the catalog keeps: languages, comments, dates, ratings, identifiers.
import { cleanText } from '../domain/normalize';
import { isSafeRelPath } from '../domain/validate';
import { clean, htmlToText, normalizeIsbn } from '../formats/text';

/** A name or title: control characters dropped, whitespace collapsed, NFC; empty is null. */
export function text(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const c = clean(v);
  return c === null ? null : cleanText(c) || null;
}

/** calibre keeps ISO 639-2/3 codes (`eng`, `fra`, `ger`); the catalog keeps BCP 47 as EPUBs give it
 * (`en`, `fr`, `de`), a three-letter code where no two-letter one exists (`ast`). CLDR's aliases in
 * Intl do the mapping. Null for `und`, `zxx` and what is not a language tag. */
export function language(code: unknown): string | null {
  if (typeof code !== 'string') return null;
  let tag = languages.get(code);
  if (tag === undefined) {
    tag = canonicalLanguage(code.trim());
    if (languages.size < 1000) languages.set(code, tag);
  }
  return tag;
}

/** a library has a handful of codes and a book row each: map each code once */
const languages = new Map<string, string | null>();

function canonicalLanguage(c: string): string | null {
  if (!/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/u.test(c)) return null;
  try {
    const tag = Intl.getCanonicalLocales(c)[0];
    return tag && tag !== 'und' && tag !== 'zxx' ? tag : null;
  } catch {
    return null;
  }
}

/** calibre's comments are HTML; the catalog keeps descriptions as plain text, cleaned as an EPUB's
 * description is (`formats/opf.ts`): tags, scripts, styles and comments go, entities are decoded. */
export function description(html: unknown): string | null {
  return typeof html === 'string' ? htmlToText(html) : null;
}

/** calibre writes `2026-12-02 07:19:22.868064+00:00`; ISO 8601 keeps the microseconds. */
export function timestamp(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/u.exec(v.trim());
  if (!m) return null;
  const zone = !m[4] || m[4] === 'Z' || m[4] === '+00:00' || m[4] === '+0000' ? '+00:00' : m[4];
  return `${m[1]}T${m[2]}${m[3] ?? ''}${zone}`;
}

/** A key that sorts as the instants do, microseconds included (Date keeps only milliseconds). */
export function instantKey(iso: string | null): string {
  if (iso === null) return '';
  const m = /^(.{19})(\.\d+)?(.*)$/u.exec(iso);
  const ms = m ? Date.parse(`${m[1]}${m[3]}`) : Number.NaN;
  if (!m || Number.isNaN(ms)) return '';
  return `${new Date(ms).toISOString().slice(0, 19)}.${(m[2] ?? '.').slice(1).padEnd(9, '0')}`;
}

/** calibre's "no date" is year 101 (UNDEFINED_DATE); anything else gives its year. */
export function yearOf(v: unknown): number | null {
  const m = typeof v === 'string' ? /^(-?\d{1,4})-/u.exec(v.trim()) : null;
  const y = m ? Number(m[1]) : Number.NaN;
  return Number.isInteger(y) && y > 101 && y <= 9999 ? y : null;
}

/** calibre rates 0–10 (two per star, so half stars are odd numbers); 0 is "not rated". */
export function rating(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : Number.NaN;
  if (!Number.isFinite(n) || n <= 0) return null;
  return Math.min(10, Math.round(n));
}

export function seriesIndex(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  return Number.isFinite(n) ? n : null;
}

/** Identifier schemes lower-cased; an ISBN as digits (and X); empty values dropped; first wins.
 * False when an ISBN is none (kept as given, for the migration report to say). */
export function addIdentifier(ids: Record<string, string>, type: unknown, value: unknown): boolean {
  const scheme = text(type)?.toLowerCase();
  let v = text(value);
  if (!scheme || !v || scheme in ids) return true;
  let parsed = true;
  if (scheme === 'isbn') {
    const isbn = normalizeIsbn(v);
    parsed = isbn !== null;
    v = isbn ?? v;
  }
  ids[scheme] = v;
  return parsed;
}

/** A folder or file path calibre gives, only when it stays inside the library: a hostile
 * metadata.db cannot point the catalog at /etc. */
export function libraryPath(...parts: string[]): string | null {
  const p = parts.filter((x) => x !== '').join('/');
  return isSafeRelPath(p) ? p : null;
}
