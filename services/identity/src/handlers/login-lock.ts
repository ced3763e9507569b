// The login lock flow, the one way a secret is checked for a login string (a login, HTTP Basic,
// KOReader sync): a lock answers first, an unknown login costs the same as a known one, a failure
// counts (`login-failed`, locking the login at the limit), a success clears the count
// (`login-failures-cleared`), and a password change since the check wins.
import { accountLockedMessage, err, fail, Messages, ok, tooManyAttemptsMessage, type Result } from '@bindery/contracts';
import type { Trx } from '@bindery/platform';
import { activeLock, afterFailure, remainingMinutes } from '../domain/login-lock';
import type { Settings } from '../domain/settings';
import type { IdentityDb } from '../store/database';
import * as attempts from '../store/login-attempts';
import * as users from '../store/users';
import type { Ctx } from './context';

export type LoginUser = NonNullable<Awaited<ReturnType<typeof users.findByLogin>>>;

export interface Secret {
  check(user: LoginUser): Promise<boolean>;
  /** as costly as `check`, for a login that names nobody */
  burn(): Promise<void>;
  /** after a good check, outside the transaction: may prepare a write for it */
  prepare?(user: LoginUser): Promise<((trx: Trx<IdentityDb>) => Promise<void>) | null>;
}

/** Checks `secret` for `login` under the lock rules; `signIn` makes the answer of a good one in the same transaction. */
export async function underLoginLock<T>(
  ctx: Ctx,
  login: string,
  secret: Secret,
  signIn: (trx: Trx<IdentityDb>, user: LoginUser, settings: Settings) => Promise<T>,
): Promise<Result<T>> {
  const now = ctx.rt.now();
  const lock = activeLock(await attempts.read(ctx.db, login), now);
  if (lock) return err(fail('login_locked', accountLockedMessage(remainingMinutes(lock, now))));
  const user = await users.findByLogin(ctx.db, login);
  let good = false;
  if (user) good = await secret.check(user);
  else await secret.burn();
  const settings = await ctx.settings();
  const then = good && user && secret.prepare ? await secret.prepare(user) : null;
  return ctx.tx(async (trx) => {
    // Parallel guesses may have locked the login while this one was being checked: the lock wins.
    const t = ctx.rt.now();
    const row = await attempts.lockRow(trx, login);
    const held = activeLock(row, t);
    if (held) return err(fail('login_locked', accountLockedMessage(remainingMinutes(held, t))));
    const version = await ctx.store.streamVersion(trx, attempts.streamOf(login));
    if (!good || !user) {
      const next = afterFailure(row, t, { maxAttempts: settings.login_max_attempts, lockMinutes: settings.login_lock_minutes });
      await ctx.emit(trx, attempts.streamOf(login), version, [
        {
          type: 'identity.login-failed.v1',
          data: { login, failures: next.failures, first_failed_at: next.first_failed_at.toISOString(), locked_until: next.locked_until?.toISOString() ?? null },
        },
      ]);
      if (next.lockedNow) return err(fail('login_locked', tooManyAttemptsMessage(settings.login_lock_minutes)));
      return err(fail('invalid_credentials', Messages.invalidCredentials));
    }
    // A password reset (or a deletion) committed since the check makes the old secret worthless.
    if ((await users.lockCredentials(trx, user.id)) !== user.password_hash) return err(fail('invalid_credentials', Messages.invalidCredentials));
    if (row) await ctx.emit(trx, attempts.streamOf(login), version, [{ type: 'identity.login-failures-cleared.v1', data: { login } }]);
    if (then) await then(trx);
    return ok(await signIn(trx, user, settings));
  });
}

/** Forgets counters that can no longer matter (no lock in force, no failure within a day), each by its event. */
export async function pruneLoginFailures(ctx: Ctx): Promise<void> {
  for (const login of await attempts.stale(ctx.db, ctx.rt.now())) {
    await ctx.tx(async (trx) => {
      await attempts.lockRow(trx, login);
      if (!(await attempts.stale(trx, ctx.rt.now())).includes(login)) return;
      const version = await ctx.store.streamVersion(trx, attempts.streamOf(login));
      await ctx.emit(trx, attempts.streamOf(login), version, [{ type: 'identity.login-failures-cleared.v1', data: { login } }]);
    });
  }
}
