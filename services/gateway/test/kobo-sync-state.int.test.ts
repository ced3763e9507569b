// A Kobo's sync pages, worked out a window of book ids at a time (kobo/sync-state.ts) on a real
// PGlite with the gateway's read-model tables (what each page sent, and its confirmation, folded as
// device-sync's events by the devices projector): with a window far smaller than the library and pages
// that stop inside windows, every book is sent exactly once in id order, an unchanged sync is
// empty, and later changes anywhere in the id range (changed, new, removed, hidden, a reading state,
// a tag) are exactly what a full comparison finds.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceSync } from '@bindery/contracts';
import { asTables, migrate, openPGlite, type Database, type NoTables } from '@bindery/platform';
import { migrations, SCHEMA } from '../src/read-model/migrations';
import type { Kobo } from '../src/kobo/auth';
import type { Access } from '../src/read-model/access';
import { KoboSyncState, type Difference } from '../src/kobo/sync-state';
import type { SyncCursor } from '../src/kobo/sync-token';
import type { GatewayDb } from '../src/read-model/database';
import { projectDevices } from '../src/read-model/device-projector';
import { DEVICES } from '../src/read-model/device-tables';
import { READING } from '../src/read-model/reading-tables';
import { CATALOG } from '../src/read-model/tables';

let database: Database;
const db = () => asTables<GatewayDb, NoTables>(database.db);
const T = (name: string) => sql.table(`${SCHEMA}.${name}`);
const LIB = randomUUID();
const HIDDEN = randomUUID();
const kobo: Kobo = { device_id: randomUUID(), user_id: randomUUID(), name: 'Kobo', role: 'user', books: 'all' };
const access: Access = { all: false, ids: [LIB] };
const PAGE = 10;

async function addItem(id: string, formats: string[], library = LIB, at = '2026-01-01T00:00:00Z'): Promise<void> {
  await sql`insert into ${T('cv_items')} (id, library_id, sort_title, title, authors, tags, formats, has_cover, created_at, updated_at, doc)
    values (${id}, ${library}, 't', 'T', '[]', '[]', ${JSON.stringify(formats)}::jsonb, false, ${at}, ${at}, '{}')`.execute(database.db);
}
const touch = (id: string, at: string) => sql`update ${T('cv_items')} set updated_at = ${at} where id = ${id}`.execute(database.db);

let position = 0;
/** One of device-sync's kobo-sync events, folded by the devices read model's own projector (as its consumer does). */
async function fold(event: DeviceSync.DeviceSyncEvent): Promise<void> {
  position++;
  const ev = {
    id: randomUUID(),
    source: DeviceSync.SOURCE,
    streamId: `user:${kobo.user_id}`,
    version: position,
    position,
    metadata: {},
    recordedAt: new Date().toISOString(),
    ...event,
  };
  await db()
    .transaction()
    .execute((trx) => projectDevices(trx, ev));
}
const confirm = (gen: number) => fold({ type: 'device-sync.kobo-sync-confirmed.v1', data: { user_id: kobo.user_id, device_id: kobo.device_id, gen } });
let lastGen = 0;
/** What device-sync records for an answer: its entries under the next generation. */
async function record(page: Difference[]): Promise<number> {
  const gen = ++lastGen;
  const entries = page.map((d) => ({ key: d.key, ever: d.ever, sver: d.sver }));
  await fold({ type: 'device-sync.kobo-sync-sent.v1', data: { user_id: kobo.user_id, device_id: kobo.device_id, gen, entries } });
  return gen;
}

/** One sync as the route runs it: confirm the last answer, take a page, record it; until no page continues. */
async function sync(state: KoboSyncState, gen: number, meanwhile?: (page: number) => Promise<void>): Promise<{ sent: Difference[]; pages: number; gen: number }> {
  const sent: Difference[] = [];
  let after: SyncCursor | null = null;
  for (let pages = 1; ; pages++) {
    await meanwhile?.(pages);
    await confirm(gen);
    const diff = await state.differences(kobo, access, PAGE + 1, after);
    const page = diff.slice(0, PAGE);
    gen = await record(page);
    sent.push(...page);
    if (diff.length <= PAGE) {
      await confirm(gen);
      return { sent, pages, gen };
    }
    const last = page.at(-1)!.key;
    after = { phase: last[0] as 'i' | 't', id: last.slice(2) };
  }
}

beforeAll(async () => {
  database = await openPGlite('memory://');
  await migrate(database.db, SCHEMA, migrations);
  await db()
    .transaction()
    .execute(async (trx) => {
      for (const p of [CATALOG, READING, DEVICES]) await p.create(trx, '');
    });
});

