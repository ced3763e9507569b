// Folds device-sync's events into the devices projection (credentials, public records, shelves, and
// each Kobo's sync state: decision 116).
import { sql } from 'kysely';
import { DeviceSync, type StoredEvent } from '@bindery/contracts';
import { eventSchemas, type Trx } from '@bindery/platform';
import { SCHEMA } from './migrations';
import { deviceTables } from './device-tables';
import type { GatewayDb, Suffix } from './database';

/** A deleted Kobo's sync state goes with it. */
async function forgetKobos(trx: Trx<GatewayDb>, ids: string[], suffix: Suffix): Promise<void> {
  const t = deviceTables(suffix);
  for (const table of [t.koboSent, t.koboPending, t.koboGen]) await trx.withSchema(SCHEMA).deleteFrom(table).where('device_id', 'in', ids).execute();
}

type KoboSyncEvent = Extract<
  DeviceSync.DeviceSyncEvent,
  { type: 'device-sync.kobo-sync-sent.v1' | 'device-sync.kobo-sync-confirmed.v1' | 'device-sync.kobo-sync-reset.v1' | 'device-sync.kobo-state-known.v1' }
>;

/**
 * A Kobo's sync state, folded as device-sync folds it (its store/projection.ts): an answer's entries
 * pending under its generation; a confirmation moves what answers up to it sent into what the device
 * has (the latest version of each key; a key sent as gone leaves) and drops the rest; a reset forgets
 * everything sent; a state the device wrote itself is what it has.
 */
async function foldKoboSync(trx: Trx<GatewayDb>, e: KoboSyncEvent, suffix: Suffix): Promise<void> {
  const t = deviceTables(suffix);
  const s = trx.withSchema(SCHEMA);
  const device = e.data.device_id;
  switch (e.type) {
    case 'device-sync.kobo-sync-sent.v1': {
      const { gen, entries } = e.data;
      await s
        .insertInto(t.koboGen)
        .values({ device_id: device, gen })
        .onConflict((oc) => oc.column('device_id').doUpdateSet({ gen }))
        .execute();
      if (entries.length)
        await s
          .insertInto(t.koboPending)
          .values(entries.map((x) => ({ device_id: device, gen, key: x.key, ever: x.ever, sver: x.sver })))
          .onConflict((oc) => oc.doNothing())
          .execute();
      return;
    }
    case 'device-sync.kobo-sync-confirmed.v1': {
      const sent = sql.table(`${SCHEMA}.${t.koboSent}`);
      const pending = sql.table(`${SCHEMA}.${t.koboPending}`);
      const { gen } = e.data;
      await sql`
        delete from ${sent} s using (select distinct key from ${pending} where device_id = ${device} and gen <= ${gen}) p
        where s.device_id = ${device} and s.key = p.key`.execute(trx);
      await sql`
        insert into ${sent} (device_id, key, ever, sver)
        select device_id, key, ever, sver from (
          select distinct on (key) device_id, key, ever, sver from ${pending}
          where device_id = ${device} and gen <= ${gen} order by key, gen desc
        ) last where ever is not null`.execute(trx);
      await s.deleteFrom(t.koboPending).where('device_id', '=', device).execute();
      return;
    }
    case 'device-sync.kobo-sync-reset.v1':
      await s.deleteFrom(t.koboSent).where('device_id', '=', device).execute();
      await s.deleteFrom(t.koboPending).where('device_id', '=', device).execute();
      return;
    case 'device-sync.kobo-state-known.v1': {
      const key = `i:${e.data.media_item_id}`;
      await s.updateTable(t.koboSent).set({ sver: e.data.sver }).where('device_id', '=', device).where('key', '=', key).execute();
      await s.updateTable(t.koboPending).set({ sver: e.data.sver }).where('device_id', '=', device).where('key', '=', key).where('ever', 'is not', null).execute();
      return;
    }
  }
}

const deviceSyncEvents = eventSchemas(DeviceSync.DeviceSyncEvents);

