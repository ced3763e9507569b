// The KOReader sync verifier: an argon2id hash of md5(password) as hex, kept beside the password
// hash and replaced with it. KOReader's stock Progress sync sends that md5 as `x-auth-key`.
import { createHash } from 'node:crypto';
import type { DbOrTrx } from '@bindery/platform';
import type { IdentityDb } from './database';
import { SCHEMA } from './migrations';

const t = (q: DbOrTrx<IdentityDb>) => q.withSchema(SCHEMA);

/** What KOReader sends for a password: the lower-case hex MD5 of the password as typed (UTF-8). */
export const kosyncKeyOf = (password: string): string => createHash('md5').update(password, 'utf8').digest('hex');

export async function verifierOf(q: DbOrTrx<IdentityDb>, userId: string): Promise<string | null> {
  const r = await t(q).selectFrom('credentials').select('kosync_verifier').where('user_id', '=', userId).executeTakeFirst();
  return r?.kosync_verifier ?? null;
}

/** Sets the verifier when the stored password hash is still `passwordHash` (a change since wins). */
export async function captureVerifier(q: DbOrTrx<IdentityDb>, userId: string, passwordHash: string, verifier: string): Promise<void> {
  await t(q).updateTable('credentials').set({ kosync_verifier: verifier }).where('user_id', '=', userId).where('password_hash', '=', passwordHash).execute();
}
