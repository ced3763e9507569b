// Folds device-sync's events into the devices projection (credentials, public records, shelves).
import { DeviceSync, type StoredEvent } from '@bindery/contracts';
import { eventSchemas, type Trx } from '@bindery/platform';
import { SCHEMA } from './migrations';
import { deviceTables } from './device-tables';
import type { GatewayDb, Suffix } from './database';

/** A deleted Kobo's sync cursors (gateway-local, not a projection: see kobo/sync-state.ts) go with it. */
async function forgetKobos(trx: Trx<GatewayDb>, ids: string[]): Promise<void> {
  for (const table of ['kobo_sent', 'kobo_pending', 'kobo_gen'] as const) await trx.withSchema(SCHEMA).deleteFrom(table).where('device_id', 'in', ids).execute();
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
      break;
    case 'device-sync.device-deleted.v1':
      await forgetKobos(trx, [e.data.device_id]);
      await s.deleteFrom(t.koboRemoved).where('device_id', '=', e.data.device_id).execute();
      await s.deleteFrom(t.shelves).where('device_id', '=', e.data.device_id).execute();
      await s.deleteFrom(t.devices).where('id', '=', e.data.device_id).execute();
      break;
    case 'device-sync.user-devices-removed.v1':
      if (e.data.device_ids.length) {
        await forgetKobos(trx, e.data.device_ids);
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
