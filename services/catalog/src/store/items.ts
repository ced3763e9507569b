// The media item tables read: rows in, public records and event records out (the rows are written only by the catalog's projection, store/projection.ts).
import { sql, type Selectable } from 'kysely';
import { Catalog } from '@bindery/contracts';
import { toIso } from '@bindery/platform';
import { fileUrl } from '../domain/normalize';
import { SCHEMA } from './migrations';
import type { FormatHashesTable, FormatRow, ItemRow, Q } from './schema';

export type { FormatRow, ItemRow };

/** Formats whose files have page lists the gateway streams from. */
export const PAGED_FORMATS: ReadonlySet<string> = new Set(['cbz', 'cbr', 'epub']);
/** A page list longer than this (as JSON) is not kept: it would make every event of its item huge. */
const MAX_PAGE_LIST_CHARS = 256 * 1024;

/** What to store for a file's page list: null when it has none or it is too long to carry. */
export function pageList(pages: string[] | null | undefined): string[] | null {
  if (!pages || pages.length === 0) return null;
  return JSON.stringify(pages).length > MAX_PAGE_LIST_CHARS ? null : pages;
}

/** A page list as the jsonb column takes it. */
export const pagesJson = (pages: string[] | null | undefined): string | null => (pages ? JSON.stringify(pages) : null);

const t = (q: Q) => q.withSchema(SCHEMA);

/** What a command or a scan may change of an item, jsonb columns as values. */
export type ItemChanges = Partial<Omit<ItemRow, 'id' | 'library_id' | 'version' | 'created_at' | 'updated_at'>>;

export async function findItem(q: Q, id: string, opts: { lock?: boolean; includeMissing?: boolean } = {}): Promise<ItemRow | undefined> {
  let s = t(q).selectFrom('media_items').selectAll().where('id', '=', id);
  if (!opts.includeMissing) s = s.where('state', '=', 'active');
  if (opts.lock) s = s.forNoKeyUpdate();
  return await s.executeTakeFirst();
}

export async function formatsOf(q: Q, itemIds: readonly string[]): Promise<FormatRow[]> {
  if (itemIds.length === 0) return [];
  return await t(q).selectFrom('media_formats').selectAll().where('item_id', 'in', itemIds).orderBy('id').execute();
}

async function hashesOf(q: Q, itemIds: readonly string[]): Promise<{ item_id: string; sha256: string }[]> {
  if (itemIds.length === 0) return [];
  return await t(q).selectFrom('format_hashes').select(['item_id', 'sha256']).where('item_id', 'in', itemIds).orderBy('last_seen', 'desc').execute();
}

/** `pages: true` (events only): each format carries its page list, when it has one. */
/** What a public record shows of a file. */
export type FormatFacts = Pick<FormatRow, 'format' | 'rel_path' | 'size' | 'sha256' | 'partial_md5' | 'mtime_ms' | 'present' | 'pages'>;

