// The users table: identity's own read model, written in the same transaction as the events.
import { type Selectable, sql } from 'kysely';
import { toIso, type DbOrTrx } from '@bindery/platform';
import type { IdentityDb, UsersTable } from './database';
import type { Identity } from '@bindery/contracts';
import { SCHEMA } from './migrations';

/** A users row as read (every column). */
export type UserRow = Selectable<UsersTable>;

const t = (q: DbOrTrx<IdentityDb>) => q.withSchema(SCHEMA);

export async function findById(q: DbOrTrx<IdentityDb>, id: string): Promise<UserRow | undefined> {
  return t(q).selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Login by e-mail or username, both case-insensitive. */
export async function findByLogin(q: DbOrTrx<IdentityDb>, login: string): Promise<(UserRow & { password_hash: string; sessions_valid_after: Date | null }) | undefined> {
  const l = login.trim().toLowerCase();
  return t(q)
    .selectFrom('users')
    .innerJoin('credentials', 'credentials.user_id', 'users.id')
    .selectAll('users')
    .select(['credentials.password_hash', 'credentials.sessions_valid_after'])
    .where((eb) => eb.or([eb(sql`lower(email)`, '=', l), eb(sql`lower(username)`, '=', l)]))
    .orderBy(sql`lower(email) = ${l}`, 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function ownerOf(q: DbOrTrx<IdentityDb>, field: 'email' | 'username', value: string): Promise<string | null> {
  const r = await t(q)
    .selectFrom('users')
    .select('id')
    .where(sql`lower(${sql.ref(field)})`, '=', value.toLowerCase())
    .executeTakeFirst();
  return r?.id ?? null;
}

/** Admin ids, oldest account first ("the first other admin"). */
export async function adminIds(q: DbOrTrx<IdentityDb>): Promise<string[]> {
  return (await t(q).selectFrom('users').select('id').where('role', '=', 'admin').orderBy('seq').execute()).map((r) => r.id);
}

export async function listUsers(q: DbOrTrx<IdentityDb>): Promise<UserRow[]> {
  return t(q).selectFrom('users').selectAll().orderBy('seq').execute();
}

export async function passwordHash(q: DbOrTrx<IdentityDb>, id: string): Promise<string | undefined> {
  const r = await t(q).selectFrom('credentials').select('password_hash').where('user_id', '=', id).executeTakeFirst();
  return r?.password_hash;
}

/** Sets the password hash, and with it the KOReader sync verifier (store/kosync.ts) of the same password. */
export async function setPasswordHash(q: DbOrTrx<IdentityDb>, id: string, hash: string, kosyncVerifier: string | null = null): Promise<void> {
  await t(q)
    .insertInto('credentials')
    .values({ user_id: id, password_hash: hash, kosync_verifier: kosyncVerifier })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ password_hash: hash, kosync_verifier: kosyncVerifier, changed_at: sql`now()` }))
    .execute();
}

export const toProfile = (u: UserRow, withTheme: boolean): Identity.UserProfile => ({
  id: u.id,
  email: u.email,
  username: u.username,
  first_name: u.first_name,
  last_name: u.last_name,
  role: u.role,
  ...(withTheme && u.theme !== '' ? { theme: u.theme } : {}),
  // the profile (not the sign-in answer's user) says what the admin allowed beyond the role
  ...(withTheme && u.can_edit_metadata ? { can_edit_metadata: true } : {}),
  ...(withTheme && u.language !== '' ? { language: u.language } : {}),
  ...(withTheme && u.share_statistics ? { share_statistics: true } : {}),
});

export const toRecord = (u: UserRow): Identity.UserRecord => ({
  id: u.id,
  email: u.email,
  username: u.username,
  first_name: u.first_name,
  last_name: u.last_name,
  role: u.role,
  theme: u.theme,
  timezone: u.timezone,
  max_devices: u.max_devices,
  device_count: u.device_count,
  can_edit_metadata: u.can_edit_metadata,
  created_at: toIso(u.created_at),
  updated_at: toIso(u.updated_at),
});

/** The stored hash, share-locked until the transaction ends (a reset or a deletion waits for it). */
export async function lockCredentials(q: DbOrTrx<IdentityDb>, id: string): Promise<string | undefined> {
  const r = await t(q).selectFrom('credentials').select('password_hash').where('user_id', '=', id).forShare().executeTakeFirst();
  return r?.password_hash;
}

/** When sessions of this user start to count again after an admin reset (null: always). */
export async function sessionsValidAfter(q: DbOrTrx<IdentityDb>, id: string): Promise<Date | null> {
  const r = await t(q).selectFrom('credentials').select('sessions_valid_after').where('user_id', '=', id).executeTakeFirst();
  return r?.sessions_valid_after ?? null;
}

export async function setSessionsValidAfter(q: DbOrTrx<IdentityDb>, id: string, at: Date): Promise<void> {
  await t(q).updateTable('credentials').set({ sessions_valid_after: at }).where('user_id', '=', id).execute();
}
