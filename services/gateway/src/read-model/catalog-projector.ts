// Folds the catalog's events into the gateway's catalog tables: libraries, items with their public
// JSON rendered once, and the files each item owns (what /uploads may serve).
import { createHash } from 'node:crypto';
import { Catalog, type StoredEvent } from '@bindery/contracts';
import { sql, type RawBuilder } from 'kysely';
import { eventSchemas, type Trx } from '@bindery/platform';
import { SCHEMA } from '../projections/migrations';
import { catalogTables } from './tables';
import type { GatewayDb, Suffix } from './database';

type Tables = ReturnType<typeof catalogTables<Suffix>>;

const catalogEvents = eventSchemas(Catalog.CatalogEvents);

const md5Hex = (s: string) => createHash('md5').update(s, 'utf8').digest('hex');
const lower = (s: string | null | undefined) => (s ? s.toLowerCase() : null);

// Events come back from jsonb with their keys reordered; the public JSON keeps the schema's order.
const ITEM_KEYS = Object.keys(Catalog.MediaItem.properties);
const FORMAT_KEYS = Object.keys(Catalog.MediaFormat.properties);
const ordered = <T extends object>(o: T, keys: readonly string[]): T => {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (k in o) out[k] = (o as Record<string, unknown>)[k];
  for (const [k, v] of Object.entries(o)) if (!(k in out)) out[k] = v;
  return out as T;
};
// page lists travel in events for cv_files, never in the public JSON
const render = (item: Catalog.MediaItem) => JSON.stringify(ordered({ ...item, formats: item.formats.map(({ pages: _pages, ...f }) => ordered(f, FORMAT_KEYS)) }, ITEM_KEYS));

function itemRow(item: Catalog.MediaItem) {
  return {
    id: item.id,
    library_id: item.library_id,
    sort_title: item.sort_title,
    title: item.title,
    series: item.series,
    series_index: item.series_index,
    year: item.year,
    first_author: lower(item.authors[0]),
    authors: JSON.stringify(item.authors),
    tags: JSON.stringify(item.tags),
    language: item.language,
    publisher: item.publisher,
    isbn: item.isbn,
    formats: JSON.stringify([...new Set(item.formats.map((f) => f.format.toLowerCase()))]),
    has_cover: item.cover_url !== null,
    created_at: item.created_at,
    updated_at: item.updated_at,
    doc: render(item),
  };
}

/** The files an item may be downloaded by (every present format, and its own path), with their page lists. */
function filesOf(item: Catalog.MediaItem): { rel_path: string; pages: string | null }[] {
  const paths = new Map<string, string | null>();
  for (const f of item.formats) if (!paths.has(f.file_path)) paths.set(f.file_path, f.pages?.length ? JSON.stringify(f.pages) : null);
  if (item.file_path && !paths.has(item.file_path)) paths.set(item.file_path, null);
  return [...paths].map(([rel_path, pages]) => ({ rel_path, pages }));
}

/** The values fuzzy filters look through, by field. */
function termsOf(item: Catalog.MediaItem): { field: string; value: string }[] {
  const out: { field: string; value: string }[] = [];
  for (const a of item.authors) out.push({ field: 'author', value: a });
  for (const g of item.tags) out.push({ field: 'tag', value: g });
  for (const [field, v] of [
    ['series', item.series],
    ['language', item.language],
    ['publisher', item.publisher],
  ] as const)
    if (v) out.push({ field, value: v });
  return out;
}

/**
 * The ids devices name the item's files by now: KOReader's partial MD5s and MD5s of the file names
 * (stock sync), the item's SHA-256, each format's, and every SHA-256 it has had (the plugin).
 */
function documentsOf(item: Catalog.MediaItem): { document: string; kind: string }[] {
  const out = new Map<string, string>();
  if (item.sha256) out.set(item.sha256.toLowerCase(), 'sha256');
  for (const f of item.formats) if (f.sha256 && !out.has(f.sha256.toLowerCase())) out.set(f.sha256.toLowerCase(), 'format_sha256');
  for (const h of item.known_sha256) if (!out.has(h.toLowerCase())) out.set(h.toLowerCase(), 'known_sha256');
  for (const md5 of [item.partial_md5, ...item.formats.map((f) => f.partial_md5)]) if (md5) out.set(md5.toLowerCase(), 'partial_md5');
  for (const path of [item.file_path, ...item.formats.map((f) => f.file_path)]) {
    const name = path?.split('/').pop();
    if (name && !out.has(md5Hex(name))) out.set(md5Hex(name), 'filename');
  }
  return [...out].map(([document, kind]) => ({ document, kind }));
}

async function removeItem(trx: Trx<GatewayDb>, t: Tables, id: string): Promise<void> {
  const s = trx.withSchema(SCHEMA);
  await s.deleteFrom(t.documents).where('item_id', '=', id).execute();
  await s.deleteFrom(t.files).where('item_id', '=', id).execute();
  await s.deleteFrom(t.items).where('id', '=', id).execute();
}

/**
 * An item added or updated (a scan sends thousands) as statements that hold to `isNew`: the item
 * row, its fuzzy-filter terms, its files (those it no longer has dropped, the others put in place)
 * and the ids devices know it by (those no longer current marked so). Live, they run as one
 * statement with the checkpoint's move (applyOnceInOne); a rebuild runs them in its transaction.
 * An added item (`added`: its stream is new, so it has no rows yet) has nothing to drop or mark:
 * those two statements are left out (planning them was a fifth of the fold's time in embedded mode).
 */
