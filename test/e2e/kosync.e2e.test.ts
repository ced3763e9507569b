// KOReader's stock Progress sync (docs/decisions.md, "KOReader sync"): a KOReader session replayed
// from the protocol — create, auth, push, pull, an unknown document, a renamed file, a rewritten
// file — at the root paths and under /api/kosync, every error code, and one user never seeing
// another's documents.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, renameSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes, type Bindery } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import type { Res } from '../support/http';
import { asDevice, enroll, registerDevice } from './device-helpers';
import { api, eventually, expectError, instances, putSettings, register, type Account, type Call } from './helpers';

const modes = await availableModes();
const get = instances(modes);

const md5 = (s: string | Buffer) => createHash('md5').update(s).digest('hex');

/** KOReader's document id (util.partialMD5): 1 KiB samples at 1024 << 2i, i = -1..10, until the end. */
function partialMd5(bytes: Buffer): string {
  const h = createHash('md5');
  for (let i = -1; i <= 10; i++) {
    const at = 1024 << (2 * i);
    if (at >= bytes.length) break;
    h.update(bytes.subarray(at, at + 1024));
  }
  return h.digest('hex');
}

const HIDDEN_CROWN = 'J. R. Hartley/The Hidden Crown (1864).epub';
const GARDEN = 'Erik Lindgren/The Long Winter Cycle/02 - A Garden in Winter.epub';
const LOWERCASE = 'Thomas Whitfield/the lowercase title.epub';
const WHY = 'Ngozi Okonkwo-Adeyemi/Why_ (2007).epub';
const COMIC = 'comics/Starlight Comics/Captain Nebula/Captain Nebula 002.cbz';

/** An XPointer for documents that are in no library (no locator index checks it). */
const XP = '/body/DocFragment[3]/body/div/p[12]/text().17';

/** A KOReader device: its headers and the protocol's four calls, at a path prefix. */
function device(call: Call, prefix: string, user: string, password: string, id = 'a1b2c3d4e5f60718293a4b5c6d7e8f90', model = 'Kobo_frost') {
  const headers = () => ({ 'x-auth-user': user, 'x-auth-key': md5(password), accept: 'application/vnd.koreader.v1+json' });
  return {
    model,
    id,
    auth: () => call('GET', `${prefix}/users/auth`, { headers: headers() }),
    push: (document: string, progress: string, percentage: number, extra: Record<string, unknown> = {}) =>
      call('PUT', `${prefix}/syncs/progress`, { headers: headers(), body: { document, progress, percentage, device: model, device_id: id, ...extra } }),
    pull: (document: string) => call('GET', `${prefix}/syncs/progress/${document}`, { headers: headers() }),
  };
}

const kosyncError = (r: Res, status: number, code: number, message: string) => {
  expect(r.status, r.text).toBe(status);
  expect(r.json).toEqual({ code, message });
};

