// Library access per user (docs/decisions.md, "Library access"): an admin grants libraries; every
// read surface shows a user only those; a revocation holds from the very next request.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, expectError, instances, NO_SUCH_ID, putSettings, register, type Account, type Call } from './helpers';
import { createLibrary, FIXTURE, items, settled, uploadUrl } from './catalog-helpers';

const modes = await availableModes();
const get = instances(modes);

const ACCESS_UPDATED = 'library access updated';

describe.each(modes)('library access (%s)', (mode) => {
  let call: Call;
  let admin: Account;
  let reader: Account;
  let open: Record<string, any>;
  let comics: Record<string, any>;
  let comicItems: Record<string, any>[];
  let openItems: Record<string, any>[];
  const dirs: string[] = [];

  const granted = (r: { status: number; json: any; text: string }) => {
    expect(r.status, r.text).toBe(200);
    expect(r.json.message).toBe(ACCESS_UPDATED);
  };
  const grant = (user: Account, body: unknown, token = admin.token) => call('PUT', `/api/auth/users/${user.id}/libraries`, { token, body: body as Record<string, unknown> });

  beforeAll(async () => {
    call = api(await get(mode));
    admin = await register(call);
    reader = await register(call);
    const a = mkdtempSync(join(tmpdir(), 'bindery-open-'));
    const c = mkdtempSync(join(tmpdir(), 'bindery-comics-'));
    dirs.push(a, c);
    for (const d of ['Grace Holloway', 'Thomas Whitfield']) cpSync(join(FIXTURE, d), join(a, d), { recursive: true, preserveTimestamps: true });
    cpSync(join(FIXTURE, 'comics'), c, { recursive: true, preserveTimestamps: true });
    open = await createLibrary(call, admin.token, { name: 'Open shelf', folders: [a], watch: false });
    comics = await createLibrary(call, admin.token, { name: 'Comics', folders: [c], watch: false });
    await settled(call, admin.token, open.id);
    await settled(call, admin.token, comics.id);
    openItems = await items(call, admin.token, open.id);
    comicItems = await items(call, admin.token, comics.id);
    expect(openItems.length).toBe(2);
    expect(comicItems.length).toBe(6);
  });
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  /** Everything the reader can learn about the comics library, through every read route. */
  async function readerSeesComics(token = reader.token): Promise<string[]> {
    const leaks: string[] = [];
    const libs = await call('GET', '/api/libraries', { token });
    if (libs.json.some((l: { id: string }) => l.id === comics.id)) leaks.push('GET /api/libraries');
    const vis = await call('GET', '/api/libraries/visibility', { token });
    if (vis.json.some((l: { id: string }) => l.id === comics.id)) leaks.push('visibility');
    if ((await call('GET', `/api/libraries/${comics.id}`, { token })).status !== 404) leaks.push('GET library');
    const list = await call('GET', '/api/media-items?limit=1000', { token });
    if (list.json.data.some((i: { library_id: string }) => i.library_id === comics.id)) leaks.push('list');
    if ((await call('GET', `/api/media-items?library_id=${comics.id}`, { token })).json.data.length) leaks.push('list by library');
    const one = comicItems[0]!;
    if ((await call('GET', `/api/media-items/${one.id}`, { token })).status !== 404) leaks.push('one item');
    if ((await call('GET', `/api/media-items/${one.id}/cover`, { token })).status !== 404) leaks.push('cover');
    const found = await call('GET', '/api/media-items/search?q=Midnight&series_filter=Midnight%20Agency&authors=Ruth&series=Mid', { token });
    if (found.json.total !== 0 || found.json.data.length) leaks.push('search');
    if (found.json.suggestions.authors.includes('Ruth Okafor') || found.json.suggestions.series.includes('The Midnight Agency')) leaks.push('autocomplete');
    if ((await call('GET', uploadUrl(comics.id, one.file_path), { token })).status !== 404) leaks.push('uploads');
    return leaks;
  }

  it('lets every user see every library by default, and an admin always', async () => {
    expect(await readerSeesComics()).toEqual([
      'GET /api/libraries',
      'visibility',
      'GET library',
      'list',
      'list by library',
      'one item',
      'cover',
      'search',
      'autocomplete',
      'uploads',
    ]);
    const r = await call('GET', `/api/auth/users/${reader.id}/libraries`, { token: admin.token });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ user_id: reader.id, all_libraries: true, library_ids: [] });
  });

  it('grants libraries: the very next read of every route shows only those', async () => {
    const r = await grant(reader, { all_libraries: false, library_ids: [open.id] });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ message: ACCESS_UPDATED, user_id: reader.id, all_libraries: false, library_ids: [open.id] });
    expect(await readerSeesComics()).toEqual([]);
    // what is granted is still there, in full
    const libs = await call('GET', '/api/libraries', { token: reader.token });
    expect(libs.json.map((l: { id: string }) => l.id)).toEqual([open.id]);
    const list = await call('GET', '/api/media-items?limit=1000', { token: reader.token });
    expect(list.json.data.map((i: { id: string }) => i.id).sort()).toEqual(openItems.map((i) => i.id).sort());
    const file = await call('GET', uploadUrl(open.id, openItems[0]!.file_path), { token: reader.token });
    expect(file.status).toBe(200);
    // the admin's view does not change
    expect((await items(call, admin.token, comics.id)).length).toBe(6);
    const g = await call('GET', `/api/auth/users/${reader.id}/libraries`, { token: admin.token });
    expect(g.json).toEqual({ user_id: reader.id, all_libraries: false, library_ids: [open.id] });
  });

  it('gives access back when it is granted again', async () => {
    granted(await grant(reader, { all_libraries: true }));
    expect((await readerSeesComics()).length).toBe(10);
    granted(await grant(reader, { library_ids: [] }));
    const libs = await call('GET', '/api/libraries', { token: reader.token });
    expect(libs.json).toEqual([]);
    expect((await call('GET', '/api/media-items', { token: reader.token })).json).toEqual({ data: [] });
  });

  it('checks the grant: admin only, a known user, library ids that exist', async () => {
    expectError(await grant(reader, { all_libraries: true }, reader.token), 403, 'admin access required');
    expectError(await call('GET', `/api/auth/users/${reader.id}/libraries`, { token: reader.token }), 403, 'admin access required');
    expectError(await call('PUT', `/api/auth/users/not-a-uuid/libraries`, { token: admin.token, body: { all_libraries: true } }), 400, 'invalid user id');
    expectError(await call('GET', `/api/auth/users/${NO_SUCH_ID}/libraries`, { token: admin.token }), 404, 'user not found');
    expectError(await call('PUT', `/api/auth/users/${NO_SUCH_ID}/libraries`, { token: admin.token, body: { all_libraries: true } }), 404, 'user not found');
    expectError(await grant(reader, { library_ids: [NO_SUCH_ID] }), 400, `library not found: ${NO_SUCH_ID}`);
    expectError(await grant(reader, { library_ids: ['x'] }), 400, 'library_ids must be a list of library ids');
    expectError(await grant(reader, { all_libraries: 'yes' }), 400, 'all_libraries must be true or false');
    expectError(await grant(reader, {}), 400, 'all_libraries or library_ids is required');
    expectError(await call('PUT', `/api/auth/users/${reader.id}/libraries`, { token: admin.token, raw: '[1]' }), 400, 'invalid request');
  });

  it('a new account sees no library until granted, when the setting says so', async () => {
    expect((await putSettings(call, admin.token, { new_users_see_all_libraries: false })).status).toBe(200);
    const late = await register(call);
    expect(await call('GET', '/api/libraries', { token: late.token }).then((r) => r.json)).toEqual([]);
    expect((await call('GET', '/api/media-items', { token: late.token })).json).toEqual({ data: [] });
    granted(await grant(late, { library_ids: [comics.id] }));
    expect((await call('GET', '/api/media-items?limit=100', { token: late.token })).json.data.length).toBe(6);
    expect((await putSettings(call, admin.token, { new_users_see_all_libraries: true })).status).toBe(200);
  });

  it('never shows a revoked library to a read that starts after the revocation answered, under load', async () => {
    const victim = await register(call);
    let revokedAt = 0;
    let stop = false;
    const leaks: string[] = [];
    let reads = 0;
    const readLoop = async () => {
      while (!stop) {
        const started = Date.now();
        const r = await call('GET', '/api/media-items?limit=1000', { token: victim.token });
        reads += 1;
        const sawComics = r.json.data.some((i: { library_id: string }) => i.library_id === comics.id);
        if (sawComics && revokedAt && started > revokedAt) leaks.push(`read started ${started - revokedAt} ms after the revocation`);
      }
    };
    const loops = [readLoop(), readLoop(), readLoop(), readLoop()];
    await new Promise((res) => setTimeout(res, 300));
    const r = await grant(victim, { all_libraries: false, library_ids: [open.id] });
    revokedAt = Date.now();
    expect(r.status, r.text).toBe(200);
    await new Promise((res) => setTimeout(res, 700));
    stop = true;
    await Promise.all(loops);
    expect(reads).toBeGreaterThan(8);
    expect(leaks).toEqual([]);
  });
});
