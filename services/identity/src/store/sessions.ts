// Refresh tokens: stored only as SHA-256 hashes, single-use, rotating within a family.
import { sql } from 'kysely';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { DbOrTrx } from '@bindery/platform';
import type { IdentityDb } from './database';
import { SCHEMA } from './migrations';

const t = (q: DbOrTrx<IdentityDb>) => q.withSchema(SCHEMA);
const hash = (token: string) => createHash('sha256').update(token).digest('hex');

export async function issueRefreshToken(
  q: DbOrTrx<IdentityDb>,
  userId: string,
  ttlSeconds: number,
  now: Date,
  familyId: string = randomUUID(),
  accessJti: string | null = null,
): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await t(q)
    .insertInto('refresh_tokens')
    .values({
      token_hash: hash(token),
      user_id: userId,
      family_id: familyId,
      expires_at: new Date(now.getTime() + ttlSeconds * 1000),
      access_jti: accessJti,
    })
    .execute();
  return token;
}

export type Redeem = { ok: true; userId: string; familyId: string } | { ok: false; reason: 'unknown' | 'expired' | 'revoked' | 'reused'; userId?: string; familyId?: string };

/**
 * Marks a refresh token used, under a row lock so two concurrent redeems cannot both win.
 * A second use of the same token means it leaked: the whole family is revoked.
 */
export async function redeem(q: DbOrTrx<IdentityDb>, token: string, now: Date): Promise<Redeem> {
  const row = await t(q).selectFrom('refresh_tokens').selectAll().where('token_hash', '=', hash(token)).forUpdate().executeTakeFirst();
  if (!row) return { ok: false, reason: 'unknown' };
  if (row.revoked_at) return { ok: false, reason: 'revoked', userId: row.user_id };
  if (row.used_at) {
    await revokeFamily(q, row.family_id, now);
    return { ok: false, reason: 'reused', userId: row.user_id, familyId: row.family_id };
  }
  if (new Date(row.expires_at).getTime() <= now.getTime()) return { ok: false, reason: 'expired', userId: row.user_id };
  await t(q).updateTable('refresh_tokens').set({ used_at: now }).where('token_hash', '=', row.token_hash).execute();
  return { ok: true, userId: row.user_id, familyId: row.family_id };
}

export async function revokeFamily(q: DbOrTrx<IdentityDb>, familyId: string, now: Date): Promise<void> {
  await t(q).updateTable('refresh_tokens').set({ revoked_at: now }).where('family_id', '=', familyId).where('revoked_at', 'is', null).execute();
}

/** Revokes the family of a presented token; returns its user, if the token was known. */
export async function revokeByToken(q: DbOrTrx<IdentityDb>, token: string, now: Date): Promise<string | null> {
  const row = await t(q).selectFrom('refresh_tokens').select(['family_id', 'user_id']).where('token_hash', '=', hash(token)).executeTakeFirst();
  if (!row) return null;
  await revokeFamily(q, row.family_id, now);
  return row.user_id;
}

/** Revokes the family whose refresh token was issued with this access token (a logout by access token). */
export async function revokeByAccessJti(q: DbOrTrx<IdentityDb>, userId: string, jti: string, now: Date): Promise<void> {
  const row = await t(q).selectFrom('refresh_tokens').select('family_id').where('access_jti', '=', jti).where('user_id', '=', userId).executeTakeFirst();
  if (row) await revokeFamily(q, row.family_id, now);
}

/** Revokes every refresh family of the user but `keepFamily` (the session making a change keeps going). */
export async function revokeAllForUser(q: DbOrTrx<IdentityDb>, userId: string, now: Date, keepFamily: string | null = null): Promise<void> {
  let u = t(q).updateTable('refresh_tokens').set({ revoked_at: now }).where('user_id', '=', userId).where('revoked_at', 'is', null);
  if (keepFamily) u = u.where('family_id', '<>', keepFamily);
  await u.execute();
}

/** The refresh family an access token was issued with, if any. */
export async function familyOfAccessJti(q: DbOrTrx<IdentityDb>, userId: string, jti: string): Promise<string | null> {
  const row = await t(q).selectFrom('refresh_tokens').select('family_id').where('access_jti', '=', jti).where('user_id', '=', userId).executeTakeFirst();
  return row?.family_id ?? null;
}

/** The access tokens a family issued that may still be unexpired: their jti and when each expires. */
export async function familyAccessTokens(q: DbOrTrx<IdentityDb>, familyId: string, now: Date): Promise<{ jti: string; expires_at: Date }[]> {
  const rows = await t(q)
    .selectFrom('refresh_tokens')
    .select(['access_jti', 'expires_at'])
    .where('family_id', '=', familyId)
    .where('access_jti', 'is not', null)
    .where('expires_at', '>', now)
    .execute();
  return rows.flatMap((r) => (r.access_jti === null ? [] : [{ jti: r.access_jti, expires_at: r.expires_at }]));
}

/** The user's refresh families that may still be used: not revoked, with a token not yet expired. */
export async function liveFamilies(q: DbOrTrx<IdentityDb>, userId: string, now: Date): Promise<string[]> {
  const rows = await t(q)
    .selectFrom('refresh_tokens')
    .select('family_id')
    .distinct()
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .execute();
  return rows.map((r) => r.family_id);
}

export async function pruneExpired(q: DbOrTrx<IdentityDb>, now: Date): Promise<void> {
  await t(q).deleteFrom('refresh_tokens').where('expires_at', '<', sql<Date>`${now}::timestamptz - interval '1 day'`).execute();
}

export async function ownerOf(q: DbOrTrx<IdentityDb>, token: string): Promise<string | null> {
  const r = await t(q).selectFrom('refresh_tokens').select('user_id').where('token_hash', '=', hash(token)).executeTakeFirst();
  return r?.user_id ?? null;
}
