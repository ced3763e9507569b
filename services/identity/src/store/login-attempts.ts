// Failed-login counters, one row per submitted login string, shared by every replica.
import type { DbOrTrx } from '@bindery/platform';
import type { Selectable } from 'kysely';
import type { IdentityDb, LoginAttemptsTable } from './database';
import type { AttemptRow } from '../domain/login-lock';
import { SCHEMA } from './migrations';

const t = (q: DbOrTrx<IdentityDb>) => q.withSchema(SCHEMA);

const toRow = (r: Selectable<LoginAttemptsTable> | undefined): AttemptRow | null =>
  r ? { failures: Number(r.failures), first_failed_at: r.first_failed_at, locked_until: r.locked_until } : null;

export async function read(q: DbOrTrx<IdentityDb>, login: string): Promise<AttemptRow | null> {
  return toRow(await t(q).selectFrom('login_attempts').selectAll().where('login', '=', login).executeTakeFirst());
}

/** The row locked for update (created empty first, so concurrent failures serialise on it). */
export async function lockRow(q: DbOrTrx<IdentityDb>, login: string): Promise<AttemptRow | null> {
  await t(q)
    .insertInto('login_attempts')
    .values({ login, failures: 0 })
    .onConflict((oc) => oc.column('login').doNothing())
    .execute();
  const row = toRow(await t(q).selectFrom('login_attempts').selectAll().where('login', '=', login).forUpdate().executeTakeFirst());
  return row && row.failures === 0 && !row.locked_until ? null : row;
}

export async function write(q: DbOrTrx<IdentityDb>, login: string, row: AttemptRow): Promise<void> {
  await t(q)
    .updateTable('login_attempts')
    .set({ failures: row.failures, first_failed_at: row.first_failed_at, locked_until: row.locked_until })
    .where('login', '=', login)
    .execute();
}

export async function clear(q: DbOrTrx<IdentityDb>, login: string): Promise<void> {
  await t(q).deleteFrom('login_attempts').where('login', '=', login).execute();
}

/** Forgets counters that can no longer matter: no lock in force and no failure within a day. */
export async function prune(q: DbOrTrx<IdentityDb>, now: Date): Promise<void> {
  const dayAgo = new Date(now.getTime() - 86_400_000);
  await t(q)
    .deleteFrom('login_attempts')
    .where((eb) => eb.and([eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]), eb.or([eb('first_failed_at', 'is', null), eb('first_failed_at', '<', dayAgo)])]))
    .execute();
}
