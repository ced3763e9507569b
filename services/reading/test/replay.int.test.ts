// The fold of reading's log on a real PGlite: events written before the facts they now carry were
// added (a position's hashes, an annotation's span as stored, when members joined, a KOReader push's
// position version and label) fold to the best value they hold.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { asTables, migrate, type NoTables, openPGlite, type Database, type Db } from '@bindery/platform';
import type { StoredEvent } from '@bindery/contracts';
import { readingMigrations, replayReading, type ReadingDb } from '../src/index';

const S = 'reading_old_events';
let database: Database;
let db: Db<ReadingDb>;
let position = 0;
const USER = randomUUID();
const ITEM = randomUUID();
const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-02T00:00:00.000Z';

const ev = (type: string, data: unknown, recordedAt = T1): StoredEvent => ({
  id: randomUUID(),
  type,
  source: 'reading',
  streamId: USER,
  version: ++position,
  position,
  data,
  metadata: {},
  recordedAt,
});

const progress = (percentage: number, version: number) => ({
  id: '00000000-0000-4000-8000-000000000001',
  media_item_id: ITEM,
  epubcfi: 'epubcfi(/6/4!/4/2/1:0)',
  percentage,
  finished: false,
  client: 'web',
  device: 'laptop',
  version,
  created_at: T0,
  updated_at: T1,
});

beforeAll(async () => {
  database = await openPGlite('memory://');
  db = asTables<ReadingDb, NoTables>(database.db);
  await migrate(db, S, readingMigrations);
});

afterAll(async () => {
  await database?.close();
});

const all = async (table: string) => (await sql<Record<string, any>>`select * from ${sql.table(`${S}.${table}`)}`.execute(db)).rows;

it('folds events without the later fields to the best value they hold', async () => {
  const collection = {
    id: randomUUID(),
    name: 'Old',
    description: '',
    query_type: null,
    is_system: false,
    is_smart: false,
    priority: 0,
    color: null,
    icon: null,
    show_on_dashboard: false,
    rules: null,
    auto_assign: null,
    created_at: T0,
    updated_at: T0,
  };
  const note = randomUUID();
  await db.transaction().execute((trx) =>
    replayReading(trx, S, [
      // a position without its hashes: none known
      ev('reading.progress-saved.v1', { user_id: USER, media_item_id: ITEM, progress: progress(0.2, 1) }),
      ev('reading.collection-saved.v1', { user_id: USER, collection }),
      // members without their time: the event's
      ev('reading.collection-items-changed.v1', { user_id: USER, collection_id: collection.id, added: [ITEM], removed: [] }, '2026-01-03T00:00:00.000Z'),
      // an annotation whose record merged the span into its position: read back from it
      ev('reading.annotation-saved.v1', {
        user_id: USER,
        annotation: {
          id: note,
          media_item_id: ITEM,
          type: 'highlight',
          position: { percentage: 0.4, epubcfi: 'epubcfi(/6/4!/4/2/1:5)', spine_index: 2, doc_offset: 10, end_spine_index: 2, end_doc_offset: 40 },
          text: 'a line',
          note: '',
          color: null,
          created_at: T0,
          updated_at: T0,
        },
      }),
      // a KOReader push without its position version or label
      ev('reading.kosync-document-saved.v1', {
        user_id: USER,
        document: {
          document: 'abc',
          media_item_id: ITEM,
          linked_by: 'hash',
          percentage: 0.3,
          progress: '/body/DocFragment[3]',
          device: 'Kobo',
          device_id: 'k1',
          timestamp: 1,
          pushed_at: T1,
          created_at: T0,
        },
      }),
    ]),
  );
  expect((await all('progress'))[0]).toMatchObject({ sha256: [], position: { epubcfi: 'epubcfi(/6/4!/4/2/1:0)' }, percentage: 0.2, version: 1 });
  expect((await all('progress_devices')).map((d) => d.device)).toEqual(['laptop']);
  expect((await all('collection_items'))[0]!.added_at.toISOString()).toBe('2026-01-03T00:00:00.000Z');
  expect((await all('annotations'))[0]).toMatchObject({
    position: { percentage: 0.4, epubcfi: 'epubcfi(/6/4!/4/2/1:5)' },
    start_spine: 2,
    start_offset: 10,
    end_spine: 2,
    end_offset: 40,
    anchor_sha256: null,
    dedup_key: null,
    deleted_at: null,
  });
  expect((await all('kosync_documents'))[0]).toMatchObject({ progress_version: null, label: null, bindery_device_id: null, item_id: ITEM });

  // a newer event says the hashes; an older one after it keeps them
  await db
    .transaction()
    .execute((trx) =>
      replayReading(trx, S, [
        ev('reading.progress-saved.v1', { user_id: USER, media_item_id: ITEM, progress: progress(0.3, 2), sha256: ['h1'] }),
        ev('reading.progress-saved.v1', { user_id: USER, media_item_id: ITEM, progress: progress(0.4, 3) }),
      ]),
    );
  expect((await all('progress'))[0]).toMatchObject({ sha256: ['h1'], percentage: 0.4, version: 3 });
});

