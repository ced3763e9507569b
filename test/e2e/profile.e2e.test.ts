// Profile read, profile update (self and by id, rules 1-7) and the theme / username / email setters.
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes, type Bindery } from '../support/bindery';
import type { Res } from '../support/http';
import { api, instances, eventually, expectError as err, expectMessage, login, NO_SUCH_ID, PASSWORD, register, uniq, userRecord, type Account, type Call } from './helpers';

const UPDATED = 'profile updated successfully';

const allModes = await availableModes();
const modes = allModes.filter((m) => m === 'embedded'); // account rules: embedded tier; the bus is the distributed tier's (smoke, contract, fault, replicas)
const instance = instances(allModes);

for (const mode of modes) {
  describe(`profile (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let first: Res;
    let admin: Account;
    beforeAll(async () => {
      b = await instance(mode);
      call = api(b);
      // an invalid requested role does not stop the first account: it becomes the admin
      first = await call('POST', '/api/auth/register', { body: { email: 'boss@example.com', username: 'boss', password: PASSWORD, role: 'superuser' } });
      admin = {
        id: first.json?.user?.id,
        email: 'boss@example.com',
        username: 'boss',
        password: PASSWORD,
        token: first.json?.access_token,
        refresh: first.json?.refresh_token,
        role: 'admin',
      };
    });

    const profile = async (token: string) => {
      const r = await call('GET', '/api/auth/profile', { token });
      expect(r.status, r.text).toBe(200);
      return r.json;
    };
    const put = (token: string, body: unknown, id?: string) => call('PUT', id === undefined ? '/api/auth/profile' : `/api/auth/profile/${id}`, { token, body });

    it('made the first account admin although it asked for an unknown role', async () => {
      expect(first.status, first.text).toBe(201);
      expect(first.json.user.role).toBe('admin');
    });

    it('GET /api/auth/profile returns the UserProfile with theme; 401 without a session', async () => {
      const u = await register(call);
      expect(await profile(u.token)).toEqual({ id: u.id, email: u.email, username: u.username, first_name: '', last_name: '', role: 'user', theme: 'tokyo-night' });
      expect(await profile(admin.token)).toEqual({ id: admin.id, email: 'boss@example.com', username: 'boss', first_name: '', last_name: '', role: 'admin', theme: 'tokyo-night' });
      err(await call('GET', '/api/auth/profile'), 401, 'authentication required');
    });

    it('updates every field of the caller and answers profile updated successfully', async () => {
      const u = await register(call);
      const n = uniq('new');
      expectMessage(
        await put(u.token, { username: `  ${n}  `, email: `${n}@example.org`, first_name: 'Grace', last_name: 'Hopper', theme: 'solarized', timezone: 'Europe/Paris' }),
        UPDATED,
      );
      expect(await profile(u.token)).toEqual({ id: u.id, email: `${n}@example.org`, username: n, first_name: 'Grace', last_name: 'Hopper', role: 'user', theme: 'solarized' });
      expect(await userRecord(call, admin.token, u.id)).toMatchObject({ timezone: 'Europe/Paris', username: n });
      expect((await login(call, n, PASSWORD)).status).toBe(200);
      expect((await login(call, `${n}@example.org`, PASSWORD)).status).toBe(200);
      err(await login(call, u.username, PASSWORD), 401, 'invalid credentials');
      // a first_name of exactly 100 characters is fine
      expectMessage(await put(u.token, { first_name: 'f'.repeat(100), last_name: 'l'.repeat(100) }), UPDATED);
      expect(await profile(u.token)).toMatchObject({ first_name: 'f'.repeat(100), last_name: 'l'.repeat(100) });
      // form bodies are bound as well
      expectMessage(await call('PUT', '/api/auth/profile', { token: u.token, form: { theme: 'nord' } }), UPDATED);
      expect((await profile(u.token)).theme).toBe('nord');
    });

    it('counts empty-string fields as absent', async () => {
      const u = await register(call);
      expectMessage(await put(u.token, { first_name: 'Keep', last_name: 'Me', timezone: 'Asia/Tokyo' }), UPDATED);
      const before = await profile(u.token);
      expectMessage(await put(u.token, { username: '', email: '', first_name: '', last_name: '', theme: '', timezone: '', role: '' }), UPDATED);
      expectMessage(await put(u.token, {}), UPDATED);
      expect(await profile(u.token)).toEqual(before);
      expect(await userRecord(call, admin.token, u.id)).toMatchObject({ timezone: 'Asia/Tokyo' });
    });

    it('writes both names when either is given; the omitted one becomes unset', async () => {
      const u = await register(call);
      expectMessage(await put(u.token, { first_name: 'Ada', last_name: 'Lovelace' }), UPDATED);
      expectMessage(await put(u.token, { first_name: 'Augusta' }), UPDATED);
      expect(await profile(u.token)).toMatchObject({ first_name: 'Augusta', last_name: '' });
      expectMessage(await put(u.token, { last_name: 'King' }), UPDATED);
      expect(await profile(u.token)).toMatchObject({ first_name: '', last_name: 'King' });
      // other fields alone leave the names alone
      expectMessage(await put(u.token, { theme: 'gruvbox' }), UPDATED);
      expect(await profile(u.token)).toMatchObject({ first_name: '', last_name: 'King', theme: 'gruvbox' });
    });

    it('400 for a body that cannot be bound and for each validation failure, changing nothing', async () => {
      const u = await register(call);
      const before = await profile(u.token);
      err(await put(u.token, { username: 5 }), 400, 'invalid request');
      err(await put(u.token, { first_name: ['a'] }), 400, 'invalid request');
      err(await put(u.token, ['x']), 400, 'invalid request');
      err(await call('PUT', '/api/auth/profile', { token: u.token, raw: '{"username": "abc"' }), 400, 'invalid request');
      err(await put(u.token, { username: 'ab' }), 400, 'username must be between 3 and 50 characters');
      err(await put(u.token, { username: 'z'.repeat(51) }), 400, 'username must be between 3 and 50 characters');
      err(await put(u.token, { email: 'not-mail' }), 400, 'email must be a valid email address');
      err(await put(u.token, { first_name: 'x'.repeat(101) }), 400, 'first_name must be at most 100 characters');
      err(await put(u.token, { last_name: 'y'.repeat(101) }), 400, 'last_name must be at most 100 characters');
      err(await put(u.token, { theme: 't'.repeat(51) }), 400, 'theme must be at most 50 characters');
      err(await put(u.token, { role: 'owner' }), 400, "invalid role. must be 'admin' or 'user'");
      // validation happens before anything is applied
      err(await put(u.token, { username: uniq('ok'), first_name: 'x'.repeat(101) }), 400, 'first_name must be at most 100 characters');
      expect(await profile(u.token)).toEqual(before);
    });

    it('ignores role in self mode, whoever asks: a user asking for admin gets 200 and stays a user', async () => {
      const u = await register(call);
      expectMessage(await put(u.token, { role: 'admin', theme: 'dark' }), UPDATED);
      expect(await profile(u.token)).toMatchObject({ role: 'user', theme: 'dark' });
      expectMessage(await put(u.token, { role: 'user', theme: 'light' }), UPDATED);
      expect(await profile(u.token)).toMatchObject({ role: 'user', theme: 'light' });
      err(await call('GET', '/api/auth/users', { token: u.token }), 403, 'admin access required');
      expectMessage(await put(admin.token, { role: 'user' }), UPDATED);
      expect((await profile(admin.token)).role).toBe('admin');
    });

    it("409 username already taken / email already taken, case-insensitively; the caller's own name in other case is fine", async () => {
      const a = await register(call);
      const u = await register(call);
      err(await put(u.token, { username: a.username }), 409, 'username already taken');
      err(await put(u.token, { username: a.username.toUpperCase() }), 409, 'username already taken');
      err(await put(u.token, { email: a.email }), 409, 'email already taken');
      err(await put(u.token, { email: a.email.toUpperCase() }), 409, 'email already taken');
      err(await put(admin.token, { email: a.email }, u.id), 409, 'email already taken');
      err(await put(admin.token, { username: a.username }, u.id), 409, 'username already taken');
      expectMessage(await put(u.token, { username: u.username.toUpperCase(), email: u.email }), UPDATED);
      expect((await profile(u.token)).username).toBe(u.username.toUpperCase());
    });

    it('by id: 403 admin access required for a non-admin (before id and body checks), 400 invalid user id, 404 for an unknown id', async () => {
      const u = await register(call);
      const v = await register(call);
      err(await put(u.token, { first_name: 'Mallory' }, v.id), 403, 'admin access required');
      err(await put(u.token, { first_name: 'Mallory' }, u.id), 403, 'admin access required');
      err(await put(u.token, { first_name: 'Mallory' }, 'not-a-uuid'), 403, 'admin access required');
      err(await call('PUT', `/api/auth/profile/${v.id}`, { token: u.token, raw: '{"first_name":' }), 403, 'admin access required');
      err(await put(u.token, { role: 'bogus' }, v.id), 403, 'admin access required');
      expect((await profile(v.token)).first_name).toBe('');
      err(await put(admin.token, { first_name: 'X' }, 'not-a-uuid'), 400, 'invalid user id');
      err(await put(admin.token, { first_name: 'X' }, '12345'), 400, 'invalid user id');
      err(await put(admin.token, { first_name: 'X' }, NO_SUCH_ID), 404, 'user not found');
      err(await put(admin.token, { first_name: 5 }, v.id), 400, 'invalid request');
      err(await put(admin.token, { role: 'superuser' }, v.id), 400, "invalid role. must be 'admin' or 'user'");
      err(await call('PUT', '/api/auth/profile/abc', { body: {} }), 401, 'authentication required');
    });

    it('an admin updates another account by id, role included (lower-cased), and the new role takes effect', async () => {
      const u = await register(call);
      const n = uniq('byid');
      expectMessage(
        await put(admin.token, { username: n, email: `${n}@example.net`, first_name: 'By', last_name: 'Id', theme: 'light', timezone: 'America/New_York' }, u.id),
        UPDATED,
      );
      expect(await profile(u.token)).toEqual({ id: u.id, email: `${n}@example.net`, username: n, first_name: 'By', last_name: 'Id', role: 'user', theme: 'light' });
      expect(await userRecord(call, admin.token, u.id)).toMatchObject({ timezone: 'America/New_York' });

      expectMessage(await put(admin.token, { role: 'ADMIN' }, u.id), UPDATED);
      expect((await profile(u.token)).role).toBe('admin');
      await eventually(async () => expect((await call('GET', '/api/auth/users', { token: u.token })).status).toBe(200));
      // with two admins, either can be demoted
      expectMessage(await put(admin.token, { role: 'user' }, u.id), UPDATED);
      expect((await profile(u.token)).role).toBe('user');
      await eventually(async () => err(await call('GET', '/api/auth/users', { token: u.token }), 403, 'admin access required'));
      // an admin may address itself by id
      expectMessage(await put(admin.token, { first_name: 'Big' }, admin.id), UPDATED);
      expect((await profile(admin.token)).first_name).toBe('Big');
      expectMessage(await put(admin.token, { first_name: '', last_name: '' }, admin.id.toUpperCase()), UPDATED);
    });

    it('400 cannot demote the last admin, and nothing of the request is applied', async () => {
      err(await put(admin.token, { role: 'user' }, admin.id), 400, 'cannot demote the last admin');
      err(await put(admin.token, { role: 'User', username: uniq('never'), theme: 'never' }, admin.id), 400, 'cannot demote the last admin');
      expect(await profile(admin.token)).toMatchObject({ role: 'admin', username: 'boss', theme: 'tokyo-night' });
      expect((await call('GET', '/api/auth/users', { token: admin.token })).status).toBe(200);
      // once a second admin exists the first can be demoted; then the second is the last one
      const second = await register(call, { role: 'admin', caller: admin.token });
      expect(second.role).toBe('admin');
      expectMessage(await put(second.token, { role: 'user' }, admin.id), UPDATED);
      expect((await profile(admin.token)).role).toBe('user');
      err(await put(second.token, { role: 'user' }, second.id), 400, 'cannot demote the last admin');
      // restore: the shared admin is admin again and the second account goes
      expectMessage(await put(second.token, { role: 'admin' }, admin.id), UPDATED);
      await eventually(async () => expect((await call('GET', '/api/auth/users', { token: admin.token })).status).toBe(200));
      expectMessage(await call('DELETE', `/api/auth/profile/${second.id}`, { token: admin.token }), 'user account deleted successfully');
      err(await put(admin.token, { role: 'user' }, admin.id), 400, 'cannot demote the last admin');
    });

    describe('partial application in the order role, username, timezone, email, names, theme (rule 7)', () => {
      it('a role change stays applied when the username then conflicts (409)', async () => {
        const taken = await register(call);
        const u = await register(call);
        err(await put(admin.token, { role: 'admin', username: taken.username, first_name: 'Never' }, u.id), 409, 'username already taken');
        expect(await profile(u.token)).toMatchObject({ role: 'admin', username: u.username, first_name: '' });
        expectMessage(await put(admin.token, { role: 'user' }, u.id), UPDATED);
      });

      it('a username change stays applied when the timezone is invalid (400 Invalid timezone); later groups are not', async () => {
        const u = await register(call);
        const n = uniq('tz');
        err(await put(u.token, { username: n, timezone: 'Mars/Olympus_Mons', email: `${n}@example.org`, first_name: 'Never', theme: 'never' }), 400, 'Invalid timezone');
        expect(await profile(u.token)).toEqual({ id: u.id, email: u.email, username: n, first_name: '', last_name: '', role: 'user', theme: 'tokyo-night' });
        expect(await userRecord(call, admin.token, u.id)).toMatchObject({ timezone: 'UTC' });
        err(await put(u.token, { timezone: 'not a zone' }), 400, 'Invalid timezone');
        err(await put(admin.token, { timezone: 'Europe/Atlantis' }, u.id), 400, 'Invalid timezone');
      });

      it('username and timezone stay applied when the e-mail then conflicts (409); names and theme are not', async () => {
        const taken = await register(call);
        const u = await register(call);
        const n = uniq('em');
        err(
          await put(u.token, { username: n, timezone: 'Australia/Sydney', email: taken.email, first_name: 'Never', last_name: 'Ever', theme: 'never' }),
          409,
          'email already taken',
        );
        expect(await profile(u.token)).toEqual({ id: u.id, email: u.email, username: n, first_name: '', last_name: '', role: 'user', theme: 'tokyo-night' });
        expect(await userRecord(call, admin.token, u.id)).toMatchObject({ timezone: 'Australia/Sydney' });
      });
    });

    describe('single-field setters', () => {
      it('PUT /api/auth/theme', async () => {
        const u = await register(call);
        expectMessage(await call('PUT', '/api/auth/theme', { token: u.token, body: { theme: 'catppuccin' } }), 'theme updated successfully');
        expect((await profile(u.token)).theme).toBe('catppuccin');
        err(await call('PUT', '/api/auth/theme', { token: u.token, body: {} }), 400, 'theme is required');
        err(await call('PUT', '/api/auth/theme', { token: u.token, body: { theme: '' } }), 400, 'theme is required');
        err(await call('PUT', '/api/auth/theme', { token: u.token, body: { theme: 'x'.repeat(51) } }), 400, 'theme must be at most 50 characters');
        err(await call('PUT', '/api/auth/theme', { token: u.token, body: { theme: 3 } }), 400, 'invalid request');
        err(await call('PUT', '/api/auth/theme', { body: { theme: 'x' } }), 401, 'authentication required');
        expect((await profile(u.token)).theme).toBe('catppuccin');
      });

      it('PUT /api/auth/username', async () => {
        const a = await register(call);
        const u = await register(call);
        const n = uniq('set');
        expectMessage(await call('PUT', '/api/auth/username', { token: u.token, body: { username: ` ${n} ` } }), 'username updated successfully');
        expect((await profile(u.token)).username).toBe(n);
        expect((await login(call, n, PASSWORD)).status).toBe(200);
        err(await call('PUT', '/api/auth/username', { token: u.token, body: {} }), 400, 'username is required');
        err(await call('PUT', '/api/auth/username', { token: u.token, body: { username: 'ab' } }), 400, 'username must be between 3 and 50 characters');
        err(await call('PUT', '/api/auth/username', { token: u.token, body: { username: 'q'.repeat(51) } }), 400, 'username must be between 3 and 50 characters');
        err(await call('PUT', '/api/auth/username', { token: u.token, body: { username: a.username } }), 409, 'username already taken');
        err(await call('PUT', '/api/auth/username', { token: u.token, body: { username: a.username.toUpperCase() } }), 409, 'username already taken');
        err(await call('PUT', '/api/auth/username', { token: u.token, body: { username: true } }), 400, 'invalid request');
        err(await call('PUT', '/api/auth/username', { body: { username: 'abc' } }), 401, 'authentication required');
        expect((await profile(u.token)).username).toBe(n);
      });

      it('PUT /api/auth/email', async () => {
        const a = await register(call);
        const u = await register(call);
        const n = uniq('mail');
        expectMessage(await call('PUT', '/api/auth/email', { token: u.token, body: { email: `${n}@example.io` } }), 'email updated successfully');
        expect((await profile(u.token)).email).toBe(`${n}@example.io`);
        expect((await login(call, `${n}@example.io`, PASSWORD)).status).toBe(200);
        err(await call('PUT', '/api/auth/email', { token: u.token, body: {} }), 400, 'email is required');
        err(await call('PUT', '/api/auth/email', { token: u.token, body: { email: 'nope' } }), 400, 'email must be a valid email address');
        err(await call('PUT', '/api/auth/email', { token: u.token, body: { email: a.email } }), 409, 'email already taken');
        err(await call('PUT', '/api/auth/email', { token: u.token, body: { email: a.email.toUpperCase() } }), 409, 'email already taken');
        err(await call('PUT', '/api/auth/email', { token: u.token, body: { email: 1 } }), 400, 'invalid request');
        err(await call('PUT', '/api/auth/email', { body: { email: 'a@b.co' } }), 401, 'authentication required');
        expect((await profile(u.token)).email).toBe(`${n}@example.io`);
      });
    });
  });
}

// Rule 2 in both modes (issue 18, item 13): self mode ignores `role`, whoever asks. After the
// embedded suite above, whose first account must be its admin.
for (const mode of allModes) {
  describe(`profile self mode ignores role (${mode})`, () => {
    let call: Call;
    beforeAll(async () => {
      call = api(await instance(mode));
      // the first account is the admin; later ones are users
      await register(call);
    });

    it('a user sending role admin gets 200, the other fields applied and the role unchanged', async () => {
      const u = await register(call);
      const name = uniq('selfrole');
      expectMessage(await call('PUT', '/api/auth/profile', { token: u.token, body: { role: 'admin', theme: 'dark', first_name: 'Ada', username: name } }), UPDATED);
      const p = await call('GET', '/api/auth/profile', { token: u.token });
      expect(p.status, p.text).toBe(200);
      expect(p.json).toEqual({ id: u.id, email: u.email, username: name, first_name: 'Ada', last_name: '', role: 'user', theme: 'dark' });
      err(await call('GET', '/api/auth/users', { token: u.token }), 403, 'admin access required');
      // a role that is neither user nor admin is still a validation failure (rule 2), nothing applied
      err(await call('PUT', '/api/auth/profile', { token: u.token, body: { role: 'owner', theme: 'light' } }), 400, "invalid role. must be 'admin' or 'user'");
      expect((await call('GET', '/api/auth/profile', { token: u.token })).json).toMatchObject({ role: 'user', theme: 'dark' });
    });
  });
}
