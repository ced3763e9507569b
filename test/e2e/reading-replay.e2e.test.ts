// The reading service's tables are a projection of its own log: a realistic mix of reading through
// the API (positions from the web and from KOReader's stock sync, with a password and with a device's
// sync key, and what their pulls and the web's reads gave each device; a position removed and begun again; a conflict opened, moved on and resolved; annotations made, edited, deleted, restored and
// purged; ratings set and deleted; custom and smart collections, members added and removed, one
// taking a newly catalogued book by its rules; system collections restored; saved filters; dashboard
// preferences; a hash conflict's kept duplicate taking the other's reading data; a
// deleted account), then its log folded alone into fresh tables made by reading's migrations, compared
// row for row with the live ones, in both modes. `progress_history.seq` is a serial number with gaps
// after retries: the history is compared as the order of each user's lines per book. Not compared:
// `users`, `items`, `user_access` and `identity_settings`, the other services' facts that reading
// keeps from identity's and the catalog's logs.
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READING_SCHEMA, readingMigrations, REPLAYED_TABLES, replayReading, type ReadingDb } from '@bindery/reading';
import { asTables, EventStore, migrate, type NoTables, openPGlite, openPostgres, type Db } from '@bindery/platform';
import { availableModes, startBindery, type Bindery } from '../support/bindery';
import { api, eventually, register, type Account, type Call } from './helpers';
import { createLibrary, emptyDir, FIXTURE, items, settled } from './catalog-helpers';
import { enroll } from './device-helpers';
import { put } from './reading-helpers';

const modes = await availableModes();
const REPLAY = 'reading_replay';
const CLE = join(FIXTURE, 'Amélie Fournier/Inspector Lumière/01 - Une Clé perdue.epub');
const GOLDEN = join(FIXTURE, 'unsorted/Aleksandr_Petrov_Golden_Crowns.epub');
/** An XPointer for a document in no library (no locator index checks it). */
const XP = '/body/DocFragment[3]/body/div/p[12]/text().17';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

