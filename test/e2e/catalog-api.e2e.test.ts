// The catalog's HTTP surface end to end: libraries and their folders, the legacy scan settings,
// the admin folder browser, media item create/read/update/delete and bulk operations, and a
// deleted admin's libraries and items passing to the first other admin.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, eventually, expectError, expectMessage, instances, NO_SUCH_ID, register, UUID, type Account, type Call } from './helpers';
import { byPath, createLibrary, FIXTURE, items, manifest, scan, settled } from './catalog-helpers';
import { makeItem } from './reading-helpers';

// Library folders must lie inside LIBRARY_ROOTS, and the folder browser shows nothing else. The
// instances this file starts inherit this root, so "outside the allowed folders" can be tested.
const ROOTS = mkdtempSync(join(tmpdir(), 'bindery-roots-'));
process.env.LIBRARY_ROOTS = ROOTS;
afterAll(() => rmSync(ROOTS, { recursive: true, force: true }));

const modes = await availableModes();
const get = instances(modes);
const rows = manifest();
const readable = [...rows.filter((r) => r.kind === 'book' || r.kind === 'duplicate'), ...rows.filter((r) => r.kind === 'corrupt' && r.note.startsWith('pages fine'))];
// books that are nobody's duplicate: deleting one never touches a conflict
const plain = rows.filter((r) => r.kind === 'book' && r.format === 'epub3' && !rows.some((d) => d.dup_of === r.path));
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const OUTSIDE = 'path is outside the allowed folders';
const LIMIT = 'limit must be an integer between 1 and 1000';
const SORT = 'invalid sort. must be one of: title, created_at, updated_at, series, year, author (prefix - or suffix :desc for descending)';
const INTERVAL = 'scan_poll_interval_seconds must be an integer between 1 and 3600';
const browser = new Intl.Collator('en', { sensitivity: 'base', numeric: true });
/** A library as a non-admin sees it: without its server folders. */
const pathless = (l: Record<string, unknown>) => Object.fromEntries(Object.entries(l).filter(([k]) => k !== 'folders'));

