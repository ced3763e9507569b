// The devices projection: each user's devices with the digest of their credential (how the gateway
// authenticates a device without a bus round trip), the verifier of their sync key for KOReader's
// stock sync (an argon2id hash of md5(key)), the collections shelved on each, and each Kobo's sync
// state (what answers sent it and it confirmed, what is pending, its generation: decision 116).
import { execScript } from '@bindery/platform';
import { DeviceSync } from '@bindery/contracts';
import { SCHEMA } from './migrations';
import type { Suffix } from './database';
import type { Projection } from './tables';

export const deviceTables = <S extends Suffix = ''>(suffix = '' as S) =>
  ({
    devices: `dv_devices${suffix}`,
    shelves: `dv_shelves${suffix}`,
    koboRemoved: `dv_kobo_removed${suffix}`,
    koboSent: `dv_kobo_sent${suffix}`,
    koboPending: `dv_kobo_pending${suffix}`,
    koboGen: `dv_kobo_gen${suffix}`,
  }) as const;

export const DEVICES: Projection = {
  name: 'devices',
  source: DeviceSync.SOURCE,
  consumer: 'gateway-devices-view',
  // 3: Kobo store tokens (SHA-256), which books a Kobo gets, and the books a Kobo removed from itself;
  // each Kobo's sync state (decision 116) came without a new version: no event before it touches those
  // tables, so the empty ones migration gateway-kobo-003 makes are what a fold from the log gives
  version: 3,
  tables: Object.values(deviceTables()),
  async create(trx, x) {
    const t = deviceTables(x);
    await execScript(
      trx,
      `
      create table ${SCHEMA}.${t.devices} (
        id uuid primary key,
        user_id uuid not null,
        credential_hash text unique,
        sync_key_verifier text,
        sync_key_issued_at timestamptz,
        kobo_token_hash text unique,
        kobo_books text not null default 'all',
        doc jsonb not null
      );
      create index on ${SCHEMA}.${t.devices} (user_id);
      create table ${SCHEMA}.${t.shelves} (
        device_id uuid not null,
        collection_id uuid not null,
        user_id uuid not null,
        added_at timestamptz not null,
        primary key (device_id, collection_id)
      );
      create index on ${SCHEMA}.${t.shelves} (user_id);
      create table ${SCHEMA}.${t.koboRemoved} (
        device_id uuid not null,
        item_id uuid not null,
        removed_at timestamptz not null,
        primary key (device_id, item_id)
      );
      create table ${SCHEMA}.${t.koboSent} (
        device_id uuid not null,
        key text not null,
        ever text not null,
        sver text,
        primary key (device_id, key)
      );
      -- a sync page compares a range of book ids with what the device was sent in the same range
      -- (kobo/sync-state.ts): by kind and id, as the page reads them
      create index on ${SCHEMA}.${t.koboSent} (device_id, left(key, 1), (substr(key, 3)::uuid));
      create table ${SCHEMA}.${t.koboPending} (
        device_id uuid not null,
        gen integer not null,
        key text not null,
        ever text,
        sver text,
        primary key (device_id, gen, key)
      );
      create table ${SCHEMA}.${t.koboGen} (device_id uuid primary key, gen integer not null);
    `,
    );
  },
};
