// A Kobo's sync state is device-sync's log (decision 116), in both modes: a Kobo syncs (a first sync,
// a change confirmed, a state it wrote itself, a book it removed, an answer left unconfirmed), then
// the gateway's devices read model is rebuilt by the admin command and the Kobo gets nothing it
// already has; device-sync's log folded alone gives its tables row for row, and the gateway's read
// model holds the same; then the gateway's read models are made again from the logs after a restart
// (embedded: its whole schema dropped, as a new replica's database; distributed: every projection
// rebuilt by the command), and the Kobo still gets nothing it already has.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asTables, EventStore, migrate, openPGlite, openPostgres, type Database, type NoTables } from '@bindery/platform';
import { migrations, projectDeviceSync, SCHEMA, type DeviceSyncDb } from '@bindery/device-sync';
import { availableModes, startBindery, type Bindery } from '../support/bindery';
import { createLibrary, emptyDir, items, scan } from './catalog-helpers';
import { api, eventually, register, type Account, type Call } from './helpers';
import { entryBook, koboSync, smallEpub } from './kobo-helpers';

const modes = await availableModes();
const REPLAY = 'device_sync_kobo_replay';
const BOOKS = 12;

/** A device's rows of a table, in a stable order, `columns` only. */
async function rows(db: Database['db'], table: string, device: string, columns: string[]): Promise<unknown[]> {
  const { rows } = await sql<Record<string, unknown>>`select ${sql.join(columns.map((c) => sql.ref(c)))} from ${sql.table(table)} where device_id = ${device}`.execute(db);
  return rows.map((r) => JSON.stringify(r)).sort();
}

/** Opens the running Bindery's database (embedded: its processes stopped first). */
async function openDb(b: Bindery): Promise<Database> {
  if (b.mode === 'embedded') {
    await b.procs[0]!.stop();
    return openPGlite(join(b.env.DATA_DIR!, 'db'));
  }
  await Promise.all(b.procs.map((p) => p.stop()));
  return openPostgres(b.env.DATABASE_URL!);
}

