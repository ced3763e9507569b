// calibre's ratings, "read" column and other custom columns (issue 44), made by Debian's calibre
// itself: the custom columns ride with the item as calibre names them (and survive a rebuild of the
// read model from the log), a change calibre makes to one is followed, and an admin's import makes
// calibre's ratings and read marks a chosen person's reading state through the reading service's
// own commands, adding only what the person does not have yet (a second run changes nothing).
// Skipped where calibredb is missing.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, eventually, instances, register, type Account, type Call } from './helpers';
import { calibredbMissing, CBZ, EPUB, EPUB2 } from './calibre-helpers';
import { createLibrary, items, scan } from './catalog-helpers';

const run = promisify(execFile);
const missing = calibredbMissing;

const ROOTS = mkdtempSync(join(tmpdir(), 'bindery-calibre-import-'));
process.env.LIBRARY_ROOTS = ROOTS;
afterAll(() => rmSync(ROOTS, { recursive: true, force: true }));

const HOSTILE = '<img src=x onerror="alert(1)">Bedside & co';

const modes = missing ? [] : await availableModes();
const get = instances(modes);

describe.skipIf(missing !== null)(`calibre's ratings, read marks and custom columns${missing ? ` — skipped: ${missing}` : ''}`, () => {
  describe.each(modes)('%s', (mode) => {
    let call: Call;
    let admin: Account;
    let reader: Account;
    let lib: string;
    let libraryId: string;
    const ids: Record<number, string> = {};
    const env = { ...process.env, QT_QPA_PLATFORM: 'offscreen', TZ: 'UTC' };
    const calibredb = async (...args: string[]) =>
      (await run('calibredb', [...args, '--library-path', lib], { env: { ...env, CALIBRE_CONFIG_DIRECTORY: join(lib, '..', 'config') } })).stdout;
    const importFor = (body: Record<string, unknown> | undefined, token = admin.token) =>
      call('POST', `/api/libraries/${libraryId}/calibre-import`, { token, ...(body ? { body } : {}) });

    beforeAll(async () => {
      call = api(await get(mode));
      admin = await register(call);
      reader = await register(call, { caller: admin.token });
      lib = join(ROOTS, mode, 'calibre');
      mkdirSync(lib, { recursive: true });
      expect(await calibredb('add', EPUB, EPUB2, CBZ)).toMatch(/Added book ids: 1, 2, 3/);
      await calibredb('add_custom_column', 'read', 'Read', 'bool');
      await calibredb('add_custom_column', 'shelf', 'My Shelf', 'text');
      await calibredb('add_custom_column', 'pages', 'Page count', 'int');
      await calibredb(
        'set_metadata',
        '1',
        '--field',
        'title:The Lost Key',
        '--field',
        'rating:3.5',
        '--field',
        '#read:true',
        '--field',
        `#shelf:${HOSTILE}`,
        '--field',
        '#pages:312',
      );
      await calibredb('set_metadata', '2', '--field', 'title:A Garden in Winter', '--field', 'rating:4', '--field', '#read:true');
      await calibredb('set_metadata', '3', '--field', '#read:false');
      libraryId = (await createLibrary(call, admin.token, { name: `Calibre import ${mode}`, folders: [lib], watch: true })).id;
      await scan(call, admin.token, libraryId);
      for (const i of await items(call, admin.token, libraryId)) ids[Number(i.identifiers.calibre)] = i.id;
      expect(Object.keys(ids).sort()).toEqual(['1', '2', '3']);
    }, 300_000);

    it("carries calibre's rating, read mark and custom columns with the item, as calibre names them", async () => {
      const one = (await call('GET', `/api/media-items/${ids[1]}`, { token: reader.token })).json;
      expect(one.calibre).toEqual({
        book_id: 1,
        rating: 7,
        read: true,
        columns: [
          { label: 'pages', name: 'Page count', type: 'int', value: 312 },
          { label: 'read', name: 'Read', type: 'bool', value: true },
          { label: 'shelf', name: 'My Shelf', type: 'text', value: HOSTILE },
        ],
      });
      const three = (await call('GET', `/api/media-items/${ids[3]}`, { token: reader.token })).json;
      expect(three.calibre).toEqual({ book_id: 3, rating: null, read: false, columns: [{ label: 'read', name: 'Read', type: 'bool', value: false }] });
    });

    it('follows a custom column calibre changes, and keeps it through a rebuild of the read model from the log', async () => {
      await calibredb('set_custom', 'shelf', '1', 'Desk');
      await eventually(async () => {
        const r = await call('GET', `/api/media-items/${ids[1]}`, { token: admin.token });
        expect(r.json.calibre.columns.find((c: { label: string }) => c.label === 'shelf')?.value).toBe('Desk');
      }, 30_000);
      const rebuilt = await call('POST', '/api/admin/projections/catalog/rebuild?wait=true', { token: admin.token });
      expect(rebuilt.status, rebuilt.text).toBeLessThan(300);
      const after = (await call('GET', `/api/media-items/${ids[1]}`, { token: admin.token })).json;
      expect(after.calibre.columns.map((c: { label: string; value: unknown }) => [c.label, c.value])).toEqual([
        ['pages', 312],
        ['read', true],
        ['shelf', 'Desk'],
      ]);
      expect(after.calibre.rating).toBe(7);
    }, 120_000);

    it("makes calibre's ratings and read marks a chosen person's reading state, adding only what they lack", async () => {
      // the reader already rates the second book and is reading it
      expect((await call('PUT', `/api/media-items/${ids[2]}/rating`, { token: reader.token, body: { rating: 2 } })).status).toBe(201);
      const mid = await call('PUT', `/api/media-items/${ids[2]}/progress`, { token: reader.token, body: { percentage: 0.4, device: 'phone' } });
      expect(mid.status, mid.text).toBe(200);

      const first = await importFor({ user_id: reader.id });
      expect(first.status, first.text).toBe(200);
      expect(first.json).toEqual({
        library_id: libraryId,
        user_id: reader.id,
        username: reader.username,
        books: 2,
        ratings: { imported: 1, already: 0, kept: 1, conflicts: 0, failed: 0 },
        read: { imported: 1, already: 0, kept: 1, conflicts: 0, failed: 0 },
        message: `calibre's ratings and read marks for ${reader.username}: 1 rating imported, 1 kept as ${reader.username} had it; 1 read mark imported, 1 kept as ${reader.username} had it`,
      });
      // calibre's 7 of 10 is 3.5 stars; the read mark a finished position, written by "calibre"
      expect((await call('GET', `/api/media-items/${ids[1]}/rating`, { token: reader.token })).json).toMatchObject({ media_item_id: ids[1], rating: 3.5 });
      expect((await call('GET', `/api/media-items/${ids[1]}/progress`, { token: reader.token })).json).toMatchObject({ percentage: 1, finished: true, device: 'calibre' });
      // what the reader had stays theirs
      expect((await call('GET', `/api/media-items/${ids[2]}/rating`, { token: reader.token })).json.rating).toBe(2);
      expect((await call('GET', `/api/media-items/${ids[2]}/progress`, { token: reader.token })).json.percentage).toBe(0.4);
      // nobody else's reading state changed
      expect((await call('GET', `/api/media-items/${ids[1]}/rating`, { token: admin.token })).status).toBe(404);

      const again = await importFor({ user_id: reader.id });
      expect(again.status, again.text).toBe(200);
      expect(again.json.ratings).toEqual({ imported: 0, already: 1, kept: 1, conflicts: 0, failed: 0 });
      expect(again.json.read).toEqual({ imported: 0, already: 1, kept: 1, conflicts: 0, failed: 0 });
      expect(again.json.message).toBe(
        `calibre's ratings and read marks for ${reader.username}: 0 ratings imported, 1 already so, 1 kept as ${reader.username} had it; 0 read marks imported, 1 already so, 1 kept as ${reader.username} had it`,
      );
    }, 60_000);

    it("defaults to the admin's own reading state", async () => {
      const mine = await importFor(undefined);
      expect(mine.status, mine.text).toBe(200);
      expect(mine.json).toMatchObject({ user_id: admin.id, username: admin.username, books: 2 });
      expect(mine.json.ratings).toEqual({ imported: 2, already: 0, kept: 0, conflicts: 0, failed: 0 });
      expect(mine.json.read).toEqual({ imported: 2, already: 0, kept: 0, conflicts: 0, failed: 0 });
      expect((await call('GET', `/api/media-items/${ids[2]}/rating`, { token: admin.token })).json.rating).toBe(4);
    }, 60_000);

    it('reports to the admin what the scan took from calibre, recorded once while nothing changes', async () => {
      const r = await call('GET', `/api/libraries/${libraryId}/calibre-report`, { token: admin.token });
      expect(r.status, r.text).toBe(200);
      expect(r.json.report).toMatchObject({
        folders: [{ folder: lib, source: 'metadata.db', books: 3, formats: 3, error: null }],
        books: 3,
        formats: 3,
        unmapped: [],
        unmapped_total: 0,
      });
      expect(r.json.report.fields).toMatchObject({ title: 3, authors: 3, rating: 2, custom_columns: 3 });
      expect(r.json.report.columns).toEqual([
        { label: 'pages', name: 'Page count', type: 'int', books: 1 },
        { label: 'read', name: 'Read', type: 'bool', books: 3 },
        { label: 'shelf', name: 'My Shelf', type: 'text', books: 1 },
      ]);
      await scan(call, admin.token, libraryId);
      const again = await call('GET', `/api/libraries/${libraryId}/calibre-report`, { token: admin.token });
      expect(again.json.recorded_at).toBe(r.json.recorded_at);
      const refused = await call('GET', `/api/libraries/${libraryId}/calibre-report`, { token: reader.token });
      expect(refused.status).toBe(403);
    }, 120_000);

    it("reads a book folder's metadata.opf (calibre's export) where there is no metadata.db, over what the file embeds", async () => {
      const out = join(ROOTS, mode, 'exported');
      mkdirSync(out, { recursive: true });
      // calibre writes the book's files as they are and its record beside them in metadata.opf
      await calibredb('export', '1', '--to-dir', out, '--dont-update-metadata', '--dont-save-cover');
      const opfLibrary = (await createLibrary(call, admin.token, { name: `Exported ${mode}`, folders: [out], watch: false })).id;
      await scan(call, admin.token, opfLibrary);
      const list = await items(call, admin.token, opfLibrary);
      expect(list.map((i) => i.title)).toEqual(['The Lost Key']);
      expect(list[0]).toMatchObject({ identifiers: expect.objectContaining({ calibre: '1' }) });
      expect(list[0]!.calibre).toMatchObject({ book_id: 1, rating: 7, read: true });
      expect(list[0]!.calibre.columns.map((c: { label: string }) => c.label)).toEqual(['pages', 'read', 'shelf']);
      const r = await call('GET', `/api/libraries/${opfLibrary}/calibre-report`, { token: admin.token });
      expect(r.json.report).toMatchObject({ folders: [{ folder: out, source: 'metadata.opf', books: 1, formats: 1, error: null }], books: 1, formats: 1 });
    }, 120_000);

    it('is an admin action, for a person who may see the library, with clear refusals', async () => {
      const refused = await importFor({ user_id: reader.id }, reader.token);
      expect(refused.status).toBe(403);
      const bad = await importFor({ user_id: 'nobody' });
      expect(bad.status).toBe(400);
      expect(bad.json.error).toBe("user_id must be a user's id");
      const odd = await importFor({ user_id: reader.id, everyone: true });
      expect(odd.status).toBe(400);
      expect(odd.json.error).toBe('unknown field: everyone');
      const ghost = await importFor({ user_id: '00000000-0000-4000-8000-000000000000' });
      expect(ghost.status).toBe(404);
      expect(ghost.json.error).toBe('user not found');
      const noLib = await call('POST', '/api/libraries/00000000-0000-4000-8000-000000000000/calibre-import', { token: admin.token, body: {} });
      expect(noLib.status).toBe(404);
      expect(noLib.json.error).toBe('library not found');
      const nul = await importFor({ user_id: `${reader.id}\u0000` });
      expect(nul.status).toBe(400);

      const other = await register(call, { caller: admin.token });
      const limited = await call('PUT', `/api/auth/users/${other.id}/libraries`, { token: admin.token, body: { all_libraries: false, library_ids: [] } });
      expect(limited.status, limited.text).toBe(200);
      const unseen = await eventually(async () => {
        const r = await importFor({ user_id: other.id });
        expect(r.status).toBe(400);
        return r;
      }, 5000);
      expect(unseen.json.error).toBe(`${other.username} may not see the library Calibre import ${mode}: give them access first`);
      expect((await call('GET', `/api/media-items/${ids[1]}/rating`, { token: other.token })).status).toBe(404);
    }, 60_000);
  });
});
