// Folds the catalog's events into the gateway's catalog tables: libraries, items with their public
// JSON rendered once, and the files each item owns (what /uploads may serve).
import { createHash } from 'node:crypto';
import { Catalog, type StoredEvent } from '@bindery/contracts';
import { sql, type RawBuilder } from 'kysely';
import { eventSchemas, type Trx } from '@bindery/platform';
import { SCHEMA } from './migrations';
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

/** An item as an event states it, and whether the event added it (its stream was new: it has no rows yet). */
export interface ItemFact {
  item: Catalog.MediaItem;
  added: boolean;
}

/**
 * Items added or updated (a scan sends thousands) as statements that hold to `isNew`, each over
 * every item at once: the item rows, their fuzzy-filter terms, their files (those an updated item
 * no longer has dropped, the others put in place) and the ids devices know them by (those no longer
 * current marked so). Live, they run as one statement with the checkpoint's move (applyOnceInOne),
 * for one event or, in embedded mode, a run of them; a rebuild runs them in its transaction. The
 * items must be distinct, and so must their files (`foldable`). Added items have nothing to drop or
 * mark: when all are added those two statements are left out.
 */
function itemStatements(facts: ItemFact[], suffix: Suffix): (isNew: RawBuilder<boolean>) => RawBuilder<unknown>[] {
  const t = catalogTables(suffix);
  const T = (name: string) => sql.raw(`${SCHEMA}.${name}`);
  const rows = JSON.stringify(facts.map((f) => itemRow(f.item)));
  const terms = JSON.stringify(facts.flatMap((f) => termsOf(f.item)));
  const files = JSON.stringify(facts.flatMap((f) => filesOf(f.item).map((x) => ({ library_id: f.item.library_id, item_id: f.item.id, ...x }))));
  const docs = JSON.stringify(facts.flatMap((f) => documentsOf(f.item).map((d) => ({ item_id: f.item.id, ...d }))));
  const updated = facts.filter((f) => !f.added).map((f) => f.item.id);
  return (isNew) => [
    sql`insert into ${T(t.terms)} (field, value)
      select distinct x.field, x.value from jsonb_to_recordset(${terms}::jsonb) as x(field text, value text) where ${isNew}
      on conflict (field, value) do nothing`,
    sql`insert into ${T(t.items)} (id, library_id, sort_title, title, series, series_index, year, first_author, authors, tags, language, publisher, isbn, formats, has_cover, created_at, updated_at, doc)
      select x.id, x.library_id, x.sort_title, x.title, x.series, x.series_index, x.year, x.first_author, x.authors::jsonb, x.tags::jsonb, x.language, x.publisher, x.isbn,
        x.formats::jsonb, x.has_cover, x.created_at, x.updated_at, x.doc
      from jsonb_to_recordset(${rows}::jsonb) as x(id uuid, library_id uuid, sort_title text, title text, series text, series_index double precision, year integer,
        first_author text, authors text, tags text, language text, publisher text, isbn text, formats text, has_cover boolean, created_at timestamptz, updated_at timestamptz, doc text)
      where ${isNew}
      on conflict (id) do update set library_id = excluded.library_id, sort_title = excluded.sort_title, title = excluded.title, series = excluded.series,
        series_index = excluded.series_index, year = excluded.year, first_author = excluded.first_author, authors = excluded.authors, tags = excluded.tags,
        language = excluded.language, publisher = excluded.publisher, isbn = excluded.isbn, formats = excluded.formats, has_cover = excluded.has_cover,
        created_at = excluded.created_at, updated_at = excluded.updated_at, doc = excluded.doc`,
    // an updated item's files it no longer has; a path another item of these takes is moved below, not dropped
    ...(updated.length === 0
      ? []
      : [
          sql`delete from ${T(t.files)} f where ${isNew} and f.item_id = any(${updated}::uuid[])
      and not exists (select 1 from jsonb_to_recordset(${files}::jsonb) as x(library_id uuid, rel_path text) where x.library_id = f.library_id and x.rel_path = f.rel_path)`,
        ]),
    sql`insert into ${T(t.files)} (library_id, rel_path, item_id, pages)
      select x.library_id, x.rel_path, x.item_id, x.pages::jsonb
      from jsonb_to_recordset(${files}::jsonb) as x(library_id uuid, item_id uuid, rel_path text, pages text) where ${isNew}
      on conflict (library_id, rel_path) do update set item_id = excluded.item_id, pages = excluded.pages`,
    ...(updated.length === 0
      ? []
      : [
          sql`update ${T(t.documents)} d set current = false where ${isNew} and d.item_id = any(${updated}::uuid[]) and d.current
      and not exists (select 1 from jsonb_to_recordset(${docs}::jsonb) as x(item_id uuid, document text) where x.item_id = d.item_id and x.document = d.document)`,
        ]),
    sql`insert into ${T(t.documents)} (document, item_id, kind, current)
      select x.document, x.item_id, x.kind, true from jsonb_to_recordset(${docs}::jsonb) as x(item_id uuid, document text, kind text) where ${isNew}
      on conflict (document, item_id) do update set current = true`,
  ];
}

/** The item an event adds or updates, or null for every other event. */
function itemFact(ev: StoredEvent): ItemFact | null {
  if (ev.type !== 'catalog.media-item-added.v1' && ev.type !== 'catalog.media-item-updated.v1') return null;
  const e = catalogEvents.decode(ev);
  if (e?.type !== 'catalog.media-item-added.v1' && e?.type !== 'catalog.media-item-updated.v1') return null;
  return { item: e.data.item, added: e.type === 'catalog.media-item-added.v1' };
}

/**
 * A leading run of item events that fold together (at most `max`): each a distinct item, no file
 * path in two of them (one statement may not change a row twice). Empty when the first event is
 * not one.
 */
export function foldableRun(evs: StoredEvent[], max = 100): { facts: ItemFact[]; count: number } {
  const facts: ItemFact[] = [];
  const ids = new Set<string>();
  const paths = new Set<string>();
  for (const ev of evs.slice(0, max)) {
    const f = itemFact(ev);
    if (!f || ids.has(f.item.id)) break;
    const mine = filesOf(f.item).map((x) => `${f.item.library_id}/${x.rel_path}`);
    if (mine.some((p) => paths.has(p))) break;
    ids.add(f.item.id);
    for (const p of mine) paths.add(p);
    facts.push(f);
  }
  return { facts, count: facts.length };
}

/** A run of item events (`foldableRun`) as the statements of one fold. */
export const projectItemsInOne = (facts: ItemFact[]) => itemStatements(facts, '');

/** The live fold of an item added or updated, in one statement (applyOnceInOne); null for every other event. */
export function projectCatalogInOne(ev: StoredEvent): ((isNew: RawBuilder<boolean>) => RawBuilder<unknown>[]) | null {
  const f = itemFact(ev);
  return f ? itemStatements([f], '') : null;
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
      for (const statement of itemStatements([{ item: e.data.item, added: e.type === 'catalog.media-item-added.v1' }], suffix)(sql<boolean>`true`)) await statement.execute(trx);
      return;
    case 'catalog.media-item-removed.v1':
      await removeItem(trx, t, e.data.item_id);
      return;
    default:
      return;
  }
}
