// The catalog against a careless admin and hostile files, end to end: library folders may not be
// system folders nor touch the data directory (even with LIBRARY_ROOTS=/), deleting a library
// stops its scan at once and quietly, zip-bomb comics are listed as issues, links back up a
// library's tree are not walked twice, and books without a series of their own get one from
// their folder and file names.
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes, startBindery, type Bindery, type Proc } from '../support/bindery';
import { api, expectError, expectMessage, register, type Account, type Call } from './helpers';
import { byPath, createLibrary, FIXTURE, items, settled } from './catalog-helpers';

const modes = await availableModes();
const SYSTEM = 'folder is a system folder';
const DATA = 'folder must not be, contain or lie inside the data directory';
const OUTSIDE = 'path is outside the allowed folders';
const MiB = 1024 * 1024;

const base = mkdtempSync(join(tmpdir(), 'bindery-hardening-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A real deflated zip of `size` zeros per member (kilobytes on disk), made by the zip CLI. */
function zerosZip(out: string, members: string[], size: number): void {
  const dir = mkdtempSync(join(base, 'zip-'));
  for (const m of members) execFileSync('truncate', ['-s', String(size), join(dir, m)]);
  mkdirSync(dirname(out), { recursive: true });
  execFileSync('zip', ['-q', '-9', out, ...members], { cwd: dir });
  rmSync(dir, { recursive: true, force: true });
}

/** Copies corpus files to new paths in `dir`. */
function place(dir: string, files: Record<string, string>): void {
  for (const [to, from] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, to)), { recursive: true });
    copyFileSync(join(FIXTURE, from), join(dir, to));
  }
}

