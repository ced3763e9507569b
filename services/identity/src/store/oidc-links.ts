// Which account a provider's subject is: the projection of `identity.oidc-linked.v1` (one subject
// per account and provider; a deleted account's links go with its row).
import type { DbOrTrx } from '@bindery/platform';
import type { IdentityDb } from './database';
import { SCHEMA } from './migrations';

const t = (q: DbOrTrx<IdentityDb>) => q.withSchema(SCHEMA);

export async function userOf(q: DbOrTrx<IdentityDb>, issuer: string, subject: string): Promise<string | null> {
  const r = await t(q).selectFrom('oidc_links').select('user_id').where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
  return r?.user_id ?? null;
}

/** The user's link (the latest, should the provider's issuer have changed), or null. */
export async function anyLinkOf(q: DbOrTrx<IdentityDb>, userId: string): Promise<{ subject: string; linked_at: Date } | null> {
  const r = await t(q).selectFrom('oidc_links').select(['subject', 'linked_at']).where('user_id', '=', userId).orderBy('linked_at', 'desc').executeTakeFirst();
  return r ?? null;
}

/** The projection's write, in `schema` (a replay beside the live tables uses another). */
export async function insert(q: DbOrTrx<IdentityDb>, row: { issuer: string; subject: string; user_id: string; linked_at: string }, schema = SCHEMA): Promise<void> {
  // a later link of the same account at the same provider replaces the earlier one
  await q.withSchema(schema).deleteFrom('oidc_links').where('user_id', '=', row.user_id).where('issuer', '=', row.issuer).execute();
  await q.withSchema(schema).insertInto('oidc_links').values(row).execute();
}
