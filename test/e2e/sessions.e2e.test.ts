// Sessions: how a token is presented and refused, refresh rotation and reuse, logout, the session
// duration setting, and what survives a restart (the login lock, sessions, COOKIE_SECURE).
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes, type Bindery } from '../support/bindery';
import type { Res } from '../support/http';
import {
  api,
  csrfOf,
  instances,
  decodeJwt,
  eventually,
  expectError as err,
  expectMessage,
  jwtSecret,
  login,
  PASSWORD,
  putSettings,
  register,
  tokenCookie,
  uniq,
  UUID,
  type Account,
  type Call,
} from './helpers';

const attrs = (r: Res) => {
  const c = tokenCookie(r);
  expect(c, 'token cookie').toBeDefined();
  const [first, ...rest] = c!.split('; ');
  return { value: first!.slice('token='.length), attrs: rest.filter((a) => !a.startsWith('Expires=')).sort() };
};

const sign = (secret: string, claims: Record<string, unknown>, alg = 'HS256') => new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).sign(new TextEncoder().encode(secret));

const modes = (await availableModes()).filter((m) => m === 'embedded'); // account rules: embedded tier; the bus is the distributed tier's (smoke, contract, fault, replicas)
const instance = instances(modes);

for (const mode of modes) {
  describe(`sessions (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    beforeAll(async () => {
      b = await instance(mode);
      call = api(b);
      admin = await register(call, { name: 'warden' });
    });

    const me = (r: { token?: string; cookie?: string; headers?: Record<string, string> }) => call('GET', '/api/auth/profile', r);
    const refresh = (token: unknown) => call('POST', '/api/auth/refresh', { body: { refresh_token: token } });

    it('accepts the token from the Authorization header (any case of Bearer) and from the token cookie', async () => {
      const u = await register(call);
      for (const r of [{ token: u.token }, { cookie: `token=${u.token}` }, { headers: { authorization: `bearer ${u.token}` } }, { cookie: `theme=x; token=${u.token}; other=1` }]) {
        const p = await me(r);
        expect(p.status, p.text).toBe(200);
        expect(p.json.id).toBe(u.id);
      }
    });

    it('401 authentication required without a token; 401 invalid or expired token for any token that does not hold', async () => {
      const u = await register(call);
      const { payload } = decodeJwt(u.token);
      const now = Math.floor(Date.now() / 1000);
      err(await me({}), 401, 'authentication required');
      err(await me({ cookie: 'token=' }), 401, 'authentication required');
      err(await me({ headers: { authorization: 'Basic dXNlcjpwYXNz' } }), 401, 'authentication required');
      const bad: [string, string][] = [
        ['garbage', 'not.a.jwt'],
        ['another secret', await sign('another-secret-another-secret-0123456789', payload)],
        ['alg none', `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.`],
        ['HS512 with the right secret', await sign(jwtSecret(b), payload, 'HS512')],
        ['expired', await sign(jwtSecret(b), { ...payload, iat: now - 7200, exp: now - 3600 })],
        [
          'tampered role',
          (() => {
            const [h, , s] = u.token.split('.');
            return `${h}.${Buffer.from(JSON.stringify({ ...payload, user_role: 'admin' })).toString('base64url')}.${s}`;
          })(),
        ],
      ];
      for (const [what, token] of bad) {
        const r = await me({ token });
        expect(r.status, what).toBe(401);
        expect(r.json, what).toEqual({ error: 'invalid or expired token' });
        err(await me({ cookie: `token=${token}` }), 401, 'invalid or expired token');
        err(await call('GET', '/api/auth/users', { token }), 401, 'invalid or expired token');
      }
      // the right secret and claims are accepted: the refusals above are about the token, not the test
      const good = await sign(jwtSecret(b), { ...payload, jti: `${payload.jti}-copy`, iat: now, exp: now + 600 });
      expect((await me({ token: good })).status).toBe(200);
    });

    describe('refresh', () => {
      it('rotates: 200 AuthResponse with a new pair and cookie; each refresh token is single-use; reuse revokes the family', async () => {
        const u = await register(call);
        const l = await login(call, u.username, PASSWORD);
        const r1 = await refresh(l.json.refresh_token);
        expect(r1.status, r1.text).toBe(200);
        expect(Object.keys(r1.json).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type', 'user']);
        expect(r1.json).toMatchObject({ token_type: 'Bearer', expires_in: 604800 });
        expect(r1.json.user).toEqual({ id: u.id, email: u.email, username: u.username, first_name: '', last_name: '', role: 'user' });
        expect(r1.json.access_token).not.toBe(l.json.access_token);
        expect(r1.json.refresh_token).not.toBe(l.json.refresh_token);
        const c = attrs(r1);
        expect(c.value).toBe(r1.json.access_token);
        expect(c.attrs).toEqual(['HttpOnly', 'Max-Age=604800', 'Path=/', 'SameSite=Lax']);
        const claims = decodeJwt(r1.json.access_token).payload;
        expect(claims).toMatchObject({ user_id: u.id, user_role: 'user', user_email: u.email, user_username: u.username });
        expect((claims.exp as number) - (claims.iat as number)).toBe(604800);
        expect((await me({ token: r1.json.access_token })).status).toBe(200);

        const r2 = await refresh(r1.json.refresh_token);
        expect(r2.status).toBe(200);
        // reuse of an already used token: refused, and the whole family with it
        err(await refresh(l.json.refresh_token), 401, 'invalid or expired refresh token');
        err(await refresh(r2.json.refresh_token), 401, 'invalid or expired refresh token');
        // other sessions of the same account have their own families
        const other = await refresh(u.refresh);
        expect(other.status).toBe(200);
        expect((await refresh(other.json.refresh_token)).status).toBe(200);
      });

      it('400 refresh_token is required, 400 invalid request for a wrong type, 401 for an unknown token', async () => {
        err(await call('POST', '/api/auth/refresh', { body: {} }), 400, 'refresh_token is required');
        err(await refresh(''), 400, 'refresh_token is required');
        err(await refresh(12), 400, 'invalid request');
        err(await call('POST', '/api/auth/refresh', { raw: '{"refresh_token":' }), 400, 'invalid request');
        err(await refresh('made-up-token'), 401, 'invalid or expired refresh token');
        err(await refresh(admin.token), 401, 'invalid or expired refresh token');
      });
    });

    describe('logout', () => {
      it('revokes the presented access token and the refresh family, clears the cookie; other sessions stay', async () => {
        const u = await register(call);
        const a = await login(call, u.username, PASSWORD);
        const r = await call('POST', '/api/auth/logout', { token: a.json.access_token, body: { refresh_token: a.json.refresh_token } });
        expectMessage(r, 'logged out successfully');
        const c = attrs(r);
        expect(c.value).toBe('');
        expect(c.attrs).toEqual(['HttpOnly', 'Max-Age=0', 'Path=/', 'SameSite=Lax']);
        await eventually(async () => err(await me({ token: a.json.access_token }), 401, 'invalid or expired token'));
        err(await me({ cookie: `token=${a.json.access_token}` }), 401, 'invalid or expired token');
        err(await refresh(a.json.refresh_token), 401, 'invalid or expired refresh token');
        expect((await me({ token: u.token })).status).toBe(200);
        expect((await refresh(u.refresh)).status).toBe(200);
      });

      it('works with the cookie, with only a refresh token, and with nothing at all', async () => {
        const u = await register(call);
        const viaCookie = await login(call, u.username, PASSWORD);
        // a cookie-authenticated write carries the session's CSRF token (docs/decisions.md)
        expectMessage(
          await call('POST', '/api/auth/logout', { cookie: `token=${viaCookie.json.access_token}`, headers: await csrfOf(call, viaCookie.json.access_token) }),
          'logged out successfully',
        );
        await eventually(async () => err(await me({ cookie: `token=${viaCookie.json.access_token}` }), 401, 'invalid or expired token'));
        // the session's refresh family ends with it, although its refresh token was not presented
        err(await refresh(viaCookie.json.refresh_token), 401, 'invalid or expired refresh token');

        const onlyRefresh = await login(call, u.username, PASSWORD);
        expectMessage(await call('POST', '/api/auth/logout', { body: { refresh_token: onlyRefresh.json.refresh_token } }), 'logged out successfully');
        err(await refresh(onlyRefresh.json.refresh_token), 401, 'invalid or expired refresh token');
        expect((await me({ token: onlyRefresh.json.access_token })).status).toBe(200);

        const none = await call('POST', '/api/auth/logout');
        expectMessage(none, 'logged out successfully');
        expect(attrs(none).attrs).toContain('Max-Age=0');
        expectMessage(await call('POST', '/api/auth/logout', { token: 'not.a.jwt', body: {} }), 'logged out successfully');
      });
    });

    it('session_duration_seconds sets expires_in, exp - iat and the cookie Max-Age of new sessions', async () => {
      const u = await register(call);
      const check = (r: Res, seconds: number) => {
        expect(r.status, r.text).toBeLessThan(300);
        expect(r.json.expires_in).toBe(seconds);
        const p = decodeJwt(r.json.access_token).payload;
        expect((p.exp as number) - (p.iat as number)).toBe(seconds);
        expect(attrs(r).attrs).toEqual(['HttpOnly', `Max-Age=${seconds}`, 'Path=/', 'SameSite=Lax']);
      };
      const s = await putSettings(call, admin.token, { session_duration_seconds: 3600 });
      expect((s.json.settings as { key: string }[]).find((e) => e.key === 'session_duration_seconds')).toMatchObject({ value: 3600, is_default: false });
      try {
        const l = await login(call, u.username, PASSWORD);
        check(l, 3600);
        const n = uniq('dur');
        check(await call('POST', '/api/auth/register', { body: { email: `${n}@example.com`, username: n, password: PASSWORD } }), 3600);
        check(await refresh(l.json.refresh_token), 3600);
        check(await call('POST', '/api/auth/login', { form: { login: n, password: PASSWORD } }), 3600);
        // tokens issued before the change keep their own lifetime
        const old = decodeJwt(u.token).payload;
        expect((old.exp as number) - (old.iat as number)).toBe(604800);
        expect((await me({ token: u.token })).status).toBe(200);
      } finally {
        await putSettings(call, admin.token, { session_duration_seconds: 604800 });
      }
      check(await login(call, u.username, PASSWORD), 604800);
    });

    it('keeps the login lock, sessions and settings across a restart; COOKIE_SECURE=true adds Secure', async () => {
      const u = await register(call);
      await putSettings(call, admin.token, { login_max_attempts: 2 });
      err(await login(call, u.email, 'wrong-passw0rd-1'), 401, 'invalid credentials');
      err(await login(call, u.email, 'wrong-passw0rd-2'), 429, 'Too many failed attempts. Account locked for 15 minutes');
      const ghost = uniq('ghost');
      err(await login(call, ghost, PASSWORD), 401, 'invalid credentials');
      const session = await login(call, u.username, PASSWORD);
      expect(attrs(session).attrs).not.toContain('Secure');

      // the harness restarts with the environment object it exposes
      b.env.COOKIE_SECURE = 'true';
      await b.restart();

      err(await login(call, u.email, PASSWORD), 429, 'Account locked. Try again in 15 minutes');
      // one failure remembered for the other login string: the next one locks it
      err(await login(call, ghost, PASSWORD), 429, 'Too many failed attempts. Account locked for 15 minutes');
      expect((await me({ token: session.json.access_token })).status).toBe(200);
      const rotated = await refresh(session.json.refresh_token);
      expect(rotated.status).toBe(200);
      expect(attrs(rotated).attrs).toEqual(['HttpOnly', 'Max-Age=604800', 'Path=/', 'SameSite=Lax', 'Secure']);
      const fresh = await login(call, u.username, PASSWORD);
      expect(fresh.status).toBe(200);
      expect(attrs(fresh).attrs).toEqual(['HttpOnly', 'Max-Age=604800', 'Path=/', 'SameSite=Lax', 'Secure']);
      const settings = await call('GET', '/api/system/settings', { token: admin.token });
      expect((settings.json.settings as { key: string }[]).find((e) => e.key === 'login_max_attempts')).toMatchObject({ value: 2, is_default: false });
      expect((await call('GET', '/api/setup/status')).json).toEqual({ needs_setup: false, has_admin: true, registration_enabled: true });
      expect(UUID.test(u.id)).toBe(true);
    });
  });
}