describe.each(modes)('KOReader stock sync (%s)', (mode) => {
  let bindery: Bindery;
  let call: Call;
  let admin: Account;
  let reader: Account;
  let other: Account;
  let dir: string;
  let libraryId: string;
  let crown: Record<string, any>;
  let garden: Record<string, any>;
  let comic: Record<string, any>;
  let scout: Account;
  /** crown at 25 %, 52 % and 55 %, garden at 10 %: places of the catalogued books, as KOReader names them */
  const at: Record<string, string> = {};
  const docOf = (item: Record<string, any>) => item.formats[0].partial_md5 as string;
  /** The XPointer of a place in a catalogued EPUB: where a device pulling a web position of that percentage goes. */
  const place = async (item: Record<string, any>, percentage: number): Promise<string> => {
    const w = await call('PUT', `/api/media-items/${item.id}/progress`, { token: scout.token, body: { percentage, force: true } });
    expect(w.status, w.text).toBe(200);
    const p = await device(call, '', scout.username, scout.password).pull(docOf(item));
    expect(p.json.progress, p.text).toMatch(/^\/body\/DocFragment\[\d+\]\//);
    return p.json.progress;
  };

  beforeAll(async () => {
    bindery = await get(mode);
    call = api(bindery);
    admin = await register(call);
    reader = await register(call);
    other = await register(call);
    dir = emptyDir();
    for (const [src, dst] of [
      [HIDDEN_CROWN, 'crown/The Hidden Crown.epub'],
      [GARDEN, 'garden/A Garden in Winter.epub'],
      [COMIC, 'comics/Captain Nebula 002.cbz'],
    ] as const) {
      mkdirSync(join(dir, dst, '..'), { recursive: true });
      copyFileSync(join(FIXTURE, src), join(dir, dst));
    }
    const lib = await createLibrary(call, admin.token, { name: `KOReader ${mode}`, folders: [dir], watch: false });
    libraryId = lib.id;
    await scan(call, admin.token, libraryId);
    const list = await items(call, admin.token, libraryId);
    crown = list.find((i) => i.formats[0].file_path === 'crown/The Hidden Crown.epub')!;
    garden = list.find((i) => i.formats[0].file_path === 'garden/A Garden in Winter.epub')!;
    comic = list.find((i) => i.formats[0].file_path === 'comics/Captain Nebula 002.cbz')!;
    expect(docOf(crown)).toBe(partialMd5(readFileSync(join(dir, 'crown/The Hidden Crown.epub'))));
    scout = await register(call);
    for (const [name, item, pct] of [
      ['crown25', crown, 0.25],
      ['crown52', crown, 0.52],
      ['crown55', crown, 0.55],
      ['garden10', garden, 0.1],
    ] as const)
      at[name] = await place(item, pct);
  }, 240_000);

  it('answers the health check at the root and under /api/kosync', async () => {
    for (const p of ['', '/api/kosync']) {
      const r = await call('GET', `${p}/healthcheck`);
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ state: 'OK' });
    }
  });

  it('signs a Bindery user in with their own username (or e-mail) and md5 of the password', async () => {
    for (const p of ['', '/api/kosync']) {
      const ok = await device(call, p, reader.username, reader.password).auth();
      expect(ok.status, ok.text).toBe(200);
      expect(ok.json).toEqual({ authorized: 'OK' });
    }
    expect((await device(call, '', reader.email, reader.password).auth()).json).toEqual({ authorized: 'OK' });
    kosyncError(await device(call, '', reader.username, 'not the password').auth(), 401, 2001, 'Unauthorized');
    kosyncError(await device(call, '', reader.username, other.password + 'x').auth(), 401, 2001, 'Unauthorized');
    kosyncError(await device(call, '', 'nobody-here', reader.password).auth(), 401, 2001, 'Unauthorized');
    kosyncError(await call('GET', '/users/auth'), 401, 2001, 'Unauthorized');
    kosyncError(await call('GET', '/users/auth', { headers: { 'x-auth-user': 'a:b', 'x-auth-key': md5('x') } }), 401, 2001, 'Unauthorized');
    // the password itself, not its md5, is refused
    kosyncError(await call('GET', '/users/auth', { headers: { 'x-auth-user': reader.username, 'x-auth-key': reader.password } }), 401, 2001, 'Unauthorized');
    // a user session token opens no kosync route
    kosyncError(await call('GET', '/users/auth', { token: reader.token }), 401, 2001, 'Unauthorized');
  });

  it('follows a password change: the new password signs in', async () => {
    const u = await register(call);
    const r = await call('PUT', '/api/auth/password', {
      token: u.token,
      body: { current_password: u.password, new_password: 'another-pass-456', confirm_password: 'another-pass-456' },
    });
    expect(r.status, r.text).toBe(200);
    expect((await device(call, '', u.username, 'another-pass-456').auth()).status).toBe(200);
    // the old one, never used before the change, does not
    kosyncError(await device(call, '', u.email, u.password).auth(), 401, 2001, 'Unauthorized');
  });

  it("creates an account from KOReader's Register, or answers 2002 / 2005 / 2003", async () => {
    kosyncError(await call('POST', '/users/create', { body: { username: reader.username, password: md5('whatever') } }), 402, 2002, 'Username is already registered.');
    kosyncError(await call('POST', '/api/kosync/users/create', { body: { username: 'x:y', password: md5('p') } }), 403, 2003, 'Invalid request');
    kosyncError(await call('POST', '/users/create', { body: { username: 'someone' } }), 403, 2003, 'Invalid request');
    const name = `ko${Date.now().toString(36)}`;
    const made = await call('POST', '/users/create', { body: { username: name, password: md5('koreader-pass') } });
    expect(made.status, made.text).toBe(201);
    expect(made.json).toEqual({ username: name });
    expect((await device(call, '', name, 'koreader-pass').auth()).json).toEqual({ authorized: 'OK' });
    kosyncError(await call('POST', '/users/create', { body: { username: name, password: md5('koreader-pass') } }), 402, 2002, 'Username is already registered.');
    expect((await putSettings(call, admin.token, { registration_enabled: false })).status).toBe(200);
    try {
      kosyncError(await call('POST', '/users/create', { body: { username: `${name}b`, password: md5('p') } }), 402, 2005, 'User registration is disabled.');
    } finally {
      expect((await putSettings(call, admin.token, { registration_enabled: true })).status).toBe(200);
    }
  });

  it('signs in with a device sync key shown once at approval; the key names the device, is replaced on request and dies with the device', async () => {
    const SYNC_KEY = /^[a-z2-9]{5}(-[a-z2-9]{5}){3}$/;
    const keen = await register(call);
    const reg = await registerDevice(call, 'Bedside Kobo');
    const approve = `/api/devices/${reg.user_code}/approve`;
    expectError(await call('POST', approve, { token: keen.token, body: { sync_key: 'yes' } }), 400, 'sync_key must be true or false');
    expectError(await call('POST', approve, { token: keen.token, raw: '[1]' }), 400, 'invalid request');
    const nul = await call('POST', approve, { token: keen.token, body: { sync_key: 'a\u0000' } });
    expect(nul.status, nul.text).toBe(400);
    expect(nul.json.error).toMatch(/control characters/);
    const a = await call('POST', approve, { token: keen.token });
    expect(a.status, a.text).toBe(200);
    expect(a.headers.get('cache-control')).toBe('no-store');
    const key = a.json.sync_key as string;
    expect(key).toMatch(SYNC_KEY);
    expect(a.json.kosync).toEqual({ server: `${bindery.url}/api/kosync`, username: keen.username, password: key });
    const deviceId = a.json.device.id as string;
    // KOReader sends md5 of the key typed as the password, with the username or the e-mail
    const kk = device(call, '', keen.username, key, 'c0ffee00c0ffee00c0ffee00c0ffee00', 'Kobo_libra');
    expect((await kk.auth()).json).toEqual({ authorized: 'OK' });
    expect((await device(call, '/api/kosync', keen.email, key).auth()).json).toEqual({ authorized: 'OK' });
    kosyncError(await device(call, '', reader.username, key).auth(), 401, 2001, 'Unauthorized');
    // the password still works beside it
    expect((await device(call, '', keen.username, keen.password).auth()).json).toEqual({ authorized: 'OK' });
    // a push names the Bindery device in the position and its history; the pull gives the device its own push
    const p = await kk.push(docOf(crown), at.crown25!, 0.25);
    expect(p.status, p.text).toBe(200);
    expect((await call('GET', `/api/media-items/${crown.id}/progress`, { token: keen.token })).json).toMatchObject({
      percentage: 0.25,
      client: 'koreader',
      device: 'Bedside Kobo',
    });
    const h = await call('GET', `/api/progress/${crown.id}/history`, { token: keen.token });
    expect(h.status, h.text).toBe(200);
    expect(h.json.data[0]).toMatchObject({ percentage: 0.25, client: 'koreader', device: 'Bedside Kobo' });
    expect((await kk.pull(docOf(crown))).json).toEqual({
      document: docOf(crown),
      percentage: 0.25,
      progress: at.crown25,
      device: 'Kobo_libra',
      device_id: kk.id,
      timestamp: p.json.timestamp,
    });
    expect((await call('GET', '/api/kosync/documents', { token: keen.token })).json.data).toEqual([
      expect.objectContaining({ document: docOf(crown), media_item_id: crown.id, bindery_device_id: deviceId }),
    ]);
    // the device lists when its key was made, never the key
    const shown = await call('GET', `/api/devices/${deviceId}`, { token: keen.token });
    expect(shown.json.sync_key_issued_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(shown.text).not.toContain(key);
    // a new key on request: the caller's device only, with a session
    const rotate = `/api/devices/${deviceId}/sync-key`;
    expectError(await call('POST', rotate, { token: reader.token }), 404, 'device not found');
    // an administrator gets no key for someone else's device either
    expectError(await call('POST', rotate, { token: admin.token }), 404, 'device not found');
    expectError(await call('POST', '/api/devices/not-a-device/sync-key', { token: keen.token }), 400, 'invalid device id');
    expectError(await call('POST', rotate), 401, 'authentication required');
    const phone = await enroll(call, keen, 'Phone');
    expect((await call('POST', `/api/devices/${phone.device_id}/sync-key`, asDevice(phone.token))).status).toBe(401);
    const rot = await call('POST', rotate, { token: keen.token });
    expect(rot.status, rot.text).toBe(200);
    expect(rot.json).toEqual({
      device_id: deviceId,
      sync_key: expect.stringMatching(SYNC_KEY),
      issued_at: expect.any(String),
      kosync: { server: `${bindery.url}/api/kosync`, username: keen.username, password: rot.json.sync_key },
    });
    expect(rot.json.sync_key).not.toBe(key);
    // the earlier key stops at once (even though it was just used), the new one works
    kosyncError(await kk.auth(), 401, 2001, 'Unauthorized');
    const kk2 = device(call, '', keen.username, rot.json.sync_key, kk.id, 'Kobo_libra');
    expect((await kk2.auth()).json).toEqual({ authorized: 'OK' });
    // approved without a key
    const reg2 = await registerDevice(call, 'No key');
    const a2 = await call('POST', `/api/devices/${reg2.user_code}/approve`, { token: keen.token, body: { sync_key: false } });
    expect(a2.status, a2.text).toBe(200);
    expect(Object.keys(a2.json).sort()).toEqual(['device', 'message']);
    expect((await call('GET', `/api/devices/${a2.json.device.id}`, { token: keen.token })).json.sync_key_issued_at).toBeNull();
    // deleting the device revokes its key at once
    expect((await call('DELETE', `/api/devices/${deviceId}`, { token: keen.token })).status).toBe(200);
    kosyncError(await kk2.auth(), 401, 2001, 'Unauthorized');
    kosyncError(await kk2.push(docOf(crown), at.crown25!, 0.3), 401, 2001, 'Unauthorized');
  });

  it('takes a push for a catalogued book and shows it on the web; the pull answers it verbatim', async () => {
    const ko = device(call, '', reader.username, reader.password);
    const before = Math.floor(Date.now() / 1000);
    const r = await ko.push(docOf(crown), at.crown25!, 0.25);
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(['document', 'timestamp']);
    expect(r.json.document).toBe(docOf(crown));
    expect(Number.isInteger(r.json.timestamp)).toBe(true);
    expect(r.json.timestamp).toBeGreaterThanOrEqual(before - 1);
    expect(r.json.timestamp).toBeLessThan(before + 3600);
    const web = await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token });
    expect(web.status, web.text).toBe(200);
    expect(web.json).toMatchObject({ percentage: 0.25, xpointer: at.crown25, client: 'koreader', device: `Kobo_frost ${ko.id.slice(0, 8)}` });
    expect(web.json.epubcfi).toMatch(/^epubcfi\(\/6\//);
    const p = await ko.pull(docOf(crown));
    expect(p.status, p.text).toBe(200);
    expect(p.json).toEqual({ document: docOf(crown), percentage: 0.25, progress: at.crown25, device: 'Kobo_frost', device_id: ko.id, timestamp: r.json.timestamp });
    // the same under the prefix, and the id in upper case names the same document
    expect((await device(call, '/api/kosync', reader.username, reader.password).pull(docOf(crown).toUpperCase())).json.percentage).toBe(0.25);
  });

  it('answers a pull again from its cache, and the next pull after a push or a web write reads that write back', async () => {
    const ko = device(call, '', reader.username, reader.password);
    expect((await ko.push(docOf(crown), at.crown25!, 0.25)).status).toBe(200);
    const first = await ko.pull(docOf(crown));
    expect(first.json.percentage).toBe(0.25);
    // the same question, asked again and under the other prefix: the same answer
    expect((await ko.pull(docOf(crown))).json).toEqual(first.json);
    expect((await device(call, '/api/kosync', reader.username, reader.password).pull(docOf(crown))).json).toEqual(first.json);
    // each push is read back by the pull that follows it, however soon
    for (const [xp, pct] of [
      [at.crown52!, 0.52],
      [at.crown25!, 0.25],
      [at.crown52!, 0.52],
    ] as const) {
      const pushed = await ko.push(docOf(crown), xp, pct);
      expect(pushed.status, pushed.text).toBe(200);
      const p = await ko.pull(docOf(crown));
      expect(p.json).toEqual({ document: docOf(crown), percentage: pct, progress: xp, device: 'Kobo_frost', device_id: ko.id, timestamp: pushed.json.timestamp });
    }
    // and so is a position written on the web
    const w = await call('PUT', `/api/media-items/${crown.id}/progress`, { token: reader.token, body: { percentage: 0.61, force: true } });
    expect(w.status, w.text).toBe(200);
    const after = await ko.pull(docOf(crown));
    expect(after.json.percentage).toBe(0.61);
    expect(after.json.device).toBe('web');
    // another user asking for the same document gets their own answer, not this one
    expect((await device(call, '', other.username, other.password).pull(docOf(crown))).json).toEqual({});
  });

  it('gives KOReader a position read on the web as an XPointer of the same place, with another device name', async () => {
    const ko = device(call, '', reader.username, reader.password);
    const w = await call('PUT', `/api/media-items/${crown.id}/progress`, { token: reader.token, body: { percentage: 0.5, epubcfi: 'epubcfi(/6/4!/4/2/1:0)', force: true } });
    expect(w.status, w.text).toBe(200);
    // the locator index derives the XPointer of the CFI's place
    expect(w.json.progress.xpointer).toMatch(/^\/body\/DocFragment\[2\]/);
    const p = await ko.pull(docOf(crown));
    expect(p.status, p.text).toBe(200);
    expect(p.json).toEqual({
      document: docOf(crown),
      percentage: w.json.progress.percentage,
      progress: w.json.progress.xpointer,
      device: 'web',
      device_id: p.json.device_id,
      timestamp: Math.floor(new Date(w.json.progress.updated_at).getTime() / 1000),
    });
    expect(p.json.device_id).toMatch(/^[0-9a-f]{32}$/);
    expect(p.json.device_id).not.toBe(ko.id);
    // a web position known only as a percentage reaches KOReader as an XPointer within 1 %: the
    // device going there and pushing it back lands on the same place
    const only = await call('PUT', `/api/media-items/${crown.id}/progress`, { token: reader.token, body: { percentage: 0.63 } });
    expect(only.status, only.text).toBe(200);
    const q = await ko.pull(docOf(crown));
    expect(q.json.percentage).toBe(0.63);
    expect(q.json.progress).toMatch(/^\/body\/DocFragment\[\d+\]\//);
    // (a wrong percentage beside the XPointer is healed from the place the XPointer names)
    const back = await ko.push(docOf(crown), q.json.progress, 0.1);
    expect(back.status, back.text).toBe(200);
    const web = await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token });
    expect(web.json.xpointer).toBe(q.json.progress);
    expect(Math.abs(web.json.percentage - 0.63)).toBeLessThanOrEqual(0.01);
    // the device turns pages again: its position is the book's
    expect((await ko.push(docOf(crown), at.crown52!, 0.52)).status).toBe(200);
    expect((await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token })).json.percentage).toBe(0.52);
  });

  it('keeps the guard: a first page from KOReader does not overwrite a later position', async () => {
    const ko = device(call, '', reader.username, reader.password);
    const r = await ko.push(docOf(crown), '/body/DocFragment[1].0', 0);
    expect(r.status, r.text).toBe(200);
    expect((await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token })).json.percentage).toBe(0.52);
    expect((await ko.pull(docOf(crown))).json.percentage).toBe(0.52);
  });

  it("opens a progress conflict when a new device's first push disagrees with a book mid-read", async () => {
    const w = await call('PUT', `/api/media-items/${garden.id}/progress`, { token: reader.token, body: { percentage: 0.4 } });
    expect(w.status, w.text).toBe(200);
    const ko = device(call, '', reader.username, reader.password, 'ffff0000ffff0000ffff0000ffff0000', 'Kindle');
    expect((await ko.push(docOf(garden), at.garden10!, 0.1)).status).toBe(200);
    expect((await call('GET', `/api/media-items/${garden.id}/progress`, { token: reader.token })).json.percentage).toBe(0.4);
    const c = await call('GET', `/api/progress-conflicts?media_item_id=${garden.id}`, { token: reader.token });
    expect(c.status, c.text).toBe(200);
    expect(c.json.data).toHaveLength(1);
    expect(c.json.data[0]).toMatchObject({ reason: 'first-push', incoming: { percentage: 0.1, client: 'koreader', device: 'Kindle ffff0000' } });
  });

  it('syncs a fixed-layout book by page number', async () => {
    const ko = device(call, '', reader.username, reader.password);
    expect((await ko.push(docOf(comic), '3', 0.3)).status).toBe(200);
    const web = await call('GET', `/api/media-items/${comic.id}/progress`, { token: reader.token });
    expect(web.json).toMatchObject({ page: 3, client: 'koreader' });
    expect((await ko.pull(docOf(comic))).json).toMatchObject({ progress: '3' });
  });

  it('stores a page past the last page of a fixed-layout book as the last page, and says so in the heal list', async () => {
    const pages = comic.page_count as number;
    expect(pages).toBeGreaterThan(2);
    const u = await register(call);
    const ko = device(call, '', u.username, u.password);
    const r = await ko.push(docOf(comic), String(pages + 5), 1);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ document: docOf(comic), timestamp: r.json.timestamp, healed: [`page: ${pages + 5} is past the last page (${pages}); moved to the last page`] });
    const web = await call('GET', `/api/media-items/${comic.id}/progress`, { token: u.token });
    expect(web.status, web.text).toBe(200);
    expect(web.json).toMatchObject({ page: pages, page_count: pages, percentage: 1, finished: true, client: 'koreader' });
    expect((await ko.pull(docOf(comic))).json).toMatchObject({ document: docOf(comic), progress: String(pages), percentage: 1 });
  });

  it('answers 200 {} for a document with no progress, keeps a push for an unknown one, and links it when the catalog announces the book', async () => {
    const ko = device(call, '', reader.username, reader.password);
    const why = readFileSync(join(FIXTURE, WHY));
    const doc = partialMd5(why);
    const none = await ko.pull(doc);
    expect(none.status, none.text).toBe(200);
    expect(none.json).toEqual({});
    const r = await ko.push(doc, XP, 0.33);
    expect(r.status, r.text).toBe(200);
    expect((await ko.pull(doc)).json).toEqual({ document: doc, percentage: 0.33, progress: XP, device: 'Kobo_frost', device_id: ko.id, timestamp: r.json.timestamp });
    const listed = await call('GET', '/api/kosync/documents?status=unlinked', { token: reader.token });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json.data.find((d: { document: string }) => d.document === doc)).toMatchObject({
      media_item_id: null,
      item: null,
      suggested_media_item_id: null,
      percentage: 0.33,
    });
    // a user who may not see the library pushes the same document: it waits for them
    const limited = await register(call);
    const g = await call('PUT', `/api/auth/users/${limited.id}/libraries`, { token: admin.token, body: { all_libraries: false, library_ids: [] } });
    expect(g.status, g.text).toBe(200);
    const koLimited = device(call, '', limited.username, limited.password, '0123456789abcdef0123456789abcdef', 'Kindle');
    expect((await koLimited.push(doc, XP, 0.2)).status).toBe(200);
    // the book arrives in the library
    mkdirSync(join(dir, 'why'), { recursive: true });
    copyFileSync(join(FIXTURE, WHY), join(dir, 'why/Why.epub'));
    await scan(call, admin.token, libraryId);
    const item = (await items(call, admin.token, libraryId)).find((i) => i.formats[0].file_path === 'why/Why.epub')!;
    expect(docOf(item)).toBe(doc);
    // no further KOReader call: the catalog's announcement links it and the stored position becomes
    // the book's, checked against the book now (the place of the XPointer in it). Distributed, at the
    // suite's busiest minutes, reading's reaction once took over 20 s to get there.
    const web = await eventually(async () => {
      const w = await call('GET', `/api/media-items/${item.id}/progress`, { token: reader.token });
      expect(w.status, w.text).toBe(200);
      return w.json;
    }, 60_000);
    expect(web).toMatchObject({ client: 'koreader', device: `Kobo_frost ${ko.id.slice(0, 8)}` });
    expect(web.xpointer).toMatch(/^\/body\/DocFragment\[3\]\//);
    expect((await call('GET', '/api/kosync/documents?status=linked', { token: reader.token })).json.data.find((d: { document: string }) => d.document === doc)).toMatchObject({
      media_item_id: item.id,
      linked_by: 'catalog',
      item: { id: item.id },
    });
    // the device is given back its own push, as it sent it
    expect((await ko.pull(doc)).json).toEqual({ document: doc, percentage: 0.33, progress: XP, device: 'Kobo_frost', device_id: ko.id, timestamp: r.json.timestamp });
    // the user without access: still unlinked, nothing suggested, no position on the book
    const waiting = await call('GET', '/api/kosync/documents?status=unlinked', { token: limited.token });
    expect(waiting.json.data.find((d: { document: string }) => d.document === doc)).toMatchObject({ media_item_id: null, suggested_media_item_id: null });
    expectError(await call('GET', `/api/media-items/${item.id}/progress`, { token: limited.token }), 404, 'media item not found');
    // granted the library later: the book is suggested, and auto link makes the stored position the book's
    const all = await call('PUT', `/api/auth/users/${limited.id}/libraries`, { token: admin.token, body: { all_libraries: true } });
    expect(all.status, all.text).toBe(200);
    const suggested = await call('GET', '/api/kosync/documents?status=unlinked', { token: limited.token });
    expect(suggested.json.data.find((d: { document: string }) => d.document === doc).suggested_media_item_id).toBe(item.id);
    const auto = await call('POST', '/api/kosync/documents/auto-link', { token: limited.token });
    expect(auto.status, auto.text).toBe(200);
    expect(auto.json).toEqual({ linked: [{ document: doc, media_item_id: item.id, status: 'saved' }], unmatched: [] });
    expect((await call('GET', `/api/media-items/${item.id}/progress`, { token: limited.token })).json).toMatchObject({ client: 'koreader', device: 'Kindle 01234567' });
  }, 120_000);

  it('links at the next pull too, without auto link', async () => {
    const u = await register(call);
    const ko = device(call, '', u.username, u.password);
    const bytes = readFileSync(join(FIXTURE, LOWERCASE));
    const doc = partialMd5(bytes);
    expect((await ko.push(doc, XP, 0.6)).status).toBe(200);
    mkdirSync(join(dir, 'lower'), { recursive: true });
    copyFileSync(join(FIXTURE, LOWERCASE), join(dir, 'lower/lowercase.epub'));
    await scan(call, admin.token, libraryId);
    const item = (await items(call, admin.token, libraryId)).find((i) => i.formats[0].file_path === 'lower/lowercase.epub')!;
    expect((await ko.pull(doc)).json).toMatchObject({ document: doc, percentage: 0.6, progress: XP, device_id: ko.id });
    const web = (await call('GET', `/api/media-items/${item.id}/progress`, { token: u.token })).json;
    expect(web).toMatchObject({ client: 'koreader', device: `Kobo_frost ${ko.id.slice(0, 8)}` });
    expect(web.xpointer).toMatch(/^\/body\/DocFragment\[3\]\//);
  });

  it('still knows a renamed file by its id, and by the md5 of its new file name', async () => {
    const ko = device(call, '', reader.username, reader.password);
    const old = docOf(crown);
    renameSync(join(dir, 'crown/The Hidden Crown.epub'), join(dir, 'crown/Hidden Crown (renamed).epub'));
    await scan(call, admin.token, libraryId);
    const again = (await items(call, admin.token, libraryId)).find((i) => i.id === crown.id)!;
    expect(again.formats[0].file_path).toBe('crown/Hidden Crown (renamed).epub');
    expect((await ko.pull(old)).json.percentage).toBe(0.52);
    // KOReader's "filename" matching: md5 of the file name
    const byName = md5('Hidden Crown (renamed).epub');
    const p = await ko.push(byName, at.crown55!, 0.55);
    expect(p.status, p.text).toBe(200);
    expect((await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token })).json.percentage).toBe(0.55);
    expect((await ko.pull(old)).json.percentage).toBe(0.55);
  });

  it('still knows a rewritten file by the id the device computed first', async () => {
    // the device that read this book before (its first push opened a conflict, above)
    const ko = device(call, '', reader.username, reader.password, 'ffff0000ffff0000ffff0000ffff0000', 'Kindle');
    const old = docOf(garden);
    // metadata embedding rewrites the file in place: new bytes, new id, same book
    const path = join(dir, 'garden/A Garden in Winter.epub');
    copyFileSync(join(FIXTURE, 'Ursula K. Lindqvist/Chronicles of the Salt Road/00 - Beneath the Paper Station.epub'), path);
    const later = new Date(Date.now() + 5000);
    utimesSync(path, later, later);
    await scan(call, admin.token, libraryId, true);
    const again = (await items(call, admin.token, libraryId)).find((i) => i.id === garden.id)!;
    expect(docOf(again)).not.toBe(old);
    // the conflict of that first push is settled on the web; the old id is still this book
    const dismiss = await call('POST', '/api/progress-conflicts/dismiss-all', { token: reader.token });
    expect(dismiss.status, dismiss.text).toBe(200);
    const r = await ko.push(old, await place(again, 0.45), 0.45);
    expect(r.status, r.text).toBe(200);
    expect((await call('GET', `/api/media-items/${garden.id}/progress`, { token: reader.token })).json).toMatchObject({ percentage: 0.45, client: 'koreader' });
    expect((await ko.pull(docOf(again))).json.percentage).toBe(0.45);
  });

  it('knows the same ids after the catalog projection is rebuilt from the log', async () => {
    const ko = device(call, '', reader.username, reader.password, 'ffff0000ffff0000ffff0000ffff0000', 'Kindle');
    const before = (await ko.pull(docOf(garden))).json;
    expect(before.percentage).toBe(0.45);
    const r = await call('POST', '/api/admin/projections/catalog/rebuild?wait=true', { token: admin.token });
    expect(r.status, r.text).toBe(200);
    // the first id of the rewritten file, and the renamed file's new name
    expect((await ko.pull(docOf(garden))).json).toEqual(before);
    expect((await ko.pull(md5('Hidden Crown (renamed).epub'))).json.percentage).toBe(0.55);
  });

  it('links by hand, in bulk, and finds candidates by search; another user sees none of it', async () => {
    const ko = device(call, '', reader.username, reader.password);
    const stray = md5('a book only this device has');
    const stray2 = md5('another book only this device has');
    expect((await ko.push(stray, XP, 0.7)).status).toBe(200);
    expect((await ko.push(stray2, XP, 0.71)).status).toBe(200);
    const cand = await call('GET', `/api/kosync/documents/${stray}/candidates?q=${encodeURIComponent('Hidden Crown')}`, { token: reader.token });
    expect(cand.status, cand.text).toBe(200);
    expect(cand.json.data.map((i: { id: string }) => i.id)).toContain(crown.id);
    expectError(await call('GET', `/api/kosync/documents/${stray}/candidates`, { token: reader.token }), 400, 'q is required');
    expectError(await call('GET', '/api/kosync/documents/not:an:id/candidates?q=x', { token: reader.token }), 400, 'document must be a KOReader document id');
    // another user: not their document, and they cannot link it
    const ko2 = device(call, '', other.username, other.password);
    expect((await ko2.pull(stray)).json).toEqual({});
    expectError(await call('PUT', `/api/kosync/documents/${stray}`, { token: other.token, body: { media_item_id: comic.id } }), 404, 'document not found');
    expect((await call('GET', '/api/kosync/documents', { token: other.token })).json.data).toEqual([]);
    // one by hand
    const one = await call('PUT', `/api/kosync/documents/${stray}`, { token: reader.token, body: { media_item_id: comic.id } });
    expect(one.status, one.text).toBe(200);
    expect(one.json.document).toMatchObject({ document: stray, media_item_id: comic.id, linked_by: 'user' });
    expect((await ko.pull(stray)).json.percentage).toBe((await call('GET', `/api/media-items/${comic.id}/progress`, { token: reader.token })).json.percentage);
    expectError(
      await call('PUT', `/api/kosync/documents/${stray}`, { token: reader.token, body: { media_item_id: '00000000-0000-4000-8000-000000000000' } }),
      404,
      'media item not found',
    );
    // in bulk
    const bulk = await call('POST', '/api/kosync/documents/link', {
      token: reader.token,
      body: {
        links: [
          { document: stray2, media_item_id: comic.id },
          { document: md5('never pushed'), media_item_id: comic.id },
        ],
      },
    });
    expect(bulk.status, bulk.text).toBe(200);
    expect(bulk.json.succeeded).toHaveLength(1);
    expect(bulk.json.failed).toEqual([{ document: md5('never pushed'), error: 'document not found' }]);
    // unlink: the document answers its own last push again
    const un = await call('PUT', `/api/kosync/documents/${stray}`, { token: reader.token, body: { media_item_id: null } });
    expect(un.status, un.text).toBe(200);
    expect(un.json.document.media_item_id).toBeNull();
    expect((await ko.pull(stray)).json).toMatchObject({ percentage: 0.7, device_id: ko.id });
    expectError(await call('GET', '/api/kosync/documents'), 401, 'authentication required');
  });

  it("keeps each user's progress for the same document apart", async () => {
    const a = device(call, '', reader.username, reader.password);
    const b = device(call, '', other.username, other.password);
    const doc = md5('shared document id');
    expect((await a.push(doc, XP, 0.11)).status).toBe(200);
    expect((await b.pull(doc)).json).toEqual({});
    expect((await b.push(doc, XP, 0.88)).status).toBe(200);
    expect((await a.pull(doc)).json.percentage).toBe(0.11);
    expect((await b.pull(doc)).json.percentage).toBe(0.88);
    // the other user reads the catalogued book for themselves: the reader's position stays the reader's
    expect((await b.pull(docOf(crown))).json).toEqual({});
  });

  it('answers every protocol error with the reference codes and changes nothing', async () => {
    const ko = device(call, '', reader.username, reader.password);
    const h = { 'x-auth-user': reader.username, 'x-auth-key': md5(reader.password) };
    const before = (await ko.pull(docOf(crown))).json;
    kosyncError(await call('PUT', '/syncs/progress', { headers: h, body: { progress: XP, percentage: 0.9, device: 'K' } }), 403, 2004, "Field 'document' not provided.");
    kosyncError(
      await call('PUT', '/syncs/progress', { headers: h, body: { document: 'a:b', progress: XP, percentage: 0.9, device: 'K' } }),
      403,
      2004,
      "Field 'document' not provided.",
    );
    kosyncError(await call('PUT', '/syncs/progress', { headers: h, body: { document: docOf(crown), progress: XP, device: 'K' } }), 403, 2003, 'Invalid request');
    kosyncError(await call('PUT', '/syncs/progress', { headers: h, body: { document: docOf(crown), progress: XP, percentage: 1.5, device: 'K' } }), 403, 2003, 'Invalid request');
    kosyncError(await call('PUT', '/syncs/progress', { headers: h, body: { document: docOf(crown), percentage: 0.9, device: 'K' } }), 403, 2003, 'Invalid request');
    kosyncError(await call('PUT', '/syncs/progress', { headers: h, body: { document: docOf(crown), progress: XP, percentage: 0.9 } }), 403, 2003, 'Invalid request');
    kosyncError(await call('PUT', '/syncs/progress', { headers: h, body: [1] }), 403, 2003, 'Invalid request');
    kosyncError(await call('PUT', '/syncs/progress', { body: { document: docOf(crown), progress: XP, percentage: 0.9, device: 'K' } }), 401, 2001, 'Unauthorized');
    kosyncError(await call('GET', `/syncs/progress/${docOf(crown)}`), 401, 2001, 'Unauthorized');
    kosyncError(await call('GET', '/syncs/progress/a:b', { headers: h }), 403, 2004, "Field 'document' not provided.");
    expect((await ko.pull(docOf(crown))).json).toEqual(before);
  });
});
