// Credentials of reader apps: HTTP Basic checked like a login (same failure count and lock, no
// session issued), and per-user reader keys for apps that cannot send credentials on every request.
import { accountLockedMessage, err, fail, Messages, ok, tooManyAttemptsMessage, type Identity, type Result } from '@bindery/contracts';
import { activeLock, afterFailure, remainingMinutes } from '../domain/login-lock';
import { invalidRequest, readStrings, validation, LOGIN_MAX, LOGIN_PASSWORD_MAX } from '../domain/validate';
import * as users from '../store/users';
import * as attempts from '../store/login-attempts';
import * as keys from '../store/reader-keys';
import * as kosync from '../store/kosync';
import { missingVerifier } from './auth';
import type { Trx } from '@bindery/platform';
import type { IdentityDb } from '../store/database';
import type { Ctx } from './context';

export interface Verified {
  user_id: string;
  role: Identity.Role;
}

/** The login rules (lock first, a failure counts, success clears the count) without a session. */
export async function verifyCredentials(ctx: Ctx, req: Identity.IdentityRequest<'credentials-verify'>): Promise<Result<Verified>> {
  const f = readStrings(req.input, ['login', 'password'] as const);
  if (!f) return err(invalidRequest());
  if (f.login === '' || f.password === '') return err(fail('invalid_credentials', Messages.invalidCredentials));
  if (f.login.length > LOGIN_MAX) return err(validation(`login must be at most ${LOGIN_MAX} characters`));
  if (f.password.length > LOGIN_PASSWORD_MAX) return err(validation(`password must be at most ${LOGIN_PASSWORD_MAX} characters`));
  return underLoginLock(ctx, f.login, {
    check: (user) => ctx.verify(user.password_hash, f.password),
    burn: () => ctx.burn(f.password),
    // an account made before KOReader sync gets its verifier at a good sign-in
    afterGood: async (user) => {
      const verifier = await missingVerifier(ctx, user.id, f.password);
      return verifier ? (trx) => kosync.captureVerifier(trx, user.id, user.password_hash, verifier) : null;
    },
  });
}

type LoginUser = NonNullable<Awaited<ReturnType<typeof users.findByLogin>>>;

/**
 * A secret checked for `login` under the login lock rules, without a session: a lock answers first,
 * an unknown login costs the same as a known one (`burn`), a failure counts, a success clears the
 * count, and a password change since the check wins. `afterGood` may prepare a write for the same
 * transaction.
 */
export async function underLoginLock(
  ctx: Ctx,
  login: string,
  secret: { check(user: LoginUser): Promise<boolean>; burn(): Promise<void>; afterGood?(user: LoginUser): Promise<((trx: Trx<IdentityDb>) => Promise<void>) | null> },
): Promise<Result<Verified>> {
  const now = ctx.rt.now();
  const lock = activeLock(await attempts.read(ctx.db, login), now);
  if (lock) return err(fail('login_locked', accountLockedMessage(remainingMinutes(lock, now))));
  const user = await users.findByLogin(ctx.db, login);
  let good = false;
  if (user) good = await secret.check(user);
  else await secret.burn();
  const settings = await ctx.settings();
  const then = good && user && secret.afterGood ? await secret.afterGood(user) : null;
  return ctx.tx(async (trx) => {
    const t = ctx.rt.now();
    const row = await attempts.lockRow(trx, login);
    const held = activeLock(row, t);
    if (held) return err(fail('login_locked', accountLockedMessage(remainingMinutes(held, t))));
    if (!good || !user) {
      const next = afterFailure(row, t, { maxAttempts: settings.login_max_attempts, lockMinutes: settings.login_lock_minutes });
      await attempts.write(trx, login, next);
      if (next.lockedNow) return err(fail('login_locked', tooManyAttemptsMessage(settings.login_lock_minutes)));
      return err(fail('invalid_credentials', Messages.invalidCredentials));
    }
    if ((await users.lockCredentials(trx, user.id)) !== user.password_hash) return err(fail('invalid_credentials', Messages.invalidCredentials));
    if (row) await attempts.clear(trx, login);
    if (then) await then(trx);
    return ok({ user_id: user.id, role: user.role });
  });
}

export interface ReaderKeyInfo {
  exists: boolean;
  created_at: string | null;
  /** the key itself: only in the answer that created it */
  key?: string;
}

/** The caller's own reader key: read whether one exists, make a new one, or revoke it. */
export async function readerKey(ctx: Ctx, req: Identity.IdentityRequest<'reader-key'>): Promise<Result<ReaderKeyInfo>> {
  const me = await users.findById(ctx.db, req.caller.user_id);
  if (!me) return err(fail('unauthorized', Messages.invalidToken));
  switch (req.action) {
    case 'get': {
      const at = await keys.createdAt(ctx.db, me.id);
      return ok({ exists: at !== null, created_at: at?.toISOString() ?? null });
    }
    case 'create': {
      const k = await ctx.tx(async (trx) => {
        const issued = await keys.issue(trx, me.id, ctx.rt.now());
        await ctx.store.append(trx, keys.STREAM(me.id), 'any', [{ type: 'identity.reader-key-changed.v1', data: { user_id: me.id, action: 'created' } }]);
        return issued;
      });
      return ok({ exists: true, created_at: k.created_at.toISOString(), key: k.key });
    }
    case 'revoke':
      await ctx.tx(async (trx) => {
        if (await keys.revoke(trx, me.id))
          await ctx.store.append(trx, keys.STREAM(me.id), 'any', [{ type: 'identity.reader-key-changed.v1', data: { user_id: me.id, action: 'revoked' } }]);
      });
      return ok({ exists: false, created_at: null });
  }
}

export async function verifyReaderKey(ctx: Ctx, req: Identity.IdentityRequest<'reader-key-verify'>): Promise<Result<Verified>> {
  const o = req.key.length > 0 && req.key.length <= 128 ? await keys.owner(ctx.db, req.key) : null;
  return o ? ok(o) : err(fail('unauthorized', Messages.invalidToken));
}

export const handlers = {
  'credentials-verify': verifyCredentials,
  'reader-key': readerKey,
  'reader-key-verify': verifyReaderKey,
};