describe.each(modes)('catalog scanner hardening (%s)', (mode) => {
  let b: Bindery;
  let call: Call;
  let admin: Account;
  let catalogProc: Proc;
  let dataDir: string;
  let root: string;

  beforeAll(async () => {
    root = join(base, mode);
    // the data directory sits inside a folder of its own, so "a folder that holds it" can be tried
    dataDir = join(root, 'srv', 'data');
    mkdirSync(join(dataDir, 'books'), { recursive: true });
    b = await startBindery(mode, { LIBRARY_ROOTS: '/', DATA_DIR: dataDir, LOG_LEVEL: 'info', SCAN_BATCH_SIZE: '1', SCAN_CONCURRENCY: '1', SCAN_WATCH: 'off' });
    call = api(b);
    admin = await register(call);
    catalogProc = mode === 'embedded' ? b.procs[0]! : b.procs[1]!;
  }, 120_000);
  afterAll(async () => {
    await b?.stop();
  });

  it('refuses system folders and anything touching the data directory, even with LIBRARY_ROOTS=/', async () => {
    mkdirSync(join(root, 'links'), { recursive: true });
    symlinkSync(dataDir, join(root, 'links', 'to-data'));
    symlinkSync('/etc', join(root, 'links', 'to-etc'));
    const bad = async (folder: string, message: string) =>
      expectError(await call('POST', '/api/libraries', { token: admin.token, body: { name: 'Bad', folders: [folder] } }), 400, `${message}: ${folder}`);
    for (const f of ['/', '/etc', '/etc/ssl', '/proc', '/proc/self', '/sys', '/dev', '/usr', '/root', '/boot', '/var/lib', join(root, 'links', 'to-etc')]) {
      await bad(f, SYSTEM);
    }
    await bad(dataDir, DATA);
    await bad(join(dataDir, 'books'), DATA);
    await bad(join(root, 'srv'), DATA);
    await bad(join(root, 'links', 'to-data'), DATA);
    await bad(`${dataDir}/books/..`, DATA);

    // a folder of its own is fine, and an update to a bad folder changes nothing
    mkdirSync(join(root, 'shelf'));
    const shelf = await createLibrary(call, admin.token, { name: 'Shelf', folders: [join(root, 'shelf')], watch: false });
    expectError(await call('PUT', `/api/libraries/${shelf.id}`, { token: admin.token, body: { folders: [dataDir] } }), 400, `${DATA}: ${dataDir}`);
    expectError(await call('PATCH', `/api/libraries/${shelf.id}`, { token: admin.token, body: { folders: ['/proc/self'] } }), 400, `${SYSTEM}: /proc/self`);
    const now = await call('GET', `/api/libraries/${shelf.id}`, { token: admin.token });
    expect(now.json.folders).toEqual([join(root, 'shelf')]);
    const names = (await call('GET', '/api/libraries', { token: admin.token })).json.map((l: { name: string }) => l.name);
    expect(names).toEqual(['Shelf']);
    await settled(call, admin.token, shelf.id);
    expectMessage(await call('DELETE', `/api/libraries/${shelf.id}`, { token: admin.token }), 'library deleted');
  });

  it('the folder browser offers neither the data directory nor system trees', async () => {
    const browse = (path: string) => call('GET', `/api/libraries/browse?path=${encodeURIComponent(path)}`, { token: admin.token });
    const top = await browse('/');
    expect(top.status, top.text).toBe(200);
    const names = top.json.entries.map((e: { name: string }) => e.name);
    for (const hidden of ['etc', 'proc', 'sys', 'dev', 'boot']) expect(names).not.toContain(hidden);
    const srv = await browse(join(root, 'srv'));
    expect(srv.status, srv.text).toBe(200);
    expect(srv.json.entries).toEqual([]);
    expectError(await browse(dataDir), 400, OUTSIDE);
    expectError(await browse('/etc'), 400, OUTSIDE);
    expectError(await browse('/proc/self'), 400, OUTSIDE);
  });

  it('deleting a library stops its scan at once, with no error', async () => {
    const dir = join(root, 'big');
    for (const c of ['a', 'b', 'c', 'd']) cpSync(FIXTURE, join(dir, c), { recursive: true, preserveTimestamps: true });
    const lib = await createLibrary(call, admin.token, { name: 'Big', folders: [dir], watch: false });
    const status = async () => (await call('GET', '/api/scanner/status', { token: admin.token })).json;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const mine = (await status()).scans.find((s: { library_id: string }) => s.library_id === lib.id);
      if (mine?.status === 'running' && mine.counts.added > 0) break;
      expect(mine?.status, 'the scan ended before it could be interrupted').not.toBe('completed');
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 100));
    }
    const deletedAt = Date.now();
    expectMessage(await call('DELETE', `/api/libraries/${lib.id}`, { token: admin.token }), 'library deleted');
    // the scanner lets go within seconds: its log says so, and it is free for the next library
    while (!catalogProc.output().includes('scan cancelled: library deleted')) {
      expect(Date.now() - deletedAt, 'no cancellation was logged').toBeLessThan(10_000);
      await new Promise((r) => setTimeout(r, 100));
    }
    const s = await status();
    expect(s.scans.filter((x: { library_id: string }) => x.library_id === lib.id)).toEqual([]);
    expect(s.scanning).toBe(false);
    const out = catalogProc.output();
    expect(out).not.toContain('scan failed');
    expect(out).not.toContain('foreign key');
    expect(out).not.toMatch(/"level":50/);
    const after = await createLibrary(call, admin.token, { name: 'After', folders: [join(root, 'shelf')], watch: false });
    expect((await settled(call, admin.token, after.id, undefined, 15_000)).status).toBe('completed');
    expectMessage(await call('DELETE', `/api/libraries/${after.id}`, { token: admin.token }), 'library deleted');
  }, 120_000);

  it('lists zip-bomb comics as issues instead of cataloguing them', async () => {
    const dir = join(root, 'bombs');
    zerosZip(join(dir, 'Bomb 001.cbz'), ['001.jpg', '002.jpg'], 64 * MiB);
    zerosZip(join(dir, 'Huge 001.cbz'), ['001.jpg'], 65 * MiB);
    place(dir, { 'Fine 001.cbz': 'comics/Starlight Comics/Captain Nebula/Captain Nebula 002.cbz' });
    const lib = await createLibrary(call, admin.token, { name: 'Bombs', folders: [dir], watch: false });
    expect((await settled(call, admin.token, lib.id)).status).toBe('completed');
    const list = await items(call, admin.token, lib.id);
    expect(list.flatMap((i) => i.formats.map((f: { file_path: string }) => f.file_path))).toEqual(['Fine 001.cbz']);
    const r = await call('GET', `/api/scanner/issues?library_id=${lib.id}`, { token: admin.token });
    expect(r.status, r.text).toBe(200);
    const issues = Object.fromEntries(r.json.data.map((i: { file_path: string; error: string }) => [i.file_path, i.error]));
    expect(Object.keys(issues).sort()).toEqual(['Bomb 001.cbz', 'Huge 001.cbz']);
    expect(issues['Bomb 001.cbz']).toMatch(/^not a valid CBZ: 001\.jpg inflates \d+ times its size \(a zip bomb\)$/u);
    expect(issues['Huge 001.cbz']).toBe('not a valid CBZ: 001.jpg is larger than 64 MiB');
  }, 60_000);

  it('walks a link back up the tree once and never a link out of the library', async () => {
    const dir = join(root, 'loops');
    place(dir, { 'A/book.epub': 'Thomas Whitfield/the lowercase title.epub' });
    symlinkSync(join(dir, 'A'), join(dir, 'A', 'again'));
    symlinkSync('..', join(dir, 'A', 'up'));
    symlinkSync('/etc', join(dir, 'etc'));
    const lib = await createLibrary(call, admin.token, { name: 'Loops', folders: [dir], watch: false });
    const s = await settled(call, admin.token, lib.id);
    expect(s.status).toBe('completed');
    const list = await items(call, admin.token, lib.id);
    expect(list.flatMap((i) => i.formats.map((f: { file_path: string }) => f.file_path))).toEqual(['A/book.epub']);
    expect(catalogProc.output()).not.toContain('ELOOP');
  });

  it('takes series from folder and file names when the file names none; the file wins when it does', async () => {
    const dir = join(root, 'named');
    place(dir, {
      'corrupt/bad-comicinfo.cbz': 'corrupt/bad-comicinfo.cbz',
      'Saga/Saga 003 (2012).cbz': 'corrupt/bad-comicinfo.cbz',
      'Théâtre/02 - École.azw3': 'Erik Lindgren/ÉCOLE DES FEMMES.azw3',
      'Aleksandr Petrov/01 - Straße.azw3': 'Aleksandr Petrov/Straße der Ölmühle.azw3',
      'Other Series/05 - Something Else.epub': 'Amélie Fournier/Inspector Lumière/01 - Une Clé perdue.epub',
      'Lowercase Saga/03 the lowercase title.epub': 'Thomas Whitfield/the lowercase title.epub',
      'Fahrenheit 451.mobi': 'Grace Holloway/Rock & Roll _Live_ at _The Cellar_.mobi',
    });
    const lib = await createLibrary(call, admin.token, { name: 'Named', folders: [dir], watch: false });
    expect((await settled(call, admin.token, lib.id)).status).toBe('completed');
    const list = await items(call, admin.token, lib.id);
    const at = (p: string) => {
      const i = byPath(list, p);
      expect(i, p).toBeDefined();
      return { title: i.title, series: i.series, series_index: i.series_index, year: i.year };
    };
    // malformed ComicInfo lends nothing: the title is the file name's
    expect(at('corrupt/bad-comicinfo.cbz')).toEqual({ title: 'bad-comicinfo', series: null, series_index: null, year: null });
    expect(at('Saga/Saga 003 (2012).cbz')).toEqual({ title: 'Saga 003 (2012)', series: 'Saga', series_index: 3, year: 2012 });
    expect(at('Théâtre/02 - École.azw3')).toMatchObject({ title: 'ÉCOLE DES FEMMES', series: 'Théâtre', series_index: 2 });
    // an author's own folder is no series
    expect(at('Aleksandr Petrov/01 - Straße.azw3')).toMatchObject({ title: 'Straße der Ölmühle', series: null, series_index: null });
    // the file's own series wins over its names
    expect(at('Other Series/05 - Something Else.epub')).toMatchObject({ title: 'Une Clé perdue', series: 'Inspector Lumière', series_index: 1 });
    expect(at('Lowercase Saga/03 the lowercase title.epub')).toMatchObject({ title: 'the lowercase title', series: 'Lowercase Saga', series_index: 3 });
    expect(at('Fahrenheit 451.mobi')).toMatchObject({ series: null, series_index: null });
  });
});
