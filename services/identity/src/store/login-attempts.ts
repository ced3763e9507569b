// Failed-login counters, one row per submitted login string, shared by every replica. The rows are
// written only by the projection of `login-failed` / `login-failures-cleared` (store/projection.ts).
import { sql, type Selectable } from 'kysely';
import type { DbOrTrx, Trx } from '@bindery/platform';
import type { AttemptRow } from '../domain/login-lock';
import type { IdentityDb, LoginAttemptsTable } from './database';
import { SCHEMA } from './migrations';

const t = (q: DbOrTrx<IdentityDb>) => q.withSchema(SCHEMA);

/** the stream of one login string's failures */
export const streamOf = (login: string) => `login-${login}`;

const toRow = (r: Selectable<LoginAttemptsTable> | undefined): AttemptRow | null =>
  r ? { failures: Number(r.failures), first_failed_at: r.first_failed_at, locked_until: r.locked_until } : null;

export async function read(q: DbOrTrx<IdentityDb>, login: string): Promise<AttemptRow | null> {
  return toRow(await t(q).selectFrom('login_attempts').selectAll().where('login', '=', login).executeTakeFirst());
}

/** The row, read under the login's lock until the transaction ends: concurrent attempts take turns. */
export async function lockRow(trx: Trx<IdentityDb>, login: string): Promise<AttemptRow | null> {
  await sql`select pg_advisory_xact_lock(hashtext(${`bindery.identity.login.${login}`}))`.execute(trx);
  return read(trx, login);
}

/** Logins whose counters can no longer matter: no lock in force and no failure within a day. */
export async function stale(q: DbOrTrx<IdentityDb>, now: Date): Promise<string[]> {
  const dayAgo = new Date(now.getTime() - 86_400_000);
  const rows = await t(q)
    .selectFrom('login_attempts')
    .select('login')
    .where((eb) => eb.and([eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]), eb.or([eb('first_failed_at', 'is', null), eb('first_failed_at', '<', dayAgo)])]))
    .execute();
  return rows.map((r) => r.login);
}
