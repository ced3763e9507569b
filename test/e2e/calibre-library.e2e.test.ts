// A calibre library given to Bindery as a library folder (issue 44), made and changed by Debian's
// calibre itself: the books come in with the titles, authors, series and fractional indexes, tags,
// publisher, identifiers, languages, descriptions and covers their owner gave them in calibre, one
// item per calibre book with its formats together; a change calibre makes to metadata.db shows in
// Bindery by the watcher; a field a person set in Bindery stays theirs. Skipped where calibredb is missing.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, eventually, instances, register, type Account, type Call } from './helpers';
import { calibredbMissing, CBZ, EPUB, EPUB2 } from './calibre-helpers';
import { createLibrary, FIXTURE, items, scan } from './catalog-helpers';

const run = promisify(execFile);
const missing = calibredbMissing;

const ROOTS = mkdtempSync(join(tmpdir(), 'bindery-calibre-'));
process.env.LIBRARY_ROOTS = ROOTS;
afterAll(() => rmSync(ROOTS, { recursive: true, force: true }));

const AZW3 = join(FIXTURE, 'Aleksandr Petrov/Straße der Ölmühle.azw3');

const modes = missing ? [] : await availableModes();
const get = instances(modes);

describe.skipIf(missing !== null)(`a calibre library${missing ? ` — skipped: ${missing}` : ''}`, () => {
  describe.each(modes)('%s', (mode) => {
    let call: Call;
    let admin: Account;
    let lib: string;
    let libraryId: string;
    const env = { ...process.env, QT_QPA_PLATFORM: 'offscreen', TZ: 'UTC' };
    const calibredb = async (...args: string[]) =>
      (await run('calibredb', [...args, '--library-path', lib], { env: { ...env, CALIBRE_CONFIG_DIRECTORY: join(lib, '..', 'config') } })).stdout;
    const byTitle = async (title: string) => (await items(call, admin.token, libraryId)).find((i) => i.title === title);

    beforeAll(async () => {
      call = api(await get(mode));
      admin = await register(call);
      lib = join(ROOTS, mode, 'calibre');
      mkdirSync(lib, { recursive: true });
      expect(await calibredb('add', EPUB, EPUB2, CBZ)).toMatch(/Added book ids: 1, 2, 3/);
      await calibredb(
        'set_metadata',
        '1',
        '--field',
        'title:The Lost Key',
        '--field',
        'authors:Amélie Fournier & Jean Dupont',
        '--field',
        'series:Inspector Lumière',
        '--field',
        'series_index:2.5',
        '--field',
        'tags:Mystery,Paris',
        '--field',
        'publisher:Orchard & Sons',
        '--field',
        'identifiers:isbn:978-3-502-19460-6,goodreads:12345',
        '--field',
        'comments:<p>A <b>fine</b> book.</p><script>alert(1)</script>',
        '--field',
        'languages:fra',
      );
      await calibredb('add_format', '1', AZW3);
      libraryId = (await createLibrary(call, admin.token, { name: `Calibre ${mode}`, folders: [lib], watch: true })).id;
      await scan(call, admin.token, libraryId);
    }, 300_000);

    it('takes what the owner curated in calibre over what the files embed, one item per calibre book', async () => {
      const list = await items(call, admin.token, libraryId);
      expect(list).toHaveLength(3);
      const found = list.find((i) => i.title === 'The Lost Key');
      expect(found, JSON.stringify(list.map((i) => i.title))).toBeTruthy();
      const key = found!;
      expect(key).toMatchObject({
        authors: ['Amélie Fournier', 'Jean Dupont'],
        series: 'Inspector Lumière',
        series_index: 2.5,
        publisher: 'Orchard & Sons',
        isbn: '9783502194606',
        language: 'fr',
        description: 'A fine book.',
        locked_fields: [],
      });
      expect([...key.tags].sort()).toEqual(['Mystery', 'Paris']);
      expect(key.identifiers).toMatchObject({ isbn: '9783502194606', goodreads: '12345', calibre: '1' });
      expect(key.formats.map((f: { format: string }) => f.format).sort()).toEqual(['azw3', 'epub']);
      // calibre's cover.jpg is the book's cover
      expect(key.cover_url).toBe(`/api/media-items/${key.id}/cover`);
      const cover = await eventually(async () => {
        const r = await call('GET', key.cover_url, { token: admin.token });
        expect(r.status, r.text).toBe(200);
        return r;
      }, 10_000);
      expect(cover.headers.get('content-type')).toBe('image/jpeg');
    });

    it('follows an edit made in calibre, and keeps a field a person set in Bindery', async () => {
      const found = await byTitle('A Garden in Winter');
      expect(found, 'the second book by its calibre title').toBeTruthy();
      const garden = found!;
      const mine = await call('PATCH', `/api/media-items/${garden.id}`, { token: admin.token, body: { series: 'My Own Shelf' } });
      expect(mine.status, mine.text).toBe(200);
      await calibredb('set_metadata', '2', '--field', 'title:A Garden in Spring', '--field', 'series:The Long Winter Cycle', '--field', 'series_index:2.25');
      const after = await eventually(async () => {
        const r = await call('GET', `/api/media-items/${garden.id}`, { token: admin.token });
        expect(r.json.title).toBe('A Garden in Spring');
        return r.json;
      }, 30_000);
      expect(after).toMatchObject({ id: garden.id, series: 'My Own Shelf', series_index: 2.25, locked_fields: ['series'] });
    });
  });
});
