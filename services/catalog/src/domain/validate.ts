// Validation of request bodies and query strings, with the messages clients see.
import { err, fail, type Failure, type Result } from '@bindery/contracts';
import { Catalog } from '@bindery/contracts';
import { cleanText, normalizeContributors, normalizeList } from './normalize';

export { isUuid } from '@bindery/contracts';

export const invalid = (message: string): Failure => fail('validation', message);
const bad = <T>(message: string): Result<T> => err(invalid(message));

export const LIMITS = {
  title: 1000,
  name: 200,
  text: 500,
  description: 100_000,
  listEntries: 500,
  listEntry: 200,
  folders: 32,
  folderPath: 4096,
  bulkIds: 1000,
} as const;

/** A library-relative path: forward slashes, no empty, `.` or `..` segment, not absolute, no NUL. */
export function isSafeRelPath(p: string): boolean {
  if (p === '' || p.length > 4096 || p.includes('\0') || p.includes('\\')) return false;
  if (p.startsWith('/') || /^[a-zA-Z]:/.test(p)) return false;
  return p.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}

export interface ItemFields extends Partial<Record<Catalog.TextField, string | null>> {
  title?: string;
  sort_title?: string;
  identifiers?: Record<string, string>;
  contributors?: Catalog.Contributor[];
  tags?: string[];
  series?: string | null;
  series_index?: number | null;
  language?: string | null;
  description?: string | null;
  year?: number | null;
  page_count?: number | null;
  reading_direction?: 'ltr' | 'rtl' | null;
}

function optText(input: Record<string, unknown>, key: string, max: number): Result<string | null | undefined> {
  if (!(key in input)) return { ok: true, value: undefined };
  const v = input[key];
  if (v === null) return { ok: true, value: null };
  if (typeof v !== 'string') return bad(`${key} must be a string`);
  const c = cleanText(v);
  if (c.length > max) return bad(`${key} must be at most ${max} characters`);
  return { ok: true, value: c === '' ? null : c };
}

function stringList(v: unknown, key: string): Result<string[]> {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) return bad(`${key} must be a list of strings`);
  if (v.length > LIMITS.listEntries) return bad(`${key} must have at most ${LIMITS.listEntries} entries`);
  if (v.some((x: string) => x.length > LIMITS.listEntry)) return bad(`each of ${key} must be at most ${LIMITS.listEntry} characters`);
  return { ok: true, value: v as string[] };
}

function contributorList(v: unknown, key: string, role: string): Result<Catalog.Contributor[]> {
  if (!Array.isArray(v)) return bad(`${key} must be a list`);
  if (v.length > LIMITS.listEntries) return bad(`${key} must have at most ${LIMITS.listEntries} entries`);
  const out: Catalog.Contributor[] = [];
  for (const x of v) {
    if (typeof x === 'string') out.push({ name: x, role });
    else if (x && typeof x === 'object' && typeof (x as { name?: unknown }).name === 'string') {
      const r = (x as { role?: unknown }).role;
      if (r !== undefined && typeof r !== 'string') return bad(`${key} roles must be strings`);
      out.push({ name: (x as { name: string }).name, role: typeof r === 'string' && r.trim() ? r : role });
    } else return bad(`${key} must be a list of names or {name, role} objects`);
    if (out[out.length - 1]!.name.length > LIMITS.listEntry) return bad(`each of ${key} must be at most ${LIMITS.listEntry} characters`);
  }
  return { ok: true, value: out };
}

function optInt(input: Record<string, unknown>, key: string, min: number, max: number): Result<number | null | undefined> {
  if (!(key in input)) return { ok: true, value: undefined };
  const v = input[key];
  if (v === null) return { ok: true, value: null };
  const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) return bad(`${key} must be an integer between ${min} and ${max}`);
  return { ok: true, value: n };
}

