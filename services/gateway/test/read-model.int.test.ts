// The read models on a real PGlite and the in-memory bus: folded from the log, rebuilt from it with
// the same result, and refolded when a projection's definition (its version) changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { asTables, createLogger, EventStore, eventStoreMigrations, MemoryBus, migrate, openPGlite, type Database, type NoTables } from '@bindery/platform';
import type { Catalog } from '@bindery/contracts';
import { migrations, SCHEMA } from '../src/projections/migrations';
import { ReadModels } from '../src/read-model/read-model';
import { CATALOG, IDENTITY } from '../src/read-model/tables';
import { CatalogView } from '../src/read-model/catalog-view';
import type { GatewayDb } from '../src/read-model/database';

let database: Database;
let bus: MemoryBus;
let store: EventStore<NoTables>;
const log = createLogger('test', 'silent');
const LIB = randomUUID();

const library = (name: string): Catalog.Library => ({
  id: LIB,
  name,
  folders: ['/books'],
  watch: true,
  created_by_admin: null,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  last_scan_at: null,
  item_count: 0,
});
const item = (title: string, author: string): Catalog.MediaItem => ({
  id: randomUUID(),
  library_id: LIB,
  file_path: `${title}.epub`,
  title,
  sort_title: title.toLowerCase(),
  authors: [author],
  contributors: [{ name: author, role: 'author' }],
  series: null,
  series_index: null,
  language: 'en',
  publisher: null,
  description: null,
  isbn: null,
  identifiers: {},
  tags: ['x'],
  year: 2001,
  page_count: null,
  reading_direction: null,
  sha256: 'a'.repeat(64),
  partial_md5: null,
  known_sha256: ['a'.repeat(64)],
  formats: [
    { format: 'epub', file_path: `${title}.epub`, size: 10, sha256: 'a'.repeat(64), partial_md5: null, modified_at: null, file_url: `/uploads/library-${LIB}/${title}.epub` },
  ],
  file_url: `/uploads/library-${LIB}/${title}.epub`,
  cover_url: null,
  thumbnail_url: null,
  added_by_admin: null,
  source: 'scan',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
});

async function append(type: string, data: unknown): Promise<void> {
  await database.db.transaction().execute((trx) => store.append(trx, randomUUID(), 'any', [{ type, data }]));
  store.notify();
}

const all = { all: true } as const;

beforeAll(async () => {
  database = await openPGlite('memory://');
  for (const s of ['catalog', 'identity']) await migrate(database.db, s, eventStoreMigrations);
  await migrate(database.db, SCHEMA, migrations);
  bus = new MemoryBus();
  store = new EventStore(database.db, 'catalog');
  await bus.attachSource(store);
  await bus.attachSource(new EventStore(database.db, 'identity'));
  await append('catalog.library-created.v1', { library: library('Shelf'), by: null });
  for (const [t, a] of [
    ['Alpha', 'Ann Writer'],
    ['Beta', 'Bob Penman'],
    ['Gamma', 'Cyd Author'],
  ])
    await append('catalog.media-item-added.v1', { item: item(t!, a!) });
});

afterAll(async () => {
  await bus.close();
  await database.close();
});

describe('read models', () => {
  it('fold the log, rebuild it into the same answers, and refold on a new version', async () => {
    const db = asTables<GatewayDb, NoTables>(database.db);
    const view = new CatalogView(db);
    const first = new ReadModels(db, bus, log, true, [CATALOG, IDENTITY]);
    await first.start();
    const head = await store.headPosition();
    expect(await first.waitFor('catalog', head, 5000)).toBe(true);
    const list = async () => {
      const r = await view.list(all, {});
      if (!r.ok) throw new Error('list failed');
      return JSON.parse(r.value).data.map((i: { title: string }) => i.title);
    };
    expect(await list()).toEqual(['Alpha', 'Beta', 'Gamma']);
    const search = await view.search(all, { author_filter: 'Bob Penmann' });
    expect(search.ok && JSON.parse(search.value).data.map((i: { title: string }) => i.title)).toEqual(['Beta']);

    // a rebuild from the log gives the same answers, and keeps up with events that arrive meanwhile
    const r = first.rebuild('catalog');
    expect(r.status).toBe('started');
    expect(first.rebuild('catalog').status).toBe('busy');
    await append('catalog.media-item-added.v1', { item: item('Delta', 'Dee Scribe') });
    await r.done;
    expect(await first.waitFor('catalog', await store.headPosition(), 5000)).toBe(true);
    expect(await list()).toEqual(['Alpha', 'Beta', 'Delta', 'Gamma']);
    expect(first.rebuild('nope').status).toBe('unknown');
    await first.stop();

    // junk that no event explains disappears when the definition's version changes
    await sql`insert into ${sql.table(`${SCHEMA}.cv_items`)} (id, library_id, sort_title, title, authors, tags, formats, has_cover, created_at, updated_at, doc)
      values (${randomUUID()}, ${LIB}, 'zzz', 'Junk', '[]', '[]', '[]', false, now(), now(), '{"title":"Junk"}')`.execute(database.db);
    expect(await list()).toEqual(['Alpha', 'Beta', 'Delta', 'Gamma', 'Junk']);
    const second = new ReadModels(db, bus, log, true, [{ ...CATALOG, version: CATALOG.version + 1 }, IDENTITY]);
    await second.start();
    expect(await second.waitFor('catalog', await store.headPosition(), 5000)).toBe(true);
    expect(await list()).toEqual(['Alpha', 'Beta', 'Delta', 'Gamma']);
    const status = await second.status();
    expect(status.find((p) => p.name === 'catalog')).toMatchObject({ version: CATALOG.version + 1, rebuilding: false, position: await store.headPosition() });
    await second.stop();
  });
});