afterAll(async () => {
  await database?.close();
});

describe('Kobo sync state, a window at a time', () => {
  const ids = Array.from({ length: 57 }, () => randomUUID()).sort();
  let gen = 0;

  it('sends every book once, in id order, across windows of 7 and pages of 10; an unchanged sync is empty', async () => {
    for (const id of ids) await addItem(id, ['epub']);
    const comic = randomUUID();
    await addItem(comic, ['cbz']);
    await addItem(randomUUID(), ['epub'], HIDDEN);
    await sql`insert into ${T('rv_progress')} (user_id, item_id, percentage, updated_at) values (${kobo.user_id}, ${ids[20]!}, 0.5, '2026-01-02T00:00:00Z')`.execute(database.db);
    const state = new KoboSyncState(db(), 7);
    const first = await sync(state, gen);
    expect(first.sent.map((d) => d.key)).toEqual(ids.map((id) => `i:${id}`));
    expect(first.pages).toBe(6);
    expect(first.sent.find((d) => d.key === `i:${ids[20]}`)!.sver).not.toBeNull();
    const again = await sync(state, first.gen);
    expect(again).toMatchObject({ sent: [], pages: 1 });
    gen = again.gen;
  });

  it('finds exactly the later changes anywhere in the range, then the tags', async () => {
    const state = new KoboSyncState(db(), 7);
    await touch(ids[0]!, '2026-02-01T00:00:00Z');
    await touch(ids[33]!, '2026-02-01T00:00:00Z');
    await sql`delete from ${T('cv_items')} where id = ${ids[50]!}`.execute(database.db);
    await sql`update ${T('cv_items')} set library_id = ${HIDDEN} where id = ${ids[7]!}`.execute(database.db);
    await sql`insert into ${T('rv_progress')} (user_id, item_id, percentage, updated_at) values (${kobo.user_id}, ${ids[44]!}, 0.2, '2026-02-01T00:00:00Z')`.execute(database.db);
    const fresh = randomUUID();
    await addItem(fresh, ['epub']);
    // removed on the device itself: not offered again until it changes
    await sql`insert into ${T('dv_kobo_removed')} (device_id, item_id, removed_at) values (${kobo.device_id}, ${ids[12]!}, '2026-03-01T00:00:00Z')`.execute(database.db);
    const shelf = randomUUID();
    await sql`insert into ${T('rv_collections')} (id, user_id, name, is_system, priority, show_on_dashboard, doc)
      values (${shelf}, ${kobo.user_id}, 'Shelf', false, 0, false, '{}')`.execute(database.db);
    await sql`insert into ${T('rv_members')} (collection_id, item_id, added_at) values (${shelf}, ${ids[3]!}, now())`.execute(database.db);
    const run = await sync(state, gen);
    const got = run.sent.map((d) => [d.key, d.ever === null ? 'gone' : d.hever === null ? 'new' : d.ever !== d.hever ? 'changed' : 'state']);
    const want: [string, string][] = [
      [`i:${ids[0]}`, 'changed'],
      [`i:${ids[7]}`, 'gone'],
      [`i:${ids[12]}`, 'gone'],
      [`i:${ids[33]}`, 'changed'],
      [`i:${ids[44]}`, 'state'],
      [`i:${ids[50]}`, 'gone'],
      [`i:${fresh}`, 'new'],
    ];
    want.sort((a, b) => (a[0] < b[0] ? -1 : 1));
    expect(got).toEqual([...want, [`t:${shelf}`, 'new']]);
    expect(await sync(state, run.gen)).toMatchObject({ sent: [], pages: 1 });
  });

  it('sends in the same sync the books that arrive behind its cursor while it pages', async () => {
    const state = new KoboSyncState(db(), 7);
    const batch = Array.from({ length: 25 }, () => randomUUID()).sort();
    const behind = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'];
    const run = await sync(state, gen, async (page) => {
      // the first page sends the first ten of the batch; then two books appear before all of them
      if (page === 1) for (const id of batch) await addItem(id, ['epub']);
      if (page === 3) for (const id of behind) await addItem(id, ['epub']);
    });
    const keys = run.sent.map((d) => d.key);
    expect([...keys].sort()).toEqual([...batch, ...behind].map((id) => `i:${id}`).sort());
    expect(new Set(keys).size).toBe(keys.length);
    expect(await sync(state, run.gen)).toMatchObject({ sent: [], pages: 1 });
    gen = run.gen;
  });
});
