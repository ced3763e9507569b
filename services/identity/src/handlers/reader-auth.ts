// Credentials of reader apps: HTTP Basic checked like a login (same failure count and lock, no
// session issued), and per-user reader keys for apps that cannot send credentials on every request.
import { err, fail, Messages, ok, type Identity, type Result } from '@bindery/contracts';
import { invalidRequest, readStrings, validation, LOGIN_MAX, LOGIN_PASSWORD_MAX } from '../domain/validate';
import * as users from '../store/users';
import * as keys from '../store/reader-keys';
import * as kosync from '../store/kosync';
import { missingVerifier } from './auth';
import type { Trx } from '@bindery/platform';
import type { IdentityDb } from '../store/database';
import type { Ctx } from './context';
import { type LoginUser, underLoginLock } from './login-lock';

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
  return underLoginLock(
    ctx,
    f.login,
    {
      check: (user) => ctx.verify(user.password_hash, f.password),
      burn: () => ctx.burn(f.password),
      // an account made before KOReader sync gets its verifier at a good sign-in
      prepare: async (user) => {
        const verifier = await missingVerifier(ctx, user.id, f.password);
        return verifier ? (trx) => kosync.captureVerifier(trx, user.id, user.password_hash, verifier) : null;
      },
    },
    verified,
  );
}

/** A good check without a session: who it was, with their role now. */
export const verified = async (_trx: unknown, user: LoginUser): Promise<Verified> => ({ user_id: user.id, role: user.role });

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
      const { key, key_hash } = keys.newKey();
      const created_at = ctx.rt.now().toISOString();
      await ctx.tx(async (trx) => {
        const version = await ctx.store.streamVersion(trx, keys.STREAM(me.id));
        await ctx.emit(trx, keys.STREAM(me.id), version, [{ type: 'identity.reader-key-changed.v1', data: { user_id: me.id, action: 'created', key_hash, created_at } }]);
      });
      return ok({ exists: true, created_at, key });
    }
    case 'revoke':
      await ctx.tx((trx) => revokeReaderKey(ctx, trx, me.id));
      return ok({ exists: false, created_at: null });
  }
}

/** Revokes the user's reader key, if there is one (an event only then). */
export async function revokeReaderKey(ctx: Ctx, trx: Trx<IdentityDb>, userId: string): Promise<void> {
  const version = await ctx.store.streamVersion(trx, keys.STREAM(userId));
  if ((await keys.createdAt(trx, userId)) === null) return;
  await ctx.emit(trx, keys.STREAM(userId), version, [{ type: 'identity.reader-key-changed.v1', data: { user_id: userId, action: 'revoked' } }]);
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
