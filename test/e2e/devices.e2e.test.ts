// Devices end to end, in both modes: registration and its status poll, approval and rejection,
// device credentials (which never open user routes, and user tokens never open device routes), a
// user's devices, max_devices at approval, the Android flow, shelves, the sync queue, the sidecar,
// other users (404), and pending registrations lost with a restart.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes, spawnBindery, type Bindery } from '../support/bindery';
import { client } from '../support/http';
import { asDevice, enroll, poll, registerDevice, type Enrolled } from './device-helpers';
import { api, csrfOf, eventually, expectError, instances, login, register, userRecord, UUID, type Account, type Call } from './helpers';
import { put, shelf } from './reading-helpers';
import { createLibrary, emptyDir, FIXTURE, items as listItems, scan } from './catalog-helpers';

const modes = await availableModes();
const get = instances(modes);
const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM) describe.skip(`the approval page in a browser (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

for (const mode of modes) {
  describe(`devices (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let alice: Account;
    let bob: Account;
    let items: Record<string, any>[];
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      const s = await shelf(call, 'Device books', ['Dune', 'Emma', 'Ulysses']);
      admin = s.admin;
      items = s.items;
      alice = await register(call);
      bob = await register(call);
      for (const u of [alice, bob]) {
        const g = await call('PUT', `/api/auth/users/${u.id}/libraries`, { token: admin.token, body: { all_libraries: true } });
        expect(g.status, g.text).toBe(200);
      }
    }, 240_000);

    it('registers a device: approval URL, poll interval, instructions, sync endpoints, and no device_id', async () => {
      const r = await call('POST', '/api/devices/register', { body: { name: 'Kobo Clara', client: 'koreader', model: 'Clara HD' } });
      expect(r.status, r.text).toBe(201);
      expect(r.json.device_id).toBeUndefined();
      expect(r.json.auth_url).toBe(`/devices/approve/${r.json.user_code}`);
      expect(r.json.user_code).toMatch(/^[0-9A-F]{12}$/);
      expect(r.json.verification_uri).toBe(`${b.url}${r.json.auth_url}`);
      expect(r.json.poll_interval).toBe(5);
      expect(r.json.expires_in).toBe(600);
      expect(r.json.status_url).toBe('/api/devices/register/status');
      expect(r.json.setup_instructions).toContain(r.json.verification_uri);
      expect(Object.values(r.json.sync_endpoints).length).toBe(5);
      for (const p of Object.values(r.json.sync_endpoints)) expect(p).toMatch(/^\/api\/sync\/koreader\//);
      expect(r.json.device_code).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(r.headers.get('cache-control')).toBe('no-store');
      const s = await poll(call, r.json.device_code);
      expect(s.status, s.text).toBe(200);
      expect(s.json).toEqual({ status: 'pending', expires_in: expect.any(Number) });
      expect(s.json.expires_in).toBeGreaterThan(590);
    });

    it('refuses bad registrations and status polls with 400, unknown codes with 410', async () => {
      expectError(await call('POST', '/api/devices/register', { body: {} }), 400, 'name is required');
      expectError(await call('POST', '/api/devices/register', { body: { name: '   ' } }), 400, 'name is required');
      expectError(await call('POST', '/api/devices/register', { body: { name: 'x'.repeat(101) } }), 400, 'name must be text of at most 100 characters');
      expectError(await call('POST', '/api/devices/register', { body: { name: 42 } }), 400, 'name must be text of at most 100 characters');
      expectError(await call('POST', '/api/devices/register', { body: { name: 'ok', client: 'c'.repeat(51) } }), 400, 'client must be text of at most 50 characters');
      expectError(await call('POST', '/api/devices/register', { body: { name: 'ok', model: ['m'] } }), 400, 'model must be text of at most 100 characters');
      expectError(await call('POST', '/api/devices/register', { raw: '[1]' }), 400, 'invalid request');
      expectError(await call('POST', '/api/devices/register', { body: { name: 'Kobo\u0000' } }), 400, 'name must not contain control characters');
      expectError(await call('POST', '/api/devices/register', { raw: '{"name":"Kobo \\ud800"}' }), 400, 'name must be valid Unicode text');
      expectError(await call('POST', '/api/devices/register/status', { body: {} }), 400, 'device_code is required');
      expectError(await call('POST', '/api/devices/register/status', { body: { device_code: 7 } }), 400, 'device_code is required');
      expectError(await poll(call, 'no-such-code'), 410, 'device registration not found or expired');
    });

    it('approves once: the next poll carries the credential, later polls are 410', async () => {
      const reg = await registerDevice(call, 'Alice Kobo');
      expectError(await call('GET', `/api/devices/pending/${reg.user_code}`), 401, 'authentication required');
      const p = await call('GET', `/api/devices/pending/${reg.user_code}`, { token: alice.token });
      expect(p.status, p.text).toBe(200);
      expect(p.json).toMatchObject({ id: reg.user_code, name: 'Alice Kobo', client: 'koreader', model: 'Kobo Clara', status: 'pending', device_id: null });
      const a = await call('POST', `/api/devices/${reg.user_code}/approve`, { token: alice.token });
      expect(a.status, a.text).toBe(200);
      expect(a.json.message).toBe('device approved');
      expect(a.json.device).toMatchObject({ user_id: alice.id, name: 'Alice Kobo', client: 'koreader', model: 'Kobo Clara' });
      expect(a.json.device.id).toMatch(UUID);
      // approved but not collected yet
      const listed = await call('GET', '/api/devices', { token: alice.token });
      expect(listed.json.devices.find((d: any) => d.id === a.json.device.id)?.status).toBe('awaiting_device');
      expectError(await call('POST', `/api/devices/${reg.user_code}/approve`, { token: alice.token }), 409, 'device registration is no longer pending');
      const s = await poll(call, reg.device_code);
      expect(s.status, s.text).toBe(200);
      expect(s.json).toEqual({
        status: 'approved',
        device_id: a.json.device.id,
        device_token: expect.stringMatching(/^bdt_[A-Za-z0-9_-]{43}$/),
        token_type: 'Device',
        name: 'Alice Kobo',
        sync_endpoints: expect.any(Object),
      });
      expectError(await poll(call, reg.device_code), 410, 'device registration already completed');
      const me = await call('GET', '/api/sync/device', asDevice(s.json.device_token));
      expect(me.status, me.text).toBe(200);
      expect(me.json).toEqual({ device_id: a.json.device.id, user_id: alice.id, name: 'Alice Kobo' });
      expect((await call('GET', `/api/devices/${a.json.device.id}`, { token: alice.token })).json.status).toBe('active');
      // the page's view of a decided registration: its decider only
      expect((await call('GET', `/api/devices/pending/${reg.user_code}`, { token: alice.token })).json).toMatchObject({ status: 'approved', device_id: a.json.device.id });
      expectError(await call('GET', `/api/devices/pending/${reg.user_code}`, { token: bob.token }), 404, 'device registration not found');
    });

    it('rejects: the device is told so (403) and the registration cannot be approved after', async () => {
      const reg = await registerDevice(call, 'Unknown tablet');
      const r = await call('POST', `/api/devices/${reg.user_code}/reject`, { token: alice.token });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ message: 'device registration rejected' });
      expectError(await poll(call, reg.device_code), 403, 'device registration was rejected');
      expectError(await call('POST', `/api/devices/${reg.user_code}/approve`, { token: alice.token }), 409, 'device registration is no longer pending');
      expectError(await call('POST', `/api/devices/${reg.user_code}/reject`, { token: alice.token }), 409, 'device registration is no longer pending');
      expectError(await call('POST', '/api/devices/NOSUCHCODE00/approve', { token: alice.token }), 404, 'device registration not found');
      expectError(await call('POST', '/api/devices/bad!code/reject', { token: alice.token }), 404, 'device registration not found');
    });

    it('keeps device credentials and session tokens apart', async () => {
      const dev = await enroll(call, alice, 'Separation');
      // every way a device may send its credential
      const ways: Record<string, string>[] = [{ authorization: `Device ${dev.token}` }, { authorization: `Bearer ${dev.token}` }, { 'x-device-token': dev.token }];
      for (const headers of ways) {
        const r = await call('GET', '/api/sync/device', { headers });
        expect(r.status, r.text).toBe(200);
        expect(r.json.device_id).toBe(dev.device_id);
      }
      // a device credential opens no user route
      for (const [method, path] of [
        ['GET', '/api/auth/profile'],
        ['GET', '/api/devices'],
        ['GET', `/api/devices/${dev.device_id}/queue`],
        ['GET', '/api/media-items'],
        ['GET', '/api/sync-queue'],
        ['DELETE', `/api/devices/${dev.device_id}`],
      ]) {
        expectError(await call(method!, path!, asDevice(dev.token)), 401, 'authentication required');
        expectError(await call(method!, path!, { token: dev.token }), 401, 'invalid or expired token');
      }
      // a session token opens no device route
      expectError(await call('GET', '/api/sync/device', { token: alice.token }), 401, 'device credential required');
      expectError(await call('GET', '/api/sync/queue', { token: alice.token }), 401, 'device credential required');
      expectError(await call('GET', '/api/sync/device', asDevice(alice.token)), 401, 'invalid or revoked device credential');
      expectError(await call('GET', '/api/sync/device'), 401, 'device credential required');
      expectError(await call('GET', '/api/sync/device', asDevice('bdt_not-a-real-credential')), 401, 'invalid or revoked device credential');
      expectError(await call('GET', '/api/sync/device', asDevice(dev.token.slice(0, -1) + (dev.token.endsWith('A') ? 'B' : 'A'))), 401, 'invalid or revoked device credential');
    });

    it('lists, shows, renames and deletes a user’s devices; deleting revokes the credential at once', async () => {
      const dev = await enroll(call, bob, 'Bob phone');
      const list = await call('GET', '/api/devices', { token: bob.token });
      expect(list.status, list.text).toBe(200);
      expect(list.json.devices).toEqual([
        {
          id: dev.device_id,
          user_id: bob.id,
          name: 'Bob phone',
          client: 'koreader',
          model: 'Kobo Clara',
          status: 'active',
          // approved with a sync key for KOReader's stock sync (shown once at approval, never listed)
          sync_key_issued_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      ]);
      const renamed = await call('PUT', `/api/devices/${dev.device_id}`, { token: bob.token, body: { name: '  Bob e-reader ' } });
      expect(renamed.status, renamed.text).toBe(200);
      expect(renamed.json).toMatchObject({ id: dev.device_id, name: 'Bob e-reader' });
      expect((await call('GET', `/api/devices/${dev.device_id}`, { token: bob.token })).json.name).toBe('Bob e-reader');
      expect((await call('GET', '/api/sync/device', asDevice(dev.token))).json.name).toBe('Bob e-reader');
      expectError(await call('PUT', `/api/devices/${dev.device_id}`, { token: bob.token, body: { name: '' } }), 400, 'name is required');
      expectError(await call('PUT', `/api/devices/${dev.device_id}`, { token: bob.token, body: { name: 'n'.repeat(101) } }), 400, 'name must be text of at most 100 characters');
      expectError(await call('PUT', '/api/devices/not-a-uuid', { token: bob.token, body: { name: 'x' } }), 400, 'invalid device id');
      expectError(await call('GET', '/api/devices/not-a-uuid', { token: bob.token }), 400, 'invalid device id');
      // another user's device does not exist
      expectError(await call('GET', `/api/devices/${dev.device_id}`, { token: alice.token }), 404, 'device not found');
      expectError(await call('PUT', `/api/devices/${dev.device_id}`, { token: alice.token, body: { name: 'mine now' } }), 404, 'device not found');
      expectError(await call('DELETE', `/api/devices/${dev.device_id}`, { token: alice.token }), 404, 'device not found');
      expect((await call('GET', '/api/devices', { token: alice.token })).json.devices.some((d: any) => d.id === dev.device_id)).toBe(false);
      const del = await call('DELETE', `/api/devices/${dev.device_id}`, { token: bob.token });
      expect(del.status, del.text).toBe(200);
      expect(del.json).toEqual({ message: 'device deleted' });
      expectError(await call('GET', '/api/sync/device', asDevice(dev.token)), 401, 'invalid or revoked device credential');
      expectError(await call('DELETE', `/api/devices/${dev.device_id}`, { token: bob.token }), 404, 'device not found');
      expect((await call('GET', '/api/devices', { token: bob.token })).json.devices).toEqual([]);
    });

    it("cookie-authenticated approval must carry the session's CSRF token", async () => {
      const reg = await registerDevice(call, 'Cookie device');
      const cookie = `token=${alice.token}`;
      for (const headers of [{}, { 'x-requested-with': 'fetch' }, { 'HX-Request': 'true' }] as Record<string, string>[])
        expectError(
          await call('POST', `/api/devices/${reg.user_code}/approve`, { cookie, form: { x: '1' }, headers }),
          403,
          "cookie-authenticated requests must carry the session's X-CSRF-Token header",
        );
      expect((await poll(call, reg.device_code)).json.status).toBe('pending');
      const ok = await call('POST', `/api/devices/${reg.user_code}/approve`, { cookie, headers: await csrfOf(call, alice.token) });
      expect(ok.status, ok.text).toBe(200);
      const s = await poll(call, reg.device_code);
      expect(s.json.status).toBe('approved');
      expect((await call('DELETE', `/api/devices/${s.json.device_id}`, { token: alice.token })).status).toBe(200);
    });

    it('enforces max_devices at approval; a freed place can be taken again', async () => {
      const carol = await register(call);
      const set = await call('PUT', `/api/auth/users/${carol.id}/max-devices`, { token: admin.token, body: { max_devices: 2 } });
      expect(set.status, set.text).toBe(200);
      const first = await enroll(call, carol, 'One');
      await enroll(call, carol, 'Two');
      const listed = await userRecord(call, admin.token, carol.id);
      expect(listed).toMatchObject({ max_devices: 2, device_count: 2 });
      const third = await registerDevice(call, 'Three');
      expectError(await call('POST', `/api/devices/${third.user_code}/approve`, { token: carol.token }), 403, 'device limit reached (max_devices: 2)');
      expect((await poll(call, third.device_code)).json.status).toBe('pending');
      expect((await call('GET', '/api/devices', { token: carol.token })).json.devices.map((d: any) => d.name)).toEqual(['One', 'Two']);
      expect((await call('DELETE', `/api/devices/${first.device_id}`, { token: carol.token })).status).toBe(200);
      const a = await call('POST', `/api/devices/${third.user_code}/approve`, { token: carol.token });
      expect(a.status, a.text).toBe(200);
      expect((await call('GET', '/api/devices', { token: carol.token })).json.devices.map((d: any) => d.name)).toEqual(['Three', 'Two']);
    });

    it('the Android flow: the app signs in with username and password, then approves itself', async () => {
      const dave = await register(call);
      const reg = await registerDevice(call, 'Pixel 8', { client: 'android', model: 'Pixel 8' });
      const session = await login(call, dave.username, dave.password);
      expect(session.status, session.text).toBe(200);
      const a = await call('POST', `/api/devices/${reg.user_code}/approve`, { token: session.json.access_token });
      expect(a.status, a.text).toBe(200);
      const s = await poll(call, reg.device_code);
      expect(s.json).toMatchObject({ status: 'approved', name: 'Pixel 8' });
      const me = await call('GET', '/api/sync/device', asDevice(s.json.device_token));
      expect(me.json).toEqual({ device_id: s.json.device_id, user_id: dave.id, name: 'Pixel 8' });
      expect((await call('GET', '/api/devices', { token: dave.token })).json.devices[0]).toMatchObject({ client: 'android', model: 'Pixel 8', status: 'active' });
    });

    describe('shelves, the sync queue and the sidecar', () => {
      let dev: Enrolled;
      let other: Enrolled;
      let coll: string;
      beforeAll(async () => {
        dev = await enroll(call, alice, 'Shelf reader');
        other = await enroll(call, alice, 'Second reader');
        const c = await call('POST', '/api/collections', { token: alice.token, body: { name: 'To the Kobo' } });
        expect(c.status, c.text).toBe(201);
        coll = c.json.id;
        const add = await call('POST', `/api/collections/${coll}/items`, { token: alice.token, body: { media_item_ids: [items[0]!.id] } });
        expect(add.status, add.text).toBe(200);
      });

      it('adds, gets, removes and clears shelves (collections of the reading service)', async () => {
        const a = await call('POST', `/api/devices/${dev.device_id}/shelves`, { token: alice.token, body: { collection_id: coll } });
        expect(a.status, a.text).toBe(201);
        expect(a.json).toEqual({ message: 'shelf added', collection_id: coll });
        const again = await call('POST', `/api/devices/${dev.device_id}/shelves`, { token: alice.token, body: { collection_id: coll } });
        expect(again.status, again.text).toBe(200);
        expect(again.json.message).toBe('shelf already on device');
        const g = await call('GET', `/api/devices/${dev.device_id}/shelves`, { token: alice.token });
        expect(g.status, g.text).toBe(200);
        expect(g.json).toEqual({
          device_id: dev.device_id,
          shelves: [{ collection_id: coll, name: 'To the Kobo', is_system: false, query_type: null, added_at: expect.any(String) }],
        });
        expectError(await call('POST', `/api/devices/${dev.device_id}/shelves`, { token: alice.token, body: {} }), 400, 'collection_id is required');
        expectError(await call('POST', `/api/devices/${dev.device_id}/shelves`, { token: alice.token, body: { collection_id: 'nope' } }), 400, 'invalid collection id');
        const bobs = await call('POST', '/api/collections', { token: bob.token, body: { name: 'Bob only' } });
        expectError(await call('POST', `/api/devices/${dev.device_id}/shelves`, { token: alice.token, body: { collection_id: bobs.json.id } }), 404, 'collection not found');
        expectError(await call('POST', `/api/devices/${dev.device_id}/shelves`, { token: bob.token, body: { collection_id: bobs.json.id } }), 404, 'device not found');
        expectError(await call('GET', `/api/devices/${dev.device_id}/shelves`, { token: bob.token }), 404, 'device not found');
        // a system collection can be a shelf too
        const sys = (await call('GET', '/api/collections', { token: alice.token })).json.data.find((c: any) => c.query_type === 'recently-added');
        expect((await call('POST', `/api/devices/${other.device_id}/shelves`, { token: alice.token, body: { collection_id: sys.id } })).status).toBe(201);
        const r = await call('DELETE', `/api/devices/${other.device_id}/shelves/${sys.id}`, { token: alice.token });
        expect(r.status, r.text).toBe(200);
        expect(r.json).toEqual({ message: 'shelf removed' });
        expectError(await call('DELETE', `/api/devices/${other.device_id}/shelves/${sys.id}`, { token: alice.token }), 404, 'shelf not found');
        expect((await call('POST', `/api/devices/${other.device_id}/shelves`, { token: alice.token, body: { collection_id: sys.id } })).status).toBe(201);
        const cl = await call('DELETE', `/api/devices/${other.device_id}/shelves`, { token: alice.token });
        expect(cl.json).toEqual({ message: 'shelves cleared' });
        expect((await call('GET', `/api/devices/${other.device_id}/shelves`, { token: alice.token })).json.shelves).toEqual([]);
        expectError(await call('DELETE', `/api/devices/${other.device_id}/shelves`, { token: bob.token }), 404, 'device not found');
      });

      it('queues what waits for each device and why; the device takes, fails and acknowledges; users retry, delete and clear', async () => {
        // the shelf added above queued the collection's book; a book added later is queued too
        const add = await call('POST', `/api/collections/${coll}/items`, { token: alice.token, body: { media_item_ids: [items[1]!.id] } });
        expect(add.status, add.text).toBe(200);
        const q = await eventually(async () => {
          const r = await call('GET', `/api/devices/${dev.device_id}/queue`, { token: alice.token });
          expect(r.status, r.text).toBe(200);
          expect(r.json.entries.length).toBe(2);
          return r.json;
        });
        expect(q.entries.map((e: any) => [e.media_item_id, e.action, e.status])).toEqual([
          [items[0]!.id, 'download', 'pending'],
          [items[1]!.id, 'download', 'pending'],
        ]);
        // the book was in the collection when the shelf was added: it came with the shelf, even when
        // device-sync heard of it only after the shelf (distributed: reading's events come a moment later)
        expect(q.entries[0].reason).toBe('on the shelf "To the Kobo"');
        expect(q.entries[1].reason).toBe('added to a collection on this device');
        // a position saved on the web waits for both of Alice's devices
        expect((await put(call, alice.token, items[2]!.id, { percentage: 0.4 })).status).toBe(200);
        const withProgress = await eventually(async () => {
          const r = await call('GET', `/api/devices/${other.device_id}/queue`, { token: alice.token });
          expect(r.json.entries.length).toBe(1);
          return r.json.entries[0];
        });
        expect(withProgress).toMatchObject({ media_item_id: items[2]!.id, action: 'progress', status: 'pending', attempts: 0, last_error: null });
        expect(withProgress.reason).toMatch(/^reading position changed on /);
        const stats = await call('GET', '/api/sync-queue/stats', { token: alice.token });
        expect(stats.status, stats.text).toBe(200);
        const mine = stats.json.devices.find((d: any) => d.device_id === dev.device_id);
        expect(mine).toMatchObject({ name: 'Shelf reader', pending: 3, failed: 0 });
        // the device's own view, and its acknowledgements
        const taken = await call('GET', '/api/sync/queue', asDevice(dev.token));
        expect(taken.status, taken.text).toBe(200);
        expect(taken.json.entries.length).toBe(3);
        const [e1, e2, e3] = taken.json.entries;
        const ack = await call('POST', '/api/sync/queue/ack', asDevice(dev.token, { body: { done: [e1.id], failed: [{ id: e2.id, error: 'disk full' }] } }));
        expect(ack.status, ack.text).toBe(200);
        expect(ack.json).toEqual({ removed: 1, failed: 1 });
        expectError(await call('POST', '/api/sync/queue/ack', asDevice(dev.token, { body: {} })), 400, 'ids must be a non-empty list of ids');
        // another device cannot acknowledge this device's entries
        expect((await call('POST', '/api/sync/queue/ack', asDevice(other.token, { body: { done: [e3.id] } }))).json).toEqual({ removed: 0, failed: 0 });
        const failed = await call('GET', `/api/devices/${dev.device_id}/queue?status=failed`, { token: alice.token });
        expect(failed.json.entries).toEqual([expect.objectContaining({ id: e2.id, status: 'failed', attempts: 1, last_error: 'disk full' })]);
        expectError(await call('GET', `/api/devices/${dev.device_id}/queue?status=done`, { token: alice.token }), 400, "status must be 'pending' or 'failed'");
        expectError(await call('POST', `/api/sync-queue/${e3.id}/retry`, { token: alice.token }), 409, 'only a failed sync queue entry can be retried');
        expectError(await call('POST', `/api/sync-queue/${e2.id}/retry`, { token: bob.token }), 404, 'sync queue entry not found');
        const retried = await call('POST', `/api/sync-queue/${e2.id}/retry`, { token: alice.token });
        expect(retried.status, retried.text).toBe(200);
        expect(retried.json).toMatchObject({ id: e2.id, status: 'pending', attempts: 1 });
        // list all: every device of the caller; every user's for an admin asking for it
        const all = await call('GET', '/api/sync-queue', { token: alice.token });
        expect(all.status, all.text).toBe(200);
        // Alice's earlier devices were told of the web position too
        const here = (list: any[]) => list.filter((e) => e.device_id === dev.device_id || e.device_id === other.device_id);
        expect(
          here(all.json.entries)
            .map((e: any) => e.device_name)
            .sort(),
        ).toEqual(['Second reader', 'Shelf reader', 'Shelf reader']);
        expect(all.json.entries.every((e: any) => e.user_id === alice.id)).toBe(true);
        expectError(await call('GET', '/api/sync-queue?all=true', { token: alice.token }), 403, 'admin access required');
        const everyone = await call('GET', '/api/sync-queue?all=true', { token: admin.token });
        expect(here(everyone.json.entries).length).toBe(3);
        expect(everyone.json.entries.length).toBeGreaterThan(all.json.entries.length - 1);
        expect((await call('GET', '/api/sync-queue', { token: bob.token })).json.entries).toEqual([]);
        expectError(await call('GET', `/api/devices/${dev.device_id}/queue`, { token: bob.token }), 404, 'device not found');
        expectError(await call('DELETE', `/api/sync-queue/${e3.id}`, { token: bob.token }), 404, 'sync queue entry not found');
        expectError(await call('DELETE', '/api/sync-queue/nope', { token: alice.token }), 400, 'invalid sync queue entry id');
        const d = await call('DELETE', `/api/sync-queue/${e3.id}`, { token: alice.token });
        expect(d.json).toEqual({ message: 'sync queue entry deleted' });
        expectError(await call('DELETE', `/api/devices/${dev.device_id}/queue`, { token: bob.token }), 404, 'device not found');
        const c = await call('DELETE', `/api/devices/${dev.device_id}/queue`, { token: alice.token });
        expect(c.json).toEqual({ message: 'sync queue cleared', removed: 1 });
        expect((await call('GET', `/api/devices/${dev.device_id}/queue`, { token: alice.token })).json.entries).toEqual([]);
        expect((await call('GET', '/api/sync-queue/stats', { token: alice.token })).json.devices.find((x: any) => x.device_id === dev.device_id)).toMatchObject({
          pending: 0,
          failed: 0,
        });
      });

      it('queues the book whether its collection changed before, after or while the shelf was added', async () => {
        // each shelf is added at the same moment as its collection's book: device-sync hears of the
        // book (a reaction) and of the shelf (a request) in two transactions, whichever first
        const racer = await enroll(call, alice, 'Racing reader');
        for (let round = 0; round < 5; round++) {
          const colls: string[] = [];
          for (let i = 0; i < items.length; i++) {
            const c = await call('POST', '/api/collections', { token: alice.token, body: { name: `Race ${round}.${i}` } });
            expect(c.status, c.text).toBe(201);
            colls.push(c.json.id);
          }
          await Promise.all(
            colls.map(async (c, i) => {
              const [add, sh] = await Promise.all([
                call('POST', `/api/collections/${c}/items`, { token: alice.token, body: { media_item_ids: [items[i]!.id] } }),
                call('POST', `/api/devices/${racer.device_id}/shelves`, { token: alice.token, body: { collection_id: c } }),
              ]);
              expect(add.status, add.text).toBe(200);
              expect(sh.status, sh.text).toBe(201);
            }),
          );
          // every collection holds another book: each race queues its own
          const queued = await eventually(async () => {
            const r = await call('GET', `/api/devices/${racer.device_id}/queue`, { token: alice.token });
            expect(r.status, r.text).toBe(200);
            expect(r.json.entries.map((e: any) => e.media_item_id).sort()).toEqual(items.map((x) => x.id).sort());
            return r.json.entries;
          });
          expect(queued.every((e: any) => e.action === 'download' && e.status === 'pending')).toBe(true);
          expect((await call('DELETE', `/api/devices/${racer.device_id}/queue`, { token: alice.token })).status).toBe(200);
          expect((await call('DELETE', `/api/devices/${racer.device_id}/shelves`, { token: alice.token })).status).toBe(200);
        }
        expect((await call('DELETE', `/api/devices/${racer.device_id}`, { token: alice.token })).status).toBe(200);
      });

      it('serves the sidecar to the device and its owner: books by SHA-256 or UUID, collections, formats', async () => {
        const s = await call('GET', `/api/devices/${dev.device_id}/sidecar`, asDevice(dev.token));
        expect(s.status, s.text).toBe(200);
        expect(s.headers.get('content-type')).toMatch(/^application\/json/);
        expect(s.json).toMatchObject({ version: 1, server: 'Bindery', device: { id: dev.device_id, name: 'Shelf reader', client: 'koreader' } });
        expect(s.json.collections).toEqual([{ id: coll, name: 'To the Kobo', books: [items[0]!.id, items[1]!.id] }]);
        // items made through the API have no file, so no hash: the UUID is the key
        expect(s.json.books[items[0]!.id]).toMatchObject({ uuid: items[0]!.id, title: 'Dune', key_type: 'uuid', formats: [] });
        expect(s.json.formats).toEqual([]);
        const owner = await call('GET', `/api/devices/${dev.device_id}/sidecar`, { token: alice.token });
        expect(owner.json).toEqual(s.json);
        const dl = await call('GET', `/api/devices/${dev.device_id}/sidecar/download`, { token: alice.token });
        expect(dl.status).toBe(200);
        expect(dl.headers.get('content-disposition')).toBe(`attachment; filename="bindery-sidecar-${dev.device_id}.json"`);
        expect(dl.json).toEqual(s.json);
        expectError(await call('GET', `/api/devices/${dev.device_id}/sidecar`, { token: bob.token }), 404, 'device not found');
        expectError(await call('GET', `/api/devices/${dev.device_id}/sidecar`, asDevice(other.token)), 404, 'device not found');
        expectError(await call('GET', `/api/devices/${dev.device_id}/sidecar/download`, asDevice('bdt_wrong')), 401, 'invalid or revoked device credential');
        expectError(await call('GET', `/api/devices/${dev.device_id}/sidecar`), 401, 'authentication required');
      });

      it('keys a book with a file by its format SHA-256, and rebuilds the devices projection from the log unchanged', async () => {
        const dir = emptyDir();
        copyFileSync(join(FIXTURE, 'Amélie Fournier/Inspector Lumière/01 - Une Clé perdue.epub'), join(dir, 'cle.epub'));
        const lib = await createLibrary(call, admin.token, { name: `Device files ${mode}`, folders: [dir], watch: false });
        await scan(call, admin.token, lib.id);
        const book = (await listItems(call, admin.token, lib.id))[0]!;
        const sha = 'd2393b1347bdb9d288a365359aa93d3c45907adb8943ccf3fc708dc7c15acb73';
        expect(book.formats.map((f: any) => f.sha256)).toEqual([sha]);
        const add = await call('POST', `/api/collections/${coll}/items`, { token: alice.token, body: { media_item_ids: [book.id] } });
        expect(add.status, add.text).toBe(200);
        const s = await call('GET', `/api/devices/${dev.device_id}/sidecar`, asDevice(dev.token));
        expect(s.status, s.text).toBe(200);
        expect(s.json.collections[0].books).toEqual([items[0]!.id, items[1]!.id, sha]);
        expect(s.json.books[sha]).toMatchObject({ uuid: book.id, key_type: 'sha256', format: 'epub', formats: [{ format: 'epub', sha256: sha, size: book.formats[0].size }] });
        expect(s.json.books[book.id]).toBeUndefined();
        expect(s.json.formats).toEqual(['epub']);
        // the device is told to fetch it
        await eventually(async () => {
          const q = await call('GET', '/api/sync/queue', asDevice(dev.token));
          expect(q.json.entries.map((e: any) => [e.media_item_id, e.action])).toContainEqual([book.id, 'download']);
        });
        const before = [await call('GET', '/api/devices', { token: alice.token }), await call('GET', `/api/devices/${dev.device_id}/shelves`, { token: alice.token }), s];
        const r = await call('POST', '/api/admin/projections/devices/rebuild?wait=true', { token: admin.token });
        expect(r.status, r.text).toBe(200);
        expect(r.json.message).toBe('projection devices rebuilt');
        const after = [
          await call('GET', '/api/devices', { token: alice.token }),
          await call('GET', `/api/devices/${dev.device_id}/shelves`, { token: alice.token }),
          await call('GET', `/api/devices/${dev.device_id}/sidecar`, asDevice(dev.token)),
        ];
        expect(after.map((x) => x.json)).toEqual(before.map((x) => x.json));
      });
    });

    it('the approval page: signed-out users are sent to sign in and back; no framing; only local next paths', async () => {
      const reg = await registerDevice(call, 'Page device');
      const r = await fetch(`${b.url}${reg.auth_url}`, { redirect: 'manual' });
      expect(r.status).toBe(303);
      expect(r.headers.get('location')).toBe(`/login?redirect=${encodeURIComponent(reg.auth_url)}`);
      const page = await call('GET', reg.auth_url, { cookie: `token=${alice.token}` });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(page.text).toContain('<strong id="device-name">Page device</strong>');
      const missing = await call('GET', '/devices/approve/NOSUCHCODE00', { cookie: `token=${alice.token}` });
      expect(missing.status).toBe(404);
      expect(missing.text).toContain('does not exist or has expired');
      // the web app's sign-in page keeps a local target only (the old `next` name still works)
      for (const [next, kept] of [
        ['/devices/approve/ABC', '/devices/approve/ABC'],
        ['//evil.example/x', '/dashboard'],
        ['https://evil.example/', '/dashboard'],
        ['/\\evil.example', '/dashboard'],
      ]) {
        const l = await call('GET', `/login?next=${encodeURIComponent(next!)}`);
        expect(l.status).toBe(200);
        expect(l.text).toContain(`<input type="hidden" name="redirect" value="${kept}"/>`);
      }
    });

    it.skipIf(!HAS_CHROMIUM)(
      'the approval page in Chromium: sign in, see the device name, approve; reject another',
      async () => {
        const { chromium } = await import('playwright-core');
        const browser = await chromium.launch({
          executablePath: CHROMIUM,
          args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
          ],
        });
        try {
          const ctx = await browser.newContext();
          const page = await ctx.newPage();
          const name = 'Kobo <b>Libra</b> & "2"';
          const reg = await registerDevice(call, name);
          await page.goto(`${b.url}${reg.auth_url}`);
          expect(new URL(page.url()).pathname).toBe('/login');
          // a wrong password says so and stays on the page
          await page.fill('#login-name', alice.username);
          await page.fill('#password', 'not-the-password');
          await page.click('#submit');
          await page.waitForSelector('#error:not(:empty)');
          expect(await page.textContent('#error')).toBe('invalid credentials');
          await page.fill('#password', alice.password);
          await Promise.all([page.waitForURL(`${b.url}${reg.auth_url}`), page.click('#submit')]);
          expect(await page.textContent('#device-name')).toBe(name);
          expect(await page.textContent('#device-client')).toBe('koreader');
          expect((await poll(call, reg.device_code)).json.status).toBe('pending');
          await page.click('#approve');
          await page.waitForSelector('#result[data-outcome="approved"]');
          expect(await page.textContent('#result')).toBe('Device approved. It will finish setting itself up within a few seconds.');
          // the sync key for KOReader's built-in sync, shown once: it signs alice in to kosync
          expect(await page.isVisible('#kosync')).toBe(true);
          const key = (await page.textContent('#sync-key'))!;
          expect(key).toMatch(/^[a-z2-9]{5}(-[a-z2-9]{5}){3}$/);
          expect(await page.textContent('#kosync-user')).toBe(alice.username);
          expect(await page.textContent('#kosync-server')).toBe(`${b.url}/api/kosync`);
          const ko = await call('GET', '/api/kosync/users/auth', { headers: { 'x-auth-user': alice.username, 'x-auth-key': createHash('md5').update(key).digest('hex') } });
          expect(ko.status, ko.text).toBe(200);
          const s = await poll(call, reg.device_code);
          expect(s.json).toMatchObject({ status: 'approved', name });
          expect((await call('GET', '/api/sync/device', asDevice(s.json.device_token))).json.user_id).toBe(alice.id);
          // signed in now: the next registration's page opens at once; reject it
          const reg2 = await registerDevice(call, 'Stranger');
          await page.goto(`${b.url}${reg2.auth_url}`);
          expect(await page.textContent('#device-name')).toBe('Stranger');
          await page.click('#reject');
          await page.waitForSelector('#result[data-outcome="rejected"]');
          expectError(await poll(call, reg2.device_code), 403, 'device registration was rejected');
          // a decided registration's page says so
          await page.goto(`${b.url}${reg2.auth_url}`);
          expect(await page.textContent('#result')).toBe('This device was already rejected.');
          await ctx.close();
        } finally {
          await browser.close();
        }
      },
      120_000,
    );

    it('a deleted account takes its devices with it', async () => {
      const erin = await register(call);
      const dev = await enroll(call, erin, 'Erin reader');
      expect((await call('DELETE', '/api/auth/profile', { token: erin.token })).status).toBe(200);
      await eventually(async () => expectError(await call('GET', '/api/sync/device', asDevice(dev.token)), 401, 'invalid or revoked device credential'));
    });

    it.skipIf(mode !== 'distributed')(
      'replicas share pending registrations; restarting one device-sync replica of two keeps them',
      async () => {
        // the second gateway and the second replica start side by side (neither needs the other);
        // each is stopped with the instance, even when the other fails to start
        const started = <T extends { proc: Bindery['procs'][number] }>(s: T) => (b.procs.push(s.proc), s);
        const [gatewayTwo, second] = await Promise.all([
          spawnBindery('service', { ...b.env, BINDERY_SERVICES: 'gateway' }, /bindery gateway started \(distributed\) at (http:\/\/\S+)/).then(started),
          spawnBindery('service', { ...b.env, BINDERY_SERVICES: 'device-sync' }, /bindery device-sync started/).then(started),
        ]);
        const other = client(gatewayTwo.match[1]!);
        const gina = await register(call);
        // registered through one gateway, approved through the other, collected through the first
        for (let i = 0; i < 4; i++) {
          const reg = await registerDevice(call, `Replica ${i}`);
          expect((await other('GET', `/api/devices/pending/${reg.user_code}`, { token: gina.token })).json.status).toBe('pending');
          expect((await other('POST', `/api/devices/${reg.user_code}/approve`, { token: gina.token })).status).toBe(200);
          const s = await poll(call, reg.device_code);
          expect(s.json.status).toBe('approved');
          expect((await other('GET', '/api/sync/device', asDevice(s.json.device_token))).json.name).toBe(`Replica ${i}`);
        }
        const waiting = await registerDevice(call, 'Rolling');
        expect(await second.proc.stop()).toBe(0);
        const third = await spawnBindery('service', { ...b.env, BINDERY_SERVICES: 'device-sync' }, /bindery device-sync started/);
        b.procs.push(third.proc);
        for (let i = 0; i < 3; i++) expect((await poll(call, waiting.device_code)).json.status).toBe('pending');
        expect((await other('POST', `/api/devices/${waiting.user_code}/approve`, { token: gina.token })).status).toBe(200);
        expect((await poll(other, waiting.device_code)).json.status).toBe('approved');
      },
      240_000,
    );

    it('pending registrations do not survive a restart; approved devices do', async () => {
      const frank = await register(call);
      const dev = await enroll(call, frank, 'Survivor');
      const reg = await registerDevice(call, 'Forgotten');
      expect((await poll(call, reg.device_code)).json.status).toBe('pending');
      await b.restart();
      expectError(await poll(call, reg.device_code), 410, 'device registration not found or expired');
      expectError(await call('POST', `/api/devices/${reg.user_code}/approve`, { token: frank.token }), 404, 'device registration not found');
      const me = await call('GET', '/api/sync/device', asDevice(dev.token));
      expect(me.status, me.text).toBe(200);
      expect(me.json.device_id).toBe(dev.device_id);
    }, 240_000);
  });
}