/** Every row of a table as plain values, in a stable order; the history in each user's order per book, without its serial number. */
async function rows(db: Db<ReadingDb>, schema: string, table: string): Promise<unknown[]> {
  const history = table === 'progress_history';
  const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(`${schema}.${table}`)} ${history ? sql`order by seq` : sql``}`.execute(db);
  const plain = rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v])));
  if (!history) return plain.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  // by book and user, each in the order written (a stable sort keeps the serial order within one)
  return plain.map(({ seq: _seq, ...r }) => r).sort((a, b) => `${a.user_id}/${a.item_id}`.localeCompare(`${b.user_id}/${b.item_id}`));
}

describe.each(modes)("reading's log rebuilds its tables (%s)", (mode) => {
  let b: Bindery;
  let call: Call;
  let admin: Account;
  let reader: Account;
  let leaver: Account;
  let a: Record<string, any>;
  let dupe: Record<string, any>;
  let golden: Record<string, any>;
  let lib: Record<string, any>;
  let dir: string;

  beforeAll(async () => {
    b = await startBindery(mode);
    call = api(b);
    admin = await register(call);
    reader = await register(call);
    leaver = await register(call);
    // two copies of one book (a hash conflict) and another book, catalogued by a scan
    dir = emptyDir();
    for (const sub of ['a', 'b']) {
      mkdirSync(join(dir, sub));
      cpSync(CLE, join(dir, sub, 'cle.epub'));
    }
    cpSync(GOLDEN, join(dir, 'golden.epub'));
    lib = await createLibrary(call, admin.token, { name: `Replay ${mode}`, folders: [dir], watch: false });
    await settled(call, admin.token, lib.id);
    const list = await items(call, admin.token, lib.id);
    a = list.find((i) => i.file_path === 'a/cle.epub')!;
    dupe = list.find((i) => i.file_path === 'b/cle.epub')!;
    golden = list.find((i) => i.file_path === 'golden.epub')!;
    expect(a.sha256).toBe(dupe.sha256);
  }, 240_000);

  afterAll(async () => {
    await b?.stop();
  });

  it('reads, annotates, rates and collects through the API', async () => {
    const token = reader.token;
    // positions from the web: saved, moved on, one deleted
    for (const [item, percentage] of [
      [golden.id, 0.1],
      [golden.id, 0.2],
      [a.id, 0.3],
      [dupe.id, 0.6],
    ] as const)
      expect((await put(call, token, item, { percentage, client: 'web', device: 'laptop' })).json.status).toBe('saved');
    expect((await put(call, leaver.token, a.id, { percentage: 0.9 })).json.status).toBe('saved');
    // a position removed (its history stays) and begun again: a new record
    expect((await call('DELETE', `/api/media-items/${a.id}/progress`, { token: leaver.token })).status).toBe(200);
    expect((await put(call, leaver.token, a.id, { percentage: 0.5 })).json.status).toBe('saved');

    // a conflict: a device's first push disagrees, the device reads on, the incoming side is kept
    const c1 = await put(call, token, a.id, { percentage: 0.7, client: 'koreader', device: 'kobo-clara' });
    expect(c1.json.status).toBe('conflict');
    expect((await put(call, token, a.id, { percentage: 0.72, client: 'koreader', device: 'kobo-clara' })).json.status).toBe('conflict');
    const resolved = await call('POST', `/api/progress-conflicts/${c1.json.conflict.id}/resolve`, { token, body: { keep: 'incoming' } });
    expect(resolved.status, resolved.text).toBe(200);
    // another, dismissed, then deleted; a third left open
    const c2 = await put(call, token, golden.id, { percentage: 0.8, client: 'koreader', device: 'kobo-libra' });
    expect(c2.json.status).toBe('conflict');
    expect((await call('POST', '/api/progress-conflicts/bulk-dismiss', { token, body: { ids: [c2.json.conflict.id] } })).status).toBe(200);
    expect((await call('DELETE', `/api/progress-conflicts/${c2.json.conflict.id}`, { token })).status).toBe(200);
    expect((await put(call, token, golden.id, { percentage: 0.9, client: 'koreader', device: 'kobo-aura' })).json.status).toBe('conflict');

    // KOReader's stock sync: a catalogued book with the password, a book in no library, a device's sync key
    const ko = (password: string, id: string, model: string) => {
      const headers = { 'x-auth-user': reader.username, 'x-auth-key': md5(password), accept: 'application/vnd.koreader.v1+json' };
      return {
        push: (document: string, progress: string, percentage: number) =>
          call('PUT', '/syncs/progress', { headers, body: { document, progress, percentage, device: model, device_id: id } }),
        pull: (document: string) => call('GET', `/syncs/progress/${document}`, { headers }),
      };
    };
    const doc = golden.formats[0].partial_md5 as string;
    const kobo = ko(reader.password, 'a1b2c3d4e5f60718293a4b5c6d7e8f90', 'Kobo_frost');
    const pulled = await kobo.pull(doc);
    expect(pulled.status, pulled.text).toBe(200);
    const pushed = await kobo.push(doc, pulled.json.progress, pulled.json.percentage);
    expect(pushed.status, pushed.text).toBe(200);
    expect((await kobo.push('0123456789abcdef0123456789abcdef', XP, 0.33)).status).toBe(200);
    const enrolled = await enroll(call, reader, 'Bedside Kobo');
    const keyed = ko(enrolled.sync_key, 'c0ffee00c0ffee00c0ffee00c0ffee00', 'Kobo_libra');
    expect((await keyed.push(doc, pulled.json.progress, pulled.json.percentage)).status).toBe(200);
    expect((await keyed.pull(doc)).status).toBe(200);

    // annotations: made on both copies, edited, deleted, restored, one purged
    const post = async (item: string, kind: string, body: Record<string, unknown>) => {
      const r = await call('POST', `/api/media-items/${item}/${kind}`, { token, body });
      expect(r.status, r.text).toBe(201);
      return r.json.id as string;
    };
    const hl = await post(golden.id, 'highlights', { position: { percentage: 0.4, epubcfi: '/6/4!/4/2/1:5' }, text: 'a line worth keeping', color: 'Yellow', dedup_key: 'k1' });
    await post(a.id, 'highlights', { position: { percentage: 0.2 }, text: 'from a' });
    await post(dupe.id, 'highlights', { position: { percentage: 0.5 }, text: 'from b' });
    const note = await post(dupe.id, 'notes', { position: { percentage: 0.55 }, text: 'note on b' });
    const mark = await post(golden.id, 'bookmarks', { position: { page: 3 } });
    expect((await call('PUT', `/api/highlights/${hl}`, { token, body: { color: '#00ff00', note: 'changed' } })).status).toBe(200);
    expect((await call('DELETE', `/api/highlights/${hl}`, { token })).status).toBe(200);
    expect((await call('POST', `/api/annotations/${hl}/restore`, { token })).status).toBe(200);
    expect((await call('DELETE', `/api/notes/${note}`, { token })).status).toBe(200);
    expect((await call('DELETE', `/api/bookmarks/${mark}`, { token })).status).toBe(200);
    expect((await call('DELETE', `/api/annotations/${mark}`, { token })).status).toBe(200);

    // ratings: set, changed, deleted
    for (const [item, rating] of [
      [golden.id, 3],
      [golden.id, 4.5],
      [dupe.id, 4],
      [a.id, 2],
    ] as const)
      expect((await call('PUT', `/api/media-items/${item}/rating`, { token, body: { rating, review: `worth ${rating}` } })).status).toBeLessThan(300);
    expect((await call('DELETE', `/api/media-items/${a.id}/rating`, { token })).status).toBe(200);

    // collections: a custom one with members added and removed, renamed; a smart one; one deleted
    const custom = await call('POST', '/api/collections', { token, body: { name: 'Keep these', color: '#ff0000' } });
    expect(custom.status, custom.text).toBe(201);
    const cid = custom.json.id as string;
    expect((await call('POST', `/api/collections/${cid}/items`, { token, body: { media_item_ids: [golden.id, dupe.id, a.id] } })).status).toBe(200);
    expect((await call('DELETE', `/api/collections/${cid}/items/${a.id}`, { token })).status).toBe(200);
    expect((await call('PUT', `/api/collections/${cid}`, { token, body: { name: 'Loved', priority: 0, show_on_dashboard: true } })).status).toBe(200);
    const rules = { match: 'all', conditions: [{ field: 'author', op: 'contains', value: 'petrov' }] };
    const smart = await call('POST', '/api/collections', { token, body: { name: 'Petrov', rules, priority: 6 } });
    expect(smart.status, smart.text).toBe(201);
    const gone = await call('POST', '/api/collections', { token, body: { name: 'Short-lived' } });
    expect((await call('POST', `/api/collections/${gone.json.id}/items`, { token, body: { media_item_ids: [golden.id] } })).status).toBe(200);
    expect((await call('DELETE', `/api/collections/${gone.json.id}`, { token })).status).toBe(200);

    // a custom collection that takes newly catalogued books by its rules (the library made again below)
    const auto = await call('POST', '/api/collections', {
      token,
      body: { name: 'By Petrov', auto_assign: { conditions: [{ field: 'author', op: 'contains', value: 'petrov' }] } },
    });
    expect(auto.status, auto.text).toBe(201);

    // saved filters: made, changed, one deleted
    const f1 = await call('POST', '/api/saved-filters', { token, body: { name: 'Sagas', resource_type: 'media_items', filter: { series_filter: 'Saga' } } });
    expect(f1.status, f1.text).toBe(201);
    expect((await call('PUT', `/api/saved-filters/${f1.json.id}`, { token, body: { name: 'Long sagas' } })).status).toBe(200);
    const f2 = await call('POST', '/api/saved-filters', { token, body: { name: 'Old', resource_type: 'media_items', filter: { q: 'old' } } });
    expect((await call('DELETE', `/api/saved-filters/${f2.json.id}`, { token })).status).toBe(200);

    // dashboard preferences, twice
    const sys = (await call('GET', '/api/collections', { token })).json.data.filter((c: { is_system: boolean }) => c.is_system).map((c: { id: string }) => c.id);
    for (const body of [
      { hidden_collections: [sys[0]], collection_order: [cid] },
      { hidden_collections: [], collection_order: [cid, sys[1]] },
    ])
      expect((await call('PUT', '/api/dashboard/preferences', { token, body })).status).toBe(200);

    // system collections: one edited and restored, one deleted and made again
    const system = (await call('GET', '/api/collections', { token })).json.data.filter((c: { is_system: boolean }) => c.is_system);
    expect((await call('PUT', `/api/collections/${system[0].id}`, { token, body: { color: '#000000' } })).status).toBe(200);
    expect((await call('POST', '/api/collections/system/restore', { token, body: { query_type: system[0].query_type } })).status).toBe(200);
    expect((await call('DELETE', `/api/collections/${system[1].id}`, { token })).status).toBe(200);
    expect((await call('POST', '/api/collections/system/restore', { token, body: { query_type: system[1].query_type } })).status).toBe(201);

    // a deleted account: its reading data goes
    expect((await call('DELETE', `/api/auth/profile/${leaver.id}`, { token: admin.token })).status).toBe(200);
    await eventually(async () => expect((await call('GET', '/api/collections', { token: leaver.token })).status).toBe(401), 15_000);

    // the hash conflict: the kept copy takes the other's position, annotations, membership and rating
    const groups = await call('GET', '/api/admin/hash-conflicts', { token: admin.token });
    const group = groups.json.data.find((g: { sha256: string }) => g.sha256 === a.sha256);
    const kept = await call('POST', `/api/admin/hash-conflicts/${group.id}/resolve`, { token: admin.token, body: { action: 'keep', keep_uuid: a.id } });
    expect(kept.status, kept.text).toBe(200);
    await eventually(async () => expect((await call('GET', `/api/media-items/${a.id}/rating`, { token })).json.rating).toBe(4), 15_000);

    // the library deleted and made again: each book's reading data found again by its hash, under new ids
    expect((await call('DELETE', `/api/libraries/${lib.id}`, { token: admin.token })).status).toBe(200);
    const again = await createLibrary(call, admin.token, { name: `Replay again ${mode}`, folders: [dir], watch: false });
    await settled(call, admin.token, again.id);
    const golden2 = (await items(call, admin.token, again.id)).find((i) => i.file_path === 'golden.epub')!;
    expect(golden2.sha256).toBe(golden.sha256);
    await eventually(async () => {
      const members = await call('GET', `/api/collections/${auto.json.id}/items`, { token });
      expect(members.json.data.map((b: { media_item_id: string }) => b.media_item_id)).toContain(golden2.id);
    }, 15_000);
    await eventually(async () => {
      const p = await call('GET', `/api/media-items/${golden2.id}/progress`, { token });
      expect(p.status, p.text).toBe(200);
      expect((await kobo.pull(doc)).json.percentage).toBeGreaterThan(0);
    }, 15_000);
    // a push to the book found again: the position it became is the document's again
    expect((await keyed.push(doc, pulled.json.progress, pulled.json.percentage)).status).toBe(200);
  }, 300_000);

  it('folds its log alone into the same tables, row for row', async () => {
    // embedded: the one process holds the database, so stop it and open its data directory
    if (mode === 'embedded') await b.procs[0]!.stop();
    else await new Promise((r) => setTimeout(r, 1000)); // reactions in flight land first
    const database = mode === 'embedded' ? await openPGlite(join(b.env.DATA_DIR!, 'db')) : await openPostgres(b.env.DATABASE_URL!);
    try {
      const db: Db<ReadingDb> = asTables<ReadingDb, NoTables>(database.db);
      const log = await new EventStore(db, READING_SCHEMA).readAll(0, 1_000_000);
      const types = new Set(log.map((e) => e.type));
      for (const t of [
        'system-collections-created',
        'progress-saved',
        'progress-deleted',
        'progress-history-recorded',
        'progress-conflict-opened',
        'progress-conflict-closed',
        'progress-conflict-deleted',
        'annotation-saved',
        'annotation-purged',
        'rating-set',
        'rating-deleted',
        'collection-saved',
        'collection-deleted',
        'collection-items-changed',
        'saved-filter-saved',
        'saved-filter-deleted',
        'dashboard-preferences-changed',
        'kosync-document-saved',
        'progress-delivered',
        'items-merged',
        'item-data-restored',
        'user-data-removed',
      ])
        expect(types, t).toContain(`reading.${t}.v1`);
      await migrate(db, REPLAY, readingMigrations);
      await db.transaction().execute((trx) => replayReading(trx, REPLAY, log));
      const live: Record<string, unknown[]> = {};
      for (const table of REPLAYED_TABLES) {
        live[table] = await rows(db, READING_SCHEMA, table);
        expect(live[table]!.length, table).toBeGreaterThan(0);
        expect(await rows(db, REPLAY, table), table).toEqual(live[table]);
      }
      // the mix reached what the new event fields carry
      const rowsOf = (table: string) => live[table] as Record<string, any>[];
      expect(rowsOf('progress').some((p) => p.sha256.length > 0)).toBe(true);
      expect(rowsOf('kosync_documents').some((d) => d.progress_version !== null)).toBe(true);
      expect(rowsOf('kosync_documents').some((d) => d.label !== null)).toBe(true);
      // what devices were given: KOReader's pulls (by password for the document, by sync key for its device) and the web's reads
      const given = rowsOf('progress_receipts').map((r) => r.device as string);
      expect(given).toContain(`kosync:${golden.formats[0].partial_md5}`);
      expect(given).toContain('web');
      expect(rowsOf('annotations').some((x) => x.start_spine !== null && x.anchor_sha256 !== null)).toBe(true);
      // members added together a millisecond apart, in the order given
      expect(new Set(rowsOf('collection_items').map((m) => m.added_at)).size).toBe(rowsOf('collection_items').length);
      // nothing of the merged copy or the deleted account is left
      for (const table of REPLAYED_TABLES) {
        if (table === 'collection_items') continue;
        expect(
          rowsOf(table).filter((r) => r.user_id === leaver.id),
          table,
        ).toEqual([]);
      }
      expect(rowsOf('progress').filter((r) => r.item_id === dupe.id)).toEqual([]);
      await sql.raw(`drop schema ${REPLAY} cascade`).execute(db);
    } finally {
      await database.close();
    }
  }, 120_000);
});