export async function projectDevices(trx: Trx<GatewayDb>, ev: StoredEvent, suffix: Suffix = ''): Promise<void> {
  const t = deviceTables(suffix);
  const s = trx.withSchema(SCHEMA);
  const e = deviceSyncEvents.decode(ev);
  if (!e) return;
  switch (e.type) {
    case 'device-sync.device-approved.v1':
    case 'device-sync.device-updated.v1': {
      const d = e.data.device;
      await s
        .insertInto(t.devices)
        .values({ id: d.id, user_id: d.user_id, doc: JSON.stringify(d) })
        .onConflict((oc) => oc.column('id').doUpdateSet({ doc: JSON.stringify(d) }))
        .execute();
      break;
    }
    case 'device-sync.device-credential-issued.v1':
      await s.updateTable(t.devices).set({ credential_hash: e.data.credential_hash }).where('id', '=', e.data.device_id).execute();
      break;
    case 'device-sync.sync-key-issued.v1':
      await s.updateTable(t.devices).set({ sync_key_verifier: e.data.verifier, sync_key_issued_at: e.data.issued_at }).where('id', '=', e.data.device_id).execute();
      break;
    case 'device-sync.kobo-token-issued.v1':
      await s.updateTable(t.devices).set({ kobo_token_hash: e.data.token_hash }).where('id', '=', e.data.device_id).execute();
      break;
    case 'device-sync.kobo-settings-saved.v1':
      await s.updateTable(t.devices).set({ kobo_books: e.data.books }).where('id', '=', e.data.device_id).execute();
      break;
    case 'device-sync.kobo-book-removed.v1':
      await s
        .insertInto(t.koboRemoved)
        .values({ device_id: e.data.device_id, item_id: e.data.media_item_id, removed_at: e.data.removed_at })
        .onConflict((oc) => oc.columns(['device_id', 'item_id']).doUpdateSet({ removed_at: e.data.removed_at }))
        .execute();
      // the device no longer has it
      await s.deleteFrom(t.koboSent).where('device_id', '=', e.data.device_id).where('key', '=', `i:${e.data.media_item_id}`).execute();
      break;
    case 'device-sync.kobo-sync-sent.v1':
    case 'device-sync.kobo-sync-confirmed.v1':
    case 'device-sync.kobo-sync-reset.v1':
    case 'device-sync.kobo-state-known.v1':
      await foldKoboSync(trx, e, suffix);
      break;
    case 'device-sync.device-deleted.v1':
      await forgetKobos(trx, [e.data.device_id], suffix);
      await s.deleteFrom(t.koboRemoved).where('device_id', '=', e.data.device_id).execute();
      await s.deleteFrom(t.shelves).where('device_id', '=', e.data.device_id).execute();
      await s.deleteFrom(t.devices).where('id', '=', e.data.device_id).execute();
      break;
    case 'device-sync.user-devices-removed.v1':
      if (e.data.device_ids.length) {
        await forgetKobos(trx, e.data.device_ids, suffix);
        await s.deleteFrom(t.koboRemoved).where('device_id', 'in', e.data.device_ids).execute();
      }
      await s.deleteFrom(t.shelves).where('user_id', '=', e.data.user_id).execute();
      await s.deleteFrom(t.devices).where('user_id', '=', e.data.user_id).execute();
      break;
    case 'device-sync.shelf-added.v1':
      await s
        .insertInto(t.shelves)
        .values({ device_id: e.data.device_id, collection_id: e.data.collection_id, user_id: e.data.user_id, added_at: e.data.added_at })
        .onConflict((oc) => oc.columns(['device_id', 'collection_id']).doNothing())
        .execute();
      break;
    case 'device-sync.shelf-removed.v1':
      await s.deleteFrom(t.shelves).where('device_id', '=', e.data.device_id).where('collection_id', '=', e.data.collection_id).execute();
      break;
    case 'device-sync.shelves-cleared.v1':
      await s.deleteFrom(t.shelves).where('device_id', '=', e.data.device_id).execute();
      break;
    default:
      break;
  }
}
