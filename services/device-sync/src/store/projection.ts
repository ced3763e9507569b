// device-sync's own tables (`devices`, `pending`, `shelves`, `queue`) as a fold of its own log, and
// their only writer. Every append goes through `appendProjected`, which folds each appended event
// into the tables in the same transaction; a replay of the log through `projectDeviceSync` writes
// the same rows again (the replay test rebuilds a copy and compares it with the live tables).
// Handlers read the tables and decide; what the database used to make for them (ids, times, counts)
// they decide themselves and carry in the event.
// The Kobo sync state (`kobo_sent`, `kobo_pending`, `kobo_gen`, decision 116) is folded here from the
// kobo-sync events the gateway asks for when it answers a Kobo; the gateway folds the same events
// into its read model, where it works out each sync's difference.
// Not folded here: `users` and `collection_items` are facts of identity and reading, kept by the
// reactions to those services' events (their logs hold them, not this one), and `replicas` marks the
// processes running now, which a replay of the past cannot know.
import { sql } from 'kysely';
import { DeviceSync, type StoredEvent } from '@bindery/contracts';
import { eventSchemas, type EventStore, type ExpectedVersion } from '@bindery/platform';
import type { DeviceSyncDb, Trx } from './db';
import { SCHEMA } from './migrations';

/** device-sync's own events and their contract schemas: checked before each append, decoded when folded. */
export const deviceSyncEvents = eventSchemas(DeviceSync.DeviceSyncEvents);

/** The tables this fold writes, in the order a comparison reads them. */
export const PROJECTED_TABLES = ['devices', 'pending', 'shelves', 'queue', 'kobo_sent', 'kobo_pending', 'kobo_gen'] as const;

/**
 * Appends device-sync events (each checked against its contract schema) to `stream` and folds them
 * into the live tables, in the caller's transaction: the one way those rows change.
 */
export async function appendProjected(
  store: EventStore<DeviceSyncDb>,
  trx: Trx,
  stream: string,
  expected: ExpectedVersion,
  events: DeviceSync.DeviceSyncEvent[],
): Promise<StoredEvent[]> {
  if (events.length === 0) return [];
  deviceSyncEvents.check(events);
  const stored = await store.append(trx, stream, expected, events);
  for (const ev of stored) await projectDeviceSync(trx, SCHEMA, ev);
  return stored;
}

/** Applies one of device-sync's events to its tables in `schema`. */
export async function projectDeviceSync(trx: Trx, schema: string, ev: StoredEvent): Promise<void> {
  const e = deviceSyncEvents.decode(ev);
  if (!e) return;
  const s = trx.withSchema(schema);
  const forget = async (devices: string[]) => {
    if (devices.length === 0) return;
    await s.deleteFrom('shelves').where('device_id', 'in', devices).execute();
    await s.deleteFrom('queue').where('device_id', 'in', devices).execute();
    for (const table of ['kobo_sent', 'kobo_pending', 'kobo_gen'] as const) await s.deleteFrom(table).where('device_id', 'in', devices).execute();
    await s.deleteFrom('devices').where('id', 'in', devices).execute();
  };
  switch (e.type) {
    case 'device-sync.registration-requested.v1': {
      const { registration_id, ...r } = e.data;
      await s
        .insertInto('pending')
        .values({ id: registration_id, ...r, status: 'pending' })
        .execute();
      return;
    }
    case 'device-sync.registration-approved.v1':
      await s.updateTable('pending').set({ status: 'approved', user_id: e.data.user_id, device_id: e.data.device_id }).where('id', '=', e.data.registration_id).execute();
      return;
    case 'device-sync.registration-rejected.v1':
      await s.updateTable('pending').set({ status: 'rejected', user_id: e.data.user_id }).where('id', '=', e.data.registration_id).execute();
      return;
    case 'device-sync.registration-claimed.v1':
      await s.updateTable('pending').set({ status: 'claimed' }).where('id', '=', e.data.registration_id).execute();
      return;
    case 'device-sync.registrations-dropped.v1':
      if (e.data.registration_ids.length) await s.deleteFrom('pending').where('id', 'in', e.data.registration_ids).execute();
      return;
    case 'device-sync.device-approved.v1': {
      const d = e.data.device;
      await s
        .insertInto('devices')
        .values({ id: d.id, user_id: d.user_id, name: d.name, client: d.client, model: d.model, credential_hash: null, created_at: d.created_at, updated_at: d.updated_at })
        .execute();
      return;
    }
    case 'device-sync.device-updated.v1': {
      const d = e.data.device;
      await s.updateTable('devices').set({ name: d.name, client: d.client, model: d.model, updated_at: d.updated_at }).where('id', '=', d.id).execute();
      return;
    }
    case 'device-sync.device-credential-issued.v1':
      await s.updateTable('devices').set({ credential_hash: e.data.credential_hash }).where('id', '=', e.data.device_id).execute();
      return;
    case 'device-sync.sync-key-issued.v1':
      await s.updateTable('devices').set({ sync_key_verifier: e.data.verifier, sync_key_issued_at: e.data.issued_at }).where('id', '=', e.data.device_id).execute();
      return;
    case 'device-sync.kobo-token-issued.v1':
      await s.updateTable('devices').set({ kobo_token_hash: e.data.token_hash }).where('id', '=', e.data.device_id).execute();
      return;
    case 'device-sync.kobo-settings-saved.v1':
      await s.updateTable('devices').set({ kobo_books: e.data.books }).where('id', '=', e.data.device_id).execute();
      return;
    case 'device-sync.device-deleted.v1':
      await forget([e.data.device_id]);
      return;
    case 'device-sync.user-devices-removed.v1':
      await forget(e.data.device_ids);
      // a deleted account's registrations go with it
      await s.deleteFrom('pending').where('user_id', '=', e.data.user_id).execute();
      return;
    case 'device-sync.shelf-added.v1':
      await s
        .insertInto('shelves')
        .values({
          device_id: e.data.device_id,
          collection_id: e.data.collection_id,
          user_id: e.data.user_id,
          added_at: e.data.added_at,
          collection_name: e.data.collection_name ?? null,
        })
        .onConflict((oc) => oc.doNothing())
        .execute();
      return;
    case 'device-sync.shelf-removed.v1':
      await s.deleteFrom('shelves').where('device_id', '=', e.data.device_id).where('collection_id', '=', e.data.collection_id).execute();
      return;
    case 'device-sync.shelves-cleared.v1':
      await s.deleteFrom('shelves').where('device_id', '=', e.data.device_id).execute();
      return;
    case 'device-sync.queue-entry-saved.v1': {
      const { id, ...row } = e.data.entry;
      await s
        .insertInto('queue')
        .values({ id, ...row })
        .onConflict((oc) => oc.column('id').doUpdateSet(row))
        .execute();
      return;
    }
    case 'device-sync.queue-entry-removed.v1':
      await s.deleteFrom('queue').where('id', '=', e.data.entry_id).execute();
      return;
    case 'device-sync.queue-cleared.v1':
      await s.deleteFrom('queue').where('device_id', '=', e.data.device_id).execute();
      return;
    case 'device-sync.kobo-book-removed.v1':
      // the device no longer has it (its removal row is the gateway's: it decides what a Kobo gets)
      await s.deleteFrom('kobo_sent').where('device_id', '=', e.data.device_id).where('key', '=', `i:${e.data.media_item_id}`).execute();
      await movedTo(trx, schema, e.data.device_id, ev.position);
      return;
    case 'device-sync.kobo-sync-sent.v1':
    case 'device-sync.kobo-sync-confirmed.v1':
    case 'device-sync.kobo-sync-reset.v1':
    case 'device-sync.kobo-state-known.v1':
      await foldKoboSync(trx, schema, e);
      await movedTo(trx, schema, e.data.device_id, ev.position);
      return;
  }
}

