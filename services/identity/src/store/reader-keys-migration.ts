// The reader-key table (store/reader-keys.ts); apart from it so migrations.ts imports no store module.
import { execScript, type Migration } from '@bindery/platform';

export const readerKeyMigration: Migration = {
  name: 'identity-reader-keys-001',
  async up(trx, s) {
    await execScript(
      trx,
      `
      create table ${s}.reader_keys (
        user_id uuid primary key references ${s}.users(id) on delete cascade,
        key_hash text not null unique,
        created_at timestamptz not null default now()
      );
    `,
    );
  },
};
