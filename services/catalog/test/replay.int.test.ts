// The fold of the catalog's log on a real PGlite: item events logged before they carried the record
// of the item's rows, and file issues logged before they carried the file's time, fold to the best
// rows their public records give.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { asTables, migrate, type NoTables, openPGlite, type Database, type Db } from '@bindery/platform';
import type { Catalog, StoredEvent } from '@bindery/contracts';
import { migrations, replayCatalog, type CatalogDb } from '../src/index';

const S = 'catalog_old_events';
let database: Database;
let db: Db<CatalogDb>;
let position = 0;
const LIB = randomUUID();
const ITEM = randomUUID();
const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-02T00:00:00.000Z';
const T2 = '2026-01-03T00:00:00.000Z';
const T3 = '2026-01-04T00:00:00.000Z';

const ev = (type: string, data: unknown, recordedAt: string): StoredEvent => ({
  id: randomUUID(),
  type,
  source: 'catalog',
  streamId: 'x',
  version: ++position,
  position,
  data,
  metadata: {},
  recordedAt,
});

const format = (path: string, sha: string, pages?: string[]): Catalog.MediaFormat => ({
  format: 'cbz',
  file_path: path,
  size: 1000,
  sha256: sha,
  partial_md5: `md5-${sha}`,
  modified_at: '2025-05-05T05:05:05.000Z',
  file_url: `/uploads/${LIB}/${path}`,
  ...(pages ? { pages } : {}),
});

const item = (formats: Catalog.MediaFormat[], known: string[], updatedAt: string, title = 'Old Comic'): Catalog.MediaItem => ({
  id: ITEM,
  library_id: LIB,
  file_path: formats[0]?.file_path ?? 'Comics/old.cbz',
  title,
  sort_title: title,
  authors: ['Someone'],
  contributors: [{ name: 'Someone', role: 'author' }],
  series: null,
  series_index: null,
  language: null,
  publisher: null,
  description: null,
  isbn: null,
  identifiers: {},
  tags: [],
  year: null,
  page_count: 2,
  reading_direction: null,
  sha256: formats[0]?.sha256 ?? null,
  partial_md5: formats[0]?.partial_md5 ?? null,
  known_sha256: known,
  formats,
  file_url: null,
  cover_url: `/api/media-items/${ITEM}/cover`,
  thumbnail_url: `/api/media-items/${ITEM}/thumbnail`,
  added_by_admin: null,
  source: 'scan',
  created_at: T0,
  updated_at: updatedAt,
});

beforeAll(async () => {
  database = await openPGlite('memory://');
  db = asTables<CatalogDb, NoTables>(database.db);
  await migrate(db, S, migrations);
});

afterAll(async () => {
  await database?.close();
});

const all = async (table: string, order: string) => (await sql.raw<Record<string, any>>(`select * from ${S}.${table} order by ${order}`).execute(db)).rows;

it('folds item events and file issues without the later fields to the best rows they hold', async () => {
  const library: Catalog.Library = {
    id: LIB,
    name: 'Old',
    folders: ['/books'],
    watch: false,
    created_by_admin: null,
    created_at: T0,
    updated_at: T0,
    last_scan_at: null,
    item_count: 0,
  };
  const log = [
    ev('catalog.library-created.v1', { library, by: null }, T0),
    ev('catalog.media-item-added.v1', { item: item([format('Comics/old.cbz', 'a', ['1.jpg', '2.jpg'])], ['a'], T0) }, T0),
    // the file moved: the old path is gone from the record
    ev('catalog.media-item-updated.v1', { item: item([format('Comics/moved/old.cbz', 'b')], ['b', 'a'], T1, 'Old Comic, Again'), cause: 'scan' }, T1),
    ev('catalog.media-item-removed.v1', { item_id: ITEM, library_id: LIB, reason: 'missing', sha256: ['b', 'a'] }, T2),
    ev(
      'catalog.file-issue-recorded.v1',
      { issue: { library_id: LIB, file_path: 'Comics/moved/old.cbz', format: 'cbz', size: 5, error: 'file could not be read: EIO', seen_at: T3 } },
      T3,
    ),
  ];
  await db.transaction().execute((trx) => replayCatalog(trx, S, log));

  const [row] = await all('media_items', 'id');
  expect(row).toMatchObject({
    id: ITEM,
    state: 'missing',
    file_path: 'Comics/old.cbz',
    group_dir: 'Comics/moved',
    group_title: 'oldcomicagain',
    title: 'Old Comic, Again',
    cover_key: 'b',
    cover_ready: false,
    version: 2,
  });
  expect(row!.missing_since.toISOString()).toBe(T2);
  expect(row!.updated_at.toISOString()).toBe(T2);

  const files = await all('media_formats', 'id');
  expect(files.map((f) => [f.rel_path, f.present, f.sha256, Number(f.mtime_ms), f.pages, f.pages_read, f.created_at.toISOString(), f.updated_at.toISOString()])).toEqual([
    ['Comics/old.cbz', false, 'a', Date.parse('2025-05-05T05:05:05.000Z'), ['1.jpg', '2.jpg'], true, T0, T1],
    ['Comics/moved/old.cbz', false, 'b', Date.parse('2025-05-05T05:05:05.000Z'), null, false, T1, T2],
  ]);

  const hashes = await all('format_hashes', 'sha256');
  expect(hashes.map((h) => [h.sha256, h.partial_md5, h.format, h.first_seen.toISOString(), h.last_seen.toISOString()])).toEqual([
    ['a', 'md5-a', 'cbz', T0, T0],
    ['b', 'md5-b', 'cbz', T1, T1],
  ]);

  // an issue without the file's time: 0, so the next scan reads the file again; the file row keeps its own
  expect((await all('file_issues', 'rel_path')).map((i) => [i.rel_path, Number(i.size), Number(i.mtime_ms)])).toEqual([['Comics/moved/old.cbz', 5, 0]]);
  expect(files.map((f) => Number(f.size))).toEqual([1000, 1000]);

  // a new file row after the replay takes the next id
  const next = await sql.raw<{ n: string }>(`select nextval(pg_get_serial_sequence('${S}.media_formats', 'id')) as n`).execute(db);
  expect(Number(next.rows[0]!.n)).toBe(Math.max(...files.map((f) => Number(f.id))) + 1);
});
