// What another site can make a browser do, and what a forged Host can make Bindery write, both
// modes: a sign-in or registration form posted from another site's page is refused (login CSRF); a
// WebSocket opened with the cookie from another site's script is refused; sockets per user are
// capped; absolute links carry only an address of this server's own or PUBLIC_URL, never a Host
// header naming anything else; and the sync queue shows no entry of a library hidden from the user.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes, startBindery, type Bindery } from '../support/bindery';
import { WsClient, wsUrl } from '../support/ws-client';
import { type Req, withHost } from '../support/http';
import { api, eventually, expectError as err, PASSWORD, register, uniq, type Account, type Call } from './helpers';
import { enroll, asDevice } from './device-helpers';
import { createLibrary } from './catalog-helpers';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const modes = await availableModes();
const REFUSED = 'requests from another site are refused';
const EVIL = 'https://evil.example';

/** Opens a socket and tells how the server answered: 'open', or the refused upgrade's status. */
function upgrade(url: string, headers: Record<string, string>): Promise<{ open: true; s: WsClient } | { open: false; status: number }> {
  return new Promise((resolve, reject) => {
    const s = new WsClient(url, { headers });
    s.on('open', () => resolve({ open: true, s }));
    s.on('unexpected-response', (_req: unknown, res: { statusCode: number }) => resolve({ open: false, status: res.statusCode }));
    s.on('error', (e: Error) => reject(e));
  });
}

