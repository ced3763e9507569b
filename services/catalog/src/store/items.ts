// The media item tables: rows in, public records out.
import { sql, type Selectable, type Updateable } from 'kysely';
import type { Catalog } from '@bindery/contracts';
import { toIso } from '@bindery/platform';
import { fileUrl } from '../domain/normalize';
import { SCHEMA } from './migrations';
import type { FormatHashesTable, FormatRow, ItemRow, MediaItemsTable, NewItemRow, Q } from './schema';

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

/** The changes as columns: the jsonb ones as JSON text. */
export function itemColumns(r: ItemChanges): Updateable<MediaItemsTable> {
  const { contributors, authors, identifiers, tags, ...rest } = r;
  return {
    ...rest,
    ...(contributors !== undefined ? { contributors: JSON.stringify(contributors) } : {}),
    ...(authors !== undefined ? { authors: JSON.stringify(authors) } : {}),
    ...(identifiers !== undefined ? { identifiers: JSON.stringify(identifiers) } : {}),
    ...(tags !== undefined ? { tags: JSON.stringify(tags) } : {}),
  };
}

/** A new item's row as the table takes it. */
export type NewItem = Omit<ItemRow, 'version' | 'created_at' | 'updated_at' | 'state' | 'cover_ready' | 'missing_since'> &
  Partial<Pick<ItemRow, 'created_at' | 'updated_at' | 'cover_ready'>>;

export const newItemColumns = (r: NewItem): NewItemRow => ({
  ...r,
  contributors: JSON.stringify(r.contributors),
  authors: JSON.stringify(r.authors),
  identifiers: JSON.stringify(r.identifiers),
  tags: JSON.stringify(r.tags),
});

export async function findItem(q: Q, id: string, opts: { lock?: boolean; includeMissing?: boolean } = {}): Promise<ItemRow | undefined> {
  let s = t(q).selectFrom('media_items').selectAll().where('id', '=', id);
  if (!opts.includeMissing) s = s.where('state', '=', 'active');
  if (opts.lock) s = s.forUpdate();
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
  const cover = r.cover_key ? `/api/media-items/${r.id}/cover` : null;
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
    publisher: r.publisher,
    description: r.description,
    isbn: r.isbn,
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
    thumbnail_url: cover ? `/api/media-items/${r.id}/thumbnail` : null,
    added_by_admin: r.added_by_admin,
    source: r.source,
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
    hashes: hashes.map((h) => ({ sha256: h.sha256, partial_md5: h.partial_md5, format: h.format, first_seen: toIso(h.first_seen), last_seen: toIso(h.last_seen) })),
  };
}

/** An item as its events carry it: the public record with page lists, and its rows' record. */
export async function itemEventData(q: Q, r: ItemRow): Promise<{ item: Catalog.MediaItem; record: Catalog.ItemRecord }> {
  const [formats, hashes] = await Promise.all([
    formatsOf(q, [r.id]),
    t(q).selectFrom('format_hashes').selectAll().where('item_id', '=', r.id).orderBy('last_seen', 'desc').execute(),
  ]);
  return {
    item: toPublic(
      r,
      formats,
      hashes.map((h) => h.sha256),
      { pages: true },
    ),
    record: itemRecord(r, formats, hashes),
  };
}

export async function insertItem(q: Q, row: NewItem): Promise<void> {
  await t(q).insertInto('media_items').values(newItemColumns(row)).execute();
}

export async function updateItem(q: Q, id: string, changes: ItemChanges): Promise<void> {
  await t(q)
    .updateTable('media_items')
    .set({ ...itemColumns(changes), updated_at: sql`now()`, version: sql`version + 1` })
    .where('id', '=', id)
    .execute();
}

/** Remembers a hash a file of this item has had (kept when the file is rewritten or moved). */
export async function rememberHash(q: Q, itemId: string, format: string, sha256: string, partialMd5: string | null): Promise<void> {
  await t(q)
    .insertInto('format_hashes')
    .values({ item_id: itemId, sha256, partial_md5: partialMd5, format })
    .onConflict((oc) => oc.columns(['item_id', 'sha256']).doUpdateSet({ last_seen: sql`now()` }))
    .execute();
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
