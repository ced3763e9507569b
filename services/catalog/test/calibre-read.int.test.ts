// The calibre reader against libraries made by Debian's calibre itself (`calibredb add`,
// `set_metadata`, `add_format`, `add_custom_column`, `set_custom`, `backup_metadata`, `remove`):
// every field exactly, two formats one book, custom columns, the OPF backup read into the same
// record, what changed since a watermark, a database held by a writer, and broken databases.
// Skipped with the reason where calibredb is not installed.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CalibreError, type CalibreBook, changedSince, isCalibreLibrary, readCalibreLibrary, readOpf, toBookMetadata } from '../src/calibre/index';
import { calibreFiles, calibreReadOf, forgetCalibreReads } from '../src/scanner/calibre-overlay';

const run = promisify(execFile);
const REPO = join(import.meta.dirname, '../../..');
const CORPUS = join(REPO, 'test/fixtures/corpus40');
const SAMPLES = join(REPO, '../shared/peers/samples/books');

function which(cmd: string): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v "$1"', 'sh', cmd], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}
const missing = which('calibredb') ? (which('python3') ? null : 'python3 is not installed (it holds the database open)') : 'calibredb is not installed (apt-get install calibre)';

const EPUB = join(CORPUS, 'Amélie Fournier/Inspector Lumière/01 - Une Clé perdue.epub');
const EPUB2 = join(CORPUS, 'Erik Lindgren/The Long Winter Cycle/02 - A Garden in Winter.epub');
const CBZ = join(CORPUS, 'comics/Himmelsverlag/Die Wolkenpiraten/Die Wolkenpiraten 001 (2009).cbz');
// a PDF made by the shared corpus tools when the shared folder is beside the repo, else an AZW3 of the corpus
const SAMPLE_PDF = existsSync(SAMPLES) ? readdirSync(SAMPLES).find((n) => n.startsWith('Na') && n.endsWith('.pdf')) : undefined;
const SECOND = SAMPLE_PDF ? join(SAMPLES, SAMPLE_PDF) : join(CORPUS, 'Aleksandr Petrov/Straße der Ölmühle.azw3');
const SECOND_FORMAT = SAMPLE_PDF ? 'pdf' : 'azw3';

const COMMENTS = '<div><p>A <b>fine</b> &amp; curious book.</p><script>alert("x")</script><p>Second&nbsp;part.</p></div>';

