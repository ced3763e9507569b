// Admin surface: setup status, the user listing, max devices, registration switch, system settings
// and configuration, the current-role check, and the generic HTTP errors.
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes, type Bindery } from '../support/bindery';
import type { Res } from '../support/http';
import {
  api,
  instances,
  eventually,
  expectError as err,
  expectMessage,
  fragment,
  NO_SUCH_ID,
  PASSWORD,
  putSettings,
  register,
  uniq,
  userRecord,
  UUID,
  type Account,
  type Call,
} from './helpers';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

const modes = (await availableModes()).filter((m) => m === 'embedded'); // account rules: embedded tier; the bus is the distributed tier's (smoke, contract, fault, replicas)
const instance = instances(modes);

for (const mode of modes) {
  describe(`admin and system (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let before: Res;
    let admin: Account;
    beforeAll(async () => {
      b = await instance(mode);
      call = api(b);
      before = await call('GET', '/api/setup/status');
      admin = await register(call, { name: 'keeper' });
    });

    const entry = (r: Res, key: string) => (r.json.settings as { key: string }[]).find((e) => e.key === key) as Record<string, unknown>;

    it('setup status: needs setup before the first account, has an admin after it (public)', async () => {
      expect(before.status).toBe(200);
      expect(before.json).toEqual({ needs_setup: true, has_admin: false, registration_enabled: true });
      const after = await call('GET', '/api/setup/status');
      expect(after.status).toBe(200);
      expect(after.json).toEqual({ needs_setup: false, has_admin: true, registration_enabled: true });
      expect(admin.role).toBe('admin');
    });

    it('GET /api/auth/users: 401 without a session, 403 for a user, the full records oldest first for an admin', async () => {
      const u = await register(call);
      err(await call('GET', '/api/auth/users'), 401, 'authentication required');
      err(await call('GET', '/api/auth/users', { token: u.token }), 403, 'admin access required');
      err(await call('GET', '/api/auth/users', { cookie: `token=${u.token}` }), 403, 'admin access required');
      const r = await call('GET', '/api/auth/users', { token: admin.token });
      expect(r.status).toBe(200);
      expect(Array.isArray(r.json)).toBe(true);
      expect(r.json[0].id).toBe(admin.id);
      for (const rec of r.json) {
        expect(Object.keys(rec).sort()).toEqual([
          'can_edit_metadata',
          'created_at',
          'device_count',
          'email',
          'first_name',
          'id',
          'last_name',
          'max_devices',
          'role',
          'theme',
          'timezone',
          'updated_at',
          'username',
        ]);
      }
      expect(r.json.find((x: { id: string }) => x.id === u.id)).toEqual({
        id: u.id,
        email: u.email,
        username: u.username,
        first_name: '',
        last_name: '',
        role: 'user',
        theme: 'tokyo-night',
        timezone: 'UTC',
        max_devices: 5,
        device_count: 0,
        can_edit_metadata: false,
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      });
      expect(r.json[0]).toMatchObject({ id: admin.id, role: 'admin', username: 'keeper' });
    });

    describe('PUT /api/auth/users/<id>/max-devices', () => {
      const md = (token: string, id: string, body: unknown) => call('PUT', `/api/auth/users/${id}/max-devices`, { token, body });

      it('sets the limit within 1..100: max devices updated', async () => {
        const u = await register(call);
        expectMessage(await md(admin.token, u.id, { max_devices: 12 }), 'max devices updated');
        expect(await userRecord(call, admin.token, u.id)).toMatchObject({ max_devices: 12, device_count: 0 });
        expectMessage(await md(admin.token, u.id, { max_devices: 1 }), 'max devices updated');
        expect(await userRecord(call, admin.token, u.id)).toMatchObject({ max_devices: 1 });
        expectMessage(await md(admin.token, u.id.toUpperCase(), { max_devices: 100 }), 'max devices updated');
        expect(await userRecord(call, admin.token, u.id)).toMatchObject({ max_devices: 100 });
        expectMessage(await call('PUT', `/api/auth/users/${u.id}/max-devices`, { token: admin.token, form: { max_devices: '7' } }), 'max devices updated');
        expect(await userRecord(call, admin.token, u.id)).toMatchObject({ max_devices: 7 });
      });

      it('checks in the order body bind, validation, id, existence', async () => {
        const u = await register(call);
        // body bind
        err(await md(admin.token, u.id, { max_devices: 'many' }), 400, 'invalid request');
        err(await md(admin.token, u.id, { max_devices: true }), 400, 'invalid request');
        err(await md(admin.token, u.id, [3]), 400, 'invalid request');
        err(await call('PUT', `/api/auth/users/${u.id}/max-devices`, { token: admin.token, raw: '{"max_devices": 3' }), 400, 'invalid request');
        err(await md(admin.token, 'bad-id', { max_devices: 'many' }), 400, 'invalid request');
        // validation
        err(await md(admin.token, u.id, {}), 400, 'max_devices is required');
        err(await md(admin.token, u.id, { max_devices: 0 }), 400, 'max_devices must be an integer between 1 and 100');
        err(await md(admin.token, u.id, { max_devices: 101 }), 400, 'max_devices must be an integer between 1 and 100');
        err(await md(admin.token, u.id, { max_devices: -3 }), 400, 'max_devices must be an integer between 1 and 100');
        err(await md(admin.token, 'bad-id', { max_devices: 0 }), 400, 'max_devices must be an integer between 1 and 100');
        err(await md(admin.token, NO_SUCH_ID, {}), 400, 'max_devices is required');
        // id
        err(await md(admin.token, 'bad-id', { max_devices: 3 }), 400, 'invalid user id');
        err(await md(admin.token, '', { max_devices: 3 }), 400, 'user id required');
        // existence
        err(await md(admin.token, NO_SUCH_ID, { max_devices: 3 }), 404, 'user not found');
        expect(await userRecord(call, admin.token, u.id)).toMatchObject({ max_devices: 5 });
      });

      it('is admin-only', async () => {
        const u = await register(call);
        err(await md(u.token, u.id, { max_devices: 50 }), 403, 'admin access required');
        err(await md(u.token, 'bad-id', { max_devices: 'x' }), 403, 'admin access required');
        err(await call('PUT', `/api/auth/users/${u.id}/max-devices`, { body: { max_devices: 50 } }), 401, 'authentication required');
        expect(await userRecord(call, admin.token, u.id)).toMatchObject({ max_devices: 5 });
      });
    });

    it("a demoted admin's still-valid token no longer passes admin routes", async () => {
      const a2 = await register(call, { role: 'admin', caller: admin.token });
      expect((await call('GET', '/api/auth/users', { token: a2.token })).status).toBe(200);
      expect((await call('GET', '/api/system/settings', { token: a2.token })).status).toBe(200);
      expectMessage(await call('PUT', `/api/auth/profile/${a2.id}`, { token: admin.token, body: { role: 'user' } }), 'profile updated successfully');
      await eventually(async () => err(await call('GET', '/api/auth/users', { token: a2.token }), 403, 'admin access required'));
      err(await call('GET', '/api/system/settings', { token: a2.token }), 403, 'admin access required');
      err(await call('PUT', '/api/system/settings', { token: a2.token, body: { registration_enabled: false } }), 403, 'admin access required');
      err(await call('PUT', `/api/auth/users/${a2.id}/max-devices`, { token: a2.token, body: { max_devices: 9 } }), 403, 'admin access required');
      err(await call('PUT', `/api/auth/profile/${admin.id}`, { token: a2.token, body: { first_name: 'x' } }), 403, 'admin access required');
      err(
        await call('POST', '/api/auth/register', { token: a2.token, body: { email: `${uniq()}@example.com`, username: uniq(), password: PASSWORD, role: 'admin' } }),
        403,
        'only administrators can create admin accounts',
      );
      // the session itself is still good
      expect((await call('GET', '/api/auth/profile', { token: a2.token })).json.role).toBe('user');
      expect((await call('GET', '/api/setup/status')).json.has_admin).toBe(true);
    });

    it('registration disabled: 403 for the public and for users, admins still register accounts; re-enabled afterwards', async () => {
      const u = await register(call);
      const taken = await register(call);
      const off = await putSettings(call, admin.token, { settings: { registration_enabled: false } });
      expect(off.json.message).toBe('settings updated successfully');
      expect(entry(off, 'registration_enabled')).toMatchObject({ value: false, default: true, is_default: false });
      try {
        expect((await call('GET', '/api/setup/status')).json).toEqual({ needs_setup: false, has_admin: true, registration_enabled: false });
        const body = () => {
          const n = uniq('closed');
          return { email: `${n}@example.com`, username: n, password: PASSWORD };
        };
        err(await call('POST', '/api/auth/register', { body: body() }), 403, 'registration is disabled on this server');
        err(await call('POST', '/api/auth/register', { form: body() }), 403, 'registration is disabled on this server');
        err(await call('POST', '/api/auth/register', { body: body(), token: u.token }), 403, 'registration is disabled on this server');
        fragment(await call('POST', '/api/auth/register', { form: body(), headers: { 'HX-Request': 'true' } }), 403, 'registration is disabled on this server');
        // validation comes before the switch; the switch before duplicates and roles
        err(await call('POST', '/api/auth/register', { body: { ...body(), email: 'bad' } }), 400, 'email must be a valid email address');
        err(await call('POST', '/api/auth/register', { body: { ...body(), email: taken.email } }), 403, 'registration is disabled on this server');
        err(await call('POST', '/api/auth/register', { body: { ...body(), role: 'admin' } }), 403, 'registration is disabled on this server');
        // an admin caller is not affected
        const made = await call('POST', '/api/auth/register', { body: body(), token: admin.token });
        expect(made.status, made.text).toBe(201);
        expect(made.json.user.role).toBe('user');
        const madeAdmin = await call('POST', '/api/auth/register', { body: { ...body(), role: 'admin' }, token: admin.token });
        expect(madeAdmin.status, madeAdmin.text).toBe(201);
        expect(madeAdmin.json.user.role).toBe('admin');
        expectMessage(await call('DELETE', `/api/auth/profile/${madeAdmin.json.user.id}`, { token: admin.token }), 'user account deleted successfully');
      } finally {
        const on = await putSettings(call, admin.token, { registration_enabled: 'true' });
        expect(entry(on, 'registration_enabled')).toMatchObject({ value: true, is_default: true });
      }
      expect((await call('GET', '/api/setup/status')).json).toEqual({ needs_setup: false, has_admin: true, registration_enabled: true });
      await register(call);
    });

    describe('system settings', () => {
      it('GET returns every entry with its metadata; login and session defaults', async () => {
        const r = await call('GET', '/api/system/settings', { token: admin.token });
        expect(r.status).toBe(200);
        expect(Object.keys(r.json)).toEqual(['settings']);
        for (const e of r.json.settings) {
          expect(Object.keys(e).sort()).toEqual(['category', 'default', 'description', 'group', 'is_default', 'key', 'max', 'min', 'requires_restart', 'type', 'value']);
          expect(['scanner', 'general', 'security', 'api', 'sync', 'performance']).toContain(e.category);
        }
        expect(entry(r, 'scan_poll_interval_seconds')).toEqual({
          key: 'scan_poll_interval_seconds',
          value: 60,
          default: 60,
          type: 'integer',
          min: 1,
          max: 3600,
          requires_restart: false,
          category: 'scanner',
          group: 'Library scanning',
          description: expect.any(String),
          is_default: true,
        });
        expect(entry(r, 'registration_enabled')).toMatchObject({ value: true, default: true, type: 'boolean', min: null, max: null, category: 'security', is_default: true });
        expect(entry(r, 'session_duration_seconds')).toMatchObject({ value: 604800, default: 604800, type: 'integer', category: 'security', is_default: true });
        expect(entry(r, 'login_max_attempts')).toMatchObject({ value: 5, default: 5, type: 'integer', is_default: true });
        expect(entry(r, 'login_lock_minutes')).toMatchObject({ value: 15, default: 15, type: 'integer', is_default: true });
      });

      it('PUT validates by type, min and max, applies all or nothing, and flips is_default', async () => {
        const put = (body: unknown) => call('PUT', '/api/system/settings', { token: admin.token, body });
        err(await put({ scan_poll_interval_seconds: 0 }), 400, 'scan_poll_interval_seconds must be between 1 and 3600');
        err(await put({ scan_poll_interval_seconds: 3601 }), 400, 'scan_poll_interval_seconds must be between 1 and 3600');
        err(await put({ scan_poll_interval_seconds: 'abc' }), 400, 'scan_poll_interval_seconds must be an integer');
        err(await put({ scan_poll_interval_seconds: 2.5 }), 400, 'scan_poll_interval_seconds must be an integer');
        err(await put({ scan_poll_interval_seconds: null }), 400, 'scan_poll_interval_seconds must be an integer');
        err(await put({ registration_enabled: 'yes' }), 400, 'registration_enabled must be true or false');
        err(await put({ frobnicate: 1 }), 400, 'unknown setting: frobnicate');
        err(await put({ settings: { frobnicate: 1 } }), 400, 'unknown setting: frobnicate');
        err(await put({ session_duration_seconds: 299 }), 400, 'session_duration_seconds must be between 300 and 31536000');
        err(await put({ login_max_attempts: 0 }), 400, 'login_max_attempts must be between 1 and 100');
        err(await put({}), 400, 'no settings given');
        err(await put([1]), 400, 'invalid request');
        err(await call('PUT', '/api/system/settings', { token: admin.token, raw: '{"scan_poll_interval_seconds": ' }), 400, 'invalid request');
        // one bad entry stops the good ones
        err(await put({ scan_poll_interval_seconds: 30, login_lock_minutes: 0 }), 400, 'login_lock_minutes must be between 1 and 1440');
        const g = await call('GET', '/api/system/settings', { token: admin.token });
        expect(entry(g, 'scan_poll_interval_seconds')).toMatchObject({ value: 60, is_default: true });
        expect(entry(g, 'login_lock_minutes')).toMatchObject({ value: 15, is_default: true });

        for (const v of [1, 3600]) {
          const r = await putSettings(call, admin.token, { scan_poll_interval_seconds: v });
          expect(r.json.message).toBe('settings updated successfully');
          expect(entry(r, 'scan_poll_interval_seconds')).toMatchObject({ value: v, is_default: false });
        }
        const s = await putSettings(call, admin.token, { settings: { scan_poll_interval_seconds: '120' } });
        expect(entry(s, 'scan_poll_interval_seconds')).toMatchObject({ value: 120, is_default: false });
        expect(entry(await call('GET', '/api/system/settings', { token: admin.token }), 'scan_poll_interval_seconds')).toMatchObject({ value: 120, is_default: false });
        const back = await putSettings(call, admin.token, { scan_poll_interval_seconds: 60 });
        expect(entry(back, 'scan_poll_interval_seconds')).toMatchObject({ value: 60, is_default: true });
      });

      it('is admin-only', async () => {
        const u = await register(call);
        err(await call('GET', '/api/system/settings', { token: u.token }), 403, 'admin access required');
        err(await call('PUT', '/api/system/settings', { token: u.token, body: { scan_poll_interval_seconds: 5 } }), 403, 'admin access required');
        err(await call('GET', '/api/system/settings'), 401, 'authentication required');
        err(await call('PUT', '/api/system/settings', { body: { scan_poll_interval_seconds: 5 } }), 401, 'authentication required');
        expect(entry(await call('GET', '/api/system/settings', { token: admin.token }), 'scan_poll_interval_seconds')).toMatchObject({ value: 60 });
      });
    });

    it('system configuration: raw key/values, null removes, typed settings are refused, admin-only', async () => {
      const u = await register(call);
      const put = (body: unknown, token = admin.token) => call('PUT', '/api/system/config', { token, body });
      const set = await put({ base_url: 'https://books.example', 'feature.x': 'on' });
      expect(set.status, set.text).toBe(200);
      expect(set.json).toEqual({ message: 'configuration updated successfully', config: { base_url: 'https://books.example', 'feature.x': 'on' } });
      const got = await call('GET', '/api/system/config', { token: admin.token });
      expect(got.status).toBe(200);
      expect(got.json).toEqual({ config: { base_url: 'https://books.example', 'feature.x': 'on' } });
      const removed = await put({ config: { 'feature.x': null } });
      expect(removed.json).toEqual({ message: 'configuration updated successfully', config: { base_url: 'https://books.example' } });
      err(await put({ registration_enabled: 'false' }), 400, 'registration_enabled is a typed setting: use /api/system/settings');
      err(await put({ 'Bad Key': 'x' }), 400, 'invalid config key: Bad Key');
      err(await put({}), 400, 'no configuration given');
      err(await put({ base_url: { nested: true } }), 400, 'invalid request');
      err(await put({ base_url: 'x'.repeat(4097) }), 400, 'base_url must be at most 4096 characters');
      err(await put({ base_url: 'https://other.example' }, u.token), 403, 'admin access required');
      err(await call('GET', '/api/system/config', { token: u.token }), 403, 'admin access required');
      err(await call('GET', '/api/system/config'), 401, 'authentication required');
      expect((await call('GET', '/api/system/config', { token: admin.token })).json).toEqual({ config: { base_url: 'https://books.example' } });
    });

    it('generic errors: 404 not found for unknown routes, 400 invalid request for malformed JSON, 413 for bodies over 1 MiB', async () => {
      err(await call('GET', '/api/nope'), 404, 'not found');
      err(await call('POST', '/api/auth/nope', { body: {} }), 404, 'not found');
      err(await call('GET', '/api/auth/users/extra', { token: admin.token }), 404, 'not found');
      err(await call('PATCH', '/api/auth/profile', { token: admin.token, body: {} }), 404, 'not found');
      err(await call('POST', '/api/auth/login', { raw: '{not json' }), 400, 'invalid request');
      err(await call('PUT', '/api/auth/profile', { token: admin.token, raw: '{"theme": "x",}' }), 400, 'invalid request');
      const big = 'x'.repeat(1024 * 1024 + 16);
      err(await call('POST', '/api/auth/register', { body: { email: 'big@example.com', username: 'bigone', password: PASSWORD, first_name: big } }), 413, 'request body too large');
      err(await call('POST', '/api/auth/login', { form: { login: 'keeper', password: big } }), 413, 'request body too large');
      err(await call('PUT', '/api/auth/profile', { token: admin.token, body: { theme: big } }), 413, 'request body too large');
      fragment(
        await call('POST', '/api/auth/register', { headers: { 'HX-Request': 'true' }, form: { email: 'big@example.com', username: 'bigone', password: big } }),
        413,
        'request body too large',
      );
      // just under the limit is read (and then validated)
      const under = 'y'.repeat(1024 * 1024 - 200);
      err(await call('PUT', '/api/auth/profile', { token: admin.token, body: { theme: under } }), 400, 'theme must be at most 50 characters');
      expect(UUID.test(admin.id)).toBe(true);
    });
  });
}
