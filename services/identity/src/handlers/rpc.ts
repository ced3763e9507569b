// The request/reply endpoints: each request is checked against its contract schema, then handled.
import { Compile } from 'typebox/compile';
import { err, findBadText, Identity, Messages, fail, type Result } from '@bindery/contracts';
import type { RpcHandler } from '@bindery/platform';
import * as auth from './auth';
import * as profile from './profile';
import * as admin from './admin';
import * as readerAuth from './reader-auth';
import * as kosync from './kosync';
import * as mail from './mail';
import * as oidc from '../oidc/handlers';
import type { Ctx } from './context';

type Handlers = { [K in Identity.IdentityOp]: (ctx: Ctx, req: Identity.IdentityRequest<K>) => Promise<Result<unknown>> };

const handlers: Handlers = {
  register: auth.register,
  login: auth.login,
  refresh: auth.refresh,
  logout: auth.logout,
  'session-revoke': auth.revokeSession,
  'sessions-revoke-others': auth.revokeOtherSessions,
  'profile-get': profile.getProfile,
  'profile-update': profile.updateProfile,
  'field-set': profile.setField,
  'password-change': profile.changePassword,
  'user-delete': profile.deleteUser,
  'users-list': admin.listUsers,
  'max-devices-set': admin.setMaxDevices,
  'permissions-set': admin.setPermissions,
  'library-access-set': admin.setLibraryAccess,
  'settings-get': admin.getSettings,
  'settings-put': admin.putSettings,
  'config-get': admin.getConfig,
  'config-put': admin.putConfig,
  'setup-status': admin.setupStatus,
  ...readerAuth.handlers,
  ...kosync.handlers,
  ...oidc.handlers,
  ...mail.handlers,
};

export function endpoints(ctx: Ctx): Record<string, RpcHandler> {
  const out: Record<string, RpcHandler> = {};
  for (const op of Object.keys(handlers) as Identity.IdentityOp[]) {
    const check = Compile(Identity.IdentityRequests[op]);
    const h = handlers[op] as (ctx: Ctx, req: unknown) => Promise<Result<unknown>>;
    out[op] = async (body) => {
      if (!check.Check(body)) return err(fail('invalid_request', Messages.invalidRequest));
      // The gateway refuses such text at the door; a caller on the bus gets the same answer, and
      // the database never sees a NUL or a lone surrogate.
      const bad = findBadText((body as { input?: unknown }).input ?? body);
      if (bad) return err(fail('validation', bad.message));
      return h(ctx, body);
    };
  }
  return out;
}
