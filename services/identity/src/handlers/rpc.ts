// The request/reply endpoints: identity's operations (contracts' IdentityOperations), each request
// checked once against its schema, then handled by the operation's handler, typed to its result.
import { findBadText, Identity, fail, type Failure, type RpcHandlers } from '@bindery/contracts';
import { operationEndpoints, type RpcHandler } from '@bindery/platform';
import * as auth from './auth';
import * as profile from './profile';
import * as admin from './admin';
import * as readerAuth from './reader-auth';
import * as kosync from './kosync';
import * as mail from './mail';
import * as oidc from '../oidc/handlers';
import type { Ctx } from './context';

export const handlers: RpcHandlers<Identity.IdentityOperations, Ctx> = {
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

/**
 * The gateway refuses text with a NUL or a lone surrogate at the door; a caller on the bus gets the
 * same answer, and the database never sees one.
 */
function screen(body: object): Failure | null {
  const bad = findBadText(('input' in body ? body.input : undefined) ?? body);
  return bad ? fail('validation', bad.message) : null;
}

export function endpoints(ctx: Ctx): Record<string, RpcHandler> {
  return operationEndpoints(Identity.IdentityOperations, handlers, ctx, screen);
}