it("folds a save's history line from its own event (older logs) and from the save that carries it", async () => {
  const user = randomUUID();
  const entry = (percentage: number, reason: string, at: string) => ({
    position: { epubcfi: 'epubcfi(/6/4!/4/2/1:0)' },
    percentage,
    client: 'web',
    device: 'laptop',
    reason,
    recorded_at: at,
  });
  await db.transaction().execute((trx) =>
    replayReading(trx, S, [
      // before: a save, then its line as an event of its own
      ev('reading.progress-saved.v1', { user_id: user, media_item_id: ITEM, progress: progress(0.2, 1) }),
      ev('reading.progress-history-recorded.v1', { user_id: user, media_item_id: ITEM, entry: entry(0.2, 'saved', T0) }),
      // now: the line rides in the save
      ev('reading.progress-saved.v1', { user_id: user, media_item_id: ITEM, progress: progress(0.5, 2), history: entry(0.5, 'saved', T1) }),
      // a deletion's line is still its own event
      ev('reading.progress-history-recorded.v1', { user_id: user, media_item_id: ITEM, entry: entry(0, 'deleted', '2026-01-03T00:00:00.000Z') }),
    ]),
  );
  const lines = (await all('progress_history')).filter((h) => h.user_id === user).sort((a, b) => Number(a.seq) - Number(b.seq));
  expect(lines.map((h) => [h.percentage, h.reason, h.recorded_at.toISOString()])).toEqual([
    [0.2, 'saved', T0],
    [0.5, 'saved', T1],
    [0, 'deleted', '2026-01-03T00:00:00.000Z'],
  ]);
  expect(lines[1]).toMatchObject({ client: 'web', device: 'laptop', position: { epubcfi: 'epubcfi(/6/4!/4/2/1:0)' } });
});

it('folds what devices were given: the last receipt per book and device; a merge drops the removed items’ receipts', async () => {
  const user = randomUUID();
  const other = randomUUID();
  const P = '00000000-0000-4000-8000-000000000002';
  const given = (device: string, item: string, version: number, percentage: number, at: string) =>
    ev('reading.progress-delivered.v1', { user_id: user, device, via: 'kobo-sync', delivered: [{ media_item_id: item, progress_id: P, version, percentage }], delivered_at: at });
  await db
    .transaction()
    .execute((trx) =>
      replayReading(trx, S, [
        given('Libra', ITEM, 1, 0.42, T0),
        given('Libra', ITEM, 2, 0.55, T1),
        given('kosync:abc', ITEM, 2, 0.55, T1),
        given('Libra', other, 1, 0.1, T1),
        ev('reading.items-merged.v1', { kept_item_id: ITEM, removed_item_ids: [other], user_ids: [user] }),
      ]),
    );
  const rows = (await all('progress_receipts')).filter((r) => r.user_id === user).sort((a, b) => a.device.localeCompare(b.device));
  expect(rows.map((r) => [r.device, r.item_id, r.progress_id, Number(r.version), r.percentage, r.received_at.toISOString()])).toEqual([
    ['kosync:abc', ITEM, P, 2, 0.55, T1],
    ['Libra', ITEM, P, 2, 0.55, T1],
  ]);
  await db.transaction().execute((trx) => replayReading(trx, S, [ev('reading.user-data-removed.v1', { user_id: user })]));
  expect((await all('progress_receipts')).filter((r) => r.user_id === user)).toEqual([]);
});