/** The editable metadata of an item; `requireTitle` for create. Tags and contributors come back normalised. */
/** Identifiers by scheme (isbn, goodreads, amazon, …): lower-case scheme names, short values, at most 50. */
function identifierMap(v: unknown): Result<Record<string, string>> {
  const msg = 'identifiers must be an object of scheme names (a-z, 0-9, _ or -, at most 32) to values (at most 200 characters), at most 50';
  if (v === null) return { ok: true, value: {} };
  if (typeof v !== 'object' || Array.isArray(v)) return bad(msg);
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > 50) return bad(msg);
  const out: Record<string, string> = {};
  for (const [k, x] of entries) {
    const scheme = k.trim().toLowerCase();
    if (!/^[a-z0-9_-]{1,32}$/u.test(scheme) || typeof x !== 'string') return bad(msg);
    const value = cleanText(x);
    if (value.length > 200) return bad(msg);
    if (value !== '') out[scheme] = value;
  }
  return { ok: true, value: out };
}

export function parseItemFields(input: Record<string, unknown>, requireTitle: boolean): Result<ItemFields> {
  const out: ItemFields = {};
  if ('title' in input || requireTitle) {
    const t = input.title;
    if (typeof t !== 'string' || cleanText(t) === '') return bad('title is required');
    if (cleanText(t).length > LIMITS.title) return bad(`title must be at most ${LIMITS.title} characters`);
    out.title = cleanText(t);
  }
  if ('sort_title' in input) {
    const t = input.sort_title;
    if (typeof t !== 'string' || cleanText(t) === '') return bad('sort_title must be a non-empty string');
    if (cleanText(t).length > LIMITS.title) return bad(`sort_title must be at most ${LIMITS.title} characters`);
    out.sort_title = cleanText(t);
  }
  if ('identifiers' in input) {
    const r = identifierMap(input.identifiers);
    if (!r.ok) return r;
    out.identifiers = r.value;
  }
  let contributors: Catalog.Contributor[] | undefined;
  if ('contributors' in input) {
    const r = contributorList(input.contributors, 'contributors', 'author');
    if (!r.ok) return r;
    contributors = r.value;
  }
  if ('authors' in input) {
    const r = contributorList(input.authors, 'authors', 'author');
    if (!r.ok) return r;
    // authors replace the author role only; other roles given as contributors stay
    contributors = [...r.value, ...(contributors ?? []).filter((c) => c.role !== 'author')];
  }
  if (contributors) out.contributors = normalizeContributors(contributors);
  for (const key of ['tags', 'genres'] as const) {
    if (key in input) {
      const r = stringList(input[key], key);
      if (!r.ok) return r;
      out.tags = normalizeList([...(out.tags ?? []), ...r.value]);
    }
  }
  const details = Catalog.TEXT_FIELD_NAMES.map((key) => [key, Catalog.TEXT_FIELDS[key].max] as const);
  for (const [key, max] of [['series', LIMITS.text] as const, ['language', 35] as const, ...details, ['description', LIMITS.description] as const]) {
    const r = optText(input, key, max);
    if (!r.ok) return r;
    if (r.value !== undefined) out[key] = r.value;
  }
  if ('series_index' in input) {
    const v = input.series_index;
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
    if (n !== null && (typeof n !== 'number' || !Number.isFinite(n) || n < -1e6 || n > 1e6)) return bad('series_index must be a number');
    out.series_index = n as number | null;
  }
  const year = optInt(input, 'year', 0, 9999);
  if (!year.ok) return year;
  if (year.value !== undefined) out.year = year.value;
  const pages = optInt(input, 'page_count', 0, 1_000_000);
  if (!pages.ok) return pages;
  if (pages.value !== undefined) out.page_count = pages.value;
  if ('reading_direction' in input) {
    const v = input.reading_direction;
    if (v !== null && v !== 'ltr' && v !== 'rtl') return bad("reading_direction must be 'ltr', 'rtl' or null");
    out.reading_direction = v as 'ltr' | 'rtl' | null;
  }
  return { ok: true, value: out };
}
