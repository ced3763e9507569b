// Profile read and update, the single-field setters, password change and account deletion.
import { err, fail, Messages, ok, type Identity, type Result } from '@bindery/contracts';
import { isUniqueViolation } from '@bindery/platform';
import { decideProfileUpdate, parseField, parseProfile } from '../domain/update-profile';
import { decidePasswordChange, parsePasswordChange, sessionCutoff } from '../domain/change-password';
import { decideDelete } from '../domain/delete-user';
import { stateProfiles, type Ev } from '../domain/user';
import * as users from '../store/users';
import { kosyncKeyOf } from '../store/kosync';
import * as sessions from '../store/sessions';
import { revokeReaderKey } from './reader-auth';
import { internal, type Ctx } from './context';

type Msg = { message: string };
const notFound = () => err(fail('user_not_found', Messages.userNotFound));

export async function getProfile(ctx: Ctx, req: Identity.IdentityRequest<'profile-get'>): Promise<Result<Identity.UserProfile>> {
  const id = req.caller.user_id;
  const p = await ctx.profiles.get(id, async () => {
    const u = await users.findById(ctx.db, id);
    return u ? users.toProfile(u, true) : undefined;
  });
  return p ? ok(p) : notFound();
}

export async function updateProfile(ctx: Ctx, req: Identity.IdentityRequest<'profile-update'>): Promise<Result<Msg>> {
  const target = await ctx.target(req.caller, req.target_id);
  if (!target.ok) return target;
  const parsed = parseProfile(req.input);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  try {
    return await ctx.tx(async (trx) => {
      if (target.value.byId && input.role !== '') await ctx.lockAdmins(trx);
      const user = await ctx.loadUser(trx, target.value.id);
      if (!user.exists || user.deleted) return notFound();
      const facts = {
        adminCount: (await users.adminIds(trx)).length,
        usernameOwner: input.username ? await users.ownerOf(trx, 'username', input.username) : null,
        emailOwner: input.email ? await users.ownerOf(trx, 'email', input.email) : null,
      };
      const d = decideProfileUpdate(user, input, target.value.byId, req.caller.user_id, facts);
      // Groups decided before a failure stay applied: the spec's rule 7.
      await ctx.appendUser(trx, user, d.events);
      return d.error ? err(d.error) : ok({ message: 'profile updated successfully' });
    });
  } catch (e) {
    if (isUniqueViolation(e, 'users_username_key')) return err(fail('conflict', Messages.usernameTaken));
    if (isUniqueViolation(e, 'users_email_key')) return err(fail('conflict', Messages.emailTaken));
    throw e;
  }
}

export async function setField(ctx: Ctx, req: Identity.IdentityRequest<'field-set'>): Promise<Result<Msg>> {
  const parsed = parseField(req.field, req.input);
  if (!parsed.ok) return parsed;
  const value = parsed.value;
  const taken = req.field === 'username' ? Messages.usernameTaken : Messages.emailTaken;
  try {
    return await ctx.tx(async (trx) => {
      const user = await ctx.loadUser(trx, req.caller.user_id);
      if (!user.exists || user.deleted) return notFound();
      if (req.field !== 'theme') {
        const owner = await users.ownerOf(trx, req.field, value);
        if (owner && owner !== user.id) return err(fail('conflict', taken));
      }
      if (user[req.field] !== value) {
        const changed: Ev = { type: 'identity.profile-changed.v1', data: { user_id: user.id, changes: { [req.field]: value }, changed_by: req.caller.user_id } };
        await ctx.appendUser(trx, user, stateProfiles(user, [changed]));
      }
      return ok({ message: `${req.field} updated successfully` });
    });
  } catch (e) {
    if (isUniqueViolation(e)) return err(fail('conflict', taken));
    throw e;
  }
}

export async function changePassword(ctx: Ctx, req: Identity.IdentityRequest<'password-change'>): Promise<Result<Msg>> {
  const target = await ctx.target(req.caller, req.target_id);
  if (!target.ok) return target;
  const selfMode = !target.value.byId;
  const parsed = parsePasswordChange(req.input, selfMode);
  if (!parsed.ok) return parsed;
  const id = target.value.id;
  const currentHash = await users.passwordHash(ctx.db, id);
  if (currentHash === undefined) return notFound();
  const matches = selfMode ? await ctx.verify(currentHash, parsed.value.current_password) : 'skipped';
  const decided = decidePasswordChange(parsed.value, matches);
  if (!decided.ok) return decided;
  let hash: string;
  let verifier: string;
  try {
    [hash, verifier] = await Promise.all([ctx.hash(parsed.value.new_password), ctx.hash(kosyncKeyOf(parsed.value.new_password))]);
  } catch {
    return err(internal(Messages.failedToHashPassword));
  }
  // A password change ends the user's sessions everywhere but the one making it (an admin resetting
  // someone else's ends them all), and their reader key. The cutoff is taken once the credentials row
  // is ours, so a login that raced the change has an earlier `iat`.
  const kept = id === req.caller.user_id && req.caller.jti ? req.caller.jti : null;
  return ctx.tx(async (trx) => {
    const user = await ctx.loadUser(trx, id);
    if (!user.exists || user.deleted) return notFound();
    await users.setPasswordHash(trx, id, hash, verifier);
    const now = ctx.rt.now();
    const cutoff = sessionCutoff(now);
    await users.setSessionsValidAfter(trx, id, cutoff);
    // every refresh token of the user but the changing session's: a stolen one must not outlive the change
    await sessions.revokeAllForUser(trx, id, now, kept ? await sessions.familyOfAccessJti(trx, id, kept) : null);
    await ctx.appendUser(trx, user, [
      {
        type: 'identity.password-changed.v1',
        data: { user_id: id, changed_by: req.caller.user_id, sessions_revoked_before: cutoff.toISOString(), session_kept: kept },
      },
    ]);
    await revokeReaderKey(ctx, trx, id);
    return ok({ message: 'password updated successfully' });
  });
}

export async function deleteUser(ctx: Ctx, req: Identity.IdentityRequest<'user-delete'>): Promise<Result<Msg>> {
  const target = await ctx.target(req.caller, req.target_id);
  if (!target.ok) return target;
  const self = target.value.id === req.caller.user_id;
  return ctx.tx(async (trx) => {
    await ctx.lockAdmins(trx);
    const user = await ctx.loadUser(trx, target.value.id);
    const others = (await users.adminIds(trx)).filter((a) => a !== user.id);
    const d = decideDelete(user, req.caller.user_id, others);
    if (!d.ok) return d;
    await ctx.appendUser(trx, user, [d.value]);
    return ok({ message: self ? 'account deleted successfully' : 'user account deleted successfully' });
  });
}