type KoboSyncEvent = Extract<
  DeviceSync.DeviceSyncEvent,
  { type: 'device-sync.kobo-sync-sent.v1' | 'device-sync.kobo-sync-confirmed.v1' | 'device-sync.kobo-sync-reset.v1' | 'device-sync.kobo-state-known.v1' }
>;

/** The position of the device's last Kobo sync event: what a sync that appends nothing lets a replica wait for. */
async function movedTo(trx: Trx, schema: string, device: string, position: number): Promise<void> {
  await trx.withSchema(schema).updateTable('kobo_gen').set({ position }).where('device_id', '=', device).execute();
}

/**
 * A Kobo's sync state, as the gateway's read model folds it too (read-model/device-projector.ts):
 * an answer's entries pending under its generation; a confirmation moves what answers up to it sent
 * into `kobo_sent` (the latest version of each key; a key sent as gone leaves) and drops the rest; a
 * reset forgets everything sent; a state the device wrote itself is what it has.
 */
async function foldKoboSync(trx: Trx, schema: string, e: KoboSyncEvent): Promise<void> {
  const s = trx.withSchema(schema);
  const device = e.data.device_id;
  switch (e.type) {
    case 'device-sync.kobo-sync-sent.v1': {
      const { gen, entries } = e.data;
      await s
        .insertInto('kobo_gen')
        .values({ device_id: device, gen, position: 0 })
        .onConflict((oc) => oc.column('device_id').doUpdateSet({ gen }))
        .execute();
      if (entries.length)
        await s
          .insertInto('kobo_pending')
          .values(entries.map((x) => ({ device_id: device, gen, key: x.key, ever: x.ever, sver: x.sver })))
          .onConflict((oc) => oc.doNothing())
          .execute();
      return;
    }
    case 'device-sync.kobo-sync-confirmed.v1': {
      const t = (name: string) => sql.table(`${schema}.${name}`);
      const { gen } = e.data;
      await sql`
        delete from ${t('kobo_sent')} s using (select distinct key from ${t('kobo_pending')} where device_id = ${device} and gen <= ${gen}) p
        where s.device_id = ${device} and s.key = p.key`.execute(trx);
      await sql`
        insert into ${t('kobo_sent')} (device_id, key, ever, sver)
        select device_id, key, ever, sver from (
          select distinct on (key) device_id, key, ever, sver from ${t('kobo_pending')}
          where device_id = ${device} and gen <= ${gen} order by key, gen desc
        ) last where ever is not null`.execute(trx);
      await s.deleteFrom('kobo_pending').where('device_id', '=', device).execute();
      return;
    }
    case 'device-sync.kobo-sync-reset.v1':
      await s.deleteFrom('kobo_sent').where('device_id', '=', device).execute();
      await s.deleteFrom('kobo_pending').where('device_id', '=', device).execute();
      return;
    case 'device-sync.kobo-state-known.v1': {
      const key = `i:${e.data.media_item_id}`;
      await s.updateTable('kobo_sent').set({ sver: e.data.sver }).where('device_id', '=', device).where('key', '=', key).execute();
      await s.updateTable('kobo_pending').set({ sver: e.data.sver }).where('device_id', '=', device).where('key', '=', key).where('ever', 'is not', null).execute();
      return;
    }
  }
}