describe.skipIf(missing !== null)(`reading a calibre library${missing ? ` — skipped: ${missing}` : ''}`, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'calibre-read-'));
  const lib = join(tmp, 'library');
  const env = { ...process.env, QT_QPA_PLATFORM: 'offscreen', CALIBRE_CONFIG_DIRECTORY: join(tmp, 'config'), TZ: 'UTC' };
  const calibredb = async (...args: string[]): Promise<string> => (await run('calibredb', [...args, '--library-path', lib], { env, maxBuffer: 64 << 20 })).stdout;
  /** calibre's own view of every book, the oracle for the fields it lists */
  const calibreList = async (): Promise<Record<string, unknown>[]> => JSON.parse(await calibredb('list', '--fields', 'all', '--for-machine')) as Record<string, unknown>[];
  let ids: number[] = [];

  beforeAll(async () => {
    const added = await calibredb('add', EPUB, EPUB2, CBZ);
    ids = (/Added book ids: ([\d, ]+)/.exec(added)?.[1] ?? '').split(',').map((s) => Number(s.trim()));
    expect(ids).toEqual([1, 2, 3]);
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
      'tags:Mystery,Paris,Cozy',
      '--field',
      'rating:3.5',
      '--field',
      'publisher:Orchard & Sons',
      '--field',
      'identifiers:isbn:978-3-502-19460-6,goodreads:12345,amazon:B00TEST42',
      '--field',
      `comments:${COMMENTS}`,
      '--field',
      'languages:fra,eng',
      '--field',
      'pubdate:1999-06-15',
    );
    await calibredb('add_format', '1', SECOND);
    await calibredb('add_custom_column', 'read', 'Read', 'bool');
    await calibredb('add_custom_column', 'shelf', 'My Shelf', 'text');
    await calibredb('set_custom', 'read', '1', 'true');
    await calibredb('set_custom', 'shelf', '1', 'Bedside table');
    await calibredb('set_custom', 'read', '3', 'false');
    await calibredb('backup_metadata', '--all');
  }, 240_000);
  afterAll(() => execFileSync('rm', ['-rf', tmp]));

  it('is known as a calibre library by its metadata.db', () => {
    expect(isCalibreLibrary(lib)).toBe(true);
    expect(isCalibreLibrary(CORPUS)).toBe(false);
  });

  it('reads every field calibre holds for an edited book exactly', async () => {
    const { books, notes } = await readCalibreLibrary(lib);
    expect(notes).toEqual([]);
    expect(books.map((b) => b.id)).toEqual([1, 2, 3]);
    const uuid = (await calibreList()).find((b) => b.id === 1)!.uuid as string;
    const book = books[0]!;
    const folder = 'Amelie Fournier/The Lost Key (1)';
    expect(book).toEqual({
      id: 1,
      uuid,
      path: folder,
      formats: [
        { format: 'epub', path: `${folder}/The Lost Key - Amelie Fournier.epub`, size: statSync(EPUB).size },
        { format: SECOND_FORMAT, path: `${folder}/The Lost Key - Amelie Fournier.${SECOND_FORMAT}`, size: statSync(SECOND).size },
      ],
      title: 'The Lost Key',
      // calibredb set_metadata leaves the sort fields as they were at import: calibre's value is what we keep
      title_sort: 'Une Clé perdue',
      authors: [
        { name: 'Amélie Fournier', sort: 'Fournier, Amélie' },
        { name: 'Jean Dupont', sort: 'Dupont, Jean' },
      ],
      author_sort: 'Fournier, Amélie',
      series: 'Inspector Lumière',
      series_index: 2.5,
      tags: ['Mystery', 'Paris', 'Cozy'],
      publisher: 'Orchard & Sons',
      languages: ['fr', 'en'],
      identifiers: { isbn: '9783502194606', goodreads: '12345', amazon: 'B00TEST42' },
      description: 'A fine & curious book.\nSecond part.',
      year: 1999,
      rating: 7,
      has_cover: true,
      cover_path: `${folder}/cover.jpg`,
      added_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/),
      last_modified: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/),
      custom: [
        { label: 'read', name: 'Read', type: 'bool', value: true, is_read: true },
        { label: 'shelf', name: 'My Shelf', type: 'text', value: 'Bedside table', is_read: false },
      ],
    } satisfies CalibreBook);
    for (const f of book.formats) expect(existsSync(join(lib, f.path)), f.path).toBe(true);
    expect(existsSync(join(lib, book.cover_path!))).toBe(true);
    expect(book.description).not.toContain('alert');
  });

  it('agrees with calibredb list on every book', async () => {
    const { books } = await readCalibreLibrary(lib);
    const listed = await calibreList();
    expect(books).toHaveLength(listed.length);
    for (const c of listed) {
      const b = books.find((x) => x.id === c.id)!;
      expect(b.uuid).toBe(c.uuid);
      expect(b.title).toBe(c.title);
      expect(b.authors.map((a) => a.name).join(' & ')).toBe(c.authors);
      expect(b.author_sort).toBe(c.author_sort);
      expect(b.series).toBe(c.series ?? null);
      expect(b.series_index).toBe(c.series ? c.series_index : null);
      expect(b.tags).toEqual(c.tags);
      expect(b.publisher).toBe(c.publisher ?? null);
      expect(b.languages).toEqual(((c.languages as string[] | undefined) ?? []).map((l) => Intl.getCanonicalLocales(l)[0]));
      // the catalog keeps an ISBN as digits; calibre keeps it as typed
      const ids = c.identifiers as Record<string, string>;
      expect(b.identifiers).toEqual(ids.isbn ? { ...ids, isbn: ids.isbn.replace(/-/g, '') } : ids);
      expect(b.rating).toBe(c.rating ?? null);
      const year = c.pubdate ? Number(String(c.pubdate).slice(0, 4)) : null;
      expect(b.year).toBe(year === 101 ? null : year); // 0101-01-01 is calibre's "no date"
      expect(b.formats.map((f) => join(lib, f.path)).sort()).toEqual([...(c.formats as string[])].sort());
      expect(b.cover_path ? join(lib, b.cover_path) : undefined).toBe(c.cover);
      expect(b.last_modified!.replace(/\.\d+/, '')).toBe(c.last_modified);
      expect(b.added_at!.replace(/\.\d+/, '')).toBe(c.timestamp);
      expect(b.custom.find((v) => v.label === 'read')?.value).toBe(c['*read'] ?? undefined);
    }
    const comic = books.find((b) => b.id === 3)!;
    expect(comic.formats.map((f) => f.format)).toEqual(['cbz']);
    expect(comic.custom).toEqual([{ label: 'read', name: 'Read', type: 'bool', value: false, is_read: true }]);
  });

  it('gives the scan calibre fields as book metadata', async () => {
    const { books } = await readCalibreLibrary(lib);
    const m = toBookMetadata(books[0]!);
    expect(m).toEqual({
      title: 'The Lost Key',
      contributors: [
        { name: 'Amélie Fournier', role: 'author' },
        { name: 'Jean Dupont', role: 'author' },
      ],
      series: 'Inspector Lumière',
      series_index: 2.5,
      language: 'fr',
      publisher: 'Orchard & Sons',
      description: 'A fine & curious book.\nSecond part.',
      identifiers: { isbn: '9783502194606', goodreads: '12345', amazon: 'B00TEST42', uuid: books[0]!.uuid, calibre: '1' },
      isbn: '9783502194606',
      subjects: ['Mystery', 'Paris', 'Cozy'],
      year: 1999,
      page_count: null,
      reading_direction: null,
    });
  });

  it("reads each book folder's metadata.opf into the same record", async () => {
    const { books } = await readCalibreLibrary(lib);
    for (const b of books) {
      const opf = await readOpf(join(lib, b.path, 'metadata.opf'), lib);
      // an OPF has no file sizes, one file-as for every author and second-precision dates, and
      // calibre writes its own interface language into the OPF of a book that has none
      expect({ ...opf, formats: opf.formats.map((f) => f.path), authors: opf.authors.map((a) => a.name), added_at: null, last_modified: null }).toEqual({
        ...b,
        formats: b.formats.map((f) => f.path).sort(),
        authors: b.authors.map((a) => a.name),
        languages: b.languages.length > 0 ? b.languages : opf.languages,
        added_at: null,
        last_modified: null,
      });
      expect(opf.added_at).toBe(b.added_at!.replace(/\.\d+/, ''));
    }
    const alone = await readOpf(join(lib, books[0]!.path, 'metadata.opf'));
    expect(alone.path).toBe('');
    expect(alone.formats.map((f) => f.path)).toEqual(['The Lost Key - Amelie Fournier.epub', `The Lost Key - Amelie Fournier.${SECOND_FORMAT}`].sort());
    expect(alone.cover_path).toBe('cover.jpg');
  });

  it('never writes into the calibre library', async () => {
    const before = snapshot(lib);
    await readCalibreLibrary(lib);
    await changedSince(lib, null, [1, 2, 3, 4]);
    await readOpf(join(lib, 'Amelie Fournier/The Lost Key (1)/metadata.opf'), lib);
    expect(snapshot(lib)).toEqual(before);
  });

  it('waits for a writer holding the database, then reads; gives up with a clear error past its budget', async () => {
    const holder = holdWriteLock(join(lib, 'metadata.db'), 1.5);
    await holder.locked;
    const t0 = performance.now();
    const { books } = await readCalibreLibrary(lib);
    const waited = performance.now() - t0;
    expect(books).toHaveLength(3);
    expect(waited).toBeGreaterThan(1000);
    expect(waited).toBeLessThan(8000);
    expect(await holder.done).toBe(0);

    const long = holdWriteLock(join(lib, 'metadata.db'), 3);
    await long.locked;
    const err = await readCalibreLibrary(lib, { busyBudgetMs: 400 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CalibreError);
    expect((err as CalibreError).code).toBe('busy');
    expect((err as CalibreError).message).toBe(`calibre library ${lib}: metadata.db stayed locked by another program for 400 ms`);
    expect(await long.done).toBe(0);
  });

  it('reads while calibre writes, and calibre is never locked out', async () => {
    const writing = calibredb('set_metadata', '2', '--field', 'tags:Travel,Thriller,Winter', '--field', 'publisher:Lantern Books Ltd');
    let reads = 0;
    let finished = false;
    void writing.finally(() => (finished = true));
    while (!finished || reads === 0) {
      const { books } = await readCalibreLibrary(lib);
      expect(books).toHaveLength(3);
      reads++;
      await sleep(5); // let the child's exit be seen
    }
    await writing;
    const { books } = await readCalibreLibrary(lib);
    expect(books[1]!.tags).toEqual(['Travel', 'Thriller', 'Winter']);
    expect(books[1]!.publisher).toBe('Lantern Books Ltd');
  });

  it('re-reads only what calibre changed since a watermark, and names the deleted books', async () => {
    const first = await readCalibreLibrary(lib);
    const none = await changedSince(lib, first.last_modified, [1, 2, 3]);
    expect(none).toEqual({ books: [], deleted: [], ids: [1, 2, 3], last_modified: first.last_modified, notes: [] });

    await calibredb('set_metadata', '2', '--field', 'title:A Garden in Spring', '--field', 'series_index:2.25');
    await calibredb('remove', '3');
    const changes = await changedSince(lib, first.last_modified, [1, 2, 3]);
    expect(changes.books.map((b) => [b.id, b.title, b.series, b.series_index])).toEqual([[2, 'A Garden in Spring', 'The Long Winter Cycle', 2.25]]);
    expect(changes.deleted).toEqual([3]);
    expect(changes.ids).toEqual([1, 2]);
    expect(changes.last_modified).toBe(changes.books[0]!.last_modified);
    expect((await changedSince(lib, changes.last_modified, changes.ids)).books).toEqual([]);
    const everything = await changedSince(lib, null);
    expect(everything.books.map((b) => b.id)).toEqual([1, 2]);
  });

  it("the scanner's reads: every book once, then only what calibre changed; a metadata.db put back from a backup is read whole", async () => {
    const root = join(tmp, 'scanned');
    cpSync(lib, root, { recursive: true });
    const backup = join(tmp, 'metadata-before.db');
    cpSync(join(root, 'metadata.db'), backup);
    const at = async () => {
      const warnings: string[] = [];
      const files = await calibreFiles([root], (m) => warnings.push(m));
      expect(warnings).toEqual([]);
      return new Map([...files].map(([path, { book }]) => [path, book.title]));
    };
    forgetCalibreReads();
    const first = await at();
    expect(calibreReadOf(root)).toEqual({ books: 2, fetched: 2 });
    expect(await at()).toEqual(first);
    expect(calibreReadOf(root)).toEqual({ books: 2, fetched: 0 });
    await run('calibredb', ['set_metadata', '1', '--field', 'title:The Found Key', '--library-path', root], { env });
    const changed = await at();
    expect(calibreReadOf(root)).toEqual({ books: 2, fetched: 1 });
    expect([...new Set(changed.values())].sort()).toEqual(['A Garden in Spring', 'The Found Key']);
    // the owner puts an older metadata.db back: its books are older than the last change seen
    cpSync(backup, join(root, 'metadata.db'));
    expect([...(await at()).values()].sort()).toEqual([...first.values()].sort());
    expect(calibreReadOf(root)).toEqual({ books: 2, fetched: 2 });
    forgetCalibreReads();
  });

  it('answers a corrupt, truncated, foreign or missing metadata.db with a clear error', async () => {
    const broken = (name: string, fill: (db: string) => void): string => {
      const root = join(tmp, name);
      cpSync(lib, root, { recursive: true });
      fill(join(root, 'metadata.db'));
      return root;
    };
    const garbage = broken('garbage', (db) => writeFileSync(db, Buffer.alloc(64 * 1024, 'not sqlite at all ')));
    await expect(readCalibreLibrary(garbage)).rejects.toThrow(
      expect.objectContaining({ name: 'CalibreError', code: 'corrupt', message: `calibre library ${garbage}: metadata.db cannot be read (file is not a database)` }),
    );
    const truncated = broken('truncated', (db) => {
      const size = statSync(db).size;
      execFileSync('truncate', ['-s', String(Math.floor(size / 3)), db]);
    });
    await expect(readCalibreLibrary(truncated)).rejects.toThrow(
      expect.objectContaining({ name: 'CalibreError', code: 'corrupt', message: `calibre library ${truncated}: metadata.db cannot be read (database disk image is malformed)` }),
    );
    const foreign = broken('foreign', (db) => {
      execFileSync('rm', [db]);
      execFileSync('python3', ['-c', 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("create table notes(x)"); c.commit()', db]);
    });
    await expect(readCalibreLibrary(foreign)).rejects.toThrow(
      expect.objectContaining({ name: 'CalibreError', code: 'not-calibre', message: `calibre library ${foreign}: metadata.db is not a calibre database (no such table: books)` }),
    );
    const none = join(tmp, 'none');
    await expect(readCalibreLibrary(none)).rejects.toThrow(expect.objectContaining({ code: 'missing', message: `${none} is not a calibre library: it has no metadata.db` }));
    await expect(readOpf(join(garbage, 'metadata.db'))).rejects.toThrow(expect.objectContaining({ code: 'corrupt' }));
  });

  it('keeps a hostile metadata.db inside the library and reports what it skipped', async () => {
    const root = join(tmp, 'hostile');
    cpSync(lib, root, { recursive: true });
    const py = [
      'import sqlite3,sys',
      'c=sqlite3.connect(sys.argv[1])',
      'c.create_function("title_sort",1,lambda t:t)',
      'c.execute("update books set path=\'../../etc\' where id=1")',
      'c.execute("update data set name=\'../../../passwd\' where book=2")',
      'c.execute("update books set title=? where id=2", ("Bad\\x00Title\\x07",))',
      'c.execute("insert into languages(lang_code) values (\'<script>\')")',
      'c.execute("insert into books_languages_link(book,lang_code,item_order) values (2,(select max(id) from languages),1)")',
      'c.commit()',
    ].join('\n');
    execFileSync('python3', ['-c', py, join(root, 'metadata.db')]);
    const { books, notes } = await readCalibreLibrary(root);
    expect(books.map((b) => b.id)).toEqual([2]);
    expect(books[0]!.formats).toEqual([]);
    expect(books[0]!.title).toBe('BadTitle');
    expect(books[0]!.languages).toEqual(['en']);
    expect(notes).toEqual([
      { book_id: 1, field: 'path', reason: 'its folder "../../etc" is not inside the library' },
      { book_id: 2, field: 'languages', reason: '"<script>" is not a language code' },
      { book_id: 2, field: 'formats', reason: 'the "EPUB" file "../../../passwd.epub" is not a file of the book\'s folder' },
    ]);
  });
});

/** Every file under `dir` with its size and modification time. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const p = join(e.parentPath, e.name);
    const s = statSync(p);
    out[p] = e.isFile() ? `${s.size} ${s.mtimeMs}` : 'dir';
  }
  return out;
}

/** A separate process (Python's sqlite3, as another program writing would) holding an exclusive
 * write transaction on the database for `seconds`, then committing. */
function holdWriteLock(db: string, seconds: number): { locked: Promise<void>; done: Promise<number | null> } {
  const py =
    'import sqlite3,sys,time\nc=sqlite3.connect(sys.argv[1],isolation_level=None)\nc.execute("BEGIN EXCLUSIVE")\nprint("locked",flush=True)\ntime.sleep(float(sys.argv[2]))\nc.execute("COMMIT")';
  const child = spawn('python3', ['-c', py, db, String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const locked = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder exited with ${code} before locking`)));
  });
  const done = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { locked, done };
}
