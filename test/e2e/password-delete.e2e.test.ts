// Password change (self and admin reset) and account deletion (self and by id).
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes, type Bindery } from '../support/bindery';
import {
  api,
  instances,
  eventually,
  expectError as err,
  expectMessage,
  fragment,
  login,
  NO_SUCH_ID,
  PASSWORD,
  register,
  tokenCookie,
  userRecord,
  type Account,
  type Call,
} from './helpers';

const UPDATED = 'password updated successfully';
const NEW = 'n3w-passphrase';

const modes = (await availableModes()).filter((m) => m === 'embedded'); // account rules: embedded tier; the bus is the distributed tier's (smoke, contract, fault, replicas)
const instance = instances(modes);

for (const mode of modes) {
  describe(`password change and account deletion (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    beforeAll(async () => {
      b = await instance(mode);
      call = api(b);
      admin = await register(call, { name: 'chief' });
    });

    const pw = (token: string, body: unknown, id?: string) => call('PUT', id === undefined ? '/api/auth/password' : `/api/auth/password/${id}`, { token, body });
    const del = (token: string, id?: string, headers?: Record<string, string>) =>
      call('DELETE', id === undefined ? '/api/auth/profile' : `/api/auth/profile/${id}`, { token, ...(headers ? { headers } : {}) });
    const refused = async (token: string) => eventually(async () => err(await call('GET', '/api/auth/profile', { token }), 401, 'invalid or expired token'));

    describe('password change', () => {
      it('self: 200, the old password stops working, the new one works, the current session goes on', async () => {
        const u = await register(call);
        expectMessage(await pw(u.token, { current_password: PASSWORD, new_password: NEW, confirm_password: NEW }), UPDATED);
        err(await login(call, u.username, PASSWORD), 401, 'invalid credentials');
        const l = await login(call, u.username, NEW);
        expect(l.status).toBe(200);
        expect((await call('GET', '/api/auth/profile', { token: u.token })).status).toBe(200);
        expect((await call('GET', '/api/auth/profile', { token: l.json.access_token })).status).toBe(200);
        // form bodies work too
        expectMessage(
          await call('PUT', '/api/auth/password', { token: u.token, form: { current_password: NEW, new_password: 'th1rd-password', confirm_password: 'th1rd-password' } }),
          UPDATED,
        );
        expect((await login(call, u.username, 'th1rd-password')).status).toBe(200);
      });

      it('self: every rule, in order, and nothing changes on failure', async () => {
        const u = await register(call);
        const cases: [Record<string, unknown>, number, string][] = [
          [{ current_password: PASSWORD, confirm_password: NEW }, 400, 'new_password is required'],
          [{ current_password: PASSWORD, new_password: 'abc123', confirm_password: 'abc123' }, 400, 'new_password must be at least 8 characters'],
          [{ current_password: PASSWORD, new_password: 'a1'.repeat(65), confirm_password: 'a1'.repeat(65) }, 400, 'new_password must be at most 128 characters'],
          [{ current_password: PASSWORD, new_password: 'onlyletters', confirm_password: 'onlyletters' }, 400, 'new_password must contain at least one letter and one digit'],
          [{ current_password: PASSWORD, new_password: '1234567890', confirm_password: '1234567890' }, 400, 'new_password must contain at least one letter and one digit'],
          [{ current_password: PASSWORD, new_password: NEW }, 400, 'confirm_password is required'],
          [{ current_password: PASSWORD, new_password: NEW, confirm_password: '' }, 400, 'confirm_password is required'],
          [{ new_password: NEW, confirm_password: NEW }, 400, 'current password required'],
          [{ current_password: '', new_password: NEW, confirm_password: NEW }, 400, 'current password required'],
          [{ current_password: 'wrong-passw0rd', new_password: NEW, confirm_password: NEW }, 401, 'current password is incorrect'],
          [{ current_password: PASSWORD, new_password: NEW, confirm_password: 'other-passw0rd' }, 400, 'passwords do not match'],
          // order: complexity before current, confirmation before current, current before mismatch
          [{ new_password: 'short', confirm_password: 'short' }, 400, 'new_password must be at least 8 characters'],
          [{ new_password: NEW }, 400, 'confirm_password is required'],
          [{ new_password: NEW, confirm_password: 'other-passw0rd' }, 400, 'current password required'],
          [{ current_password: 'wrong-passw0rd', new_password: NEW, confirm_password: 'other-passw0rd' }, 401, 'current password is incorrect'],
          [{ current_password: 7, new_password: NEW, confirm_password: NEW }, 400, 'invalid request'],
        ];
        for (const [body, status, message] of cases) err(await pw(u.token, body), status, message);
        err(await call('PUT', '/api/auth/password', { token: u.token, raw: '{"new_password":' }), 400, 'invalid request');
        err(await call('PUT', '/api/auth/password', { body: { current_password: PASSWORD, new_password: NEW, confirm_password: NEW } }), 401, 'authentication required');
        expect((await login(call, u.username, PASSWORD)).status).toBe(200);
        err(await login(call, u.username, NEW), 401, 'invalid credentials');
      });

      it('by id: 403 for a non-admin before id and body checks, 400 invalid user id, 404 user not found for an unknown id', async () => {
        const u = await register(call);
        const v = await register(call);
        const body = { new_password: NEW, confirm_password: NEW };
        err(await pw(u.token, body, v.id), 403, 'admin access required');
        err(await pw(u.token, { current_password: PASSWORD, ...body }, u.id), 403, 'admin access required');
        err(await pw(u.token, body, 'nope'), 403, 'admin access required');
        err(await call('PUT', `/api/auth/password/${v.id}`, { token: u.token, raw: '{"new_password"' }), 403, 'admin access required');
        err(await pw(admin.token, body, 'nope'), 400, 'invalid user id');
        err(await pw(admin.token, body, `${v.id}0`), 400, 'invalid user id');
        err(await pw(admin.token, body, NO_SUCH_ID), 404, 'user not found');
        expect((await login(call, v.username, PASSWORD)).status).toBe(200);
      });

      it("admin reset: no current password, the other rules apply; the target's sessions end, a fresh login works at once", async () => {
        const u = await register(call);
        const otherLogin = await login(call, u.email, PASSWORD);
        expect(otherLogin.status).toBe(200);
        err(await pw(admin.token, { new_password: 'short1', confirm_password: 'short1' }, u.id), 400, 'new_password must be at least 8 characters');
        err(await pw(admin.token, { new_password: NEW }, u.id), 400, 'confirm_password is required');
        err(await pw(admin.token, { new_password: NEW, confirm_password: 'different-1' }, u.id), 400, 'passwords do not match');
        err(await pw(admin.token, { new_password: 5, confirm_password: NEW }, u.id), 400, 'invalid request');
        expect((await call('GET', '/api/auth/profile', { token: u.token })).status).toBe(200);

        // a wrong current password is not even looked at in admin mode
        expectMessage(await pw(admin.token, { current_password: 'whatever-1', new_password: NEW, confirm_password: NEW }, u.id.toUpperCase()), UPDATED);
        const fresh = await login(call, u.username, NEW);
        expect(fresh.status).toBe(200);
        expect((await call('GET', '/api/auth/profile', { token: fresh.json.access_token })).status).toBe(200);
        err(await login(call, u.username, PASSWORD), 401, 'invalid credentials');
        await refused(u.token);
        await refused(otherLogin.json.access_token);
        err(await call('GET', '/api/auth/profile', { cookie: `token=${u.token}` }), 401, 'invalid or expired token');
        err(await call('POST', '/api/auth/refresh', { body: { refresh_token: u.refresh } }), 401, 'invalid or expired refresh token');
        err(await call('POST', '/api/auth/refresh', { body: { refresh_token: otherLogin.json.refresh_token } }), 401, 'invalid or expired refresh token');
        // the session issued after the reset is untouched
        expect((await call('GET', '/api/auth/profile', { token: fresh.json.access_token })).status).toBe(200);
        expect((await call('POST', '/api/auth/refresh', { body: { refresh_token: fresh.json.refresh_token } })).status).toBe(200);
      });

      it('an admin using the id form on itself skips the current-password check and keeps its session', async () => {
        const a2 = await register(call, { role: 'admin', caller: admin.token });
        expectMessage(await pw(a2.token, { new_password: NEW, confirm_password: NEW }, a2.id), UPDATED);
        expect((await login(call, a2.username, NEW)).status).toBe(200);
        expect((await call('GET', '/api/auth/users', { token: a2.token })).status).toBe(200);
        expectMessage(await del(admin.token, a2.id), 'user account deleted successfully');
      });
    });

    describe('account deletion', () => {
      it('DELETE /api/auth/profile removes the caller: self message, cookie cleared, token, login and refresh refused', async () => {
        const u = await register(call);
        const r = await del(u.token);
        expectMessage(r, 'account deleted successfully');
        expect(tokenCookie(r)).toMatch(/^token=;.*Max-Age=0/);
        await refused(u.token);
        err(await login(call, u.username, PASSWORD), 401, 'invalid credentials');
        err(await call('POST', '/api/auth/refresh', { body: { refresh_token: u.refresh } }), 401, 'invalid or expired refresh token');
        expect(await userRecord(call, admin.token, u.id)).toBeUndefined();
        // the name and e-mail are free again
        const again = await register(call, { name: u.username });
        expect(again.id).not.toBe(u.id);
      });

      it('an admin deletes another account by id: user account deleted successfully, its token is refused', async () => {
        const u = await register(call);
        const r = await del(admin.token, u.id);
        expectMessage(r, 'user account deleted successfully');
        expect(tokenCookie(r)).toBeUndefined();
        await refused(u.token);
        err(await del(admin.token, u.id), 404, 'user not found');
        expect((await call('GET', '/api/auth/profile', { token: admin.token })).status).toBe(200);
      });

      it('an admin deleting its own id gets the self message; admins other than the last can go', async () => {
        const a2 = await register(call, { role: 'admin', caller: admin.token });
        const r = await del(a2.token, a2.id);
        expectMessage(r, 'account deleted successfully');
        expect(tokenCookie(r)).toMatch(/^token=;.*Max-Age=0/);
        await refused(a2.token);
        const a3 = await register(call, { role: 'admin', caller: admin.token });
        expectMessage(await del(a3.token), 'account deleted successfully');
        const a4 = await register(call, { role: 'admin', caller: admin.token });
        expectMessage(await del(admin.token, a4.id), 'user account deleted successfully');
        await refused(a4.token);
        expect((await call('GET', '/api/auth/users', { token: admin.token })).status).toBe(200);
      });

      it('400 cannot delete the last admin account, by either route; the admin stays', async () => {
        err(await del(admin.token), 400, 'cannot delete the last admin account');
        err(await del(admin.token, admin.id), 400, 'cannot delete the last admin account');
        // a demoted second admin can no longer delete anyone by id, but can delete itself
        const a2 = await register(call, { role: 'admin', caller: admin.token });
        expectMessage(await call('PUT', `/api/auth/profile/${a2.id}`, { token: admin.token, body: { role: 'user' } }), 'profile updated successfully');
        await eventually(async () => err(await del(a2.token, admin.id), 403, 'admin access required'));
        expectMessage(await del(a2.token), 'account deleted successfully');
        err(await del(admin.token, admin.id.toUpperCase()), 400, 'cannot delete the last admin account');
        expect((await call('GET', '/api/auth/profile', { token: admin.token })).json.role).toBe('admin');
      });

      it('rule 1: 403 for a non-admin by id, 400 invalid user id, 404 user not found', async () => {
        const u = await register(call);
        const v = await register(call);
        err(await del(u.token, v.id), 403, 'admin access required');
        err(await del(u.token, u.id), 403, 'admin access required');
        err(await del(u.token, 'garbage'), 403, 'admin access required');
        err(await del(admin.token, 'garbage'), 400, 'invalid user id');
        err(await del(admin.token, NO_SUCH_ID), 404, 'user not found');
        err(await call('DELETE', `/api/auth/profile/${v.id}`), 401, 'authentication required');
        err(await call('DELETE', '/api/auth/profile'), 401, 'authentication required');
        expect((await call('GET', '/api/auth/profile', { token: v.token })).status).toBe(200);
      });

      it("answers fragment requests' delete errors with HTML and the same status; success stays JSON", async () => {
        const hx = { 'HX-Request': 'true' };
        const u = await register(call);
        const v = await register(call);
        fragment(await del(u.token, v.id, hx), 403, 'admin access required');
        fragment(await del(u.token, 'garbage', hx), 403, 'admin access required');
        fragment(await del(admin.token, 'garbage', hx), 400, 'invalid user id');
        fragment(await del(admin.token, NO_SUCH_ID, hx), 404, 'user not found');
        fragment(await del(admin.token, undefined, hx), 400, 'cannot delete the last admin account');
        fragment(await del(admin.token, admin.id, hx), 400, 'cannot delete the last admin account');
        expectMessage(await del(admin.token, v.id, hx), 'user account deleted successfully');
        expectMessage(await del(u.token, undefined, hx), 'account deleted successfully');
      });
    });
  });
}
