// Reading's tables as a fold of its own log, and their only writer: positions, their history,
// writers and what devices were given of them, conflicts, annotations, ratings, collections and their
// members, saved filters, dashboard preferences and KOReader documents. `projectReading` folds each
// event in the transaction that appends it (Ctx.emit, Ctx.emitMany) and again when the tables are
// rebuilt from the log (`replayReading`); handlers read the tables, decide, and append events. The
// batched position write (handlers/progress.ts, `saveIfUnmoved`) folds its `progress-saved` events
// in its one statement through the same SQL (`savedRows` below).
// A merge of items (`items-merged`, `item-data-restored`) moves the history, conflicts, writers and
// KOReader documents to the kept item here; what each user's data became follows as ordinary events.
// Fields added to the events later are absent in older ones: those fold to the best value the event
// has (the event's time, the record's own fields). Not folded from this log: `users`, `items`,
// `user_access` and `identity_settings`, the other services' facts that reading keeps from their
// logs (identity's and the catalog's).
import { Reading, type StoredEvent } from '@bindery/contracts';
import { eventSchemas } from '@bindery/platform';
import { type RawBuilder, sql } from 'kysely';
import { type Trx, USER_TABLES } from './db';
import { foldDelivered } from './receipts';

export const REPLAYED_TABLES = [...USER_TABLES, 'collection_items'] as const;

const readingEvents = eventSchemas(Reading.ReadingEvents);

/** The keys of a progress record that are not its stored position. */
const PROGRESS_KEYS = ['id', 'media_item_id', 'percentage', 'finished', 'client', 'device', 'version', 'created_at', 'updated_at'];

// The fold of `reading.progress-saved.v1` as SQL over its event data `d` (jsonb), written once for
// the projection (one event, below) and for the batched position write (handlers/progress.ts,
// `saveIfUnmoved`, many in one statement): the progress row, its history line and its writer.

/** The progress columns `savedRow` gives, in its order. */
export const PROGRESS_COLUMNS = sql.raw('id, user_id, item_id, version, created_at, percentage, position, client, device, sha256, updated_at');
/** What a fold of a saved position changes on the stored row: all but its id, owner and first time. */
export const PROGRESS_UPDATE = sql.raw(
  'version = excluded.version, percentage = excluded.percentage, position = excluded.position, client = excluded.client, device = excluded.device, sha256 = excluded.sha256, updated_at = excluded.updated_at',
);

/**
 * The progress row a saved position folds to: the record's position without its other keys, and the
 * hashes the event says (older events do not say them: the row's own, else none).
 */
export const savedRow = (S: RawBuilder<unknown>, d: RawBuilder<unknown>) => sql`
  (${d}->'progress'->>'id')::uuid, (${d}->>'user_id')::uuid, (${d}->>'media_item_id')::uuid, (${d}->'progress'->>'version')::bigint,
  (${d}->'progress'->>'created_at')::timestamptz, (${d}->'progress'->>'percentage')::double precision, (${d}->'progress') - ${PROGRESS_KEYS}::text[],
  ${d}->'progress'->>'client', ${d}->'progress'->>'device',
  coalesce(${d}->'sha256', (select o.sha256 from ${S}.progress o where o.user_id = (${d}->>'user_id')::uuid and o.item_id = (${d}->>'media_item_id')::uuid), '[]'::jsonb),
  (${d}->'progress'->>'updated_at')::timestamptz`;

/** The history columns `savedHistory` gives, in its order. */
export const HISTORY_COLUMNS = sql.raw('user_id, item_id, percentage, position, client, device, reason, recorded_at');

/** The history line a save carries (older saves leave it out: their line is an event of its own). */
export const savedHistory = (d: RawBuilder<unknown>) => sql`
  (${d}->>'user_id')::uuid, (${d}->>'media_item_id')::uuid, (${d}->'history'->>'percentage')::double precision, ${d}->'history'->'position',
  ${d}->'history'->>'client', ${d}->'history'->>'device', ${d}->'history'->>'reason', (${d}->'history'->>'recorded_at')::timestamptz`;

