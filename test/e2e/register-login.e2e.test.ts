// Register rules 1-8 and login rules 1-4 (with the login lock), through the gateway's HTTP.
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes, type Bindery } from '../support/bindery';
import type { Res } from '../support/http';
import { api, csrfOf, instances, decodeJwt, fragment, login, PASSWORD, putSettings, register, tokenCookie, uniq, UUID, type Account, type Call } from './helpers';

const SESSION = 604800;

/** Set-Cookie `token` split into its value and its attributes (order-independent). */
function cookieParts(r: Res): { value: string; attrs: string[] } {
  const c = tokenCookie(r);
  expect(c, 'token cookie').toBeDefined();
  const [first, ...attrs] = c!.split('; ');
  return { value: first!.slice('token='.length), attrs: attrs.filter((a) => !a.startsWith('Expires=')).sort() };
}

function expectAuthResponse(r: Res, status: number, user: { email: string; username: string; role: string; first_name?: string; last_name?: string }) {
  expect(r.status, r.text).toBe(status);
  expect(Object.keys(r.json).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type', 'user']);
  expect(r.json.token_type).toBe('Bearer');
  expect(r.json.expires_in).toBe(SESSION);
  expect(r.json.access_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  expect(typeof r.json.refresh_token).toBe('string');
  expect(r.json.refresh_token.length).toBeGreaterThan(20);
  expect(r.json.user).toEqual({
    id: expect.stringMatching(UUID),
    email: user.email,
    username: user.username,
    first_name: user.first_name ?? '',
    last_name: user.last_name ?? '',
    role: user.role,
  });
  const c = cookieParts(r);
  expect(c.value).toBe(r.json.access_token);
  expect(c.attrs).toEqual(['HttpOnly', `Max-Age=${SESSION}`, 'Path=/', 'SameSite=Lax']);
}

const err = (r: Res, status: number, message: string) => {
  expect(r.status, r.text).toBe(status);
  expect(r.json).toEqual({ error: message });
};

const modes = (await availableModes()).filter((m) => m === 'embedded'); // account rules: embedded tier; the bus is the distributed tier's (smoke, contract, fault, replicas)
const instance = instances(modes);

for (const mode of modes) {
  describe(`register and login (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let first: Res;
    let admin: Account;
    beforeAll(async () => {
      b = await instance(mode);
      call = api(b);
      // The first account: it becomes the admin whatever role it asks for.
      first = await call('POST', '/api/auth/register', {
        body: { email: 'Root@Example.com', username: '  root  ', password: PASSWORD, role: 'user', first_name: 'Ada', last_name: 'Root' },
      });
      admin = {
        id: first.json?.user?.id,
        email: 'Root@Example.com',
        username: 'root',
        password: PASSWORD,
        token: first.json?.access_token,
        refresh: first.json?.refresh_token,
        role: 'admin',
      };
    });

    it('makes the first account admin even when it asks for role user, with the exact AuthResponse and cookie', async () => {
      expectAuthResponse(first, 201, { email: 'Root@Example.com', username: 'root', role: 'admin', first_name: 'Ada', last_name: 'Root' });
      expect(first.json.user).not.toHaveProperty('theme');
      const p = await call('GET', '/api/auth/profile', { token: admin.token });
      expect(p.status).toBe(200);
      expect(p.json).toEqual({ id: admin.id, email: 'Root@Example.com', username: 'root', first_name: 'Ada', last_name: 'Root', role: 'admin', theme: 'tokyo-night' });
    });

    it('issues an HS256 JWT carrying exactly the spec claims, exp - iat = the session duration', async () => {
      const { header, payload } = decodeJwt(admin.token);
      expect(header.alg).toBe('HS256');
      expect(Object.keys(payload).sort()).toEqual(['exp', 'iat', 'jti', 'user_email', 'user_id', 'user_role', 'user_username']);
      expect(payload).toMatchObject({ user_id: admin.id, user_role: 'admin', user_email: 'Root@Example.com', user_username: 'root' });
      expect(typeof payload.jti).toBe('string');
      expect(Number.isInteger(payload.iat)).toBe(true);
      expect((payload.exp as number) - (payload.iat as number)).toBe(SESSION);
      expect(Math.abs((payload.iat as number) - Date.now() / 1000)).toBeLessThan(120);
      // every token has its own jti
      const again = await login(call, 'root', PASSWORD);
      expect(again.status).toBe(200);
      expect(decodeJwt(again.json.access_token).payload.jti).not.toBe(payload.jti);
    });

    it('reads register inputs from form fields', async () => {
      const name = uniq('form');
      const r = await call('POST', '/api/auth/register', { form: { email: `${name}@example.com`, username: name, password: PASSWORD, first_name: 'Form', last_name: 'Filler' } });
      expectAuthResponse(r, 201, { email: `${name}@example.com`, username: name, role: 'user', first_name: 'Form', last_name: 'Filler' });
      const l = await login(call, name, PASSWORD);
      expect(l.status).toBe(200);
      expect(l.json.user.id).toBe(r.json.user.id);
    });

    it('registers a JSON body with role omitted as a user, with the same AuthResponse', async () => {
      const name = uniq('json');
      const r = await call('POST', '/api/auth/register', { body: { email: `${name}@example.com`, username: name, password: PASSWORD } });
      expectAuthResponse(r, 201, { email: `${name}@example.com`, username: name, role: 'user' });
      const p = await call('GET', '/api/auth/profile', { token: r.json.access_token });
      expect(p.json.theme).toBe('tokyo-night');
    });

    describe('validation (rule 2), in the order email, username, password', () => {
      const name = 'valid' + Math.random().toString(36).slice(2, 8);
      const good = { email: `${name}@example.com`, username: name, password: PASSWORD };
      const cases: [string, Record<string, string | undefined>, string][] = [
        ['everything missing', { email: undefined, username: undefined, password: undefined }, 'email is required'],
        ['email missing', { email: undefined }, 'email is required'],
        ['email malformed', { email: 'not-an-email' }, 'email must be a valid email address'],
        ['email without domain dot', { email: 'a@b' }, 'email must be a valid email address'],
        ['bad email beats bad username', { email: 'nope', username: 'x' }, 'email must be a valid email address'],
        ['username missing', { username: undefined }, 'username is required'],
        ['username of 2 characters', { username: 'ab' }, 'username must be between 3 and 50 characters'],
        ['username of 51 characters', { username: 'a'.repeat(51) }, 'username must be between 3 and 50 characters'],
        ['bad username beats bad password', { username: 'ab', password: 'x' }, 'username must be between 3 and 50 characters'],
        ['password missing', { password: undefined }, 'password is required'],
        ['password of 7 characters', { password: 'abcde12' }, 'password must be at least 8 characters'],
        ['password of 129 characters', { password: 'a1'.repeat(64) + 'b' }, 'password must be at most 128 characters'],
        ['password without a digit', { password: 'abcdefgh' }, 'password must contain at least one letter and one digit'],
        ['password without a letter', { password: '12345678' }, 'password must contain at least one letter and one digit'],
      ];
      for (const [what, change, message] of cases) {
        it(`400 "${message}" for ${what} (JSON and form)`, async () => {
          const body = Object.fromEntries(Object.entries({ ...good, ...change }).filter(([, v]) => v !== undefined)) as Record<string, string>;
          err(await call('POST', '/api/auth/register', { body }), 400, message);
          err(await call('POST', '/api/auth/register', { form: body }), 400, message);
        });
      }

      it('accepts the boundaries: 3 and 50 character usernames, 8 and 128 character passwords', async () => {
        const three = 'b' + Math.random().toString(36).slice(2, 4);
        const fifty = uniq('f').padEnd(50, 'z');
        await register(call, { name: three, password: 'abcdefg1' });
        await register(call, { name: fifty, password: 'a1'.repeat(64) });
        expect((await login(call, fifty, 'a1'.repeat(64))).status).toBe(200);
      });
    });

    it('trims the username; a whitespace-only username is 400 username cannot be empty or whitespace', async () => {
      const name = uniq('trim');
      err(
        await call('POST', '/api/auth/register', { body: { email: `${name}@example.com`, username: '     ', password: PASSWORD } }),
        400,
        'username cannot be empty or whitespace',
      );
      err(
        await call('POST', '/api/auth/register', { form: { email: `${name}@example.com`, username: ' \t   ', password: PASSWORD } }),
        400,
        'username cannot be empty or whitespace',
      );
      const r = await call('POST', '/api/auth/register', { body: { email: `${name}@example.com`, username: `   ${name}  `, password: PASSWORD } });
      expect(r.status).toBe(201);
      expect(r.json.user.username).toBe(name);
      expect((await login(call, name, PASSWORD)).status).toBe(200);
    });

    it('400 invalid request for a body that cannot be bound', async () => {
      const name = uniq('bind');
      err(await call('POST', '/api/auth/register', { body: { email: 5, username: name, password: PASSWORD } }), 400, 'invalid request');
      err(await call('POST', '/api/auth/register', { body: { email: `${name}@example.com`, username: name, password: { p: 1 } } }), 400, 'invalid request');
      err(await call('POST', '/api/auth/register', { body: [{ email: `${name}@example.com`, username: name, password: PASSWORD }] }), 400, 'invalid request');
      err(await call('POST', '/api/auth/register', { raw: '{"email": "a@b.co", ' }), 400, 'invalid request');
      err(await call('POST', '/api/auth/register', { raw: '"just a string"' }), 400, 'invalid request');
      err(
        await call('POST', '/api/auth/register', { raw: `email=${name}%40example.com&username=${name}&password=${PASSWORD}`, contentType: 'text/plain' }),
        400,
        'invalid request',
      );
      // nothing was created
      expect((await login(call, name, PASSWORD)).status).toBe(401);
    });

    it('409 email already exists / username already exists (email first, case-insensitive)', async () => {
      const a = await register(call);
      const other = uniq('dup');
      err(await call('POST', '/api/auth/register', { body: { email: a.email, username: other, password: PASSWORD } }), 409, 'email already exists');
      err(await call('POST', '/api/auth/register', { body: { email: a.email.toUpperCase(), username: other, password: PASSWORD } }), 409, 'email already exists');
      err(await call('POST', '/api/auth/register', { body: { email: `${other}@example.com`, username: a.username, password: PASSWORD } }), 409, 'username already exists');
      err(
        await call('POST', '/api/auth/register', { form: { email: `${other}@example.com`, username: a.username.toUpperCase(), password: PASSWORD } }),
        409,
        'username already exists',
      );
      err(await call('POST', '/api/auth/register', { body: { email: a.email, username: a.username, password: PASSWORD } }), 409, 'email already exists');
      // a conflict is decided before the role (rule 5 before rule 6)
      err(await call('POST', '/api/auth/register', { body: { email: a.email, username: other, password: PASSWORD, role: 'wizard' } }), 409, 'email already exists');
      err(
        await call('POST', '/api/auth/register', { body: { email: `${other}@example.com`, username: a.username, password: PASSWORD, role: 'admin' } }),
        409,
        'username already exists',
      );
    });

    it('lower-cases the role; 400 for an unknown role; admin needs an admin caller (403 otherwise)', async () => {
      const u = await register(call, { role: 'USER' });
      expect(u.role).toBe('user');
      const name = () => uniq('role');
      const body = (role: string) => {
        const n = name();
        return { email: `${n}@example.com`, username: n, password: PASSWORD, role };
      };
      err(await call('POST', '/api/auth/register', { body: body('superuser') }), 400, "invalid role. must be 'user' or 'admin'");
      err(await call('POST', '/api/auth/register', { form: body('moderator') }), 400, "invalid role. must be 'user' or 'admin'");
      err(await call('POST', '/api/auth/register', { body: body('admin') }), 403, 'only administrators can create admin accounts');
      err(await call('POST', '/api/auth/register', { body: body('ADMIN'), token: u.token }), 403, 'only administrators can create admin accounts');
      err(await call('POST', '/api/auth/register', { form: body('Admin'), cookie: `token=${u.token}` }), 403, 'only administrators can create admin accounts');
      // an admin caller creates an admin, by header or by cookie
      const a1 = await call('POST', '/api/auth/register', { body: body('Admin'), token: admin.token });
      expect(a1.status, a1.text).toBe(201);
      expect(a1.json.user.role).toBe('admin');
      // a form with the cookie alone would be a cross-site form: the session's CSRF token shows it is ours
      const a2 = await call('POST', '/api/auth/register', { form: body('admin'), cookie: `token=${admin.token}`, headers: await csrfOf(call, admin.token) });
      expect(a2.status, a2.text).toBe(201);
      expect(a2.json.user.role).toBe('admin');
      // the new admin is a real admin
      expect((await call('GET', '/api/auth/users', { token: a1.json.access_token })).status).toBe(200);
      // an admin caller without a role creates a user
      const plain = await call('POST', '/api/auth/register', { body: { ...body(''), role: undefined }, token: admin.token });
      expect(plain.status).toBe(201);
      expect(plain.json.user.role).toBe('user');
      // keep a single admin for the other tests
      for (const a of [a1, a2]) expect((await call('DELETE', `/api/auth/profile/${a.json.user.id}`, { token: admin.token })).status).toBe(200);
    });

    it('answers browser-fragment registers with HTML: 201 on success, errors with the same status', async () => {
      const hx = { 'HX-Request': 'true' };
      const n = uniq('hx');
      const ok = await call('POST', '/api/auth/register', { headers: hx, form: { email: `${n}@example.com`, username: n, password: PASSWORD } });
      expect(ok.status).toBe(201);
      expect(ok.headers.get('content-type')).toMatch(/^text\/html/);
      expect(ok.json).toBeUndefined();
      expect(ok.text).toContain(n);
      expect(ok.headers.get('hx-redirect')).toBe('/dashboard');
      const c = cookieParts(ok);
      expect(c.attrs).toEqual(['HttpOnly', `Max-Age=${SESSION}`, 'Path=/', 'SameSite=Lax']);
      expect((await call('GET', '/api/auth/profile', { cookie: `token=${c.value}` })).json.username).toBe(n);

      const m = uniq('hx');
      fragment(await call('POST', '/api/auth/register', { headers: hx, form: { email: 'bad', username: m, password: PASSWORD } }), 400, 'email must be a valid email address');
      fragment(
        await call('POST', '/api/auth/register', { headers: hx, form: { email: `${m}@example.com`, username: m, password: 'short' } }),
        400,
        'password must be at least 8 characters',
      );
      fragment(
        await call('POST', '/api/auth/register', { headers: hx, form: { email: `${m}@example.com`, username: '      ', password: PASSWORD } }),
        400,
        'username cannot be empty or whitespace',
      );
      fragment(await call('POST', '/api/auth/register', { headers: hx, form: { email: `${n}@example.com`, username: m, password: PASSWORD } }), 409, 'email already exists');
      fragment(await call('POST', '/api/auth/register', { headers: hx, form: { email: `${m}@example.com`, username: n, password: PASSWORD } }), 409, 'username already exists');
      fragment(
        await call('POST', '/api/auth/register', { headers: hx, form: { email: `${m}@example.com`, username: m, password: PASSWORD, role: 'root' } }),
        400,
        "invalid role. must be 'user' or 'admin'",
      );
      fragment(
        await call('POST', '/api/auth/register', { headers: hx, form: { email: `${m}@example.com`, username: m, password: PASSWORD, role: 'admin' } }),
        403,
        'only administrators can create admin accounts',
      );
      fragment(await call('POST', '/api/auth/register', { headers: hx, raw: '{"broken' }), 400, 'invalid request');
      expect((await call('POST', '/api/auth/register', { headers: hx, form: { email: `${m}@example.com`, username: m, password: PASSWORD } })).status).toBe(201);
    });

    describe('login', () => {
      it('logs in by email and by username (case-insensitively), 200 AuthResponse with the cookie', async () => {
        const u = await register(call);
        for (const l of [u.email, u.username, u.email.toUpperCase(), u.username.toUpperCase()]) {
          const r = await login(call, l, PASSWORD);
          expectAuthResponse(r, 200, { email: u.email, username: u.username, role: 'user' });
          expect(r.json.user.id).toBe(u.id);
          expect(r.json.user).not.toHaveProperty('theme');
        }
        const f = await call('POST', '/api/auth/login', { form: { login: u.username, password: PASSWORD } });
        expectAuthResponse(f, 200, { email: u.email, username: u.username, role: 'user' });
        const me = await call('GET', '/api/auth/profile', { token: f.json.access_token });
        expect(me.json.id).toBe(u.id);
      });

      it('400 with the validation message when login or password is missing, invalid request when unbindable', async () => {
        err(await call('POST', '/api/auth/login', { body: {} }), 400, 'login is required');
        err(await call('POST', '/api/auth/login', { body: { password: PASSWORD } }), 400, 'login is required');
        err(await call('POST', '/api/auth/login', { form: { login: 'root' } }), 400, 'password is required');
        err(await call('POST', '/api/auth/login', { body: { login: 'root', password: '' } }), 400, 'password is required');
        err(await call('POST', '/api/auth/login', { body: { login: 7, password: PASSWORD } }), 400, 'invalid request');
        err(await call('POST', '/api/auth/login', { raw: '{"login":' }), 400, 'invalid request');
        err(await call('POST', '/api/auth/login', { raw: '[]' }), 400, 'invalid request');
        fragment(await call('POST', '/api/auth/login', { headers: { 'HX-Request': 'true' }, form: { login: 'root' } }), 400, 'password is required');
        fragment(await call('POST', '/api/auth/login', { headers: { 'HX-Request': 'true' }, body: { password: PASSWORD } }), 400, 'login is required');
        fragment(await call('POST', '/api/auth/login', { headers: { 'HX-Request': 'true' }, raw: '{"login":' }), 400, 'invalid request');
      });

      it('401 invalid credentials for an unknown login or a wrong password, JSON even for fragment requests', async () => {
        const u = await register(call);
        err(await login(call, u.username, 'wrong-passw0rd'), 401, 'invalid credentials');
        err(await login(call, uniq('ghost'), PASSWORD), 401, 'invalid credentials');
        const hx = await call('POST', '/api/auth/login', { headers: { 'HX-Request': 'true' }, form: { login: u.email, password: 'wrong-passw0rd' } });
        err(hx, 401, 'invalid credentials');
        expect(hx.headers.get('content-type')).toMatch(/^application\/json/);
        expect(tokenCookie(hx)).toBeUndefined();
      });

      it('locks a login after 5 failures by default: 429 Too many failed attempts, then Account locked even with the right password', async () => {
        const u = await register(call);
        for (let i = 0; i < 4; i++) err(await login(call, u.email, `wrong-${i}-passw0rd`), 401, 'invalid credentials');
        err(await login(call, u.email, 'wrong-4-passw0rd'), 429, 'Too many failed attempts. Account locked for 15 minutes');
        err(await login(call, u.email, PASSWORD), 429, 'Account locked. Try again in 15 minutes');
        err(await login(call, u.email, 'wrong-5-passw0rd'), 429, 'Account locked. Try again in 15 minutes');
        fragment(
          await call('POST', '/api/auth/login', { headers: { 'HX-Request': 'true' }, form: { login: u.email, password: PASSWORD } }),
          429,
          'Account locked. Try again in 15 minutes',
        );
        // the lock is keyed on the login string as submitted: the username, or the e-mail in other case, still work
        expect((await login(call, u.username, PASSWORD)).status).toBe(200);
        expect((await login(call, u.email.toUpperCase(), PASSWORD)).status).toBe(200);
        err(await login(call, u.email, PASSWORD), 429, 'Account locked. Try again in 15 minutes');
      });

      it('follows login_max_attempts and login_lock_minutes; unknown logins lock too; HX lock errors are HTML', async () => {
        await putSettings(call, admin.token, { login_max_attempts: 3, login_lock_minutes: 2 });
        try {
          const u = await register(call);
          err(await login(call, u.username, 'nope-1-passw0rd'), 401, 'invalid credentials');
          err(await login(call, u.username, 'nope-2-passw0rd'), 401, 'invalid credentials');
          fragment(
            await call('POST', '/api/auth/login', { headers: { 'HX-Request': 'true' }, form: { login: u.username, password: 'nope-3-passw0rd' } }),
            429,
            'Too many failed attempts. Account locked for 2 minutes',
          );
          err(await login(call, u.username, PASSWORD), 429, 'Account locked. Try again in 2 minutes');
          expect((await login(call, u.email, PASSWORD)).status).toBe(200);

          const ghost = uniq('ghost');
          err(await login(call, ghost, PASSWORD), 401, 'invalid credentials');
          err(await login(call, ghost, PASSWORD), 401, 'invalid credentials');
          err(await login(call, ghost, PASSWORD), 429, 'Too many failed attempts. Account locked for 2 minutes');
          err(await login(call, ghost, PASSWORD), 429, 'Account locked. Try again in 2 minutes');
        } finally {
          await putSettings(call, admin.token, { login_max_attempts: 5, login_lock_minutes: 15 });
        }
      });

      it('a successful login clears the failure count', async () => {
        await putSettings(call, admin.token, { login_max_attempts: 3 });
        try {
          const u = await register(call);
          err(await login(call, u.username, 'bad-1-passw0rd'), 401, 'invalid credentials');
          err(await login(call, u.username, 'bad-2-passw0rd'), 401, 'invalid credentials');
          expect((await login(call, u.username, PASSWORD)).status).toBe(200);
          err(await login(call, u.username, 'bad-3-passw0rd'), 401, 'invalid credentials');
          err(await login(call, u.username, 'bad-4-passw0rd'), 401, 'invalid credentials');
          err(await login(call, u.username, 'bad-5-passw0rd'), 429, 'Too many failed attempts. Account locked for 15 minutes');
        } finally {
          await putSettings(call, admin.token, { login_max_attempts: 5 });
        }
      });

      it('answers a fragment login with 200 HTML and HX-Redirect to the local redirect value, /dashboard otherwise', async () => {
        const u = await register(call);
        const hx = { 'HX-Request': 'true' };
        const cases: [Record<string, string>, string][] = [
          [{}, '/dashboard'],
          [{ redirect: '/library/42?tab=books' }, '/library/42?tab=books'],
          [{ redirect: '' }, '/dashboard'],
          [{ redirect: '//evil.example' }, '/dashboard'],
          [{ redirect: 'https://evil.example/x' }, '/dashboard'],
          [{ redirect: '/\\evil.example' }, '/dashboard'],
        ];
        for (const [extra, to] of cases) {
          const r = await call('POST', '/api/auth/login', { headers: hx, form: { login: u.username, password: PASSWORD, ...extra } });
          expect(r.status, r.text).toBe(200);
          expect(r.headers.get('content-type')).toMatch(/^text\/html/);
          expect(r.json).toBeUndefined();
          expect(r.headers.get('hx-redirect')).toBe(to);
          const c = cookieParts(r);
          expect(c.attrs).toEqual(['HttpOnly', `Max-Age=${SESSION}`, 'Path=/', 'SameSite=Lax']);
          expect((await call('GET', '/api/auth/profile', { cookie: `token=${c.value}` })).json.id).toBe(u.id);
        }
      });
    });
  });
}
