// The links of accounts to an OpenID provider's subjects (store/oidc-links.ts, issue 47); apart so
// migrations.ts imports no store module.
import { execScript, type Migration } from '@bindery/platform';

export const oidcMigration: Migration = {
  name: 'identity-oidc-001',
  async up(trx, s) {
    await execScript(
      trx,
      `
      create table ${s}.oidc_links (
        issuer text not null,
        subject text not null,
        user_id uuid not null references ${s}.users(id) on delete cascade,
        linked_at timestamptz not null,
        primary key (issuer, subject)
      );
      create unique index oidc_links_user_issuer_key on ${s}.oidc_links (user_id, issuer);
    `,
    );
  },
};
