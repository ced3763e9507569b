// KOReader's progress sync signs in with md5(password): a verifier of that digest (an argon2id hash
// of the md5 hex, never the md5 itself) sits beside the password hash; apart from migrations.ts so
// that file imports no store module.
import { execScript, type Migration } from '@bindery/platform';

export const kosyncMigration: Migration = {
  name: 'identity-kosync-001',
  async up(trx, s) {
    await execScript(trx, `alter table ${s}.credentials add column kosync_verifier text`);
  },
};
