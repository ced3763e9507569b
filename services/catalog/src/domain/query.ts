// Query-string rules of the item list and search: reading limit, offset, sort, flags and filter
// values, with the messages of contracts' `Catalog.QueryMessages`. Owned by the catalog (what its
// items are searched by) and exported as `@bindery/catalog/query`: the gateway's read models answer
// the list and search from their own tables with these same rules, so both give a request the same
// answer and the same message. No I/O here.
import { Catalog, err, fail, isUuid, Messages, type Failure, type Result } from '@bindery/contracts';
import { cleanText } from './normalize';

export { cleanText };
export type Query = Catalog.Query;
export type SortKey = Catalog.SortKey;

const M = Catalog.QueryMessages;
const invalid = (message: string): Failure => fail('validation', message);
const bad = <T>(message: string): Result<T> => err(invalid(message));

/** pg_trgm similarity a fuzzy filter must reach */
export const SIMILARITY = 0.3;
/** longest search value, per parameter */
export const MAX_SEARCH_VALUE = 200;
export const SEARCH_TEXT_PARAMS = [
  'q',
  'author_filter',
  'series_filter',
  'genre_filter',
  'tags_filter',
  'language_filter',
  'publisher_filter',
  'authors',
  'genres',
  'series',
  'languages',
] as const;
export const YEAR_MESSAGE = M.year;

/** One query-string value: the last one when a parameter is repeated. */
export function q1(query: Query, key: string): string | undefined {
  const v = query[key];
  if (Array.isArray(v)) return v[v.length - 1];
  return v;
}

export function parseLimit(raw: string | undefined, def = 50, max = 1000): Result<number> {
  if (raw === undefined || raw === '') return { ok: true, value: def };
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) return bad(M.limit(max));
  return { ok: true, value: Number(raw) };
}

export function parseOffset(raw: string | undefined): Result<number> {
  if (raw === undefined || raw === '') return { ok: true, value: 0 };
  if (!/^\d+$/.test(raw) || Number(raw) > 10_000_000) return bad(M.offset);
  return { ok: true, value: Number(raw) };
}

export function parseLibraryIdParam(raw: string | undefined): Result<string | undefined> {
  if (raw === undefined || raw === '') return { ok: true, value: undefined };
  if (!isUuid(raw)) return err(fail('validation', Messages.invalidLibraryId));
  return { ok: true, value: raw.toLowerCase() };
}

export function parseBool(raw: string | undefined, key: string): Result<boolean | undefined> {
  if (raw === undefined || raw === '') return { ok: true, value: undefined };
  const v = raw.toLowerCase();
  if (v === 'true' || v === '1' || v === 'yes') return { ok: true, value: true };
  if (v === 'false' || v === '0' || v === 'no') return { ok: true, value: false };
  return bad(M.bool(key));
}

/** Sort orders of the item list: the column each sorts by. */
export const SORTS = {
  title: 'sort_title',
  created_at: 'created_at',
  updated_at: 'updated_at',
  series: 'series',
  year: 'year',
  author: 'author',
} as const satisfies Record<SortKey, string>;

export function parseSort(raw: string | undefined): Result<{ key: SortKey; desc: boolean }> {
  if (raw === undefined || raw === '') return { ok: true, value: { key: 'title', desc: false } };
  const m = /^(-?)([a-z_]+)(?:[:,](asc|desc))?$/.exec(raw.trim().toLowerCase());
  const key = m?.[2] === 'added' ? 'created_at' : m?.[2];
  if (!m || !key || !Object.hasOwn(SORTS, key)) return bad(M.sort);
  return { ok: true, value: { key: key as SortKey, desc: m[1] === '-' || m[3] === 'desc' } };
}

/** A filter value: `"x"` means exactly x; anything else is fuzzy. */
export function filterValue(raw: string): { exact: boolean; value: string } {
  const t = raw.trim();
  if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) return { exact: true, value: cleanText(t.slice(1, -1)) };
  return { exact: false, value: cleanText(t) };
}

/** Checks the lengths of every text parameter of a search. */
export function checkSearchLengths(q: Query): Result<void> {
  for (const k of SEARCH_TEXT_PARAMS) {
    const v = q1(q, k);
    if (v !== undefined && v.length > MAX_SEARCH_VALUE) return bad(M.tooLong(k, MAX_SEARCH_VALUE));
  }
  return { ok: true, value: undefined };
}