for (const mode of modes) {
  describe(`origins, hosts and socket caps (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let own: string;
    const dirs: string[] = [];
    beforeAll(async () => {
      b = await startBindery(mode, { WS_MAX_SOCKETS_PER_USER: '3' });
      call = api(b);
      admin = await register(call, { name: uniq('chief') });
      own = new URL(b.url).origin;
    });
    afterAll(async () => {
      await b?.stop();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it('a sign-in or registration posted from another site is refused and sets no cookie; our own pages and apps sign in', async () => {
      const u = await register(call);
      const form = { login: u.username, password: PASSWORD };
      for (const headers of [{ Origin: EVIL }, { Referer: `${EVIL}/phish.html` }, { Origin: 'null' }] as Record<string, string>[]) {
        const r = await call('POST', '/api/auth/login', { form, headers });
        err(r, 403, REFUSED);
        expect(r.cookies.join(';')).not.toContain('token=');
      }
      const hx = await call('POST', '/api/auth/login', { form, headers: { Origin: EVIL, 'HX-Request': 'true' } });
      expect(hx.status).toBe(403);
      expect(hx.text).toBe(`<div class="alert alert-error" role="alert">${REFUSED}</div>`);
      const n = uniq('csrf');
      err(await call('POST', '/api/auth/register', { form: { email: `${n}@example.com`, username: n, password: PASSWORD }, headers: { Origin: EVIL } }), 403, REFUSED);
      // from our own origin, or from an app that sends neither header
      expect((await call('POST', '/api/auth/login', { form, headers: { Origin: own, Referer: `${own}/login` } })).status).toBe(200);
      expect((await call('POST', '/api/auth/login', { body: form })).status).toBe(200);
    });

    it('a WebSocket opened with the cookie from another site is refused; with a token, or from our pages, it opens', async () => {
      const u = await register(call);
      const url = wsUrl(b.url);
      expect(await upgrade(url, { cookie: `token=${u.token}`, origin: EVIL })).toEqual({ open: false, status: 403 });
      const mine = await upgrade(url, { cookie: `token=${u.token}`, origin: own });
      expect(mine.open).toBe(true);
      const app = await upgrade(url, { authorization: `Bearer ${u.token}`, origin: EVIL });
      expect(app.open).toBe(true);
      for (const c of [mine, app]) if (c.open) c.s.close();
    });

    it('one user holds at most WS_MAX_SOCKETS_PER_USER sockets; another user is not affected; a closed one frees its place', async () => {
      const u = await register(call);
      const url = wsUrl(b.url);
      const open = [];
      for (let i = 0; i < 3; i++) {
        const c = await upgrade(url, { authorization: `Bearer ${u.token}` });
        expect(c.open).toBe(true);
        open.push(c);
      }
      expect(await upgrade(url, { authorization: `Bearer ${u.token}` })).toEqual({ open: false, status: 429 });
      const other = await upgrade(url, { authorization: `Bearer ${admin.token}` });
      expect(other.open).toBe(true);
      const first = open[0]!;
      if (first.open) first.s.close();
      await eventually(async () => {
        const again = await upgrade(url, { authorization: `Bearer ${u.token}` });
        expect(again.open).toBe(true);
        if (again.open) again.s.close();
      });
      for (const c of [...open.slice(1), other]) if (c.open) c.s.close();
    });

    it('a forged Host goes into no absolute link: device registration and the OpenSearch description use paths', async () => {
      const reg = await withHost(b.url, 'POST', '/api/devices/register', 'evil.example', {}, { name: 'Kobo', client: 'koreader' });
      expect(reg.status, reg.text).toBe(201);
      expect(reg.json.verification_uri).toBeUndefined();
      expect(reg.json.auth_url).toMatch(/^\/devices\/approve\/[0-9A-F]{12}$/);
      expect(reg.text).not.toContain('evil.example');
      const os = await withHost(b.url, 'GET', '/opds/search', 'evil.example', { authorization: `Bearer ${admin.token}` });
      expect(os.status).toBe(200);
      expect(os.text).not.toContain('evil.example');
      expect(os.text).toContain('template="/opds/search?q={searchTerms}"');
      // this server's own address is believed
      const mine = await call('POST', '/api/devices/register', { body: { name: 'Kobo', client: 'koreader' } });
      expect(mine.json.verification_uri).toBe(`${b.url}${mine.json.auth_url}`);
      const key = await withHost(b.url, 'POST', '/api/auth/opds-key', 'evil.example', { authorization: `Bearer ${admin.token}` }, {});
      expect(key.json.opds_url).toBeUndefined();
      expect(key.json.opds_path).toMatch(/^\/opds\/key\//);
    });

    it('the sync queue shows no download of a book whose library is hidden from the user; the device is not sent it either', async () => {
      const u = await register(call);
      const dir = mkdtempSync(join(tmpdir(), 'bindery-queue-'));
      dirs.push(dir);
      const lib = await createLibrary(call, admin.token, { name: uniq('soon-hidden'), folders: [dir] });
      const made = await call('POST', '/api/media-items', { token: admin.token, body: { library_id: lib.id, title: 'Queued Book', file_path: 'queued.epub' } });
      expect(made.status, made.text).toBe(201);
      const item = made.json.id ?? made.json.data?.id;
      expect(item).toMatch(/^[0-9a-f-]{36}$/);
      const device = await enroll(call, u, 'Reader');
      const coll = await call('POST', '/api/collections', { token: u.token, body: { name: 'To the reader' } });
      expect(coll.status, coll.text).toBe(201);
      expect((await call('POST', `/api/collections/${coll.json.id}/items`, { token: u.token, body: { media_item_ids: [item] } })).status).toBe(200);
      expect((await call('POST', `/api/devices/${device.device_id}/shelves`, { token: u.token, body: { collection_id: coll.json.id } })).status).toBe(201);
      const downloads = async (path: string, opts: Req) => {
        const r = await call('GET', path, opts);
        expect(r.status, r.text).toBe(200);
        return (r.json.entries as { media_item_id: string; action: string }[]).filter((e) => e.media_item_id === item && e.action === 'download').length;
      };
      await eventually(async () => expect(await downloads(`/api/devices/${device.device_id}/queue`, { token: u.token })).toBe(1), 15_000);
      expect(await downloads('/api/sync-queue', { token: u.token })).toBe(1);
      expect(await downloads('/api/sync/queue', asDevice(device.token))).toBe(1);
      // the admin hides that library from the user: no list of theirs names the entry any more
      const grant = await call('PUT', `/api/auth/users/${u.id}/libraries`, { token: admin.token, body: { all_libraries: false, library_ids: [] } });
      expect(grant.status, grant.text).toBe(200);
      await eventually(async () => expect(await downloads(`/api/devices/${device.device_id}/queue`, { token: u.token })).toBe(0), 15_000);
      expect(await downloads('/api/sync-queue', { token: u.token })).toBe(0);
      expect(await downloads('/api/sync/queue', asDevice(device.token))).toBe(0);
      // the admin, who sees every library, still sees it in the all-users listing
      expect(await downloads('/api/sync-queue?all=true', { token: admin.token })).toBe(1);
    });
  });
}
