// Reactions to the reading service: the hand-picked members of collections (a book added to a
// shelved collection is queued for the device, a removed one queued for removal), collections that
// go (their shelves go too), and positions saved elsewhere (queued for the user's other devices).
import { Reading } from '@bindery/contracts';
import { eventSchemas, react, type Bus, type Subscription } from '@bindery/platform';
import { sql } from 'kysely';
import type { Trx } from '../store/db';
import { SCHEMA } from '../store/migrations';
import { lockCollection, t, type Ctx } from './context';
import { enqueue } from './queue';
import { onShelf } from './shelves';

export const READING_CONSUMER = 'device-sync-reading';
const readingEvents = eventSchemas(Reading.ReadingEvents);
const TYPES = ['reading.collection-items-changed.v1', 'reading.collection-deleted.v1', 'reading.progress-saved.v1', 'reading.items-merged.v1'] as const;

export function consumeReading(ctx: Ctx, bus: Bus): Promise<Subscription> {
  return react(bus, ctx.site, {
    source: 'reading',
    durable: READING_CONSUMER,
    types: TYPES,
    effect: async (trx, ev) => {
      const e = readingEvents.decode(ev);
      return e ? apply(ctx, trx, e, new Date(ev.recordedAt)) : false;
    },
    // most positions are saved by users with no other device to queue them for
    idle: async (ev) => {
      const e = readingEvents.decode(ev);
      if (e?.type !== 'reading.progress-saved.v1') return false;
      const from = e.data.device_id?.toLowerCase() ?? null;
      let q = t(ctx.db).selectFrom('devices').select('id').where('user_id', '=', e.data.user_id).where('credential_hash', 'is not', null);
      if (from) q = q.where('id', '<>', from);
      return !(await q.limit(1).executeTakeFirst());
    },
    // positions saved by users with no other device (under load, many at a time): only the checkpoint
    // moves, in one statement, unless one of them has another device (then each goes its own way)
    inOneMany: (evs) => {
      const run: { user: string; from: string | null }[] = [];
      for (const ev of evs) {
        const e = ev.type === 'reading.progress-saved.v1' ? readingEvents.decode(ev) : null;
        if (e?.type !== 'reading.progress-saved.v1') break;
        run.push({ user: e.data.user_id, from: e.data.device_id?.toLowerCase() ?? null });
      }
      if (run.length < 2) return null;
      const writers = sql.join(run.map((w) => sql`(${w.user}::uuid, ${w.from}::uuid)`));
      const S = sql.raw(SCHEMA);
      return {
        count: run.length,
        statements: () => [],
        unless: sql<boolean>`exists (
          select 1 from (values ${writers}) as w (user_id, from_id) join ${S}.devices d on d.user_id = w.user_id
          where d.credential_hash is not null and (w.from_id is null or d.id <> w.from_id))`,
      };
    },
    // a position saved where the user has no other device appends nothing: nobody to wake
    after: (_ev, appended, inOne) => {
      if (!inOne && appended !== false) ctx.store.notify();
    },
  });
}

/** The collection's shelves, locked: a deleted collection's are removed after the append (see `lockRows`). */
async function shelvedOn(trx: Trx, collection: string) {
  return t(trx).selectFrom('shelves').select(['device_id', 'user_id', 'added_at', 'collection_name']).where('collection_id', '=', collection).forUpdate().execute();
}

/** Applies one event (recorded by reading `at`); false when it certainly appended nothing to device-sync's log. */
async function apply(ctx: Ctx, trx: Trx, e: Reading.ReadingEvent, at: Date): Promise<boolean> {
  switch (e.type) {
    case 'reading.collection-items-changed.v1': {
      const c = e.data.collection_id;
      await lockCollection(trx, c);
      for (const item of e.data.added)
        await t(trx)
          .insertInto('collection_items')
          .values({ collection_id: c, item_id: item })
          .onConflict((oc) => oc.doNothing())
          .execute();
      if (e.data.removed.length) await t(trx).deleteFrom('collection_items').where('collection_id', '=', c).where('item_id', 'in', e.data.removed).execute();
      for (const s of await shelvedOn(trx, c)) {
        // added before the shelf was made, heard of after (reading's events come a moment later): it came with the shelf
        const why = at < new Date(s.added_at) ? onShelf(s.collection_name) : 'added to a collection on this device';
        for (const item of e.data.added) await enqueue(ctx, trx, s.device_id, s.user_id, item, 'download', why);
        for (const item of e.data.removed) await enqueue(ctx, trx, s.device_id, s.user_id, item, 'remove', 'removed from a collection on this device');
      }
      break;
    }
    case 'reading.collection-deleted.v1': {
      const c = e.data.collection_id;
      await lockCollection(trx, c);
      await t(trx).deleteFrom('collection_items').where('collection_id', '=', c).execute();
      for (const s of await shelvedOn(trx, c)) {
        await ctx.emit(trx, s.user_id, [{ type: 'device-sync.shelf-removed.v1', data: { user_id: s.user_id, device_id: s.device_id, collection_id: c } }]);
      }
      break;
    }
    case 'reading.progress-saved.v1': {
      // the writer is the Bindery device the reading service names (its credential or sync key); the
      // position's `device` is a name for people and never tells a device apart
      const p = e.data.progress as { device?: unknown; client?: unknown };
      const from = e.data.device_id?.toLowerCase() ?? null;
      const named = typeof p.device === 'string' ? p.device : '';
      const devices = await t(trx).selectFrom('devices').select(['id', 'name']).where('user_id', '=', e.data.user_id).where('credential_hash', 'is not', null).execute();
      const origin = (from && devices.find((d) => d.id === from)?.name) || named || (typeof p.client === 'string' && p.client) || 'the web';
      let queued = false;
      for (const d of devices) {
        if (d.id === from) continue;
        await enqueue(ctx, trx, d.id, e.data.user_id, e.data.media_item_id, 'progress', `reading position changed on ${origin}`);
        queued = true;
      }
      return queued;
    }
    case 'reading.items-merged.v1': {
      const removed = e.data.removed_item_ids;
      if (!removed.length) break;
      const rows = await t(trx).selectFrom('collection_items').select('collection_id').where('item_id', 'in', removed).execute();
      for (const r of rows)
        await t(trx)
          .insertInto('collection_items')
          .values({ collection_id: r.collection_id, item_id: e.data.kept_item_id })
          .onConflict((oc) => oc.doNothing())
          .execute();
      await t(trx).deleteFrom('collection_items').where('item_id', 'in', removed).execute();
      break;
    }
    default:
      break;
  }
  return true;
}
