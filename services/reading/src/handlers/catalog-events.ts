// Reactions to the catalog: the item facts collection rules need; a resolved hash conflict merges the
// removed items' reading data into the kept one; a removed item's data waits, keyed by its SHA-256s,
// and moves to a new item that brings one of those hashes back; KOReader documents stored before
// their book was catalogued are linked to it as soon as it is added or its files change.
import { sql, type RawBuilder } from 'kysely';
import { Catalog, type StoredEvent } from '@bindery/contracts';
import { eventSchemas, react, type Bus, type DecodedEvent, type Subscription } from '@bindery/platform';
import type { Trx } from '../store/db';
import { moveItemData } from '../store/merge';
import { SCHEMA } from '../store/migrations';
import { t, type Ctx } from './context';
import { autoAssign } from './collections';
import { documentsOf, linkAnnounced } from './kosync';

export const CATALOG_CONSUMER = 'reading-catalog';
const TYPES = [
  'catalog.media-item-added.v1',
  'catalog.media-item-updated.v1',
  'catalog.media-item-removed.v1',
  'catalog.library-deleted.v1',
  'catalog.hash-conflict-resolved.v1',
] as const;
const catalogEvents = eventSchemas(Catalog.CatalogEvents);

/** The SHA-256s an item's files had (every one it is known by) */
const hashesOf = (i: Catalog.MediaItem): string[] => (i.known_sha256.length ? i.known_sha256 : i.sha256 ? [i.sha256] : []);

function itemValues(i: Catalog.MediaItem) {
  return {
    library_id: i.library_id,
    title: i.title,
    sort_title: i.sort_title,
    authors: JSON.stringify(i.authors),
    tags: JSON.stringify(i.tags),
    series: i.series,
    series_index: i.series_index,
    language: i.language,
    publisher: i.publisher,
    year: i.year,
    page_count: i.page_count,
    formats: JSON.stringify([...new Set(i.formats.map((f) => f.format.toLowerCase()))]),
    sha256: JSON.stringify(hashesOf(i)),
    epub_sha256: i.formats.find((f) => f.format.toLowerCase() === 'epub' && f.sha256)?.sha256 ?? null,
    created_at: i.created_at,
    removed_at: null,
  };
}

export async function consumeCatalog(ctx: Ctx, bus: Bus): Promise<Subscription> {
  return react(bus, ctx.site, {
    source: 'catalog',
    durable: CATALOG_CONSUMER,
    types: TYPES,
    inOne: (ev) => {
      const one = itemInOne(ev);
      if (one) ctx.forgetItems();
      return one;
    },
    inOneMany: (evs) => {
      const many = itemRunInOne(evs);
      if (many) ctx.forgetItems();
      return many;
    },
    effect: (trx, ev) => {
      ctx.forgetItems();
      const e = catalogEvents.decode(ev);
      return e ? apply(ctx, trx, e) : Promise.resolve();
    },
    after: async (ev, _result, inOne) => {
      // again once committed: a write that read an item during the transaction kept the old copy
      // (and the other replicas drop theirs)
      ctx.itemsChanged();
      // folded in one statement: no document of its files was waiting (`itemInOne`), nothing was appended
      if (inOne) return;
      // after the item is stored (a position is checked against it): waiting documents of its files.
      // A redelivery runs it again, and finds nothing left to link.
      const e = catalogEvents.decode(ev);
      if (e && (e.type === 'catalog.media-item-added.v1' || e.type === 'catalog.media-item-updated.v1')) await linkAnnounced(ctx, e.data.item);
      ctx.store.notify();
    },
  });
}

type InOne = { statements: (isNew: RawBuilder<boolean>) => RawBuilder<unknown>[]; unless?: RawBuilder<boolean> };

/** The item an event adds or updates, or null for every other event. */
function itemOf(ev: StoredEvent): { item: Catalog.MediaItem; added: boolean } | null {
  if (ev.type !== 'catalog.media-item-added.v1' && ev.type !== 'catalog.media-item-updated.v1') return null;
  const e = catalogEvents.decode(ev);
  if (e?.type !== 'catalog.media-item-added.v1' && e?.type !== 'catalog.media-item-updated.v1') return null;
  return { item: e.data.item, added: e.type === 'catalog.media-item-added.v1' };
}

/**
 * Items added or updated (a scan sends thousands) as one statement with the checkpoint's move: their
 * rows. Unless one has more to do here (KOReader documents of its files waiting for it; for an added
 * one, reading data of one of its hashes to bring back, a collection that assigns new books): then
 * `apply` does it all in a transaction, event by event, and `after` links the documents. One event,
 * or (embedded mode) a run of events for distinct items.
 */
