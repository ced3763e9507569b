// Hardening of credentials, both modes: one budget of failed password checks per client address
// across every surface (login, OPDS Basic, kosync, the current password) and one for each kind of
// key (reader keys, device credentials: security-low.e2e), sessions ended by a password change or a
// refresh token's reuse, credential caches dropped at once, and public registration off by default.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes, startBindery, type Bindery, type Mode } from '../support/bindery';
import { api, eventually, expectError as err, expectMessage, login, PASSWORD, register, uniq, type Account, type Call } from './helpers';
import { basic } from './opds-helpers';

const LIMITED = /^too many requests: try again in (\d+) seconds$/;
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const modes = await availableModes();

const limited = (r: Awaited<ReturnType<Call>>) => {
  expect(r.status, r.text).toBe(429);
  const retry = Number(r.headers.get('retry-after'));
  expect(retry).toBeGreaterThan(0);
  expect(retry).toBeLessThanOrEqual(300);
  return retry;
};

for (const mode of modes) {
  describe(`credential hardening (${mode})`, () => {
    // default registration (off) and a small failure budget; accounts are made by the admin
    let b: Bindery;
    let call: Call;
    let admin: Account;
    const cleanup: (() => Promise<void>)[] = [];
    beforeAll(async () => {
      // behind a trusted proxy: the budget test speaks from an address of its own (X-Forwarded-For)
      b = await startBindery(mode as Mode, { AUTH_RATE_LIMIT_MAX: '6', AUTH_RATE_LIMIT_WINDOW_SECONDS: '300', PUBLIC_REGISTRATION: 'false', TRUST_PROXY: 'true' });
      call = api(b);
      admin = await register(call, { name: 'chief' });
    });
    afterAll(async () => {
      await Promise.all(cleanup.map((c) => c()));
      await b?.stop();
    });

    /** an account made by the admin (public registration is off), each from an address of its own (register's request limit) */
    /** the client speaking from an address of its own, so one test's expected failures do not spend another's budget */
    const at =
      (ip: string): Call =>
      (method, path, r = {}) =>
        call(method, path, { ...r, headers: { ...(r.headers ?? {}), 'X-Forwarded-For': ip } });
    let made = 0;
    const account = async (): Promise<Account> => {
      const n = uniq();
      const body = { email: `${n}@example.com`, username: n, password: PASSWORD };
      const r = await call('POST', '/api/auth/register', { body, token: admin.token, headers: { 'X-Forwarded-For': `192.0.2.${++made}` } });
      expect(r.status, r.text).toBe(201);
      return { id: r.json.user.id, email: body.email, username: n, password: PASSWORD, token: r.json.access_token, refresh: r.json.refresh_token, role: r.json.user.role };
    };

    it('public registration is off by default: the first account was open, the next needs an admin or the setting', async () => {
      expect((await call('GET', '/api/setup/status')).json).toEqual({ needs_setup: false, has_admin: true, registration_enabled: false });
      const n = uniq('walkin');
      err(await call('POST', '/api/auth/register', { body: { email: `${n}@example.com`, username: n, password: PASSWORD } }), 403, 'registration is disabled on this server');
      expect((await call('POST', '/api/kosync/users/create', { body: { username: n, password: md5(PASSWORD) } })).json).toEqual({
        code: 2005,
        message: 'User registration is disabled.',
      });
      const settings = await call('GET', '/api/system/settings', { token: admin.token });
      expect(settings.json.settings.find((e: { key: string }) => e.key === 'registration_enabled')).toMatchObject({ value: false, default: false, is_default: true });
      // an admin adds people; they sign in as usual
      const u = await account();
      expect(u.id).toMatch(/^[0-9a-f-]{36}$/);
      expect((await login(call, u.username, PASSWORD)).status).toBe(200);
      // the setting turns it on
      expect((await call('PUT', '/api/system/settings', { token: admin.token, body: { registration_enabled: true } })).status).toBe(200);
      const m = uniq('walkin');
      expect((await call('POST', '/api/auth/register', { body: { email: `${m}@example.com`, username: m, password: PASSWORD } })).status).toBe(201);
      expect((await call('PUT', '/api/system/settings', { token: admin.token, body: { registration_enabled: false } })).status).toBe(200);
    });

    it('a self password change ends every other session, the OPDS key and cached Basic at once; the changing session goes on', async () => {
      const call = at('198.51.100.2');
      const u = await account();
      const other = await login(call, u.username, PASSWORD);
      expect(other.status).toBe(200);
      const key = await call('POST', '/api/auth/opds-key', { token: u.token });
      expect(key.status).toBe(201);
      // both credentials taken on trust before the change
      expect((await call('GET', '/opds', { headers: basic(u.username, PASSWORD) })).status).toBe(200);
      expect((await call('GET', key.json.opds_path)).status).toBe(200);
      expect((await call('GET', '/api/kosync/users/auth', { headers: { 'x-auth-user': u.username, 'x-auth-key': md5(PASSWORD) } })).status).toBe(200);

      const NEW = 'n3w-passphrase';
      expectMessage(
        await call('PUT', '/api/auth/password', { token: u.token, body: { current_password: PASSWORD, new_password: NEW, confirm_password: NEW } }),
        'password updated successfully',
      );
      // at once, no cache window: Basic with the old password, the key, kosync's old key
      err(await call('GET', '/opds', { headers: basic(u.username, PASSWORD) }), 401, 'invalid credentials');
      err(await call('GET', key.json.opds_path), 401, 'invalid or expired token');
      expect((await call('GET', '/api/kosync/users/auth', { headers: { 'x-auth-user': u.username, 'x-auth-key': md5(PASSWORD) } })).json).toEqual({
        code: 2001,
        message: 'Unauthorized',
      });
      // the other session's access and refresh tokens end; this one's do not
      await eventually(async () => err(await call('GET', '/api/auth/profile', { token: other.json.access_token }), 401, 'invalid or expired token'));
      err(await call('POST', '/api/auth/refresh', { body: { refresh_token: other.json.refresh_token } }), 401, 'invalid or expired refresh token');
      expect((await call('GET', '/api/auth/profile', { token: u.token })).status).toBe(200);
      const renewed = await call('POST', '/api/auth/refresh', { body: { refresh_token: u.refresh } });
      expect(renewed.status, renewed.text).toBe(200);
      expect((await call('GET', '/api/auth/profile', { token: renewed.json.access_token })).status).toBe(200);
      expect((await call('GET', '/opds', { headers: basic(u.username, NEW) })).status).toBe(200);
      expect((await call('GET', '/api/auth/opds-key', { token: u.token })).json).toEqual({ exists: false, created_at: null });
    });

    it("a reused refresh token ends its family's access tokens too", async () => {
      const u = await account();
      const first = await call('POST', '/api/auth/refresh', { body: { refresh_token: u.refresh } });
      expect(first.status).toBe(200);
      expect((await call('GET', '/api/auth/profile', { token: first.json.access_token })).status).toBe(200);
      // the stolen copy of the used token is presented again
      err(await call('POST', '/api/auth/refresh', { body: { refresh_token: u.refresh } }), 401, 'invalid or expired refresh token');
      await eventually(async () => err(await call('GET', '/api/auth/profile', { token: first.json.access_token }), 401, 'invalid or expired token'));
      await eventually(async () => err(await call('GET', '/api/auth/profile', { token: u.token }), 401, 'invalid or expired token'));
      err(await call('POST', '/api/auth/refresh', { body: { refresh_token: first.json.refresh_token } }), 401, 'invalid or expired refresh token');
      // another session of the same user is untouched
      const fresh = await login(call, u.username, PASSWORD);
      expect((await call('GET', '/api/auth/profile', { token: fresh.json.access_token })).status).toBe(200);
    });

    it('a revoked OPDS key and a deleted account stop at once', async () => {
      const call = at('198.51.100.4');
      const u = await account();
      const key = await call('POST', '/api/auth/opds-key', { token: u.token });
      expect((await call('GET', key.json.opds_path)).status).toBe(200);
      const replaced = await call('POST', '/api/auth/opds-key', { token: u.token });
      err(await call('GET', key.json.opds_path), 401, 'invalid or expired token');
      expect((await call('GET', replaced.json.opds_path)).status).toBe(200);
      expect((await call('DELETE', '/api/auth/opds-key', { token: u.token })).status).toBe(200);
      err(await call('GET', replaced.json.opds_path), 401, 'invalid or expired token');

      const gone = await account();
      const kosync = { 'x-auth-user': gone.username, 'x-auth-key': md5(PASSWORD) };
      expect((await call('GET', '/api/kosync/users/auth', { headers: kosync })).status).toBe(200);
      expect((await call('GET', '/opds', { headers: basic(gone.username, PASSWORD) })).status).toBe(200);
      expectMessage(await call('DELETE', `/api/auth/profile/${gone.id}`, { token: admin.token }), 'user account deleted successfully');
      expect((await call('GET', '/api/kosync/users/auth', { headers: kosync })).json).toEqual({ code: 2001, message: 'Unauthorized' });
      err(await call('GET', '/opds', { headers: basic(gone.username, PASSWORD) }), 401, 'invalid credentials');
    });

    it('every failed password check, on any surface, spends one budget per address; over it, 429 before any check; keys keep budgets of their own', async () => {
      const u = await account();
      const from =
        (ip: string) =>
        (h: Record<string, string> = {}) => ({ ...h, 'X-Forwarded-For': ip });
      const h = from('198.51.100.23');
      // six failures on four surfaces, and spellings the per-string lock would each count apart
      err(await call('POST', '/api/auth/login', { body: { login: u.username.toUpperCase(), password: 'wrong-passw0rd' }, headers: h() }), 401, 'invalid credentials');
      err(await call('GET', '/opds', { headers: h(basic(` ${u.username}`, 'wrong-passw0rd')) }), 401, 'invalid credentials');
      expect((await call('GET', '/api/kosync/users/auth', { headers: h({ 'x-auth-user': u.email, 'x-auth-key': md5('wrong') }) })).json).toEqual({
        code: 2001,
        message: 'Unauthorized',
      });
      const wrongCurrent = { current_password: 'wrong-passw0rd', new_password: 'n3w-passphrase', confirm_password: 'n3w-passphrase' };
      err(await call('PUT', '/api/auth/password', { token: u.token, body: wrongCurrent, headers: h() }), 401, 'current password is incorrect');
      err(await call('POST', '/api/auth/login', { body: { login: u.email, password: 'wrong-passw0rd' }, headers: h() }), 401, 'invalid credentials');
      err(await call('GET', '/opds', { headers: h(basic(u.email.toUpperCase(), 'wrong-passw0rd')) }), 401, 'invalid credentials');

      // now every password check from this address is refused, the right password included
      const r1 = await call('POST', '/api/auth/login', { body: { login: u.username, password: PASSWORD }, headers: h() });
      limited(r1);
      expect(r1.json.error).toMatch(LIMITED);
      const r2 = await call('GET', '/opds', { headers: h(basic(u.username, PASSWORD)) });
      limited(r2);
      expect(r2.json.error).toMatch(LIMITED);
      const k = await call('GET', '/api/kosync/users/auth', { headers: h({ 'x-auth-user': u.username, 'x-auth-key': md5(PASSWORD) }) });
      limited(k);
      expect(k.json.code).toBe(2001);
      limited(await call('PUT', '/api/auth/password', { token: u.token, body: wrongCurrent, headers: h() }));
      // keys are other kinds, with budgets of their own: still checked
      err(await call('GET', '/opds/key/another-key', { headers: h() }), 401, 'invalid or expired token');
      err(await call('GET', '/api/sync/koreader/library', { headers: h({ authorization: 'Device bdt_forged-credential' }) }), 401, 'invalid or revoked device credential');
      // a valid session is no password check: it still works from there
      expect((await call('GET', '/api/auth/profile', { token: u.token, headers: h() })).status).toBe(200);
      // and another address has its own budget
      expect((await call('GET', '/opds', { headers: from('198.51.100.24')(basic(u.username, PASSWORD)) })).status).toBe(200);
    });
  });
}