/** The device that wrote the position, a known writer of the book from now on (user_id, item_id, device). */
export const savedWriter = (d: RawBuilder<unknown>) => sql`(${d}->>'user_id')::uuid, (${d}->>'media_item_id')::uuid, ${d}->'progress'->>'device'`;
/**
 * The batched projector: the fold of a run of `progress-saved` events in one statement, as common
 * table expressions over `ev` (k, user_id, item_id, known, d: the event's data). `saved` writes each
 * position where it is still the one read (the stored version is the event's less one; `gate` holds
 * the statement's locks) and returns the rows; `history` and `writer` fold the saved ones' history
 * line and writer. The same SQL as one event's fold above.
 */
export const foldSavedRun = (S: RawBuilder<unknown>, gate: RawBuilder<unknown>) => {
  const ofSaved = sql`join saved s on s.user_id = ev.user_id and s.item_id = ev.item_id`;
  return sql`saved as (
      insert into ${S}.progress as p (${PROGRESS_COLUMNS})
      select ${savedRow(S, sql`ev.d`)} from ev
      where ${gate}
      order by ev.k
      on conflict (user_id, item_id) do update set ${PROGRESS_UPDATE}
      where p.version = excluded.version - 1
      returning *
    ), history as (
      insert into ${S}.progress_history (${HISTORY_COLUMNS})
      select ${savedHistory(sql`ev.d`)} from ev ${ofSaved} order by ev.k
    ), writer as (
      insert into ${S}.progress_devices (user_id, item_id, device)
      select ${savedWriter(sql`ev.d`)} from ev ${ofSaved} where not ev.known
      on conflict do nothing
    )`;
};

/** The canonical span an annotation's record adds to its stored position. */
const SPAN_KEYS = new Set(['spine_index', 'doc_offset', 'end_spine_index', 'end_doc_offset']);

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

function collectionColumns(c: Reading.CollectionRecord) {
  return {
    name: c.name,
    description: c.description,
    query_type: c.query_type,
    is_system: c.is_system,
    priority: c.priority,
    color: c.color,
    icon: c.icon,
    show_on_dashboard: c.show_on_dashboard,
    rules: json(c.rules),
    auto_assign: json(c.auto_assign),
    created_at: c.created_at,
    updated_at: c.updated_at,
  };
}

/** Moves what a merge moves before its users' events say the rest: history, conflicts, writers and KOReader documents. */
async function moveItems(trx: Trx, schema: string, from: string[], to: string): Promise<void> {
  const ids = from.filter((f) => f !== to);
  if (ids.length === 0) return;
  const t = trx.withSchema(schema);
  await t.updateTable('progress_history').set({ item_id: to }).where('item_id', 'in', ids).execute();
  await t.updateTable('kosync_documents').set({ item_id: to, progress_version: null }).where('item_id', 'in', ids).execute();
  const devs = await t.selectFrom('progress_devices').selectAll().where('item_id', 'in', ids).execute();
  for (const d of devs)
    await t
      .insertInto('progress_devices')
      .values({ user_id: d.user_id, item_id: to, device: d.device })
      .onConflict((oc) => oc.doNothing())
      .execute();
  await t.deleteFrom('progress_devices').where('item_id', 'in', ids).execute();
  await t.deleteFrom('progress_receipts').where('item_id', 'in', ids).execute();
  await t.updateTable('conflicts').set({ item_id: to }).where('item_id', 'in', ids).execute();
}

