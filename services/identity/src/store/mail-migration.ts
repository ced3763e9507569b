import { execScript, type Migration } from '@bindery/platform';

/** Reset links, invitations and e-reader addresses (issue 47): projections of identity's mail events. */
export const mailMigration: Migration = {
  name: 'identity-mail-001',
  async up(trx, s) {
    await execScript(
      trx,
      `
      create table ${s}.password_resets (
        token_hash text primary key,
        user_id uuid not null references ${s}.users(id) on delete cascade,
        requested_at timestamptz not null,
        expires_at timestamptz not null,
        used_at timestamptz
      );
      create index password_resets_user_idx on ${s}.password_resets (user_id, requested_at);
      create table ${s}.invitations (
        id uuid primary key,
        email text not null,
        role text not null check (role in ('user','admin')),
        all_libraries boolean not null,
        library_ids jsonb not null,
        token_hash text not null unique,
        expires_at timestamptz not null,
        invited_by uuid not null,
        created_at timestamptz not null,
        accepted_by uuid,
        ended_at timestamptz
      );
      create index invitations_email_idx on ${s}.invitations (lower(email));
      alter table ${s}.users add column if not exists ereader_address text not null default '';
    `,
    );
  },
};

/** Books sent to e-reader addresses (issue 47): the projection of identity.book-send-*.v1. */
export const sendsMigration: Migration = {
  name: 'identity-mail-002',
  async up(trx, s) {
    await execScript(
      trx,
      `
      create table ${s}.book_sends (
        id uuid primary key,
        user_id uuid not null references ${s}.users(id) on delete cascade,
        item_id uuid not null,
        title text not null,
        format text not null,
        file_name text not null,
        size bigint not null,
        address text not null,
        convert_from text,
        status text not null check (status in ('pending','sent','failed')),
        attempts integer not null default 0,
        detail text not null default '',
        next_attempt_at timestamptz,
        claimed_until timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index book_sends_user_idx on ${s}.book_sends (user_id, created_at desc);
      create index book_sends_due_idx on ${s}.book_sends (next_attempt_at) where status = 'pending';
    `,
    );
  },
};
