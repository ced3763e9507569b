// Folds the reading service's events into the gateway's reading tables. Reactions (a merge of
// duplicates, a book found again by hash) arrive as the ordinary events of what each user's data became.
import { Reading, type StoredEvent } from '@bindery/contracts';
import { sql, type RawBuilder } from 'kysely';
import { eventSchemas, type Trx, unnestRows } from '@bindery/platform';
import { SCHEMA } from './migrations';
import { readingTables } from './reading-tables';
import { insertReads, readRow, statisticsTables } from './statistics-tables';
import type { GatewayDb, Suffix } from './database';

const readingEvents = eventSchemas(Reading.ReadingEvents);

/** Events the reading projection keeps nothing of: a run may pass them (only the checkpoint moves). */
const PASSED = new Set(['reading.progress-history-recorded.v1', 'reading.kosync-document-saved.v1', 'reading.progress-delivered.v1']);

/**
 * Where in the book a position is (the canonical place and who wrote it), for readers that need more
 * than the percentage from the read model (a Kobo's reading state): null when only a percentage is known.
 */
function spotOf(p: Reading.ProgressRecord): string | null {
  const spot = {
    ...(typeof p.spine_index === 'number' && typeof p.doc_offset === 'number' ? { spine_index: p.spine_index, doc_offset: p.doc_offset } : {}),
    ...(typeof p.page === 'number' ? { page: p.page } : {}),
    ...(typeof p.client === 'string' ? { client: p.client } : {}),
  };
  return Object.keys(spot).length ? JSON.stringify(spot) : null;
}

/**
 * The fold of the most frequent event, a saved position, as one statement that holds to `isNew`
 * (applyOnceInOne), and of the events the projection passes (only the checkpoint moves): the run
 * of one (projectReadingMany); null for every other event (folded by projectReading in a transaction).
 */
export function projectReadingInOne(ev: StoredEvent): ((isNew: RawBuilder<boolean>) => RawBuilder<unknown>[]) | null {
  const one = projectReadingMany([ev]);
  return one.count === 1 ? one : null;
}

/**
 * A leading run of saved positions (and the events the projection passes) folded in one statement,
 * the last position of each (user, book) kept: many users' writes committed together arrive
 * together. `count` says how many events of `evs` it takes.
 */
export function projectReadingMany(evs: StoredEvent[]): ((isNew: RawBuilder<boolean>) => RawBuilder<unknown>[]) & { count: number } {
  const last = new Map<string, unknown[]>();
  // every save, for the statistics (not only the last of each book)
  const reads: unknown[][] = [];
  let count = 0;
  for (const ev of evs) {
    if (!PASSED.has(ev.type)) {
      const e = ev.type === 'reading.progress-saved.v1' ? readingEvents.decode(ev) : null;
      if (e?.type !== 'reading.progress-saved.v1') break;
      const p = e.data.progress;
      const key = `${e.data.user_id}|${e.data.media_item_id}`;
      // a later position of the same book replaces the earlier one (and goes after the others)
      last.delete(key);
      last.set(key, [e.data.user_id, e.data.media_item_id, p.percentage, p.updated_at, spotOf(p)]);
      reads.push(readRow(ev, e.data));
    }
    count++;
  }
  const rows = [...last.values()];
  const table = sql.raw(`${SCHEMA}.${readingTables('').progress}`);
  return Object.assign(
    (isNew: RawBuilder<boolean>) =>
      rows.length === 0
        ? []
        : [
            sql`
    insert into ${table} (user_id, item_id, percentage, updated_at, spot)
    select v.user_id, v.item_id, v.percentage, v.updated_at, v.spot
    from ${unnestRows('v', { user_id: 'uuid', item_id: 'uuid', percentage: 'double precision', updated_at: 'timestamptz', spot: 'jsonb' }, rows)}
    where ${isNew}
    on conflict (user_id, item_id) do update set percentage = excluded.percentage, updated_at = excluded.updated_at, spot = excluded.spot`,
            insertReads(reads, isNew),
          ],
    { count },
  );
}