async function knowDevice(trx: Trx, schema: string, user: string, item: string, device: string): Promise<void> {
  await trx
    .withSchema(schema)
    .insertInto('progress_devices')
    .values({ user_id: user, item_id: item, device })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

async function insertHistory(t: ReturnType<Trx['withSchema']>, user: string, item: string, h: Reading.ProgressHistoryEntry): Promise<void> {
  await t
    .insertInto('progress_history')
    .values({
      user_id: user,
      item_id: item,
      percentage: h.percentage,
      position: JSON.stringify(h.position),
      client: h.client,
      device: h.device,
      reason: h.reason,
      recorded_at: h.recorded_at,
    })
    .execute();
}

/** Rebuilds reading's tables in `schema` (made by reading's migrations, empty) from its log, in log order. */
export async function replayReading(trx: Trx, schema: string, events: readonly StoredEvent[]): Promise<void> {
  for (const ev of events) {
    const e = readingEvents.decode(ev);
    if (e) await projectReading(trx, schema, e, ev.recordedAt);
  }
}

/**
 * Folds one of reading's events into the tables of `schema`: in the transaction that appends it
 * (checked against its schema there) and at replay. `at`: when it was recorded.
 */
export async function projectReading(trx: Trx, schema: string, e: Reading.ReadingEvent, at: string): Promise<void> {
  const t = trx.withSchema(schema);
  switch (e.type) {
    case 'reading.progress-saved.v1': {
      const { user_id: user, media_item_id: item, progress: p } = e.data;
      // a merge may give the kept item another record's id: the row is the user's and item's
      await t.deleteFrom('progress').where('user_id', '=', user).where('item_id', '=', item).where('id', '!=', p.id).execute();
      const S = sql.raw(schema);
      await sql`
        with ev as (select ${JSON.stringify(e.data)}::jsonb as d),
        saved as (
          insert into ${S}.progress (${PROGRESS_COLUMNS}) select ${savedRow(S, sql`ev.d`)} from ev
          on conflict (id) do update set ${PROGRESS_UPDATE}, item_id = excluded.item_id
        ), history as (
          insert into ${S}.progress_history (${HISTORY_COLUMNS}) select ${savedHistory(sql`ev.d`)} from ev where ev.d ? 'history'
        )
        insert into ${S}.progress_devices (user_id, item_id, device) select ${savedWriter(sql`ev.d`)} from ev on conflict do nothing`.execute(trx);
      break;
    }
    case 'reading.progress-delivered.v1':
      await foldDelivered(trx, schema, e.data);
      break;
    case 'reading.progress-deleted.v1':
      await t.deleteFrom('progress').where('user_id', '=', e.data.user_id).where('item_id', '=', e.data.media_item_id).execute();
      break;
    case 'reading.progress-history-recorded.v1':
      await insertHistory(t, e.data.user_id, e.data.media_item_id, e.data.entry);
      break;
    case 'reading.progress-conflict-opened.v1':
    case 'reading.progress-conflict-closed.v1': {
      const c = e.data.conflict;
      const cols = {
        item_id: c.media_item_id,
        status: c.status,
        reason: c.reason,
        current: JSON.stringify(c.current),
        incoming: JSON.stringify(c.incoming),
        resolution: c.resolution,
        closed_at: c.closed_at,
      };
      await t
        .insertInto('conflicts')
        .values({ id: c.id, user_id: e.data.user_id, created_at: c.created_at, ...cols })
        .onConflict((oc) => oc.column('id').doUpdateSet(cols))
        .execute();
      // the disagreeing device is known from its conflict on: what it sends next is a normal write
      if (e.type === 'reading.progress-conflict-opened.v1') await knowDevice(trx, schema, e.data.user_id, c.media_item_id, c.incoming.device);
      break;
    }
    case 'reading.progress-conflict-deleted.v1':
      await t.deleteFrom('conflicts').where('id', '=', e.data.conflict_id).execute();
      break;
    case 'reading.annotation-saved.v1': {
      const a = e.data.annotation;
      const pos = a.position;
      const position = Object.fromEntries(Object.entries(pos).filter(([k]) => !SPAN_KEYS.has(k)));
      // older events: the span read back from the record's position, the EPUB's hash unknown
      const anchor = e.data.anchor ?? {
        start_spine: pos.spine_index ?? null,
        start_offset: pos.doc_offset ?? null,
        end_spine: pos.end_spine_index ?? null,
        end_offset: pos.end_doc_offset ?? null,
        sha256: null,
      };
      const cols = {
        item_id: a.media_item_id,
        kind: a.type,
        position: JSON.stringify(position),
        text: a.text,
        note: a.note,
        color: a.color,
        dedup_key: a.dedup_key ?? null,
        updated_at: a.updated_at,
        deleted_at: a.deleted_at ?? null,
        start_spine: anchor.start_spine,
        start_offset: anchor.start_offset,
        end_spine: anchor.end_spine,
        end_offset: anchor.end_offset,
        anchor_sha256: anchor.sha256,
      };
      await t
        .insertInto('annotations')
        .values({ id: a.id, user_id: e.data.user_id, created_at: a.created_at, ...cols })
        .onConflict((oc) => oc.column('id').doUpdateSet(cols))
        .execute();
      break;
    }
    case 'reading.annotation-purged.v1':
      await t.deleteFrom('annotations').where('id', '=', e.data.annotation_id).execute();
      break;
    case 'reading.rating-set.v1': {
      const r = e.data.rating;
      const cols = { rating: r.rating, review: r.review, updated_at: r.updated_at };
      await t
        .insertInto('ratings')
        .values({ user_id: e.data.user_id, item_id: e.data.media_item_id, created_at: r.created_at, ...cols })
        .onConflict((oc) => oc.columns(['user_id', 'item_id']).doUpdateSet(cols))
        .execute();
      break;
    }
    case 'reading.rating-deleted.v1':
      await t.deleteFrom('ratings').where('user_id', '=', e.data.user_id).where('item_id', '=', e.data.media_item_id).execute();
      break;
    case 'reading.system-collections-created.v1':
      for (const c of e.data.collections)
        await t
          .insertInto('collections')
          .values({ id: c.id, user_id: e.data.user_id, ...collectionColumns(c) })
          .execute();
      break;
    case 'reading.collection-saved.v1': {
      const c = e.data.collection;
      const cols = collectionColumns(c);
      await t
        .insertInto('collections')
        .values({ id: c.id, user_id: e.data.user_id, ...cols })
        .onConflict((oc) => oc.column('id').doUpdateSet(cols))
        .execute();
      break;
    }
    case 'reading.collection-deleted.v1':
      // its members go with it, as in the live tables
      await t.deleteFrom('collections').where('id', '=', e.data.collection_id).execute();
      break;
    case 'reading.collection-items-changed.v1': {
      const d = e.data;
      if (d.added.length)
        await t
          .insertInto('collection_items')
          // older events do not say when: the event's time, a millisecond apart in the order given (as the gateway's read model has it)
          .values(d.added.map((item_id, i) => ({ collection_id: d.collection_id, item_id, added_at: d.added_at?.[i] ?? new Date(new Date(at).getTime() + i) })))
          .onConflict((oc) => oc.doNothing())
          .execute();
      if (d.removed.length) await t.deleteFrom('collection_items').where('collection_id', '=', d.collection_id).where('item_id', 'in', d.removed).execute();
      break;
    }
    case 'reading.saved-filter-saved.v1': {
      const f = e.data.filter;
      const cols = { name: f.name, resource_type: f.resource_type, filter: JSON.stringify(f.filter ?? null), updated_at: f.updated_at };
      await t
        .insertInto('saved_filters')
        .values({ id: f.id, user_id: e.data.user_id, created_at: f.created_at, ...cols })
        .onConflict((oc) => oc.column('id').doUpdateSet(cols))
        .execute();
      break;
    }
    case 'reading.saved-filter-deleted.v1':
      await t.deleteFrom('saved_filters').where('id', '=', e.data.filter_id).execute();
      break;
    case 'reading.dashboard-preferences-changed.v1': {
      const cols = { hidden_collections: JSON.stringify(e.data.hidden_collections), collection_order: JSON.stringify(e.data.collection_order) };
      await t
        .insertInto('dashboard_prefs')
        .values({ user_id: e.data.user_id, ...cols })
        .onConflict((oc) => oc.column('user_id').doUpdateSet(cols))
        .execute();
      break;
    }
    case 'reading.kosync-document-saved.v1': {
      const d = e.data.document;
      const cols = {
        item_id: d.media_item_id,
        linked_by: d.linked_by,
        percentage: d.percentage,
        progress: d.progress,
        device: d.device,
        device_id: d.device_id,
        bindery_device_id: d.bindery_device_id ?? null,
        // older events: no position to answer verbatim (the next pull reads the item's), no label (the device's own)
        progress_version: e.data.progress_version ?? null,
        label: e.data.label ?? null,
        pushed_at: d.pushed_at,
      };
      await t
        .insertInto('kosync_documents')
        .values({ user_id: e.data.user_id, document: d.document, created_at: d.created_at, ...cols })
        .onConflict((oc) => oc.columns(['user_id', 'document']).doUpdateSet(cols))
        .execute();
      break;
    }
    case 'reading.user-data-removed.v1':
      for (const table of USER_TABLES) await t.deleteFrom(table).where('user_id', '=', e.data.user_id).execute();
      break;
    case 'reading.items-merged.v1':
      await moveItems(trx, schema, e.data.removed_item_ids, e.data.kept_item_id);
      break;
    case 'reading.item-data-restored.v1':
      await moveItems(trx, schema, [e.data.from_item_id], e.data.to_item_id);
      break;
    default:
      break;
  }
}