for (const mode of modes) {
  describe(`a Kobo's sync state is device-sync's log (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let lib: string;
    let books: Record<string, any>[];
    let device: string;
    let kobo: string;
    /** the token of the last answer the device got */
    let last: string;

    beforeAll(async () => {
      b = await startBindery(mode);
      call = api(b);
      admin = await register(call);
      const dir = emptyDir();
      for (let i = 1; i <= BOOKS; i++) writeFileSync(join(dir, `b${i}.epub`), smallEpub(`Log Book ${i}`, 'Lou Log', randomUUID()));
      lib = (await createLibrary(call, admin.token, { name: `Kobo log ${mode}`, folders: [dir], watch: false })).id;
      await scan(call, admin.token, lib);
      books = await items(call, admin.token, lib);
      expect(books.length).toBe(BOOKS);
    }, 300_000);
    afterAll(async () => {
      await b?.stop();
    });

    it('syncs: everything once, a change confirmed, a state it wrote, a book it removed, an answer left unconfirmed', async () => {
      const r = await call('POST', '/api/devices/kobo', { token: admin.token, body: { name: 'Log Libra' } });
      expect(r.status, r.text).toBe(201);
      device = r.json.device.id;
      kobo = `/kobo/${r.json.kobo_url.split('/kobo/')[1]}`;
      const first = await koboSync(call, kobo, null);
      expect(first.entries.map((e) => entryBook(e)!.id).sort()).toEqual(books.map((i) => i.id).sort());
      // a change, sent and confirmed by the next request
      expect((await call('PUT', `/api/media-items/${books[0]!.id}`, { token: admin.token, body: { title: 'Log Book One' } })).status).toBe(200);
      const changed = await koboSync(call, kobo, first.token);
      expect(changed.entries.map((e) => entryBook(e))).toEqual([{ kind: 'ChangedEntitlement', id: books[0]!.id, removed: false }]);
      // a reading state the device wrote itself: not sent back
      const put = await call('PUT', `${kobo}/v1/library/${books[1]!.id}/state`, {
        body: { ReadingStates: [{ EntitlementId: books[1]!.id, CurrentBookmark: { ProgressPercent: 40 }, StatusInfo: { Status: 'Reading' } }] },
      });
      expect(put.status, put.text).toBe(200);
      expect(put.json.RequestResult).toBe('Success');
      // a book the device removed itself: not offered again
      expect((await call('DELETE', `${kobo}/v1/library/${books[2]!.id}`)).status).toBe(204);
      const quiet = await koboSync(call, kobo, changed.token);
      expect(quiet.entries).toEqual([]);
      // an answer sent and not confirmed yet: the device holds its token
      expect((await call('PUT', `/api/media-items/${books[3]!.id}`, { token: admin.token, body: { title: 'Log Book Four' } })).status).toBe(200);
      const pending = await koboSync(call, kobo, quiet.token);
      expect(pending.entries.map((e) => entryBook(e))).toEqual([{ kind: 'ChangedEntitlement', id: books[3]!.id, removed: false }]);
      last = pending.token;
    }, 120_000);

    it('after a rebuild of the devices read model, the Kobo gets nothing it already has', async () => {
      const rebuilt = await call('POST', '/api/admin/projections/devices/rebuild?wait=true', { token: admin.token });
      expect(rebuilt.status, rebuilt.text).toBe(200);
      const run = await koboSync(call, kobo, last);
      expect(run.entries).toEqual([]);
      last = run.token;
      // and what changes after it still arrives, once
      expect((await call('PUT', `/api/media-items/${books[4]!.id}`, { token: admin.token, body: { title: 'Log Book Five' } })).status).toBe(200);
      const next = await koboSync(call, kobo, last);
      expect(next.entries.map((e) => entryBook(e))).toEqual([{ kind: 'ChangedEntitlement', id: books[4]!.id, removed: false }]);
      last = next.token;
    }, 120_000);

    it("device-sync's log folded alone gives its sync state, and the gateway's read model holds the same", async () => {
      const database = await openDb(b);
      try {
        const log = await new EventStore(database.db, SCHEMA).readAll(0, 1_000_000);
        const types = new Set(log.map((e) => e.type));
        for (const t of ['kobo-sync-sent', 'kobo-sync-confirmed', 'kobo-state-known', 'kobo-book-removed']) expect(types, t).toContain(`device-sync.${t}.v1`);
        await migrate(database.db, REPLAY, migrations);
        await asTables<DeviceSyncDb, NoTables>(database.db)
          .transaction()
          .execute(async (trx) => {
            for (const ev of log) await projectDeviceSync(trx, REPLAY, ev);
          });
        const tables: [string, string, string[]][] = [
          ['kobo_sent', 'dv_kobo_sent', ['key', 'ever', 'sver']],
          ['kobo_pending', 'dv_kobo_pending', ['gen', 'key', 'ever', 'sver']],
          ['kobo_gen', 'dv_kobo_gen', ['gen']],
        ];
        for (const [own, gateway, columns] of tables) {
          const live = await rows(database.db, `${SCHEMA}.${own}`, device, columns);
          expect(live.length, own).toBeGreaterThan(0);
          expect(await rows(database.db, `${REPLAY}.${own}`, device, columns), own).toEqual(live);
          expect(await rows(database.db, `gateway.${gateway}`, device, columns), gateway).toEqual(live);
        }
        // the state the device wrote is what it has; the book it removed is not among what it has
        const sent = await rows(database.db, `${SCHEMA}.kobo_sent`, device, ['key', 'sver']);
        expect(sent.some((r) => JSON.parse(r as string).key === `i:${books[1]!.id}` && JSON.parse(r as string).sver !== null)).toBe(true);
        expect(sent.some((r) => JSON.parse(r as string).key === `i:${books[2]!.id}`)).toBe(false);
        await sql.raw(`drop schema ${REPLAY} cascade`).execute(database.db);
        // embedded: the gateway's read models dropped, and the next start folds them all again from
        // the logs (distributed: JetStream's durable consumers resume from what they acknowledged, so
        // the read models are rebuilt by the command after the restart instead)
        if (mode === 'embedded') await sql.raw('drop schema gateway cascade').execute(database.db);
      } finally {
        await database.close();
      }
    }, 120_000);

    it('after the gateway folded its read models again from the logs, the Kobo gets nothing it already has', async () => {
      await b.restart();
      call = api(b);
      if (mode === 'distributed')
        for (const p of ['catalog', 'identity', 'reading', 'devices']) {
          const r = await call('POST', `/api/admin/projections/${p}/rebuild?wait=true`, { token: admin.token });
          expect(r.status, `${p}: ${r.text}`).toBe(200);
        }
      // the read models have caught up with the catalog and the devices
      await eventually(async () => expect((await items(call, admin.token, lib)).length).toBe(BOOKS), 60_000);
      await eventually(async () => expect((await call('GET', `${kobo}/v1/initialization`)).status).toBe(200), 60_000);
      const run = await koboSync(call, kobo, last);
      expect(run.entries).toEqual([]);
      // a token that is none of ours still means a full sync
      const full = await koboSync(call, kobo, null);
      expect(new Set(full.entries.map((e) => entryBook(e)!.id))).toEqual(new Set(books.filter((_, i) => i !== 2).map((i) => i.id)));
    }, 300_000);
  });
}
