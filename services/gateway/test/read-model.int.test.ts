// The read models on a real PGlite and the in-memory bus: folded from the log, rebuilt from it with
// the same result, and refolded when a projection's definition (its version) changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { asTables, createLogger, EventStore, eventStoreMigrations, MemoryBus, migrate, openPGlite, type Database, type NoTables } from '@bindery/platform';
import type { Catalog } from '@bindery/contracts';
import { migrations, SCHEMA } from '../src/read-model/migrations';
import { ReadModels } from '../src/read-model/read-model';
import { CATALOG, IDENTITY } from '../src/read-model/tables';
import { CatalogView } from '../src/read-model/catalog-view';
import type { GatewayDb } from '../src/read-model/database';

let database: Database;
let bus: MemoryBus;
let store: EventStore<NoTables>;
let identity: EventStore<NoTables>;
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

async function append(type: string, data: unknown, to = store): Promise<void> {
  await database.db.transaction().execute((trx) => to.append(trx, randomUUID(), 'any', [{ type, data }]));
  to.notify();
}

const all = { all: true } as const;

beforeAll(async () => {
  database = await openPGlite('memory://');
  for (const s of ['catalog', 'identity']) await migrate(database.db, s, eventStoreMigrations);
  await migrate(database.db, SCHEMA, migrations);
  bus = new MemoryBus();
  store = new EventStore(database.db, 'catalog');
  await bus.attachSource(store);
  identity = new EventStore(database.db, 'identity');
  await bus.attachSource(identity);
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

  it("keep the profile identity's events state, fold the changes of older events that state none, and rebuild the same users", async () => {
    const db = asTables<GatewayDb, NoTables>(database.db);
    const [ann, bob, admin] = [randomUUID(), randomUUID(), randomUUID()];
    const users = async () =>
      (await sql<{ id: string; role: string; profile: unknown }>`select id, role, profile from ${sql.table(`${SCHEMA}.iv_users`)} order by id`.execute(database.db)).rows;
    const userRow = async (id: string) => (await users()).find((u) => u.id === id);
    const registered = (id: string, username: string) => ({
      user_id: id,
      email: `${username}@example.com`,
      username,
      first_name: 'First',
      last_name: 'Last',
      role: 'user',
      theme: 'tokyo-night',
      timezone: 'UTC',
      max_devices: 5,
      registered_by: null,
      all_libraries: true,
      library_ids: [],
    });
    const models = new ReadModels(db, bus, log, true, [CATALOG, IDENTITY]);
    await models.start();
    try {
      const caughtUp = async () => expect(await models.waitFor('identity', await identity.headPosition(), 5000)).toBe(true);
      await append('identity.user-registered.v1', registered(ann, 'ann'), identity);
      await append('identity.user-registered.v1', registered(bob, 'bob'), identity);

      // an event from before identity stated the profile: its changes are folded into the row (timezone is no part of it)
      await append('identity.profile-changed.v1', { user_id: bob, changes: { first_name: 'Bobby', timezone: 'Europe/Oslo' }, changed_by: bob }, identity);
      await append('identity.role-changed.v1', { user_id: bob, role: 'admin', previous_role: 'user', changed_by: admin }, identity);
      await caughtUp();
      expect(await userRow(bob)).toEqual({
        id: bob,
        role: 'admin',
        profile: { id: bob, email: 'bob@example.com', username: 'bob', first_name: 'Bobby', last_name: 'Last', role: 'admin', theme: 'tokyo-night' },
      });

      // a stated profile is kept as stated: here it names an email its changes do not, which no fold could give
      const stated = { id: ann, email: 'ann.stated@example.com', username: 'anna', first_name: 'First', last_name: 'Last', role: 'user' as const, theme: 'paper' };
      await append('identity.profile-changed.v1', { user_id: ann, changes: { username: 'anna', theme: 'paper' }, changed_by: ann, profile: stated }, identity);
      await caughtUp();
      expect(await userRow(ann)).toEqual({ id: ann, role: 'user', profile: stated });
      const promoted = { ...stated, role: 'admin' as const };
      delete (promoted as { theme?: string }).theme;
      await append('identity.role-changed.v1', { user_id: ann, role: 'admin', previous_role: 'user', changed_by: admin, profile: promoted }, identity);
      await caughtUp();
      expect(await userRow(ann)).toEqual({ id: ann, role: 'admin', profile: promoted });

      // a rebuild from the log gives the same users, row for row
      const live = await users();
      const r = models.rebuild('identity');
      expect(r.status).toBe('started');
      await r.done;
      await caughtUp();
      expect(await users()).toEqual(live);
    } finally {
      await models.stop();
    }
  });

  it('free-text search by its trigram index finds exactly what reading every item finds', async () => {
    const db = asTables<GatewayDb, NoTables>(database.db);
    const models = new ReadModels(db, bus, log, true, [CATALOG, IDENTITY]);
    await models.start();
    const WORDS = ['harbor', 'lantern', 'Kyōto', 'cartographer', 'silent', 'garden', 'emerald', 'winter', 'Østergaard', 'déjà', 'night', 'O’Brien'];
    const PEOPLE = ['Margaret Oliveira', 'Aleksandr Haddad', 'Amara Sato', 'Fatima Castillo', 'Nadia Álvarez', 'Jean "Jack" Dupont', 'Back\\Slash Writer'];
    const pick = (i: number, xs: string[], k: number) => xs[(i * k + (i >> 2)) % xs.length]!;
    for (let i = 0; i < 240; i++) {
      const base = item(`${pick(i, WORDS, 7)} ${pick(i, WORDS, 5)} ${i}`, pick(i, PEOPLE, 3));
      await append('catalog.media-item-added.v1', {
        item: {
          ...base,
          authors: i % 4 === 0 ? [pick(i, PEOPLE, 3), pick(i, PEOPLE, 2)] : base.authors,
          series: i % 3 === 0 ? `The ${pick(i, WORDS, 11)} Saga` : null,
          tags: i % 5 === 0 ? ['Science Fiction', pick(i, WORDS, 13)] : ['x'],
          isbn: i % 17 === 0 ? `97800000${String(i).padStart(5, '0')}` : null,
        },
      });
    }
    expect(await models.waitFor('catalog', await store.headPosition(), 10_000)).toBe(true);
    const indexed = new CatalogView(db);
    const reference = new CatalogView(db, undefined, false);
    const found = async (view: CatalogView, q: string) => {
      const r = await view.search(all, { q, limit: '500' });
      if (!r.ok) throw new Error(`search ${q}: ${r.error.message}`);
      const body = JSON.parse(r.value) as { data: { id: string }[]; total: number };
      return { total: body.total, ids: body.data.map((x) => x.id) };
    };
    const queries = [
      'harbor',
      'harbr',
      'lantren',
      'kyoto',
      'Kyōto',
      'cartographr',
      'silent garden',
      'garden silent',
      'emrald',
      'WINTER',
      'ni',
      'oliveira',
      'Margret Olivera',
      'haddad',
      'alvarez',
      'Álvarez',
      'dupont',
      'jack',
      'slash',
      'saga',
      'The Emerald Saga',
      'science fiction',
      'fiction',
      'sci',
      '978-0-00000-0017',
      '9780000000034',
      'obrien',
      'o’brien',
      'déjà',
      'deja',
      'østergaard',
      '12',
      'zzzz',
    ];
    let some = 0;
    for (const q of queries) {
      const a = await found(indexed, q);
      const b = await found(reference, q);
      expect(a, q).toEqual(b);
      if (a.total > 0 && a.total < 240) some++;
    }
    // the comparison means something: most queries find some items and not all
    expect(some).toBeGreaterThan(queries.length / 2);
    // the index is there and the planner can take it for a search
    const plan = await database.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      await sql`select set_config('pg_trgm.word_similarity_threshold', '0.3', true)`.execute(trx);
      return (
        await sql<{ 'QUERY PLAN': string }>`explain select id from ${sql.table(`${SCHEMA}.cv_items`)} where search_text like '%harbor%' or 'harbr' <% search_text`.execute(trx)
      ).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    });
    expect(plan).toMatch(/Bitmap Index Scan on cv_items_search_text_idx/);
    await models.stop();
  });
});
