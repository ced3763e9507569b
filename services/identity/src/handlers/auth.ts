// Register, login, refresh, logout.
import { randomUUID } from 'node:crypto';
import { isUniqueViolation, type Trx } from '@bindery/platform';
import type { IdentityDb } from '../store/database';
import { err, fail, Identity, Messages, ok, type Result } from '@bindery/contracts';
import { decideRegistration, parseRegister, userRegistered } from '../domain/register';
import { isUuid, readStrings, invalidRequest, validation, LOGIN_MAX, LOGIN_PASSWORD_MAX } from '../domain/validate';
import { initialUser } from '../domain/user';
import * as users from '../store/users';
import * as sessions from '../store/sessions';
import * as kosync from '../store/kosync';
import { internal, type Ctx } from './context';
import { underLoginLock } from './login-lock';
import { clientOf as oidcClientOf } from '../oidc/handlers';

export async function register(ctx: Ctx, req: Identity.IdentityRequest<'register'>): Promise<Result<Identity.AuthResult>> {
  const parsed = parseRegister(req.input);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  const callerIsAdmin = await ctx.isAdmin(req.caller);
  let hash: string;
  let verifier: string;
  try {
    [hash, verifier] = await Promise.all([ctx.hash(input.password), ctx.hash(kosync.kosyncKeyOf(input.password))]);
  } catch {
    return err(internal(Messages.failedToHashPassword));
  }
  try {
    return await ctx.tx(async (trx) => {
      await ctx.lockAdmins(trx);
      const settings = await ctx.settings(trx);
      const facts = {
        adminExists: (await users.adminIds(trx)).length > 0,
        registrationEnabled: settings.registration_enabled,
        callerIsAdmin,
        emailTaken: (await users.ownerOf(trx, 'email', input.email)) !== null,
        usernameTaken: (await users.ownerOf(trx, 'username', input.username)) !== null,
      };
      const role = decideRegistration(input, facts);
      if (!role.ok) return role;
      const id = randomUUID();
      await ctx.appendUser(trx, initialUser(id), [
        userRegistered(id, input, role.value, callerIsAdmin && req.caller ? req.caller.user_id : null, settings.new_users_see_all_libraries),
      ]);
      await users.setPasswordHash(trx, id, hash, verifier);
      const row = await users.findById(trx, id);
      if (!row) throw new Error(`user ${id} missing right after its registration`);
      return ok(await ctx.issueSession(trx, row, settings, undefined, req.client));
    });
  } catch (e) {
    // a concurrent profile update took the name between our check and insert
    if (isUniqueViolation(e, 'users_email_key')) return err(fail('conflict', Messages.emailExists));
    if (isUniqueViolation(e, 'users_username_key')) return err(fail('conflict', Messages.usernameExists));
    throw e;
  }
}

export async function login(ctx: Ctx, req: Identity.IdentityRequest<'login'>): Promise<Result<Identity.AuthResult>> {
  // OIDC_ONLY: people sign in through the provider (reader apps and devices keep their own credentials)
  if (oidcClientOf(ctx)?.settings.only) return err(fail('forbidden', Identity.OIDC_ONLY_MESSAGE));
  const f = readStrings(req.input, ['login', 'password'] as const);
  if (!f) return err(invalidRequest());
  if (f.login === '') return err(validation('login is required'));
  if (f.password === '') return err(validation('password is required'));
  if (f.login.length > LOGIN_MAX) return err(validation(`login must be at most ${LOGIN_MAX} characters`));
  if (f.password.length > LOGIN_PASSWORD_MAX) return err(validation(`password must be at most ${LOGIN_PASSWORD_MAX} characters`));
  return underLoginLock(
    ctx,
    f.login,
    {
      check: (user) => ctx.verify(user.password_hash, f.password),
      burn: () => ctx.burn(f.password),
      prepare: async (user) => {
        await untilValid(ctx, user.sessions_valid_after);
        const verifier = await missingVerifier(ctx, user.id, f.password);
        return verifier ? (trx) => kosync.captureVerifier(trx, user.id, user.password_hash, verifier) : null;
      },
    },
    (trx, user, settings) => ctx.issueSession(trx, user, settings, undefined, req.client),
  );
}

