import { execScript, type Migration } from '@bindery/platform';
import { kosyncMigration } from './kosync-migration';
import { readerKeyMigration } from './reader-keys-migration';
import { oidcMigration } from './oidc-migration';
import { mailMigration, sendsMigration } from './mail-migration';

export const SCHEMA = 'identity';

export const migrations: Migration[] = [
  {
    name: 'identity-001',
    async up(trx, s) {
      await execScript(
        trx,
        `
        create table ${s}.users (
          id uuid primary key,
          email text not null,
          username text not null,
          first_name text not null default '',
          last_name text not null default '',
          role text not null check (role in ('user','admin')),
          theme text not null default '',
          timezone text not null default 'UTC',
          max_devices integer not null default 5,
          device_count integer not null default 0,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now(),
          seq bigserial not null
        );
        create unique index users_email_key on ${s}.users (lower(email));
        create unique index users_username_key on ${s}.users (lower(username));
        create index users_role_idx on ${s}.users (role, seq);
        create table ${s}.credentials (
          user_id uuid primary key references ${s}.users(id) on delete cascade,
          password_hash text not null,
          changed_at timestamptz not null default now()
        );
        create table ${s}.refresh_tokens (
          token_hash text primary key,
          user_id uuid not null references ${s}.users(id) on delete cascade,
          family_id uuid not null,
          expires_at timestamptz not null,
          used_at timestamptz,
          revoked_at timestamptz,
          created_at timestamptz not null default now()
        );
        create index refresh_tokens_family_idx on ${s}.refresh_tokens (family_id);
        create index refresh_tokens_user_idx on ${s}.refresh_tokens (user_id);
        create table ${s}.login_attempts (
          login text primary key,
          failures integer not null,
          first_failed_at timestamptz,
          locked_until timestamptz
        );
        create table ${s}.settings (key text primary key, value jsonb not null, updated_at timestamptz not null default now());
        create table ${s}.config (key text primary key, value text not null, updated_at timestamptz not null default now());
      `,
      );
    },
  },
  {
    name: 'identity-002',
    async up(trx, s) {
      // tokens issued before this instant are refused: set by an admin password reset
      await execScript(trx, `alter table ${s}.credentials add column sessions_valid_after timestamptz`);
    },
  },
  {
    name: 'identity-003',
    async up(trx, s) {
      // the access token issued with each refresh token: logging out with it ends the family
      await execScript(
        trx,
        `
        alter table ${s}.refresh_tokens add column access_jti text;
        create index refresh_tokens_access_jti_idx on ${s}.refresh_tokens (access_jti);
      `,
      );
    },
  },
  readerKeyMigration,
  kosyncMigration,
  {
    name: 'identity-004',
    async up(trx, s) {
      // an admin allows a user to edit metadata and covers (issue 43, identity.permissions-changed.v1)
      await execScript(trx, `alter table ${s}.users add column if not exists can_edit_metadata boolean not null default false`);
    },
  },
  mailMigration,
  oidcMigration,
  sendsMigration,
  {
    name: 'identity-005-language',
    async up(trx, s) {
      // the language a person chose for the pages (issue 48); '' while none is chosen
      await execScript(trx, `alter table ${s}.users add column if not exists language text not null default ''`);
    },
  },
  {
    name: 'identity-006-share-statistics',
    async up(trx, s) {
      // the person lets admins see their reading statistics (decision 120); written by the projection alone
      await execScript(trx, `alter table ${s}.users add column if not exists share_statistics boolean not null default false`);
    },
  },
];
