// Hostile or odd input around sessions: oversized logins, header-breaking redirects, refresh tokens
// outliving a password change, and a reset racing a login.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { availableModes, type Bindery } from '../support/bindery';
import { api, expectError as err, instances, login, PASSWORD, register, type Account, type Call } from './helpers';

const modes = await availableModes();
const instance = instances(modes);

for (const mode of modes) {
  describe(`hardening (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    beforeAll(async () => {
      b = await instance(mode);
      call = api(b);
      admin = await register(call, { name: 'keeper' });
    });

    it('a login string too long to be an account is a 400, not a database error', async () => {
      err(await login(call, 'x'.repeat(5000), 'whatever1'), 400, 'login must be at most 320 characters');
      err(await login(call, 'someone', 'p1'.repeat(600)), 400, 'password must be at most 1024 characters');
    });

    it('a redirect that cannot go into a header falls back to /dashboard', async () => {
      const u = await register(call);
      for (const redirect of ['/dashé', '//evil.example', '/\\evil.example']) {
        const r = await call('POST', '/api/auth/login', { form: { login: u.username, password: PASSWORD, redirect }, headers: { 'HX-Request': 'true' } });
        expect(r.status).toBe(200);
        expect(r.headers.get('hx-redirect')).toBe('/dashboard');
        expect(r.headers.get('content-type')).toMatch(/^text\/html/);
      }
      // a control character is refused at the door, before login runs (docs/decisions.md)
      const ctl = await call('POST', '/api/auth/login', { form: { login: u.username, password: PASSWORD, redirect: '/dash\u0001x' }, headers: { 'HX-Request': 'true' } });
      expect(ctl.status).toBe(400);
      expect(ctl.text).toBe('<div class="alert alert-error" role="alert">redirect must not contain control characters</div>');
      const ok = await call('POST', '/api/auth/login', { form: { login: u.username, password: PASSWORD, redirect: '/library/2?sort=title' }, headers: { 'HX-Request': 'true' } });
      expect(ok.headers.get('hx-redirect')).toBe('/library/2?sort=title');
    });

    it("changing one's own password ends every other session's refresh token; the changing session's goes on", async () => {
      const u = await register(call);
      const second = await login(call, u.username, PASSWORD);
      expect(second.status).toBe(200);
      const r = await call('PUT', '/api/auth/password', { token: u.token, body: { current_password: PASSWORD, new_password: 'n3w-passw0rd', confirm_password: 'n3w-passw0rd' } });
      expect(r.json).toEqual({ message: 'password updated successfully' });
      err(await call('POST', '/api/auth/refresh', { body: { refresh_token: second.json.refresh_token } }), 401, 'invalid or expired refresh token');
      // the session in hand keeps working, and refreshing
      expect((await call('GET', '/api/auth/profile', { token: u.token })).status).toBe(200);
      expect((await call('POST', '/api/auth/refresh', { body: { refresh_token: u.refresh } })).status).toBe(200);
    });

    it('a login racing an admin reset never leaves a working session made with the old password', async () => {
      const u = await register(call);
      const racing = Promise.all(Array.from({ length: 4 }, () => login(call, u.username, PASSWORD)));
      const reset = call('PUT', `/api/auth/password/${u.id}`, { token: admin.token, body: { new_password: 'r3set-passw0rd', confirm_password: 'r3set-passw0rd' } });
      const [logins, done] = await Promise.all([racing, reset]);
      expect(done.json).toEqual({ message: 'password updated successfully' });
      const made = logins.filter((l) => l.status === 200);
      for (const l of logins) if (l.status !== 200) expect(l.json).toEqual({ error: 'invalid credentials' });
      // every session from the old password dies once the gateway's view has the reset: wait for that
      // (a profile read changes nothing), then its refresh token must be dead too (a refresh would
      // rotate a live token, so it is asked once, after)
      await vi.waitFor(
        async () => {
          for (const l of made) err(await call('GET', '/api/auth/profile', { token: l.json.access_token }), 401, 'invalid or expired token');
        },
        { timeout: 10_000, interval: 100 },
      );
      for (const l of made) err(await call('POST', '/api/auth/refresh', { body: { refresh_token: l.json.refresh_token } }), 401, 'invalid or expired refresh token');
      // and the new password gives a session that works at once
      const fresh = await login(call, u.username, 'r3set-passw0rd');
      expect(fresh.status).toBe(200);
      expect((await call('GET', '/api/auth/profile', { token: fresh.json.access_token })).status).toBe(200);
    });
  });
}