function itemStatements(item: Catalog.MediaItem, suffix: Suffix, added: boolean): (isNew: RawBuilder<boolean>) => RawBuilder<unknown>[] {
  const t = catalogTables(suffix);
  const T = (name: string) => sql.raw(`${SCHEMA}.${name}`);
  const r = itemRow(item);
  const files = filesOf(item);
  const docs = documentsOf(item);
  return (isNew) => [
    sql`insert into ${T(t.terms)} (field, value)
      select x.field, x.value from jsonb_to_recordset(${JSON.stringify(termsOf(item))}::jsonb) as x(field text, value text) where ${isNew}
      on conflict (field, value) do nothing`,
    sql`insert into ${T(t.items)} (id, library_id, sort_title, title, series, series_index, year, first_author, authors, tags, language, publisher, isbn, formats, has_cover, created_at, updated_at, doc)
      select ${r.id}::uuid, ${r.library_id}::uuid, ${r.sort_title}, ${r.title}, ${r.series}, ${r.series_index}::double precision, ${r.year}::integer, ${r.first_author},
        ${r.authors}::jsonb, ${r.tags}::jsonb, ${r.language}, ${r.publisher}, ${r.isbn}, ${r.formats}::jsonb, ${r.has_cover}::boolean,
        ${r.created_at}::timestamptz, ${r.updated_at}::timestamptz, ${r.doc}
      where ${isNew}
      on conflict (id) do update set library_id = excluded.library_id, sort_title = excluded.sort_title, title = excluded.title, series = excluded.series,
        series_index = excluded.series_index, year = excluded.year, first_author = excluded.first_author, authors = excluded.authors, tags = excluded.tags,
        language = excluded.language, publisher = excluded.publisher, isbn = excluded.isbn, formats = excluded.formats, has_cover = excluded.has_cover,
        created_at = excluded.created_at, updated_at = excluded.updated_at, doc = excluded.doc`,
    ...(added
      ? []
      : [
          sql`delete from ${T(t.files)} where ${isNew} and item_id = ${item.id}::uuid
      and not (library_id = ${item.library_id}::uuid and rel_path = any(${files.map((f) => f.rel_path)}::text[]))`,
        ]),
    sql`insert into ${T(t.files)} (library_id, rel_path, item_id, pages)
      select ${item.library_id}::uuid, x.rel_path, ${item.id}::uuid, x.pages::jsonb
      from jsonb_to_recordset(${JSON.stringify(files)}::jsonb) as x(rel_path text, pages text) where ${isNew}
      on conflict (library_id, rel_path) do update set item_id = excluded.item_id, pages = excluded.pages`,
    ...(added
      ? []
      : [
          sql`update ${T(t.documents)} set current = false where ${isNew} and item_id = ${item.id}::uuid and current
      and not (document = any(${docs.map((d) => d.document)}::text[]))`,
        ]),
    sql`insert into ${T(t.documents)} (document, item_id, kind, current)
      select x.document, ${item.id}::uuid, x.kind, true from jsonb_to_recordset(${JSON.stringify(docs)}::jsonb) as x(document text, kind text) where ${isNew}
      on conflict (document, item_id) do update set current = true`,
  ];
}

/** The live fold of an item added or updated, in one statement (applyOnceInOne); null for every other event. */
export function projectCatalogInOne(ev: StoredEvent): ((isNew: RawBuilder<boolean>) => RawBuilder<unknown>[]) | null {
  if (ev.type !== 'catalog.media-item-added.v1' && ev.type !== 'catalog.media-item-updated.v1') return null;
  const e = catalogEvents.decode(ev);
  if (e?.type !== 'catalog.media-item-added.v1' && e?.type !== 'catalog.media-item-updated.v1') return null;
  return itemStatements(e.data.item, '', e.type === 'catalog.media-item-added.v1');
}

/** Applies one catalog event; events it has no use for change nothing. */
export async function projectCatalog(trx: Trx<GatewayDb>, ev: StoredEvent, suffix: Suffix = ''): Promise<void> {
  const t = catalogTables(suffix);
  const s = trx.withSchema(SCHEMA);
  const e = catalogEvents.decode(ev);
  if (!e) return;
  switch (e.type) {
    case 'catalog.library-created.v1':
    case 'catalog.library-updated.v1': {
      const lib = e.data.library;
      const doc = JSON.stringify(lib);
      await s
        .insertInto(t.libraries)
        .values({ id: lib.id, name: lib.name, doc })
        .onConflict((oc) => oc.column('id').doUpdateSet({ name: lib.name, doc }))
        .execute();
      return;
    }
    case 'catalog.library-deleted.v1':
      await s
        .deleteFrom(t.documents)
        .where('item_id', 'in', s.selectFrom(t.items).select('id').where('library_id', '=', e.data.library_id))
        .execute();
      await s.deleteFrom(t.files).where('library_id', '=', e.data.library_id).execute();
      await s.deleteFrom(t.items).where('library_id', '=', e.data.library_id).execute();
      await s.deleteFrom(t.libraries).where('id', '=', e.data.library_id).execute();
      return;
    case 'catalog.media-item-added.v1':
    case 'catalog.media-item-updated.v1':
      for (const statement of itemStatements(e.data.item, suffix, e.type === 'catalog.media-item-added.v1')(sql<boolean>`true`)) await statement.execute(trx);
      return;
    case 'catalog.media-item-removed.v1':
      await removeItem(trx, t, e.data.item_id);
      return;
    default:
      return;
  }
}
