// How names, tags and titles are cleaned before they are stored or compared.
import type { Catalog } from '@bindery/contracts';

/** Trims, collapses inner whitespace to one space and puts the text in NFC. */
export function cleanText(s: string): string {
  return s
    .normalize('NFC')
    .replace(/[\s\u00a0\u200b]+/g, ' ')
    .trim();
}

/** Cleans each value, drops empty ones, and keeps the first spelling of case-insensitive duplicates. */
export function normalizeList(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const v of values) {
    const c = cleanText(v);
    if (c === '') continue;
    const key = c.toLocaleLowerCase('und');
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(c);
  }
  return out;
}

/** Contributors are unique by name and role, case-insensitively; the role defaults to author. */
export function normalizeContributors(values: readonly Catalog.Contributor[]): Catalog.Contributor[] {
  const seen = new Set<string>();
  const out: Catalog.Contributor[] = [];
  for (const v of values) {
    const name = cleanText(v.name);
    const role = cleanText(v.role || 'author').toLowerCase() || 'author';
    if (name === '') continue;
    const key = `${name.toLocaleLowerCase('und')}\u0000${role}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ name, role });
  }
  return out;
}

export const authorsOf = (cs: readonly Catalog.Contributor[]): string[] => normalizeList(cs.filter((c) => c.role === 'author' || c.role === 'writer').map((c) => c.name));

/** A leading article and the space after it, or an elided one (L’, l'), of any language sorted by article. */
const ANY_ARTICLE = /^(?:(?:the|a|an|der|die|das|le|la|les|el|los|las|il|lo)\s+|l['’]\s*)/i;
/**
 * Each language's leading articles: a book whose language is known drops only its own ("Die Hard"
 * in English keeps its "Die"; "A Coruña" in Spanish its "A"). Keyed by the primary subtag, ISO
 * 639-1 or -2 (calibre writes `eng`, `fra`, `deu`).
 */
const ARTICLES: Record<string, RegExp> = {
  en: /^(?:the|a|an)\s+/i,
  de: /^(?:der|die|das)\s+/i,
  fr: /^(?:(?:le|la|les)\s+|l['’]\s*)/i,
  es: /^(?:el|la|los|las)\s+/i,
  it: /^(?:(?:il|lo|la|i|gli|le)\s+|l['’]\s*)/i,
};
const ISO639_2: Record<string, string> = { eng: 'en', deu: 'de', ger: 'de', fra: 'fr', fre: 'fr', spa: 'es', ita: 'it' };

/** The articles of a language tag (`en-GB`, `fra`), or every language's when it is unknown or absent. */
function articlesOf(language: string | null | undefined): RegExp {
  const primary = (language ?? '').trim().toLowerCase().split(/[-_]/)[0] ?? '';
  return ARTICLES[ISO639_2[primary] ?? primary] ?? ANY_ARTICLE;
}

/** The title as it sorts: its language's leading article dropped (any language's when unknown), case folded, accents kept. */
export function sortTitle(title: string, language?: string | null): string {
  const t = cleanText(title);
  return t.replace(articlesOf(language), '').toLocaleLowerCase('und') || t.toLocaleLowerCase('und');
}

/** A key two files of one book share: letters and digits only, case and accents folded. */
export function groupTitle(title: string): string {
  return cleanText(title)
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLocaleLowerCase('und')
    .replace(/[^\p{L}\p{N}]+/gu, '');
}

/** A readable title from a file name when the file has no metadata. */
export function titleFromFileName(name: string): string {
  const base = name.replace(/\.kepub\.epub$/i, '').replace(/\.[^.]+$/, '');
  return cleanText(base.replace(/_/g, ' ')) || name;
}

export function posixDirname(rel: string): string {
  const i = rel.lastIndexOf('/');
  return i < 0 ? '' : rel.slice(0, i);
}

export function baseName(rel: string): string {
  const i = rel.lastIndexOf('/');
  return i < 0 ? rel : rel.slice(i + 1);
}

/** Percent-encodes each path segment so the URL maps back to exactly this relative path. */
export function fileUrl(libraryId: string, relPath: string): string {
  return `/uploads/library-${libraryId}/${relPath.split('/').map(encodeURIComponent).join('/')}`;
}