export async function projectReading(trx: Trx<GatewayDb>, ev: StoredEvent, suffix: Suffix = ''): Promise<void> {
  const t = readingTables(suffix);
  const s = trx.withSchema(SCHEMA);
  const e = readingEvents.decode(ev);
  if (!e) return;
  const putCollection = async (user: string, c: Reading.CollectionRecord) => {
    const row = {
      user_id: user,
      name: c.name,
      query_type: c.query_type,
      is_system: c.is_system,
      priority: c.priority,
      color: c.color,
      icon: c.icon,
      show_on_dashboard: c.show_on_dashboard,
      rules: c.rules == null ? null : JSON.stringify(c.rules),
      doc: JSON.stringify(c),
    };
    await s
      .insertInto(t.collections)
      .values({ id: c.id, ...row })
      .onConflict((oc) => oc.column('id').doUpdateSet(row))
      .execute();
  };
  switch (e.type) {
    case 'reading.system-collections-created.v1':
      for (const c of e.data.collections) await putCollection(e.data.user_id, c);
      return;
    case 'reading.collection-saved.v1':
      await putCollection(e.data.user_id, e.data.collection);
      return;
    case 'reading.collection-deleted.v1':
      await s.deleteFrom(t.members).where('collection_id', '=', e.data.collection_id).execute();
      await s.deleteFrom(t.collections).where('id', '=', e.data.collection_id).execute();
      return;
    case 'reading.collection-items-changed.v1': {
      const at = new Date(ev.recordedAt).getTime();
      if (e.data.added.length) {
        await s
          .insertInto(t.members)
          .values(e.data.added.map((item_id, i) => ({ collection_id: e.data.collection_id, item_id, added_at: new Date(at + i) })))
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
      if (e.data.removed.length) await s.deleteFrom(t.members).where('collection_id', '=', e.data.collection_id).where('item_id', 'in', e.data.removed).execute();
      return;
    }
    case 'reading.progress-saved.v1': {
      const p = e.data.progress;
      const row = { percentage: p.percentage, updated_at: p.updated_at, spot: spotOf(e.data.progress) };
      await s
        .insertInto(t.progress)
        .values({ user_id: e.data.user_id, item_id: e.data.media_item_id, ...row })
        .onConflict((oc) => oc.columns(['user_id', 'item_id']).doUpdateSet(row))
        .execute();
      await insertReads([readRow(ev, e.data)], null, suffix).execute(trx);
      return;
    }
    case 'reading.progress-deleted.v1':
      await s.deleteFrom(t.progress).where('user_id', '=', e.data.user_id).where('item_id', '=', e.data.media_item_id).execute();
      return;
    case 'reading.rating-set.v1': {
      const rating = e.data.rating.rating;
      await s
        .insertInto(t.ratings)
        .values({ user_id: e.data.user_id, item_id: e.data.media_item_id, rating })
        .onConflict((oc) => oc.columns(['user_id', 'item_id']).doUpdateSet({ rating }))
        .execute();
      return;
    }
    case 'reading.rating-deleted.v1':
      await s.deleteFrom(t.ratings).where('user_id', '=', e.data.user_id).where('item_id', '=', e.data.media_item_id).execute();
      return;
    case 'reading.dashboard-preferences-changed.v1': {
      const row = { hidden_collections: JSON.stringify(e.data.hidden_collections), collection_order: JSON.stringify(e.data.collection_order) };
      await s
        .insertInto(t.prefs)
        .values({ user_id: e.data.user_id, ...row })
        .onConflict((oc) => oc.column('user_id').doUpdateSet(row))
        .execute();
      return;
    }
    case 'reading.progress-conflict-opened.v1':
    case 'reading.progress-conflict-closed.v1': {
      const c = e.data.conflict;
      if (c.status !== 'open') {
        await s.deleteFrom(t.conflicts).where('id', '=', c.id).execute();
        return;
      }
      const row = { user_id: e.data.user_id, item_id: c.media_item_id, doc: JSON.stringify(c) };
      await s
        .insertInto(t.conflicts)
        .values({ id: c.id, ...row })
        .onConflict((oc) => oc.column('id').doUpdateSet(row))
        .execute();
      return;
    }
    case 'reading.progress-conflict-deleted.v1':
      await s.deleteFrom(t.conflicts).where('id', '=', e.data.conflict_id).execute();
      return;
    case 'reading.reader-settings-set.v1': {
      const row = { settings: JSON.stringify(e.data.settings), updated_at: e.data.updated_at };
      await s
        .insertInto(t.readerSettings)
        .values({ user_id: e.data.user_id, item_id: e.data.media_item_id ?? '', ...row })
        .onConflict((oc) => oc.columns(['user_id', 'item_id']).doUpdateSet(row))
        .execute();
      return;
    }
    case 'reading.reader-settings-cleared.v1':
      await s.deleteFrom(t.readerSettings).where('user_id', '=', e.data.user_id).where('item_id', '=', e.data.media_item_id).execute();
      return;
    case 'reading.user-data-removed.v1': {
      const user = e.data.user_id;
      const mine = await s.selectFrom(t.collections).select('id').where('user_id', '=', user).execute();
      if (mine.length)
        await s
          .deleteFrom(t.members)
          .where(
            'collection_id',
            'in',
            mine.map((c) => c.id),
          )
          .execute();
      for (const table of [t.collections, t.progress, t.ratings, t.prefs, t.conflicts, t.readerSettings, statisticsTables(suffix).reads])
        await s.deleteFrom(table).where('user_id', '=', user).execute();
      return;
    }
    default:
      return;
  }
}