describe.each(modes)('catalog API (%s)', (mode) => {
  let call: Call;
  let admin: Account;
  let user: Account;
  /** this mode's part of the allowed root */
  let base: string;
  let corpus: Record<string, any>;
  let shelf: Record<string, any>;
  let apiItem: Record<string, any>;

  const lib = (id: string) => `/api/libraries/${id}`;
  const item = (id: string) => `/api/media-items/${id}`;

  beforeAll(async () => {
    call = api(await get(mode));
    admin = await register(call);
    user = await register(call);
    base = join(ROOTS, mode);
    cpSync(FIXTURE, join(base, 'corpus'), { recursive: true, preserveTimestamps: true });
    for (const d of ['empty', 'spare', 'owned', '.hidden-dir']) mkdirSync(join(base, d));
    writeFileSync(join(base, 'notes.txt'), 'not a folder');
    symlinkSync('/etc', join(base, 'out-link')); // leads out of the root
    symlinkSync(join(base, 'spare'), join(base, 'in-link')); // stays inside
  });

  describe('libraries', () => {
    it('creates a library (admin only) and scans its folders', async () => {
      const dir = join(base, 'corpus');
      expectError(await call('POST', '/api/libraries', { body: { name: 'X', folders: [dir] } }), 401, 'authentication required');
      expectError(await call('POST', '/api/libraries', { token: user.token, body: { name: 'X', folders: [dir] } }), 403, 'admin access required');
      expectError(await call('POST', '/api/libraries', { token: admin.token, raw: '[1]' }), 400, 'invalid request');
      expectError(await call('POST', '/api/libraries', { token: admin.token, body: { folders: [dir] } }), 400, 'name is required');
      expectError(await call('POST', '/api/libraries', { token: admin.token, body: { name: '   ', folders: [dir] } }), 400, 'name is required');
      expectError(await call('POST', '/api/libraries', { token: admin.token, body: { name: 'X', folders: [dir], watch: 'maybe' } }), 400, 'watch must be true or false');
      expectError(await call('POST', '/api/libraries', { token: admin.token, body: { name: 'X', folders: dir } }), 400, 'folders must be a list of absolute paths');

      corpus = await createLibrary(call, admin.token, { name: 'Corpus', folders: [dir], watch: false });
      expect(corpus).toEqual({
        id: expect.stringMatching(UUID),
        name: 'Corpus',
        folders: [dir],
        watch: false,
        created_by_admin: admin.id,
        created_at: expect.stringMatching(ISO),
        updated_at: corpus.created_at,
        last_scan_at: null,
        item_count: 0,
      });
      const s = await settled(call, admin.token, corpus.id);
      expect(s.status).toBe('completed');
      const r = await call('GET', lib(corpus.id), { token: admin.token });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ ...corpus, item_count: readable.length, last_scan_at: expect.stringMatching(ISO) });
      corpus = r.json;
      // a user sees the library but not where it lives on the server
      const u = await call('GET', lib(corpus.id), { token: user.token });
      expect(u.status, u.text).toBe(200);
      expect(u.json).toEqual(pathless(corpus));

      // names are cleaned, unique case-insensitively; watch defaults to true; no folders is allowed
      shelf = await createLibrary(call, admin.token, { name: '  Spare   Shelf ', folders: [] });
      expect(shelf).toMatchObject({ name: 'Spare Shelf', folders: [], watch: true, created_by_admin: admin.id, item_count: 0 });
      expectError(await call('POST', '/api/libraries', { token: admin.token, body: { name: 'corpus', folders: [] } }), 409, 'library name already exists');
      expectError(await call('POST', '/api/libraries', { token: admin.token, body: { name: ' SPARE  shelf', folders: [] } }), 409, 'library name already exists');
    });

    it('lists every library to every user, the same under /visibility', async () => {
      const r = await call('GET', '/api/libraries', { token: user.token });
      expect(r.status, r.text).toBe(200);
      expect(Array.isArray(r.json)).toBe(true);
      expect(r.json.map((l: { name: string }) => l.name)).toEqual(['Corpus', 'Spare Shelf']);
      expect(r.json[0]).toEqual(pathless(corpus));
      expect(r.json[1]).toEqual(pathless(shelf));
      const a = await call('GET', '/api/libraries', { token: admin.token });
      expect(a.json).toEqual([corpus, shelf]);
      const v = await call('GET', '/api/libraries/visibility', { token: user.token });
      expect(v.status, v.text).toBe(200);
      expect(v.json).toEqual(r.json);
      expectError(await call('GET', '/api/libraries'), 401, 'authentication required');
      expectError(await call('GET', '/api/libraries/visibility'), 401, 'authentication required');
    });

    it('reads one library: 400 invalid library id, 404 library not found', async () => {
      expectError(await call('GET', lib('nope'), { token: user.token }), 400, 'invalid library id');
      expectError(await call('GET', lib(NO_SUCH_ID), { token: user.token }), 404, 'library not found');
      const upper = await call('GET', lib(corpus.id.toUpperCase()), { token: user.token });
      expect(upper.status, upper.text).toBe(200);
      expect(upper.json.id).toBe(corpus.id);
      expectError(await call('GET', lib(corpus.id)), 401, 'authentication required');
    });

    it('refuses folders that are missing, files, relative, nested or outside the allowed roots', async () => {
      const bad = async (folders: unknown, message: string) =>
        expectError(await call('POST', '/api/libraries', { token: admin.token, body: { name: 'Bad', folders } }), 400, message);
      await bad([join(base, 'nope')], `folder does not exist: ${join(base, 'nope')}`);
      await bad([join(base, 'notes.txt')], `not a directory: ${join(base, 'notes.txt')}`);
      await bad(['relative/books'], 'folder must be an absolute path: relative/books');
      await bad([join(base, 'corpus'), join(base, 'corpus', 'inbox')], `folders must not be nested: ${join(base, 'corpus', 'inbox')} and ${join(base, 'corpus')}`);
      await bad([join(base, 'corpus', 'comics'), join(base, 'corpus')], `folders must not be nested: ${join(base, 'corpus')} and ${join(base, 'corpus', 'comics')}`);
      await bad(['/etc'], `${OUTSIDE}: /etc`);
      await bad([tmpdir()], `${OUTSIDE}: ${tmpdir()}`);
      await bad([join(base, 'out-link')], `${OUTSIDE}: ${join(base, 'out-link')}`);
      await bad([`${base}/corpus/../../..`], `${OUTSIDE}: ${base}/corpus/../../..`);
      await bad([join(base, 'spare'), 7], 'folders must be a list of absolute paths');
      // nothing was created by any of them
      const names = (await call('GET', '/api/libraries', { token: admin.token })).json.map((l: { name: string }) => l.name);
      expect(names).toEqual(['Corpus', 'Spare Shelf']);

      // the same folder twice (or through a symlink inside the root) counts once
      const twice = await createLibrary(call, admin.token, { name: 'Twice', folders: [join(base, 'spare'), `${join(base, 'spare')}/`, join(base, 'in-link')], watch: false });
      expect(twice.folders).toEqual([join(base, 'spare')]);
      await settled(call, admin.token, twice.id);
      expectMessage(await call('DELETE', lib(twice.id), { token: admin.token }), 'library deleted');

      // an update with a bad folder changes nothing
      expectError(await call('PUT', lib(shelf.id), { token: admin.token, body: { name: 'Renamed', folders: ['/etc'] } }), 400, `${OUTSIDE}: /etc`);
      expect((await call('GET', lib(shelf.id), { token: admin.token })).json).toEqual(shelf);
    });

    it('updates a library with PUT or PATCH (admin only); new folders are scanned', async () => {
      expectError(await call('PUT', lib(shelf.id), { token: user.token, body: { name: 'Mine' } }), 403, 'admin access required');
      expectError(await call('PATCH', lib(shelf.id), { token: user.token, body: { name: 'Mine' } }), 403, 'admin access required');
      expectError(await call('PUT', lib('nope'), { token: admin.token, body: { name: 'Mine' } }), 400, 'invalid library id');
      expectError(await call('PUT', lib(NO_SUCH_ID), { token: admin.token, body: { name: 'Mine' } }), 404, 'library not found');
      expectError(await call('PUT', lib(shelf.id), { token: admin.token, body: { name: '' } }), 400, 'name is required');
      expectError(await call('PATCH', lib(shelf.id), { token: admin.token, body: { watch: 3 } }), 400, 'watch must be true or false');
      expectError(await call('PUT', lib(shelf.id), { token: admin.token, body: { name: 'CORPUS' } }), 409, 'library name already exists');

      const renamed = await call('PUT', lib(shelf.id), { token: admin.token, body: { name: 'Shelf  Two' } });
      expect(renamed.status, renamed.text).toBe(200);
      expect(renamed.json).toMatchObject({ id: shelf.id, name: 'Shelf Two', folders: [], watch: true, created_by_admin: admin.id });
      expect(renamed.json.updated_at > shelf.updated_at).toBe(true);
      // renaming to its own name in another case is no conflict
      expect((await call('PATCH', lib(shelf.id), { token: admin.token, body: { name: 'shelf two' } })).json.name).toBe('shelf two');

      const patched = await call('PATCH', lib(shelf.id), { token: admin.token, body: { watch: false, folders: [join(base, 'empty')] } });
      expect(patched.status, patched.text).toBe(200);
      expect(patched.json).toMatchObject({ name: 'shelf two', folders: [join(base, 'empty')], watch: false, item_count: 0 });
      const s = await settled(call, admin.token, shelf.id);
      expect(s).toMatchObject({ library_id: shelf.id, reason: 'library-changed', status: 'completed' });
      shelf = (await call('GET', lib(shelf.id), { token: admin.token })).json;
      expect(shelf.last_scan_at).toMatch(ISO);
    });

    it('keeps the scan poll interval in the system settings (legacy scan-settings)', async () => {
      const setting = async () => {
        const r = await call('GET', '/api/system/settings', { token: admin.token });
        expect(r.status, r.text).toBe(200);
        return r.json.settings.find((e: { key: string }) => e.key === 'scan_poll_interval_seconds');
      };
      expectError(await call('GET', '/api/libraries/scan-settings', { token: user.token }), 403, 'admin access required');
      expectError(await call('PUT', '/api/libraries/scan-settings', { token: user.token, body: { scan_poll_interval_seconds: 5 } }), 403, 'admin access required');
      expectError(await call('GET', '/api/libraries/scan-settings'), 401, 'authentication required');
      let r = await call('GET', '/api/libraries/scan-settings', { token: admin.token });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ scan_poll_interval_seconds: 60 });

      for (const v of [0, 3601, -5, 1.5, 'abc', '', null, true]) {
        expectError(await call('PUT', '/api/libraries/scan-settings', { token: admin.token, body: { scan_poll_interval_seconds: v } }), 400, INTERVAL);
      }
      expectError(await call('PUT', '/api/libraries/scan-settings', { token: admin.token, body: {} }), 400, 'invalid request');
      expect((await setting()).value).toBe(60);

      r = await call('PUT', '/api/libraries/scan-settings', { token: admin.token, body: { scan_poll_interval_seconds: '120' } });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ scan_poll_interval_seconds: 120, message: 'scan settings updated' });
      expect(await setting()).toMatchObject({ value: 120, is_default: false, min: 1, max: 3600 });
      expect((await call('GET', '/api/libraries/scan-settings', { token: admin.token })).json).toEqual({ scan_poll_interval_seconds: 120 });
      for (const v of [1, 3600]) {
        r = await call('PUT', '/api/libraries/scan-settings', { token: admin.token, form: { scan_poll_interval_seconds: String(v) } });
        expect(r.status, r.text).toBe(200);
        expect((await setting()).value).toBe(v);
      }
      // and the other way: the system setting is what the legacy route reads
      expect((await call('PUT', '/api/system/settings', { token: admin.token, body: { scan_poll_interval_seconds: 45 } })).status).toBe(200);
      expect((await call('GET', '/api/libraries/scan-settings', { token: admin.token })).json).toEqual({ scan_poll_interval_seconds: 45 });
    });
  });

  describe('folder browser', () => {
    const browse = (path?: string, token = admin.token) => call('GET', `/api/libraries/browse${path === undefined ? '' : `?path=${encodeURIComponent(path)}`}`, { token });

    it('starts at the allowed roots and lists folders only (admin only)', async () => {
      expectError(await browse(undefined, user.token), 403, 'admin access required');
      expectError(await call('GET', '/api/libraries/browse'), 401, 'authentication required');
      let r = await browse();
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ path: null, parent: null, entries: [{ name: ROOTS, path: ROOTS, readable: true }], truncated: false });

      r = await browse(base);
      expect(r.status, r.text).toBe(200);
      // no files, no hidden folders, no symlink that leads out; one that stays inside is shown
      expect(r.json).toEqual({
        path: base,
        parent: ROOTS,
        entries: ['corpus', 'empty', 'in-link', 'owned', 'spare'].map((name) => ({ name, path: join(base, name), readable: true })),
        truncated: false,
      });

      r = await browse(`${base}/corpus/`);
      expect(r.status, r.text).toBe(200);
      const dirs = readdirSync(FIXTURE, { withFileTypes: true })
        .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
        .map((d) => d.name);
      expect(dirs.length).toBeGreaterThan(10);
      expect(r.json.path).toBe(join(base, 'corpus'));
      expect(r.json.parent).toBe(base);
      expect(r.json.entries.map((e: { name: string }) => e.name)).toEqual(dirs.sort(browser.compare));
      expect(r.json.entries.every((e: { name: string; path: string }) => e.path === join(base, 'corpus', e.name))).toBe(true);

      r = await browse(ROOTS);
      expect(r.json).toMatchObject({ path: ROOTS, parent: null });
      expect(r.json.entries.map((e: { name: string }) => e.name)).toContain(mode);
      // a dotted path inside the root is tidied
      expect((await browse(`${base}/corpus/../empty`)).json).toEqual({ path: join(base, 'empty'), parent: base, entries: [], truncated: false });
    });

    it('refuses paths outside the roots, however they are spelled', async () => {
      for (const p of [
        '/',
        '/etc',
        tmpdir(),
        `${ROOTS}/..`,
        `${base}/../../`,
        `${base}/corpus/../../../etc`,
        join(base, 'out-link'),
        join(base, 'out-link', 'ssl'),
        `${ROOTS}/../${ROOTS.split('/').pop()}x`,
      ]) {
        const r = await browse(p);
        expectError(r, 400, OUTSIDE);
        expect(r.text).not.toContain('passwd');
      }
      // a traversal that only seems to stay inside is still judged by its real place
      const sneaky = await call('GET', `/api/libraries/browse?path=${base}/corpus/..%2f..%2f..%2fetc`, { token: admin.token });
      expectError(sneaky, 400, OUTSIDE);
      expectError(await browse('corpus'), 400, 'folder must be an absolute path');
      expectError(await browse('../etc'), 400, 'folder must be an absolute path');
      expectError(await browse(join(base, 'nope')), 400, 'folder does not exist');
      expectError(await browse(join(base, 'notes.txt')), 400, 'not a directory');
      // nothing outside can be probed for existence: a missing path outside is "outside", too
      expectError(await browse('/no/such/place'), 400, OUTSIDE);
    });
  });

  describe('media items', () => {
    let list: Record<string, any>[];

    it('lists items: {data} only, limit and offset, validated parameters', async () => {
      const r = await call('GET', `/api/media-items?library_id=${corpus.id}&limit=1000`, { token: user.token });
      expect(r.status, r.text).toBe(200);
      expect(Object.keys(r.json)).toEqual(['data']);
      list = r.json.data;
      expect(list).toHaveLength(readable.length);
      expect(list.every((i) => i.library_id === corpus.id)).toBe(true);

      const page = async (q: string) => {
        const p = await call('GET', `/api/media-items?library_id=${corpus.id}&${q}`, { token: user.token });
        expect(p.status, p.text).toBe(200);
        return p.json.data.map((i: { id: string }) => i.id);
      };
      const first = await page('limit=5');
      const second = await page('limit=5&offset=5');
      expect([...first, ...second]).toEqual(list.slice(0, 10).map((i) => i.id));
      expect(await page(`offset=${list.length}`)).toEqual([]);
      expect(await page(`limit=1000&offset=${list.length - 1}`)).toEqual([list[list.length - 1]!.id]);
      // a library nobody has, or one with nothing in it
      expect((await call('GET', `/api/media-items?library_id=${NO_SUCH_ID}`, { token: user.token })).json).toEqual({ data: [] });
      expect((await call('GET', `/api/media-items?library_id=${shelf.id}`, { token: user.token })).json).toEqual({ data: [] });

      const bad = async (q: string, message: string) => expectError(await call('GET', `/api/media-items?${q}`, { token: user.token }), 400, message);
      await bad('library_id=nope', 'invalid library id');
      await bad(`library_id=${corpus.id}x`, 'invalid library id');
      for (const l of ['0', '1001', 'abc', '-1', '2.5']) await bad(`limit=${l}`, LIMIT);
      for (const o of ['-1', 'x']) await bad(`offset=${o}`, 'offset must be a non-negative integer');
      for (const s of ['size', '--title', 'title:up', 'ti tle']) await bad(`sort=${encodeURIComponent(s)}`, SORT);
      expectError(await call('GET', '/api/media-items'), 401, 'authentication required');
    });

    it('reads one item: 400 invalid media item id, 404 media item not found; no download route', async () => {
      const one = list[0]!;
      const r = await call('GET', item(one.id), { token: user.token });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual(one);
      expect((await call('GET', item(one.id.toUpperCase()), { token: user.token })).json.id).toBe(one.id);
      expectError(await call('GET', item('nope'), { token: user.token }), 400, 'invalid media item id');
      expectError(await call('GET', item(NO_SUCH_ID), { token: user.token }), 404, 'media item not found');
      expectError(await call('GET', item(one.id)), 401, 'authentication required');
      // the download route is not registered, for anyone
      expectError(await call('GET', `${item(one.id)}/download`, { token: admin.token }), 404, 'not found');
      expectError(await call('GET', `${item(one.id)}/download`, { token: user.token }), 404, 'not found');
    });

    it('creates an item through the API (admin only), normalising tags and contributors', async () => {
      const body = {
        library_id: shelf.id,
        title: '  The   Analytical  Engine ',
        authors: ['  Ada   Lovelace ', 'ada lovelace', { name: 'Charles Babbage' }],
        contributors: [
          { name: 'L. F. Menabrea', role: 'Translator' },
          { name: 'l. f.  menabrea', role: 'translator' },
        ],
        tags: ['  Sci   Fi ', 'sci fi', 'Maths', 'MATHS ', ''],
        series: ' Engines ',
        series_index: 1.5,
        language: 'en',
        year: '1843',
        file_path: 'engines/analytical.epub',
      };
      expectError(await call('POST', '/api/media-items', { token: user.token, body }), 403, 'admin access required');
      expectError(await call('POST', '/api/media-items', { body }), 401, 'authentication required');
      const bad = async (changes: Record<string, unknown>, status: number, message: string) =>
        expectError(await call('POST', '/api/media-items', { token: admin.token, body: { ...body, ...changes } }), status, message);
      const bare = await createLibrary(call, admin.token, { name: 'No Folders', folders: [] });
      await bad({ library_id: bare.id }, 400, 'library has no folders');
      await bad({ library_id: undefined }, 400, 'library_id is required');
      await bad({ library_id: 'nope' }, 400, 'invalid library id');
      await bad({ library_id: NO_SUCH_ID }, 404, 'library not found');
      await bad({ title: undefined }, 400, 'title is required');
      await bad({ title: ' \t ' }, 400, 'title is required');
      await bad({ year: 10000 }, 400, 'year must be an integer between 0 and 9999');
      await bad({ tags: 'x' }, 400, 'tags must be a list of strings');
      await bad({ authors: [1] }, 400, 'authors must be a list of names or {name, role} objects');
      await bad({ file_path: '../escape.epub' }, 400, 'file_path must be a relative path inside the library');
      await bad({ file_path: '/etc/passwd' }, 400, 'file_path must be a relative path inside the library');
      expectError(await call('POST', '/api/media-items', { token: admin.token, raw: '{"title":' }), 400, 'invalid request');
      expect((await call('GET', `/api/media-items?library_id=${shelf.id}`, { token: admin.token })).json).toEqual({ data: [] });

      const r = await call('POST', '/api/media-items', { token: admin.token, body });
      expect(r.status, r.text).toBe(201);
      apiItem = r.json;
      expect(apiItem).toMatchObject({
        id: expect.stringMatching(UUID),
        library_id: shelf.id,
        title: 'The Analytical Engine',
        sort_title: 'analytical engine',
        authors: ['Ada Lovelace', 'Charles Babbage'],
        contributors: [
          { name: 'Ada Lovelace', role: 'author' },
          { name: 'Charles Babbage', role: 'author' },
          { name: 'L. F. Menabrea', role: 'translator' },
        ],
        tags: ['Sci Fi', 'Maths'],
        series: 'Engines',
        series_index: 1.5,
        language: 'en',
        year: 1843,
        file_path: 'engines/analytical.epub',
        formats: [],
        added_by_admin: admin.id,
        source: 'api',
        created_at: expect.stringMatching(ISO),
      });
      expect((await call('GET', item(apiItem.id), { token: user.token })).json).toEqual(apiItem);
      expect((await call('GET', `/api/media-items?library_id=${shelf.id}`, { token: user.token })).json).toEqual({ data: [apiItem] });
      expect((await call('GET', lib(shelf.id), { token: user.token })).json.item_count).toBe(1);
      expectMessage(await call('DELETE', lib(bare.id), { token: admin.token }), 'library deleted');
    });

    it('updates an item (editors only: a plain user is refused), normalising again and returning its search fields', async () => {
      const put = (id: string, body: unknown, token = admin.token, method = 'PUT') => call(method, item(id), { token, body });
      expectError(await put(apiItem.id, { title: 'X' }, user.token), 403, 'metadata editing access required');
      expectError(await put('nope', { title: 'X' }), 400, 'invalid media item id');
      expectError(await put(NO_SUCH_ID, { title: 'X' }), 404, 'media item not found');
      expectError(await put(apiItem.id, { title: '' }), 400, 'title is required');
      expectError(await put(apiItem.id, { reading_direction: 'up' }), 400, "reading_direction must be 'ltr', 'rtl' or null");
      expectError(await put(apiItem.id, { year: 'soon' }), 400, 'year must be an integer between 0 and 9999');
      expectError(await put(apiItem.id, { series_index: 'first' }), 400, 'series_index must be a number');
      expect((await call('GET', item(apiItem.id), { token: admin.token })).json).toEqual(apiItem);

      const r = await put(apiItem.id, {
        title: 'Notes  on the   Engine',
        authors: [' Ada  Lovelace', 'ADA LOVELACE'],
        tags: ['History', ' history ', 'Computing'],
        publisher: '  Taylor   ',
        reading_direction: 'ltr',
      });
      expect(r.status, r.text).toBe(200);
      const expected = {
        title: 'Notes on the Engine',
        sort_title: 'notes on the engine',
        authors: ['Ada Lovelace'],
        // authors replace the author role only: the translator stays
        contributors: [
          { name: 'Ada Lovelace', role: 'author' },
          { name: 'L. F. Menabrea', role: 'translator' },
        ],
        tags: ['History', 'Computing'],
        series: 'Engines',
        series_index: 1.5,
        language: 'en',
        publisher: 'Taylor',
        year: 1843,
      };
      expect(r.json.search_fields).toEqual(expected);
      expect(r.json).toMatchObject({ ...expected, id: apiItem.id, reading_direction: 'ltr' });
      expect(r.json.updated_at > apiItem.updated_at).toBe(true);
      const { search_fields: _sf, ...stored } = r.json;
      expect((await call('GET', item(apiItem.id), { token: user.token })).json).toEqual(stored);

      // PATCH changes only what it names; null clears
      const p = await put(apiItem.id, { year: null, series: null, contributors: [{ name: 'Ada Lovelace' }, { name: 'Ada  Lovelace', role: 'editor' }] }, admin.token, 'PATCH');
      expect(p.status, p.text).toBe(200);
      expect(p.json.search_fields).toEqual({
        ...expected,
        year: null,
        series: null,
        contributors: [
          { name: 'Ada Lovelace', role: 'author' },
          { name: 'Ada Lovelace', role: 'editor' },
        ],
      });
      apiItem = (await call('GET', item(apiItem.id), { token: admin.token })).json;
      expect(apiItem.title).toBe('Notes on the Engine');
    });

    it('deletes an item (admin only) but not its file, and a rescan does not bring it back', async () => {
      const gone = byPath(list, plain[0]!.path);
      const edited = byPath(list, plain[1]!.path);
      expectError(await call('DELETE', item(gone.id), { token: user.token }), 403, 'admin access required');
      expectError(await call('DELETE', item('nope'), { token: admin.token }), 400, 'invalid media item id');
      expectError(await call('DELETE', item(NO_SUCH_ID), { token: admin.token }), 404, 'media item not found');
      expectMessage(await call('DELETE', item(gone.id), { token: admin.token }), 'media item deleted');
      expectError(await call('GET', item(gone.id), { token: user.token }), 404, 'media item not found');
      expectError(await call('DELETE', item(gone.id), { token: admin.token }), 404, 'media item not found');
      expect(existsSync(join(base, 'corpus', plain[0]!.path))).toBe(true);
      // an edit of a scanned item survives the rescan too
      expect((await call('PUT', item(edited.id), { token: admin.token, body: { title: 'Edited Title' } })).status).toBe(200);

      const s = await scan(call, admin.token, corpus.id);
      expect(s.status).toBe('completed');
      expect(s.counts).toMatchObject({ added: 0, relinked: 0 });
      const after = await items(call, admin.token, corpus.id);
      expect(byPath(after, plain[0]!.path)).toBeUndefined();
      expect(after).toHaveLength(readable.length - 1);
      expect(byPath(after, plain[1]!.path)).toMatchObject({ id: edited.id, title: 'Edited Title' });
      expect((await call('GET', lib(corpus.id), { token: user.token })).json.item_count).toBe(readable.length - 1);
      list = after;
    });

    it('books made all at once while their new library is first scanned: every one made (no deadlock)', async () => {
      for (let round = 0; round < 3; round++) {
        const lib = await createLibrary(call, admin.token, { name: `Busy shelf ${mode} ${round}`, folders: [mkdtempSync(join(ROOTS, 'busy-'))], watch: false });
        const made = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            call('POST', '/api/media-items', { token: admin.token, body: { library_id: lib.id, title: `Busy ${round}.${i}`, authors: ['B. Usy'] } }),
          ),
        );
        expect(made.map((r) => (r.status === 201 ? 201 : `${r.status} ${r.text}`))).toEqual(made.map(() => 201));
        expect((await call('DELETE', `/api/libraries/${lib.id}`, { token: admin.token })).status).toBe(200);
      }
    });

    it('a bulk edit of 250 books goes through in transactions of 100: every one edited, reported in the order asked', async () => {
      const folder = mkdtempSync(join(ROOTS, 'bulk-'));
      const lr = { json: await createLibrary(call, admin.token, { name: `Bulk shelf ${mode}`, folders: [folder], watch: false }) };
      const made: string[] = [];
      for (let i = 0; i < 250; i++) made.push((await makeItem(call, admin, lr.json.id, { title: `Bulk ${i}`, authors: ['B. Ulk'] })).id as string);
      // an unknown id in the second transaction, an invalid one before everything
      const ids = ['bad', ...made.slice(0, 150), NO_SUCH_ID, ...made.slice(150)];
      const r = await call('POST', '/api/media-items/bulk-update', { token: admin.token, body: { ids, changes: { add_tags: ['Bulk Tag'], publisher: 'Bulk Press' } } });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({
        message: '250 media items updated, 2 failed',
        succeeded: made,
        failed: [
          { id: 'bad', error: 'invalid media item id' },
          { id: NO_SUCH_ID, error: 'media item not found' },
        ],
      });
      await eventually(async () => {
        const all = await call('GET', `/api/media-items?library_id=${lr.json.id}&limit=1000`, { token: admin.token });
        expect(all.status, all.text).toBe(200);
        const edited = (all.json.data as { publisher: string | null; tags: string[] }[]).filter((x) => x.publisher === 'Bulk Press' && x.tags.includes('Bulk Tag'));
        expect(edited.length).toBe(250);
      });
      expect((await call('DELETE', `/api/libraries/${lr.json.id}`, { token: admin.token })).status).toBe(200);
    });

    it('bulk-updates items with partial success, adding and removing tags', async () => {
      const bulk = (body: unknown, token = admin.token) => call('POST', '/api/media-items/bulk-update', { token, body });
      const [a, b] = [byPath(list, plain[2]!.path), byPath(list, plain[3]!.path)];
      expect(a.tags.length).toBeGreaterThan(0);
      const dropped = a.tags[0] as string;
      expectError(await bulk({ ids: [a.id], changes: { language: 'xx' } }, user.token), 403, 'metadata editing access required');
      expectError(await bulk({ ids: [], changes: { language: 'xx' } }), 400, 'ids must be a non-empty list of media item ids');
      expectError(await bulk({ changes: { language: 'xx' } }), 400, 'ids must be a non-empty list of media item ids');
      expectError(await bulk({ ids: [a.id] }), 400, 'changes must be an object');
      expectError(await bulk({ ids: [a.id], changes: {} }), 400, 'changes has no field to update');
      expectError(await bulk({ ids: [a.id], changes: { title: ' ' } }), 400, 'title is required');
      expectError(await bulk({ ids: [a.id], changes: { add_tags: 'x' } }), 400, 'add_tags must be a list of strings');

      const r = await bulk({
        ids: [a.id, b.id.toUpperCase(), NO_SUCH_ID, 'nope', a.id],
        changes: { add_tags: ['  To   Read ', 'to read'], remove_tags: [` ${dropped.toUpperCase()} `], language: 'xx' },
      });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({
        message: '2 media items updated, 2 failed',
        succeeded: [a.id, b.id],
        failed: [
          { id: NO_SUCH_ID, error: 'media item not found' },
          { id: 'nope', error: 'invalid media item id' },
        ],
      });
      const na = (await call('GET', item(a.id), { token: user.token })).json;
      expect(na.tags).toEqual([...a.tags.filter((t: string) => t !== dropped), 'To Read']);
      expect(na.language).toBe('xx');
      expect(na.title).toBe(a.title);
      const nb = (await call('GET', item(b.id), { token: user.token })).json;
      expect(nb.tags).toEqual([...b.tags.filter((t: string) => t.toLowerCase() !== dropped.toLowerCase()), 'To Read']);

      // tags given outright replace the list, then add_tags joins it, normalised
      const replaced = await bulk({ ids: [a.id], changes: { tags: ['One', ' one '], add_tags: ['ONE', 'Two'] } });
      expect(replaced.json).toEqual({ message: '1 media items updated', succeeded: [a.id], failed: [] });
      expect((await call('GET', item(a.id), { token: user.token })).json.tags).toEqual(['One', 'Two']);

      // new authors replace the writer of a comic, not its penciller
      const comic = byPath(list, 'comics/Starlight Comics/Captain Nebula/Captain Nebula 002.cbz');
      expect(comic.contributors).toEqual([
        { name: 'Dana Whitaker', role: 'writer' },
        { name: 'Marco Bellini', role: 'penciller' },
      ]);
      expect((await bulk({ ids: [comic.id], changes: { authors: ['  Nova  Reyes '] } })).json.succeeded).toEqual([comic.id]);
      expect((await call('GET', item(comic.id), { token: user.token })).json).toMatchObject({
        authors: ['Nova Reyes'],
        contributors: [
          { name: 'Nova Reyes', role: 'author' },
          { name: 'Marco Bellini', role: 'penciller' },
        ],
      });
    });

    it('bulk-deletes items with partial success, leaving their files', async () => {
      const bulk = (body: unknown, token = admin.token) => call('POST', '/api/media-items/bulk-delete', { token, body });
      const [a, b] = [byPath(list, plain[2]!.path), byPath(list, plain[3]!.path)];
      expectError(await bulk({ ids: [a.id] }, user.token), 403, 'admin access required');
      expectError(await bulk({ ids: 'all' }), 400, 'ids must be a non-empty list of media item ids');
      expectError(await bulk({ ids: [] }), 400, 'ids must be a non-empty list of media item ids');
      expect((await call('GET', item(a.id), { token: user.token })).status).toBe(200);

      const r = await bulk({ ids: [a.id, b.id.toUpperCase(), NO_SUCH_ID, 'nope', a.id] });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({
        message: '2 media items deleted, 2 failed',
        succeeded: [a.id, b.id],
        failed: [
          { id: NO_SUCH_ID, error: 'media item not found' },
          { id: 'nope', error: 'invalid media item id' },
        ],
      });
      for (const x of [a, b]) expectError(await call('GET', item(x.id), { token: user.token }), 404, 'media item not found');
      for (const p of [plain[2]!.path, plain[3]!.path]) expect(existsSync(join(base, 'corpus', p))).toBe(true);
      expect(await items(call, admin.token, corpus.id)).toHaveLength(readable.length - 3);

      const again = await bulk({ ids: [a.id] });
      expect(again.json).toEqual({ message: '0 media items deleted, 1 failed', succeeded: [], failed: [{ id: a.id, error: 'media item not found' }] });
    });
  });

  it('deleting a library removes it and its items, never its files', async () => {
    const some = (await items(call, admin.token, corpus.id))[0]!;
    expectError(await call('DELETE', lib(corpus.id), { token: user.token }), 403, 'admin access required');
    expectError(await call('DELETE', lib('nope'), { token: admin.token }), 400, 'invalid library id');
    expectError(await call('DELETE', lib(NO_SUCH_ID), { token: admin.token }), 404, 'library not found');
    expectMessage(await call('DELETE', lib(corpus.id), { token: admin.token }), 'library deleted');
    expectError(await call('GET', lib(corpus.id), { token: user.token }), 404, 'library not found');
    expectError(await call('DELETE', lib(corpus.id), { token: admin.token }), 404, 'library not found');
    expectError(await call('PUT', lib(corpus.id), { token: admin.token, body: { name: 'Back' } }), 404, 'library not found');
    expectError(await call('GET', item(some.id), { token: user.token }), 404, 'media item not found');
    expect((await call('GET', `/api/media-items?library_id=${corpus.id}`, { token: user.token })).json).toEqual({ data: [] });
    expect((await call('GET', '/api/libraries', { token: user.token })).json.map((l: { id: string }) => l.id)).toEqual([shelf.id]);
    for (const r of readable) expect(existsSync(join(base, 'corpus', r.path)), r.path).toBe(true);
    // the API item of the other library is untouched, and the name is free again
    expect((await call('GET', item(apiItem.id), { token: user.token })).json).toEqual(apiItem);
    const again = await createLibrary(call, admin.token, { name: 'Corpus', folders: [] });
    expect(again.id).not.toBe(corpus.id);
    expectMessage(await call('DELETE', lib(again.id), { token: admin.token }), 'library deleted');
  });

  it("a deleted admin's libraries and items go to the first other admin", async () => {
    const second = await register(call, { role: 'admin', caller: admin.token });
    const third = await register(call, { role: 'admin', caller: admin.token });
    const owned = await createLibrary(call, second.token, { name: 'Owned', folders: [join(base, 'owned')], watch: false });
    expect(owned.created_by_admin).toBe(second.id);
    await settled(call, admin.token, owned.id);
    const made = await call('POST', '/api/media-items', { token: second.token, body: { library_id: owned.id, title: 'Kept Book' } });
    expect(made.status, made.text).toBe(201);
    expect(made.json.added_by_admin).toBe(second.id);

    // the third admin deletes the second: the first admin (oldest) inherits, not the one deleting
    expectMessage(await call('DELETE', `/api/auth/profile/${second.id}`, { token: third.token }), 'user account deleted successfully');
    await eventually(async () => {
      expect((await call('GET', lib(owned.id), { token: user.token })).json.created_by_admin).toBe(admin.id);
      expect((await call('GET', item(made.json.id), { token: user.token })).json.added_by_admin).toBe(admin.id);
    }, 10_000);
    // what the others own is untouched
    expect((await call('GET', lib(shelf.id), { token: user.token })).json.created_by_admin).toBe(admin.id);
    expect((await call('GET', item(apiItem.id), { token: user.token })).json.added_by_admin).toBe(admin.id);
    // and the library still works for the admins that remain
    const renamed = await call('PUT', lib(owned.id), { token: third.token, body: { name: 'Inherited' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.json).toMatchObject({ name: 'Inherited', created_by_admin: admin.id, item_count: 1 });
  });
});
