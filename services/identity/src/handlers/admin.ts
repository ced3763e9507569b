// Admin operations: user listing, max devices, system settings and configuration, setup status.
import { err, fail, Messages, ok, type Identity, type Result } from '@bindery/contracts';
import { parseMaxDevices } from '../domain/max-devices';
import { parsePermissions } from '../domain/permissions';
import { parseLibraryAccess, type LibraryAccess } from '../domain/library-access';
import { parseConfigPut, parseSettingsPut, settingEntries } from '../domain/settings';
import { isUuid } from '../domain/validate';
import { stateProfiles } from '../domain/user';
import * as users from '../store/users';
import * as store from '../store/settings';
import type { Ctx } from './context';

export async function listUsers(ctx: Ctx, req: Identity.IdentityRequest<'users-list'>): Promise<Result<Identity.UserRecord[]>> {
  const denied = await ctx.requireAdmin(req.caller);
  if (denied) return err(denied);
  return ok((await users.listUsers(ctx.db)).map(users.toRecord));
}

export async function setMaxDevices(ctx: Ctx, req: Identity.IdentityRequest<'max-devices-set'>): Promise<Result<{ message: string }>> {
  const denied = await ctx.requireAdmin(req.caller);
  if (denied) return err(denied);
  const parsed = parseMaxDevices(req.input);
  if (!parsed.ok) return parsed;
  if (req.target_id.trim() === '') return err(fail('user_id_required', Messages.userIdRequired));
  if (!isUuid(req.target_id)) return err(fail('invalid_user_id', Messages.invalidUserId));
  const id = req.target_id.toLowerCase();
  return ctx.tx(async (trx) => {
    const user = await ctx.loadUser(trx, id);
    if (!user.exists || user.deleted) return err(fail('user_not_found', Messages.userNotFound));
    if (user.max_devices !== parsed.value) {
      await ctx.appendUser(trx, user, [{ type: 'identity.max-devices-changed.v1', data: { user_id: id, max_devices: parsed.value } }]);
    }
    return ok({ message: 'max devices updated' });
  });
}

/** What the admin allows a user beyond their role (issue 43): editing metadata and covers. An admin may set it on any account, their own too. */
export async function setPermissions(
  ctx: Ctx,
  req: Identity.IdentityRequest<'permissions-set'>,
): Promise<Result<{ message: string; user_id: string; can_edit_metadata: boolean }>> {
  const denied = await ctx.requireAdmin(req.caller);
  if (denied) return err(denied);
  if (!isUuid(req.target_id)) return err(fail('invalid_user_id', Messages.invalidUserId));
  const parsed = parsePermissions(req.input);
  if (!parsed.ok) return parsed;
  const id = req.target_id.toLowerCase();
  return ctx.tx(async (trx) => {
    const user = await ctx.loadUser(trx, id);
    if (!user.exists || user.deleted) return err(fail('user_not_found', Messages.userNotFound));
    const can = parsed.value.can_edit_metadata;
    if (user.can_edit_metadata !== can) {
      const changed = { type: 'identity.permissions-changed.v1' as const, data: { user_id: id, can_edit_metadata: can, changed_by: req.caller.user_id } };
      await ctx.appendUser(trx, user, stateProfiles(user, [changed]));
    }
    return ok({ message: 'permissions updated', user_id: id, can_edit_metadata: can });
  });
}

export async function getSettings(ctx: Ctx, req: Identity.IdentityRequest<'settings-get'>): Promise<Result<{ settings: Identity.SettingEntry[] }>> {
  const denied = await ctx.requireAdmin(req.caller);
  if (denied) return err(denied);
  return ok({ settings: settingEntries(await store.storedSettings(ctx.db), ctx.settingDefaults) });
}

export async function putSettings(ctx: Ctx, req: Identity.IdentityRequest<'settings-put'>): Promise<Result<{ message: string; settings: Identity.SettingEntry[] }>> {
  const denied = await ctx.requireAdmin(req.caller);
  if (denied) return err(denied);
  const parsed = parseSettingsPut(req.input);
  if (!parsed.ok) return parsed;
  const entries = await ctx.tx(async (trx) => {
    await ctx.emit(trx, 'settings', 'any', [{ type: 'identity.settings-changed.v1', data: { changes: parsed.value, changed_by: req.caller.user_id } }]);
    return settingEntries(await store.storedSettings(trx), ctx.settingDefaults);
  });
  ctx.invalidateSetup();
  return ok({ message: 'settings updated successfully', settings: entries });
}

export async function getConfig(ctx: Ctx, req: Identity.IdentityRequest<'config-get'>): Promise<Result<{ config: Record<string, string> }>> {
  const denied = await ctx.requireAdmin(req.caller);
  if (denied) return err(denied);
  return ok({ config: await store.config(ctx.db) });
}

export async function putConfig(ctx: Ctx, req: Identity.IdentityRequest<'config-put'>): Promise<Result<{ message: string; config: Record<string, string> }>> {
  const denied = await ctx.requireAdmin(req.caller);
  if (denied) return err(denied);
  const parsed = parseConfigPut(req.input);
  if (!parsed.ok) return parsed;
  const config = await ctx.tx(async (trx) => {
    await ctx.emit(trx, 'config', 'any', [{ type: 'identity.config-changed.v1', data: { changes: parsed.value, changed_by: req.caller.user_id } }]);
    return store.config(trx);
  });
  return ok({ message: 'configuration updated successfully', config });
}

export async function setupStatus(ctx: Ctx): Promise<Result<Identity.SetupStatus>> {
  return ok(await ctx.setupStatus());
}

/** Grants or revokes libraries for a user; the event is what every read surface filters by. */
export async function setLibraryAccess(ctx: Ctx, req: Identity.IdentityRequest<'library-access-set'>): Promise<Result<{ message: string; user_id: string } & LibraryAccess>> {
  const denied = await ctx.requireAdmin(req.caller);
  if (denied) return err(denied);
  if (!isUuid(req.target_id)) return err(fail('invalid_user_id', Messages.invalidUserId));
  const parsed = parseLibraryAccess(req.input);
  if (!parsed.ok) return parsed;
  const id = req.target_id.toLowerCase();
  return ctx.tx(async (trx) => {
    const user = await ctx.loadUser(trx, id);
    if (!user.exists || user.deleted) return err(fail('user_not_found', Messages.userNotFound));
    await ctx.appendUser(trx, user, [{ type: 'identity.library-access-changed.v1', data: { user_id: id, ...parsed.value, changed_by: req.caller.user_id } }]);
    return ok({ message: 'library access updated', user_id: id, ...parsed.value });
  });
}
