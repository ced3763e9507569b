// KOReader's stock Progress sync: every request carries the username and md5(password) as hex. The
// key is checked against the verifier kept beside the password hash (store/kosync.ts) under the
// login lock rules: a failure counts like a failed login, and a locked login stays locked here too.
import { randomUUID } from 'node:crypto';
import { err, fail, Messages, ok, type Identity, type Result } from '@bindery/contracts';
import { isUniqueViolation } from '@bindery/platform';
import { userRegistered } from '../domain/register';
import { initialUser } from '../domain/user';
import { usernameProblem } from '../domain/validate';
import * as users from '../store/users';
import * as kosync from '../store/kosync';
import type { Ctx } from './context';
import { underLoginLock } from './login-lock';
import { type Verified, verified } from './reader-auth';

const KEY = /^[0-9a-f]{32}$/;

export async function verifyKosync(ctx: Ctx, req: Identity.IdentityRequest<'kosync-verify'>): Promise<Result<Verified>> {
  const key = req.key.toLowerCase();
  if (req.login === '' || !KEY.test(key)) return err(fail('invalid_credentials', Messages.invalidCredentials));
  return underLoginLock(
    ctx,
    req.login,
    {
      check: async (user) => {
        const verifier = await kosync.verifierOf(ctx.db, user.id);
        if (verifier) return ctx.verify(verifier, key);
        await ctx.burn(key);
        return false;
      },
      burn: () => ctx.burn(key),
    },
    verified,
  );
}

/**
 * KOReader's Register button. The account gets the key (md5 of the typed password, hex) as its
 * password and as its verifier: KOReader never sends the password itself. Refused (`disabled`) while
 * public registration is off or before the first administrator exists (set up on the web first).
 */
export async function createKosync(ctx: Ctx, req: Identity.IdentityRequest<'kosync-create'>): Promise<Result<{ user_id: string }>> {
  const username = req.username.trim();
  const key = req.key.toLowerCase();
  if (username === '' || usernameProblem(username) !== null || !KEY.test(key)) return err(fail('validation', 'invalid username or key'));
  if (await users.ownerOf(ctx.db, 'username', username)) return err(fail('conflict', Messages.usernameExists));
  const hash = await ctx.hash(key);
  try {
    return await ctx.tx(async (trx) => {
      await ctx.lockAdmins(trx);
      const settings = await ctx.settings(trx);
      if ((await users.adminIds(trx)).length === 0 || !settings.registration_enabled) return err(fail('registration_disabled', Messages.registrationDisabled));
      if ((await users.ownerOf(trx, 'username', username)) !== null) return err(fail('conflict', Messages.usernameExists));
      // no e-mail comes from KOReader: a reserved address (RFC 2606) the user can change on the web
      const email = `${username.toLowerCase()}@koreader.invalid`;
      if ((await users.ownerOf(trx, 'email', email)) !== null) return err(fail('conflict', Messages.usernameExists));
      const id = randomUUID();
      const input = { email, username, password: key, first_name: '', last_name: '', role: 'user' };
      await ctx.appendUser(trx, initialUser(id), [userRegistered(id, input, 'user', null, settings.new_users_see_all_libraries)]);
      await users.setPasswordHash(trx, id, hash, hash);
      return ok({ user_id: id });
    });
  } catch (e) {
    if (isUniqueViolation(e)) return err(fail('conflict', Messages.usernameExists));
    throw e;
  }
}

export const handlers = {
  'kosync-verify': verifyKosync,
  'kosync-create': createKosync,
};
