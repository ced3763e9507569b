import { sql } from 'kysely';
import { execScript, type Migration } from '@bindery/platform';

export const SCHEMA = 'gateway';

export const migrations: Migration[] = [
  {
    name: 'gateway-001',
    async up(trx, s) {
      await execScript(
        trx,
        `
        create table ${s}.auth_users (
          user_id uuid primary key,
          role text not null,
          deleted boolean not null default false,
          sessions_valid_after timestamptz
        );
        create table ${s}.revoked_tokens (
          jti text primary key,
          expires_at timestamptz
        );
        create index revoked_tokens_expiry_idx on ${s}.revoked_tokens (expires_at);
      `,
      );
    },
  },
];

migrations.push({
  name: 'gateway-002',
  async up(trx, s) {
    // library folders, for serving files without asking the catalog
    await execScript(trx, `create table ${s}.libraries (id uuid primary key, folders jsonb not null)`);
  },
});

migrations.push({
  name: 'gateway-003',
  async up(trx, s) {
    // the session that changed its own password keeps working past the cutoff
    await execScript(trx, `alter table ${s}.auth_users add column if not exists session_kept text`);
  },
});

migrations.push({
  name: 'gateway-004',
  async up(trx, s) {
    // the admin allowed this user to edit metadata and covers (issue 43): the caller carries it
    await execScript(trx, `alter table ${s}.auth_users add column if not exists can_edit_metadata boolean not null default false`);
  },
});

migrations.push({
  name: 'gateway-kobo-001',
  async up(trx, s) {
    // What each Kobo was sent (books `i:<id>`, tags `t:<id>`) with the versions it got, and what the
    // last answers sent that the device has not yet confirmed by presenting their sync token. Protocol
    // cursors, not user data (docs/decisions.md, "Native Kobo sync"): losing them means a full sync.
    await execScript(
      trx,
      `
      create table ${s}.kobo_sent (
        device_id uuid not null,
        key text not null,
        ever text not null,
        sver text,
        primary key (device_id, key)
      );
      create table ${s}.kobo_pending (
        device_id uuid not null,
        gen integer not null,
        key text not null,
        ever text,
        sver text,
        primary key (device_id, gen, key)
      );
      create table ${s}.kobo_gen (device_id uuid primary key, gen integer not null);
    `,
    );
  },
});

migrations.push({
  name: 'gateway-kobo-002',
  async up(trx, s) {
    // a sync page compares a range of book ids with what the device was sent in the same range
    // (kobo/sync-state.ts): by kind and id, as the page reads them
    await execScript(trx, `create index kobo_sent_by_id on ${s}.kobo_sent (device_id, left(key, 1), (substr(key, 3)::uuid))`);
  },
});

migrations.push({
  name: 'gateway-kobo-003',
  async up(trx, s) {
    // The Kobo sync state moved into the devices projection, folded from device-sync's events
    // (decision 116): the gateway's own tables go, and the projection's live ones start empty — what
    // a fold of the log gives, since no earlier event touches them (DEVICES.create makes them on a
    // first start and at a rebuild).
    await execScript(trx, `drop table if exists ${s}.kobo_sent, ${s}.kobo_pending, ${s}.kobo_gen`);
    if (await exists(trx, `${s}.dv_devices`)) {
      await execScript(
        trx,
        `
        create table if not exists ${s}.dv_kobo_sent (device_id uuid not null, key text not null, ever text not null, sver text, primary key (device_id, key));
        create index if not exists dv_kobo_sent_by_id on ${s}.dv_kobo_sent (device_id, left(key, 1), (substr(key, 3)::uuid));
        create table if not exists ${s}.dv_kobo_pending (device_id uuid not null, gen integer not null, key text not null, ever text, sver text, primary key (device_id, gen, key));
        create table if not exists ${s}.dv_kobo_gen (device_id uuid primary key, gen integer not null);
      `,
      );
    }
  },
});

/** Whether a table exists (`schema.table`). */
async function exists(trx: Parameters<Migration['up']>[0], table: string): Promise<boolean> {
  const { rows } = await sql<{ t: string | null }>`select to_regclass(${table})::text as t`.execute(trx);
  return rows[0]?.t != null;
}
