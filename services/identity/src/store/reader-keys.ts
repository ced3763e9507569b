// Reader-app keys: one per user, for OPDS clients that drop credentials on image and download
// requests and so need the secret in the path. Stored only as a SHA-256 hash, like refresh tokens;
// the table is the projection of `reader-key-changed` (store/projection.ts).
import { createHash, randomBytes } from 'node:crypto';
import type { DbOrTrx } from '@bindery/platform';
import type { IdentityDb } from './database';
import { SCHEMA } from './migrations';

const t = (q: DbOrTrx<IdentityDb>) => q.withSchema(SCHEMA);
/** the stream of a user's reader-key events (created, replaced, revoked) */
export const STREAM = (userId: string) => `reader-keys-${userId}`;
export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

/** A new key: the secret (shown once) and the hash that is kept. */
export function newKey(): { key: string; key_hash: string } {
  const key = randomBytes(32).toString('base64url');
  return { key, key_hash: hashKey(key) };
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