export async function refresh(ctx: Ctx, req: Identity.IdentityRequest<'refresh'>): Promise<Result<Identity.AuthResult>> {
  if (req.refresh_token === '') return err(validation('refresh_token is required'));
  const settings = await ctx.settings();
  const known = await sessions.ownerOf(ctx.db, req.refresh_token);
  if (known) await untilValid(ctx, await users.sessionsValidAfter(ctx.db, known));
  return ctx.tx(async (trx) => {
    // Credentials first, then the token row: the same order as a password reset, so the two serialise.
    const owner = await sessions.ownerOf(trx, req.refresh_token);
    if (owner) await users.lockCredentials(trx, owner);
    const now = ctx.rt.now();
    const r = await sessions.redeem(trx, req.refresh_token, now);
    if (!r.ok) {
      // a reused token leaked: its family is revoked, and so is every access token the family issued
      const userId = r.userId;
      if (r.reason === 'reused' && r.familyId && userId) {
        const tokens = await sessions.familyAccessTokens(trx, r.familyId, now);
        if (tokens.length > 0)
          await ctx.emit(
            trx,
            `sessions-${userId}`,
            'any',
            tokens.map((a) => ({ type: 'identity.session-revoked.v1', data: { user_id: userId, jti: a.jti, expires_at: a.expires_at.toISOString() } })),
          );
      }
      return err(fail('unauthorized', Messages.invalidRefreshToken));
    }
    const u = await users.findById(trx, r.userId);
    if (!u) return err(fail('unauthorized', Messages.invalidRefreshToken));
    const out = await ctx.issueSession(trx, u, settings, r.familyId);
    return ok({ ...out, user: users.toProfile(u, false) });
  });
}

export async function logout(ctx: Ctx, req: Identity.IdentityRequest<'logout'>): Promise<Result<{ message: string }>> {
  const now = ctx.rt.now();
  await ctx.tx(async (trx) => {
    if (req.refresh_token) await sessions.revokeByToken(trx, req.refresh_token, now);
    const c = req.caller;
    // the session's refresh family ends with it, whether or not the client sent its refresh token
    if (c?.jti) await sessions.revokeByAccessJti(trx, c.user_id, c.jti, now);
    if (c?.jti) {
      await ctx.emit(trx, `sessions-${c.user_id}`, 'any', [
        { type: 'identity.session-revoked.v1', data: { user_id: c.user_id, jti: c.jti, expires_at: c.exp ? new Date(c.exp * 1000).toISOString() : null } },
      ]);
    }
  });
  return ok({ message: 'logged out successfully' });
}

/**
 * Right after an admin reset, tokens carrying an `iat` in the reset's second would be refused
 * with the old ones (`iat` has whole seconds): wait out that second (at most 1 s) before issuing.
 */
async function untilValid(ctx: Ctx, validAfter: Date | null): Promise<void> {
  const wait = validAfter ? validAfter.getTime() - ctx.rt.now().getTime() : 0;
  if (wait > 0) await new Promise((r) => setTimeout(r, Math.min(wait, 1500)));
}

/** An account made before KOReader sync existed has no verifier yet: a good login makes one. */
export async function missingVerifier(ctx: Ctx, userId: string, password: string): Promise<string | null> {
  if ((await kosync.verifierOf(ctx.db, userId)) !== null) return null;
  return ctx.hash(kosync.kosyncKeyOf(password));
}

/** The access tokens of a refresh family end with it: each is a `session-revoked` event (the gateway refuses them at once). */
async function endFamily(ctx: Ctx, trx: Trx<IdentityDb>, userId: string, familyId: string, now: Date): Promise<void> {
  const tokens = await sessions.familyAccessTokens(trx, familyId, now);
  await sessions.revokeFamily(trx, familyId, now);
  if (tokens.length > 0)
    await ctx.emit(
      trx,
      `sessions-${userId}`,
      'any',
      tokens.map((a) => ({ type: 'identity.session-revoked.v1', data: { user_id: userId, jti: a.jti, expires_at: a.expires_at.toISOString() } })),
    );
}

/** Signs one of the caller's own sessions out; anyone else's is as absent as an unknown one. */
export async function revokeSession(ctx: Ctx, req: Identity.IdentityRequest<'session-revoke'>): Promise<Result<{ message: string }>> {
  if (!isUuid(req.session_id)) return err(fail('validation', Messages.invalidSessionId));
  const family = req.session_id.toLowerCase();
  return ctx.tx(async (trx) => {
    const now = ctx.rt.now();
    if (!(await sessions.liveFamilies(trx, req.caller.user_id, now)).includes(family)) return err(fail('not_found', Messages.sessionNotFound));
    await endFamily(ctx, trx, req.caller.user_id, family, now);
    return ok({ message: 'session signed out' });
  });
}

/** Signs out every session of the caller but the one making the request. */
export async function revokeOtherSessions(ctx: Ctx, req: Identity.IdentityRequest<'sessions-revoke-others'>): Promise<Result<{ message: string; signed_out: number }>> {
  return ctx.tx(async (trx) => {
    const now = ctx.rt.now();
    const mine = req.caller.jti ? await sessions.familyOfAccessJti(trx, req.caller.user_id, req.caller.jti) : null;
    const others = (await sessions.liveFamilies(trx, req.caller.user_id, now)).filter((f) => f !== mine);
    for (const f of others) await endFamily(ctx, trx, req.caller.user_id, f, now);
    return ok({ message: others.length === 1 ? 'signed out of 1 other session' : `signed out of ${others.length} other sessions`, signed_out: others.length });
  });
}
