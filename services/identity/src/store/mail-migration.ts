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
