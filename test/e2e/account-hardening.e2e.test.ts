// Account hardening: max_devices types, password change for an unknown id, a user asking for a
// role, tokens from the future, cookie-authenticated writes from cross-site forms, and the refresh
// family of a session that logged out.
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes, type Bindery } from '../support/bindery';
import {
  api,
  fragment,
  csrfOf,
  decodeJwt,
  eventually,
  expectError as err,
  expectMessage,
  instances,
  jwtSecret,
  login,
  NO_SUCH_ID,
  PASSWORD,
  register,
  uniq,
  userRecord,
  type Account,
  type Call,
} from './helpers';

// Account rules are the same code in both modes; like the other account files (issue 8's
// house-keeping) this one runs embedded only. hostile-input.e2e covers the distributed stores and bus.
const modes = (await availableModes()).filter((m) => m === 'embedded');
const instance = instances(modes);

const CROSS_SITE = "cookie-authenticated requests must carry the session's X-CSRF-Token header";
const XRW = { 'X-Requested-With': 'XMLHttpRequest' };
const HX = { 'HX-Request': 'true' };

for (const mode of modes) {
  describe(`account hardening (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    beforeAll(async () => {
      b = await instance(mode);
      call = api(b);
      admin = await register(call, { name: uniq('chief') });
    });

    const refresh = (token: string) => call('POST', '/api/auth/refresh', { body: { refresh_token: token } });
    const me = (r: { token?: string; cookie?: string }) => call('GET', '/api/auth/profile', r);

    it('max_devices must be a JSON number: "5" is 400 invalid request; a form still sends digits', async () => {
      const u = await register(call);
      const md = (body: unknown) => call('PUT', `/api/auth/users/${u.id}/max-devices`, { token: admin.token, body });
      err(await md({ max_devices: '5' }), 400, 'invalid request');
      err(await md({ max_devices: ' 12 ' }), 400, 'invalid request');
      expect(await userRecord(call, admin.token, u.id)).toMatchObject({ max_devices: 5 });
      expectMessage(await md({ max_devices: 9 }), 'max devices updated');
      expectMessage(await call('PUT', `/api/auth/users/${u.id}/max-devices`, { token: admin.token, form: { max_devices: '7' } }), 'max devices updated');
      expect(await userRecord(call, admin.token, u.id)).toMatchObject({ max_devices: 7 });
      err(await call('PUT', `/api/auth/users/${u.id}/max-devices`, { token: admin.token, form: { max_devices: 'seven' } }), 400, 'invalid request');
    });

    it('an admin password change for an unknown id is 404 user not found', async () => {
      const body = { new_password: 'fresh-passw0rd', confirm_password: 'fresh-passw0rd' };
      err(await call('PUT', `/api/auth/password/${NO_SUCH_ID}`, { token: admin.token, body }), 404, 'user not found');
      const gone = await register(call);
      expectMessage(await call('DELETE', `/api/auth/profile/${gone.id}`, { token: admin.token }), 'user account deleted successfully');
      err(await call('PUT', `/api/auth/password/${gone.id}`, { token: admin.token, body }), 404, 'user not found');
    });

    it("a user's own profile update ignores the role it asks for and applies the rest (interface rule 2)", async () => {
      const u = await register(call);
      expectMessage(await call('PUT', '/api/auth/profile', { token: u.token, body: { role: 'admin', theme: 'never' } }), 'profile updated successfully');
      expectMessage(await call('PUT', '/api/auth/profile', { token: u.token, body: { role: 'ADMIN' } }), 'profile updated successfully');
      expect(await userRecord(call, admin.token, u.id)).toMatchObject({ role: 'user', theme: 'never' });
      expectMessage(await call('PUT', '/api/auth/profile', { token: u.token, body: { role: 'user', theme: 'dusk' } }), 'profile updated successfully');
      expect(await userRecord(call, admin.token, u.id)).toMatchObject({ role: 'user', theme: 'dusk' });
      expectMessage(await call('PUT', '/api/auth/profile', { token: admin.token, body: { role: 'user' } }), 'profile updated successfully');
      expect((await me({ token: admin.token })).json.role).toBe('admin');
    });

    it('a token issued in the future (beyond 60 s of clock skew) is refused like any bad token', async () => {
      const u = await register(call);
      const { payload } = decodeJwt(u.token);
      const now = Math.floor(Date.now() / 1000);
      const sign = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(jwtSecret(b)));
      const future = await sign({ ...payload, jti: `${payload.jti}-f`, iat: now + 3600, exp: now + 7200 });
      err(await me({ token: future }), 401, 'invalid or expired token');
      err(await me({ cookie: `token=${future}` }), 401, 'invalid or expired token');
      const skewed = await sign({ ...payload, jti: `${payload.jti}-s`, iat: now + 20, exp: now + 600 });
      expect((await me({ token: skewed })).status).toBe(200);
    });

    describe("cookie-authenticated writes need the session's CSRF token", () => {
      it('with only the cookie, JSON, X-Requested-With, HX-Request or another session’s token: 403, nothing changes; the token or a Bearer token pass', async () => {
        const cookie = `token=${admin.token}`;
        const name = uniq('CSRF');
        err(await call('POST', '/api/libraries', { cookie, form: { name } }), 403, CROSS_SITE);
        err(await call('POST', '/api/libraries', { cookie, raw: JSON.stringify({ name }), contentType: 'text/plain' }), 403, CROSS_SITE);
        err(await call('PUT', '/api/system/settings', { cookie, form: { registration_enabled: 'false' } }), 403, CROSS_SITE);
        // what a document of this origin can send without knowing the session's secret (a book's htmx, say)
        err(await call('POST', '/api/libraries', { cookie, body: { name } }), 403, CROSS_SITE);
        err(await call('POST', '/api/libraries', { cookie, form: { name }, headers: XRW }), 403, CROSS_SITE);
        err(await call('POST', '/api/libraries', { cookie, form: { name }, headers: HX }), 403, CROSS_SITE);
        const other = await register(call);
        err(await call('POST', '/api/libraries', { cookie, body: { name }, headers: await csrfOf(call, other.token) }), 403, CROSS_SITE);
        err(await call('POST', '/api/libraries', { cookie, body: { name }, headers: { 'X-CSRF-Token': '' } }), 403, CROSS_SITE);
        expect((await call('GET', '/api/setup/status')).json.registration_enabled).toBe(true);
        const libs = () => call('GET', '/api/libraries', { cookie }).then((r) => (r.json as { name: string }[]).map((l) => l.name));
        expect(await libs()).not.toContain(name);
        const proof = await csrfOf(call, admin.token);
        expect((await call('POST', '/api/libraries', { cookie, body: { name }, headers: proof })).status).toBe(201);
        expect((await call('POST', '/api/libraries', { cookie, form: { name: `${name}-hx` }, headers: { ...HX, ...proof } })).status).toBe(201);
        expect((await call('POST', '/api/libraries', { token: admin.token, form: { name: `${name}-b` } })).status).toBe(201);
        expect(await libs()).toEqual(expect.arrayContaining([name, `${name}-hx`, `${name}-b`]));
      });

      it('a bodyless DELETE with only the cookie is 403 and the account stays', async () => {
        const u = await register(call);
        err(await call('DELETE', '/api/auth/profile', { cookie: `token=${u.token}` }), 403, CROSS_SITE);
        err(
          await call('PUT', '/api/auth/password', {
            cookie: `token=${u.token}`,
            form: { current_password: PASSWORD, new_password: 'other-passw0rd', confirm_password: 'other-passw0rd' },
          }),
          403,
          CROSS_SITE,
        );
        expect((await login(call, u.username, PASSWORD)).status).toBe(200);
        err(await call('DELETE', '/api/auth/profile', { cookie: `token=${u.token}`, headers: XRW }), 403, CROSS_SITE);
        expectMessage(await call('DELETE', '/api/auth/profile', { cookie: `token=${u.token}`, headers: await csrfOf(call, u.token) }), 'account deleted successfully');
      });

      it("register and login stay form-capable; an admin's cookie on a cross-site form does not make an admin", async () => {
        const n = uniq('form');
        const body = { email: `${n}@example.com`, username: n, password: PASSWORD, role: 'admin' };
        err(await call('POST', '/api/auth/register', { form: body, cookie: `token=${admin.token}` }), 403, 'only administrators can create admin accounts');
        err(await call('POST', '/api/auth/register', { form: body, cookie: `token=${admin.token}`, headers: XRW }), 403, 'only administrators can create admin accounts');
        fragment(await call('POST', '/api/auth/register', { form: body, cookie: `token=${admin.token}`, headers: HX }), 403, 'only administrators can create admin accounts');
        const made = await call('POST', '/api/auth/register', { form: body, cookie: `token=${admin.token}`, headers: await csrfOf(call, admin.token) });
        expect(made.status, made.text).toBe(201);
        expect(made.json.user.role).toBe('admin');
        const plain = uniq('plain');
        expect((await call('POST', '/api/auth/register', { form: { email: `${plain}@example.com`, username: plain, password: PASSWORD } })).status).toBe(201);
        const l = await call('POST', '/api/auth/login', { form: { login: plain, password: PASSWORD }, cookie: `token=${admin.token}` });
        expect(l.status, l.text).toBe(200);
        expect(l.json.user.username).toBe(plain);
      });
    });

    describe('logout ends the refresh family of the session', () => {
      it('with the access token alone, before and after a rotation', async () => {
        const u = await register(call);
        const a = await login(call, u.username, PASSWORD);
        expectMessage(await call('POST', '/api/auth/logout', { token: a.json.access_token }), 'logged out successfully');
        err(await refresh(a.json.refresh_token), 401, 'invalid or expired refresh token');

        const c = await login(call, u.username, PASSWORD);
        const rotated = await refresh(c.json.refresh_token);
        expect(rotated.status).toBe(200);
        expectMessage(await call('POST', '/api/auth/logout', { token: rotated.json.access_token }), 'logged out successfully');
        err(await refresh(rotated.json.refresh_token), 401, 'invalid or expired refresh token');
        // the account's other sessions keep their own families
        expect((await refresh(u.refresh)).status).toBe(200);
      });

      it('with the cookie and its CSRF token; a cookie logout without it, or from another site, ends nothing and clears no cookie', async () => {
        const u = await register(call);
        const s = await login(call, u.username, PASSWORD);
        const cookie = `token=${s.json.access_token}`;
        for (const cross of [
          await call('POST', '/api/auth/logout', { cookie, form: {} }),
          await call('POST', '/api/auth/logout', { cookie, headers: XRW }),
          await call('POST', '/api/auth/logout', { cookie, headers: HX }),
        ]) {
          err(cross, 403, CROSS_SITE);
          expect(cross.cookies).toEqual([]);
        }
        const foreign = await call('POST', '/api/auth/logout', { cookie, form: {}, headers: { Origin: 'https://evil.example' } });
        err(foreign, 403, 'requests from another site are refused');
        expect(foreign.cookies).toEqual([]);
        expect((await me({ token: s.json.access_token })).status).toBe(200);
        expectMessage(await call('POST', '/api/auth/logout', { cookie, headers: await csrfOf(call, s.json.access_token) }), 'logged out successfully');
        await eventually(async () => err(await me({ token: s.json.access_token }), 401, 'invalid or expired token'));
        err(await refresh(s.json.refresh_token), 401, 'invalid or expired refresh token');
      });
    });
  });
}