export function toPublic(r: ItemRow, formats: FormatFacts[], history: string[], opts: { pages?: boolean } = {}): Catalog.MediaItem {
  const present = formats.filter((f) => f.present);
  const primary = present[0] ?? null;
  const current = present.map((f) => f.sha256).filter((h): h is string => h !== null);
  const known = [...new Set([...current, ...history])];
  // a picture a person set is named in the record, and its address changes with it (caches miss)
  const custom = r.cover_key !== null && r.locked_fields.includes('cover') ? r.cover_key : null;
  const version = custom ? `?v=${custom.slice(0, 12)}` : '';
  const cover = r.cover_key ? `/api/media-items/${r.id}/cover${version}` : null;
  return {
    id: r.id,
    library_id: r.library_id,
    file_path: primary?.rel_path ?? r.file_path,
    title: r.title,
    sort_title: r.sort_title,
    authors: r.authors,
    contributors: r.contributors,
    series: r.series,
    series_index: r.series_index === null ? null : Number(r.series_index),
    language: r.language,
    ...Catalog.textDetailsOf(r),
    description: r.description,
    identifiers: r.identifiers,
    tags: r.tags,
    year: r.year,
    page_count: r.page_count,
    reading_direction: r.reading_direction,
    sha256: primary?.sha256 ?? null,
    partial_md5: primary?.partial_md5 ?? null,
    known_sha256: known,
    formats: present.map((f) => ({
      format: f.format,
      file_path: f.rel_path,
      size: Number(f.size),
      sha256: f.sha256,
      partial_md5: f.partial_md5,
      modified_at: new Date(Number(f.mtime_ms)).toISOString(),
      file_url: fileUrl(r.library_id, f.rel_path),
      ...(opts.pages && f.pages ? { pages: f.pages } : {}),
    })),
    file_url: primary ? fileUrl(r.library_id, primary.rel_path) : r.file_path ? fileUrl(r.library_id, r.file_path) : null,
    cover_url: cover,
    thumbnail_url: cover ? `/api/media-items/${r.id}/thumbnail${version}` : null,
    ...(custom ? { cover_key: custom } : {}),
    added_by_admin: r.added_by_admin,
    source: r.source,
    locked_fields: r.locked_fields,
    ...(r.calibre ? { calibre: r.calibre } : {}),
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
  };
}

/** Public records of rows already read, in their order, with formats and hash history attached. */
export async function publicOf(q: Q, rows: ItemRow[], opts: { pages?: boolean } = {}): Promise<Catalog.MediaItem[]> {
  const ids = rows.map((r) => r.id);
  const [formats, hashes] = await Promise.all([formatsOf(q, ids), hashesOf(q, ids)]);
  const fBy = new Map<string, FormatRow[]>();
  for (const f of formats) fBy.set(f.item_id, [...(fBy.get(f.item_id) ?? []), f]);
  const hBy = new Map<string, string[]>();
  for (const h of hashes) hBy.set(h.item_id, [...(hBy.get(h.item_id) ?? []), h.sha256]);
  return rows.map((r) => toPublic(r, fBy.get(r.id) ?? [], hBy.get(r.id) ?? [], opts));
}

export async function snapshot(q: Q, id: string, opts: { pages?: boolean } = {}): Promise<Catalog.MediaItem | null> {
  const row = await findItem(q, id, { includeMissing: true });
  if (!row) return null;
  return (await publicOf(q, [row], opts))[0]!;
}

export type HashRow = Selectable<FormatHashesTable>;

/** What an item's events carry of its rows beyond the public record (see Catalog.ItemRecord). */
export function itemRecord(r: ItemRow, formats: FormatRow[], hashes: HashRow[]): Catalog.ItemRecord {
  return {
    state: r.state,
    file_path: r.file_path,
    group_dir: r.group_dir,
    group_title: r.group_title,
    cover_key: r.cover_key,
    version: r.version,
    missing_since: r.missing_since ? toIso(r.missing_since) : null,
    updated_at: toIso(r.updated_at),
    files: formats.map((f) => ({
      id: Number(f.id),
      file_path: f.rel_path,
      format: f.format,
      size: Number(f.size),
      mtime_ms: Number(f.mtime_ms),
      sha256: f.sha256,
      partial_md5: f.partial_md5,
      present: f.present,
      pages_read: f.pages_read,
      created_at: toIso(f.created_at),
      updated_at: toIso(f.updated_at),
      ...(!f.present && f.pages ? { pages: f.pages } : {}),
    })),
    locked_fields: r.locked_fields,
    file_fields: r.file_fields,
    hashes: hashes.map((h) => ({ sha256: h.sha256, partial_md5: h.partial_md5, format: h.format, first_seen: toIso(h.first_seen), last_seen: toIso(h.last_seen) })),
  };
}

export async function countActive(q: Q, libraryIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (libraryIds.length === 0) return out;
  const rows = await t(q)
    .selectFrom('media_items')
    .select(['library_id', sql<number>`count(*)::int`.as('n')])
    .where('library_id', 'in', libraryIds)
    .where('state', '=', 'active')
    .groupBy('library_id')
    .execute();
  for (const r of rows) out.set(r.library_id, r.n);
  return out;
}