function itemsInOne(facts: { item: Catalog.MediaItem; added: boolean }[]): InOne {
  const T = (name: string) => sql.raw(`${SCHEMA}.${name}`);
  const rows = JSON.stringify(facts.map((f) => ({ id: f.item.id, ...itemValues(f.item) })));
  const statements = (isNew: RawBuilder<boolean>) => [
    sql`insert into ${T('items')} (id, library_id, title, sort_title, authors, tags, series, series_index, language, publisher, year, page_count, formats, sha256, epub_sha256, created_at, removed_at)
      select x.id, x.library_id, x.title, x.sort_title, x.authors::jsonb, x.tags::jsonb, x.series, x.series_index, x.language, x.publisher, x.year, x.page_count,
        x.formats::jsonb, x.sha256::jsonb, x.epub_sha256, x.created_at, null
      from jsonb_to_recordset(${rows}::jsonb) as x(id uuid, library_id uuid, title text, sort_title text, authors text, tags text, series text, series_index double precision,
        language text, publisher text, year integer, page_count integer, formats text, sha256 text, epub_sha256 text, created_at timestamptz)
      where ${isNew}
      on conflict (id) do update set library_id = excluded.library_id, title = excluded.title, sort_title = excluded.sort_title, authors = excluded.authors,
        tags = excluded.tags, series = excluded.series, series_index = excluded.series_index, language = excluded.language, publisher = excluded.publisher,
        year = excluded.year, page_count = excluded.page_count, formats = excluded.formats, sha256 = excluded.sha256, epub_sha256 = excluded.epub_sha256,
        created_at = excluded.created_at, removed_at = null`,
  ];
  // KOReader documents of their files pushed before the books were known: linked after the fold (linkAnnounced)
  const unless = [sql<boolean>`exists (select 1 from ${T('kosync_documents')} where item_id is null and document = any(${facts.flatMap((f) => documentsOf(f.item))}::text[]))`];
  const added = facts.filter((f) => f.added);
  if (added.length > 0) {
    // what restoreByHash and autoAssign would find (the same conditions, asked once)
    const pairs = JSON.stringify(added.flatMap((f) => hashesOf(f.item).map((h) => ({ id: f.item.id, has: JSON.stringify([h]) }))));
    unless.push(sql<boolean>`exists (select 1 from jsonb_to_recordset(${pairs}::jsonb) as x(id uuid, has text)
      where exists (select 1 from ${T('items')} i where i.id <> x.id and i.removed_at is not null and i.sha256 @> x.has::jsonb)
        or exists (select 1 from ${T('progress')} p where p.item_id <> x.id and p.sha256 @> x.has::jsonb
          and p.item_id not in (select id from ${T('items')} where removed_at is null)))`);
    unless.push(sql<boolean>`exists (select 1 from ${T('collections')} where auto_assign is not null and rules is null)`);
  }
  return { statements, unless: sql.join(unless, sql` or `) as RawBuilder<boolean> };
}

/** One item event in one statement (`itemsInOne`); null for every other event. */
function itemInOne(ev: StoredEvent): InOne | null {
  const f = itemOf(ev);
  return f ? itemsInOne([f]) : null;
}

/** A leading run of item events for distinct items (at most 100), in one statement. */
function itemRunInOne(evs: StoredEvent[]): (InOne & { count: number }) | null {
  const facts: { item: Catalog.MediaItem; added: boolean }[] = [];
  const ids = new Set<string>();
  for (const ev of evs.slice(0, 100)) {
    const f = itemOf(ev);
    if (!f || ids.has(f.item.id)) break;
    ids.add(f.item.id);
    facts.push(f);
  }
  return facts.length < 2 ? null : { ...itemsInOne(facts), count: facts.length };
}

async function apply(ctx: Ctx, trx: Trx, e: DecodedEvent<typeof Catalog.CatalogEvents>): Promise<void> {
  switch (e.type) {
    case 'catalog.media-item-added.v1':
    case 'catalog.media-item-updated.v1': {
      const i = e.data.item;
      const v = itemValues(i);
      await t(trx)
        .insertInto('items')
        .values({ id: i.id, ...v })
        .onConflict((oc) => oc.column('id').doUpdateSet(v))
        .execute();
      if (e.type === 'catalog.media-item-added.v1') {
        await restoreByHash(ctx, trx, i);
        await autoAssign(ctx, trx, i.id);
      }
      return;
    }
    case 'catalog.media-item-removed.v1':
      await t(trx).updateTable('items').set({ removed_at: ctx.now() }).where('id', '=', e.data.item_id).execute();
      return;
    case 'catalog.library-deleted.v1':
      await t(trx).updateTable('items').set({ removed_at: ctx.now() }).where('library_id', '=', e.data.library_id).where('removed_at', 'is', null).execute();
      return;
    case 'catalog.hash-conflict-resolved.v1': {
      const moved = await moveItemData(trx, e.data.removed_item_ids, e.data.kept_item_id, ctx.now(), 'merged');
      await ctx.emit(trx, `item:${e.data.kept_item_id}`, [
        { type: 'reading.items-merged.v1', data: { kept_item_id: e.data.kept_item_id, removed_item_ids: e.data.removed_item_ids, user_ids: moved.users } },
      ]);
      for (const [user, evs] of moved.events) await ctx.emit(trx, user, evs);
      return;
    }
    default:
      return;
  }
}

/** A new item whose file has the hash of a removed item's: that item's reading data comes back to it. */
async function restoreByHash(ctx: Ctx, trx: Trx, item: Catalog.MediaItem): Promise<void> {
  for (const h of hashesOf(item)) {
    const has = JSON.stringify([h]);
    const old = await t(trx)
      .selectFrom('items')
      .select('id as item_id')
      .where('id', '!=', item.id)
      .where('removed_at', 'is not', null)
      .where(sql<boolean>`sha256 @> ${has}::jsonb`)
      .union(
        t(trx)
          .selectFrom('progress')
          .select('item_id')
          .where('item_id', '!=', item.id)
          .where(sql<boolean>`sha256 @> ${has}::jsonb`)
          .where(sql<boolean>`item_id not in (select id from reading.items where removed_at is null)`),
      )
      .execute();
    const oldIds = old.map((o) => o.item_id);
    if (oldIds.length === 0) continue;
    const moved = await moveItemData(trx, oldIds, item.id, ctx.now(), 'restored');
    // said whenever a row moved (a history or a KOReader document may move with no user's current data)
    if (moved.moved)
      for (const from of oldIds)
        await ctx.emit(trx, `item:${item.id}`, [{ type: 'reading.item-data-restored.v1', data: { from_item_id: from, to_item_id: item.id, sha256: h, user_ids: moved.users } }]);
    for (const [user, evs] of moved.events) await ctx.emit(trx, user, evs);
    return;
  }
}
