// Reader-app keys: one per user, for OPDS clients that drop credentials on image and download
// requests and so need the secret in the path. Stored only as a SHA-256 hash, like refresh tokens.
import { createHash, randomBytes } from 'node:crypto';
import type { DbOrTrx } from '@bindery/platform';
import type { IdentityDb } from './database';
import { SCHEMA } from './migrations';

const t = (q: DbOrTrx<IdentityDb>) => q.withSchema(SCHEMA);
/** the stream of a user's reader-key events (created, replaced, revoked) */
export const STREAM = (userId: string) => `reader-keys-${userId}`;
export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

/** A new key for the user, replacing any earlier one (which stops working at once). */
export async function issue(q: DbOrTrx<IdentityDb>, userId: string, now: Date): Promise<{ key: string; created_at: Date }> {
  const key = randomBytes(32).toString('base64url');
  const row = { user_id: userId, key_hash: hashKey(key), created_at: now };
  await t(q)
    .insertInto('reader_keys')
    .values(row)
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ key_hash: row.key_hash, created_at: now }))
    .execute();
  return { key, created_at: now };
}

export async function revoke(q: DbOrTrx<IdentityDb>, userId: string): Promise<boolean> {
  const r = await t(q).deleteFrom('reader_keys').where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function createdAt(q: DbOrTrx<IdentityDb>, userId: string): Promise<Date | null> {
  const r = await t(q).selectFrom('reader_keys').select('created_at').where('user_id', '=', userId).executeTakeFirst();
  return r?.created_at ?? null;
}

/** The owner of a key and their current role, or null. */
export async function owner(q: DbOrTrx<IdentityDb>, key: string): Promise<{ user_id: string; role: 'user' | 'admin' } | null> {
  const r = await t(q)
    .selectFrom('reader_keys')
    .innerJoin('users', 'users.id', 'reader_keys.user_id')
    .select(['users.id as user_id', 'users.role as role'])
    .where('reader_keys.key_hash', '=', hashKey(key))
    .executeTakeFirst();
  return r ?? null;
}
