import { execScript, type Migration } from '@bindery/platform';
import { DeviceSync } from '@bindery/contracts';

export const SCHEMA = DeviceSync.SOURCE;

export const migrations: Migration[] = [
  {
    name: 'device-sync-001',
    async up(trx, s) {
      await execScript(
        trx,
        `
        -- what identity says about each account: the role and the device limit
        create table ${s}.users (id uuid primary key, role text not null, max_devices integer not null);
        create table ${s}.devices (
          id uuid primary key,
          user_id uuid not null,
          name text not null,
          client text not null,
          model text not null,
          credential_hash text unique,
          created_at timestamptz not null,
          updated_at timestamptz not null
        );
        create index on ${s}.devices (user_id);
        -- Pending registrations: not in the log (they are not the user's data until approved), shared
        -- by every replica through this table, and cleared when no replica was alive (see replicas.ts).
        create table ${s}.pending (
          id text primary key,
          device_code_hash text not null unique,
          name text not null,
          client text not null,
          model text not null,
          status text not null,
          user_id uuid,
          device_id uuid,
          created_at timestamptz not null,
          expires_at timestamptz not null
        );
        create index on ${s}.pending (expires_at);
        create table ${s}.replicas (id text primary key, seen_at timestamptz not null);
        create table ${s}.shelves (
          device_id uuid not null,
          collection_id uuid not null,
          user_id uuid not null,
          added_at timestamptz not null,
          primary key (device_id, collection_id)
        );
        create index on ${s}.shelves (collection_id);
        -- the reading service's hand-picked collection members, followed from its events
        create table ${s}.collection_items (collection_id uuid not null, item_id uuid not null, primary key (collection_id, item_id));
        create table ${s}.queue (
          id uuid primary key,
          device_id uuid not null,
          user_id uuid not null,
          media_item_id uuid,
          action text not null,
          reason text not null,
          status text not null,
          attempts integer not null default 0,
          last_error text,
          created_at timestamptz not null,
          updated_at timestamptz not null
        );
        create index on ${s}.queue (user_id, device_id, status);
        create unique index on ${s}.queue (device_id, media_item_id, action);
      `,
      );
    },
  },
  {
    name: 'device-sync-002-sync-key',
    async up(trx, s) {
      // KOReader's stock sync: an argon2id hash of md5(sync key); the key itself is shown once
      await execScript(trx, `alter table ${s}.devices add column sync_key_verifier text, add column sync_key_issued_at timestamptz;`);
    },
  },
  {
    name: 'device-sync-003-kobo',
    async up(trx, s) {
      // a Kobo's store token (SHA-256 only) and which books it gets
      await execScript(trx, `alter table ${s}.devices add column kobo_token_hash text, add column kobo_books text not null default 'all';`);
    },
  },
  {
    name: 'device-sync-004-shelf-name',
    async up(trx, s) {
      // the collection's name when the shelf was made: a book that reaches device-sync late still says which shelf it came with
      await execScript(trx, `alter table ${s}.shelves add column collection_name text;`);
    },
  },
  {
    name: 'device-sync-005-kobo-sync',
    async up(trx, s) {
      // A Kobo's sync state (decision 116): what answers sent and the device confirmed, what they sent
      // that it has not confirmed yet, and its generation; folded from the kobo-sync events only.
      await execScript(
        trx,
        `
        create table ${s}.kobo_sent (device_id uuid not null, key text not null, ever text not null, sver text, primary key (device_id, key));
        create table ${s}.kobo_pending (device_id uuid not null, gen integer not null, key text not null, ever text, sver text, primary key (device_id, gen, key));
        create table ${s}.kobo_gen (device_id uuid primary key, gen integer not null, position bigint not null);
      `,
      );
    },
  },
];
