// The devices projection: each user's devices with the digest of their credential (how the gateway
// authenticates a device without a bus round trip), the verifier of their sync key for KOReader's
// stock sync (an argon2id hash of md5(key)), and the collections shelved on each.
import { execScript } from '@bindery/platform';
import { DeviceSync } from '@bindery/contracts';
import { SCHEMA } from './migrations';
import type { Suffix } from './database';
import type { Projection } from './tables';

export const deviceTables = <S extends Suffix = ''>(suffix = '' as S) =>
  ({ devices: `dv_devices${suffix}`, shelves: `dv_shelves${suffix}`, koboRemoved: `dv_kobo_removed${suffix}` }) as const;

export const DEVICES: Projection = {
  name: 'devices',
  source: DeviceSync.SOURCE,
  consumer: 'gateway-devices-view',
  // 3: Kobo store tokens (SHA-256), which books a Kobo gets, and the books a Kobo removed from itself
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
    `,
    );
  },
};
