// The catalog's log is the whole truth: after a scan of the corpus and every kind of change
// (edits, moves, rewrites, deletions and returns, folder changes, conflict resolutions, covers,
// an admin's deletion, a library's deletion), folding the log alone gives exactly what the API
// answers, field by field. Scan progress is not in the log; it goes out on a transient subject.
import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, type StoredEvent } from '@bindery/contracts';
import { migrations, REPLAYED_TABLES, replayCatalog, type CatalogDb } from '@bindery/catalog';
import { sql } from 'kysely';
import { asTables, connectNatsBus, createLogger, EventStore, migrate, openPGlite, openPostgres, type NoTables } from '@bindery/platform';
import { availableModes, startBindery, type Bindery } from '../support/bindery';
import { api, eventually, expectMessage, register, type Account, type Call } from './helpers';
import { byPath, copyOf, createLibrary, emptyDir, FIXTURE, items, manifest, scan, settled } from './catalog-helpers';
import { conflictsOf, foldCatalog, librariesOf, type Folded } from './catalog-fold';

const modes = await availableModes();
const rows = manifest();
const books = rows.filter((r) => r.kind === 'book');
const dups = rows.filter((r) => r.kind === 'duplicate');
const epubs = books.filter((b) => b.format === 'epub3' && !b.path.startsWith('inbox'));

/** A zip with stored (uncompressed) entries: enough for a CBZ. */
function storedZip(files: [string, Buffer][]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of files) {
    const n = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x21, 12); // 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(n.length, 26);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(0x21, 14);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(data.length, 20);
    c.writeUInt32LE(data.length, 24);
    c.writeUInt16LE(n.length, 28);
    c.writeUInt32LE(offset, 42);
    parts.push(local, n, data);
    central.push(c, n);
    offset += local.length + n.length + data.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cd, end]);
}

/** A JPEG by its magic bytes that no decoder can read: the scan records a cover, rendering finds it unusable. */
const fakeJpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(300, 0x42)]);

const strip = <T extends Record<string, any>>(x: T, ...keys: string[]) => Object.fromEntries(Object.entries(x).filter(([k]) => !keys.includes(k)));

describe.each(modes)('the catalog log is the whole truth (%s)', (mode) => {
  let b: Bindery;
  let call: Call;
  let admin: Account;
  let dir: string;
  let lib: Record<string, any>;
  const log: StoredEvent[] = [];
  let folded: Folded;
  const api_: { libraries: any[]; list: any[]; one: Map<string, any>; issues: any[]; conflicts: any[]; scans: any[] } = {
    libraries: [],
    list: [],
    one: new Map(),
    issues: [],
    conflicts: [],
    scans: [],
  };
  const progress: Catalog.ScanProgress[] = [];

  beforeAll(async () => {
    b = await startBindery(mode);
    call = api(b);
    admin = await register(call);
  }, 120_000);
  afterAll(async () => {
    await b?.stop();
  });

  it('goes through a scan and every kind of change', async () => {
    dir = copyOf(FIXTURE);
    mkdirSync(join(dir, 'comics', 'Broken'), { recursive: true });
    writeFileSync(
      join(dir, 'comics', 'Broken', 'Broken Cover 001.cbz'),
      storedZip([
        ['001.jpg', fakeJpeg],
        ['002.jpg', fakeJpeg],
      ]),
    );

    // in distributed mode, listen to the transient progress subject as another process would
    const listener = mode === 'distributed' ? await connectNatsBus(b.env.NATS_URL!, { logger: createLogger('test', 'silent') }) : null;
    await listener?.listen(Catalog.ScanProgressSubject, (d) => void progress.push(d as Catalog.ScanProgress));
    lib = await createLibrary(call, admin.token, { name: `Log ${mode}`, folders: [dir], watch: false });
    const first = await settled(call, admin.token, lib.id);
    expect(first.status).toBe('completed');
    if (listener) {
      await eventually(async () => expect(progress.some((p) => p.scan_id === first.id)).toBe(true), 5000);
      expect(progress.filter((p) => p.scan_id === first.id).at(-1)).toEqual({ scan_id: first.id, library_id: lib.id, ...first.counts });
      await listener.close();
    }
    let list = await items(call, admin.token, lib.id);

    // edits, one by one and in bulk, and a book made through the API
    const [e1, e2, e3] = [byPath(list, epubs[0]!.path), byPath(list, epubs[1]!.path), byPath(list, epubs[2]!.path)];
    const edit = await call('PATCH', `/api/media-items/${e1.id}`, { token: admin.token, body: { title: 'Edited Title', tags: ['edited'], series: 'Log Series', series_index: 2 } });
    expect(edit.status, edit.text).toBe(200);
    const bulk = await call('POST', '/api/media-items/bulk-update', {
      token: admin.token,
      body: { ids: [e2.id, e3.id], changes: { add_tags: ['bulk'], publisher: 'Bulk House' } },
    });
    expect(bulk.status, bulk.text).toBe(200);
    // a field set and reset again (the file's value back, unlocked): the locks are rows the log rebuilds too
    const reset = await call('PATCH', `/api/media-items/${e2.id}`, { token: admin.token, body: { year: 1999, reset_fields: ['publisher'] } });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.json.locked_fields).toEqual(['tags', 'year']);
    const made = await call('POST', '/api/media-items', { token: admin.token, body: { library_id: lib.id, title: 'Made by Hand', authors: ['Someone'] } });
    expect(made.status, made.text).toBe(201);

    // on disk: one file moved, one rewritten in place, one touched (same bytes, new time), one deleted, one corrupt file gone
    const moved = epubs[3]!;
    const rewritten = epubs[4]!;
    const touched = epubs[5]!;
    const deleted = epubs[6]!;
    const deletedId = byPath(list, deleted.path).id as string;
    const movedId = byPath(list, moved.path).id as string;
    mkdirSync(join(dir, 'moved here'), { recursive: true });
    renameSync(join(dir, moved.path), join(dir, 'moved here', 'renamed.epub'));
    copyFileSync(join(FIXTURE, epubs[7]!.path), join(dir, rewritten.path));
    utimesSync(join(dir, touched.path), new Date('2020-02-02T02:02:02Z'), new Date('2020-02-02T02:02:02Z'));
    rmSync(join(dir, deleted.path));
    rmSync(join(dir, 'corrupt', 'zero.cbz'));
    writeFileSync(join(dir, 'inbox', 'half.epub'), readFileSync(join(FIXTURE, epubs[8]!.path)).subarray(0, 2000));
    // a catalogued book whose file breaks: its item stays, its file row takes the broken file's size and time
    const broke = epubs[10]!;
    writeFileSync(join(dir, broke.path), readFileSync(join(FIXTURE, broke.path)).subarray(0, 1500));
    let s = await scan(call, admin.token, lib.id);
    expect(s.counts).toMatchObject({ relinked: 1, removed: 1 });
    list = await items(call, admin.token, lib.id);
    expect(byPath(list, broke.path).formats[0].size).toBe(1500);
    expect(byPath(list, touched.path).formats[0].modified_at).toBe('2020-02-02T02:02:02.000Z');
    expect(byPath(list, 'moved here/renamed.epub').id).toBe(movedId);
    expect((await call('GET', `/api/media-items/${deletedId}`, { token: admin.token })).status).toBe(404);
    // the deleted file comes back at another path: the same item returns
    copyFileSync(join(FIXTURE, deleted.path), join(dir, 'restored.epub'));
    s = await scan(call, admin.token, lib.id);
    expect(s.counts.relinked).toBe(1);
    expect((await call('GET', `/api/media-items/${deletedId}`, { token: admin.token })).json.file_path).toBe('restored.epub');

    // a second library whose folders change, then an item deleted
    const a1 = emptyDir();
    const a2 = emptyDir();
    copyFileSync(join(FIXTURE, books.find((x) => x.format === 'azw3')!.path), join(a1, 'one.azw3'));
    copyFileSync(join(FIXTURE, books.find((x) => x.format === 'mobi')!.path), join(a1, 'two.mobi'));
    copyFileSync(join(FIXTURE, books.filter((x) => x.format === 'cbz')[0]!.path), join(a2, 'three.cbz'));
    const other = await createLibrary(call, admin.token, { name: `Other ${mode}`, folders: [a1], watch: false });
    await settled(call, admin.token, other.id);
    const changed = await call('PUT', `/api/libraries/${other.id}`, { token: admin.token, body: { folders: [a1, a2] } });
    expect(changed.status, changed.text).toBe(200);
    await settled(call, admin.token, other.id);
    rmSync(join(a1, 'two.mobi'));
    const narrowed = await call('PUT', `/api/libraries/${other.id}`, { token: admin.token, body: { folders: [a2], name: `Other ${mode} renamed` } });
    expect(narrowed.status, narrowed.text).toBe(200);
    await settled(call, admin.token, other.id);
    expect((await items(call, admin.token, other.id)).map((i) => i.file_path)).toEqual(['three.cbz']);
    expectMessage(await call('DELETE', `/api/media-items/${e3.id}`, { token: admin.token }), 'media item deleted');

    // duplicate content: one conflict kept to one item, one kept whole, the rest left pending
    const c = await call('GET', '/api/admin/hash-conflicts', { token: admin.token });
    expect(c.status, c.text).toBe(200);
    const groups = c.json.data as { id: string; sha256: string; items: { id: string }[] }[];
    const [g1, g2] = dups.slice(0, 2).map((d) => groups.find((g) => g.sha256 === d.sha256)!);
    const keep = await call('POST', `/api/admin/hash-conflicts/${g1!.id}/resolve`, { token: admin.token, body: { action: 'keep', keep_uuid: g1!.items[0]!.id } });
    expect(keep.status, keep.text).toBe(200);
    const all = await call('POST', `/api/admin/hash-conflicts/${g2!.id}/resolve`, { token: admin.token, body: { action: 'keep_all' } });
    expect(all.status, all.text).toBe(200);

    // another admin's library and book, then that admin is deleted: both go to the first admin
    const second = await register(call, { role: 'admin', caller: admin.token });
    const own = emptyDir();
    copyFileSync(join(FIXTURE, books.filter((x) => x.format === 'cbz')[1]!.path), join(own, 'owned.cbz'));
    const owned = await createLibrary(call, second.token, { name: `Owned ${mode}`, folders: [own], watch: false });
    await settled(call, admin.token, owned.id);
    const theirs = await call('POST', '/api/media-items', { token: second.token, body: { library_id: owned.id, title: 'Their Book' } });
    expect(theirs.status, theirs.text).toBe(201);
    expectMessage(await call('DELETE', `/api/auth/profile/${second.id}`, { token: admin.token }), 'user account deleted successfully');
    await eventually(async () => {
      expect((await call('GET', `/api/libraries/${owned.id}`, { token: admin.token })).json.created_by_admin).toBe(admin.id);
      expect((await call('GET', `/api/media-items/${theirs.json.id}`, { token: admin.token })).json.added_by_admin).toBe(admin.id);
    }, 15_000);

    // a library deleted with its items
    expectMessage(await call('DELETE', `/api/libraries/${other.id}`, { token: admin.token }), 'library deleted');

    // a book whose file is gone for good: its item stays, missing
    rmSync(join(dir, epubs[9]!.path));
    expect((await scan(call, admin.token, lib.id)).counts.removed).toBe(1);

    // every cover made now (the background worker may be at it too): the unusable one loses its URL
    const broken = byPath(await items(call, admin.token, lib.id), 'comics/Broken/Broken Cover 001.cbz');
    for (const i of (await call('GET', '/api/media-items?limit=1000', { token: admin.token })).json.data as any[]) {
      if (!i.cover_url) continue;
      const r = await call('GET', i.thumbnail_url, { token: admin.token });
      expect([200, 404], i.file_path).toContain(r.status);
    }
    await eventually(async () => expect((await call('GET', `/api/media-items/${broken.id}`, { token: admin.token })).json.cover_url).toBeNull(), 10_000);
    for (const l of [lib.id, owned.id]) await settled(call, admin.token, l);
  }, 300_000);

  it('reads what the API answers, then the whole log', async () => {
    const libs = await call('GET', '/api/libraries', { token: admin.token });
    expect(libs.status, libs.text).toBe(200);
    api_.libraries = libs.json;
    const list = await call('GET', '/api/media-items?limit=1000', { token: admin.token });
    expect(list.status, list.text).toBe(200);
    api_.list = list.json.data;
    for (const i of api_.list) {
      const one = await call('GET', `/api/media-items/${i.id}`, { token: admin.token });
      expect(one.status, one.text).toBe(200);
      api_.one.set(i.id, one.json);
    }
    const issues = await call('GET', '/api/scanner/issues?limit=1000', { token: admin.token });
    expect(issues.status, issues.text).toBe(200);
    api_.issues = issues.json.data;
    const conflicts = await call('GET', '/api/admin/hash-conflicts', { token: admin.token });
    expect(conflicts.status, conflicts.text).toBe(200);
    api_.conflicts = conflicts.json.data;
    const scans = await call('GET', '/api/scanner/status', { token: admin.token });
    expect(scans.status, scans.text).toBe(200);
    api_.scans = scans.json.scans;

    // embedded: the one process holds the database, so stop it and open its data directory
    if (mode === 'embedded') await b.procs[0]!.stop();
    const database = mode === 'embedded' ? await openPGlite(join(b.env.DATA_DIR!, 'db')) : await openPostgres(b.env.DATABASE_URL!);
    try {
      log.push(...(await new EventStore(database.db, 'catalog').readAll(0, 1_000_000)));
    } finally {
      await database.close();
    }
    expect(log.length).toBeGreaterThan(50);
    folded = foldCatalog(log);
  }, 120_000);

  it('holds only events its contract knows, and no scan progress', () => {
    expect(folded.invalid).toEqual([]);
    expect(log.filter((e) => e.type.includes('scan-progress'))).toEqual([]);
    const scans = log.filter((e) => e.type === 'catalog.scan-started.v1').map((e) => (e.data as { scan_id: string }).scan_id);
    const finished = log.filter((e) => e.type === 'catalog.scan-finished.v1').map((e) => (e.data as { scan_id: string }).scan_id);
    expect(new Set(scans).size).toBe(scans.length); // once per scan
    expect([...finished].sort()).toEqual([...scans].sort());
    // every path of this run left its mark
    const causes = new Set(log.filter((e) => e.type === 'catalog.media-item-updated.v1').map((e) => (e.data as { cause: string }).cause));
    expect([...causes].sort()).toEqual(['cover', 'edit', 'file', 'owner', 'relink', 'restored', 'scan']);
    const reasons = new Set(log.filter((e) => e.type === 'catalog.media-item-removed.v1').map((e) => (e.data as { reason: string }).reason));
    expect([...reasons].sort()).toEqual(['deleted', 'duplicate', 'library-deleted', 'missing']);
    expect(log.some((e) => e.type === 'catalog.file-issues-cleared.v1')).toBe(true);
  });

  it('folds into the libraries the API lists', () => {
    const byId = (a: { id: string }, z: { id: string }) => a.id.localeCompare(z.id);
    expect(api_.libraries.length).toBe(2);
    expect(librariesOf(folded).sort(byId)).toEqual([...api_.libraries].sort(byId));
    for (const l of api_.libraries) expect(l.last_scan_at).not.toBeNull();
  });

  it('folds into the items the API lists and shows, field by field', () => {
    expect([...folded.items.keys()].sort()).toEqual(api_.list.map((i) => i.id).sort());
    for (const i of api_.list) {
      expect(folded.items.get(i.id), i.file_path).toEqual(i);
      expect(api_.one.get(i.id), i.file_path).toEqual(i);
    }
    // page lists travel in the events alone: every comic archive has one, as long as its page count
    const comics = api_.list.filter((i) => i.formats.length === 1 && ['cbz', 'cbr'].includes(i.formats[0].format));
    expect(comics.length).toBeGreaterThan(0);
    for (const i of comics) expect(folded.pages.get(i.id)?.[i.formats[0].file_path]?.length, i.file_path).toBe(i.page_count);
  });

  it('folds into the scans the API lists: queued, started, finished (every change to the queue is an event)', () => {
    const byId = (a: { id: string }, z: { id: string }) => a.id.localeCompare(z.id);
    expect(api_.scans.length).toBeGreaterThan(3);
    expect(api_.scans.every((s) => s.status === 'completed' || s.status === 'failed')).toBe(true);
    const listed = api_.scans.map((s) => strip(s, 'requested_at', 'started_at', 'finished_at') as { id: string });
    expect([...folded.scans.values()].sort(byId)).toEqual(listed.sort(byId));
  });

  it('replays its log into empty tables equal to the live ones, row for row (the tables that are projections of it)', async () => {
    const database = mode === 'embedded' ? await openPGlite(join(b.env.DATA_DIR!, 'db')) : await openPostgres(b.env.DATABASE_URL!);
    const replay = 'catalog_replay';
    // a column the events do not carry: whether an item's cover files are on disk, a cache the
    // cover worker sets again when it finds them (the replay leaves it false)
    const caches: Record<string, string[]> = { media_items: ['cover_ready'] };
    const keys: Record<(typeof REPLAYED_TABLES)[number], string> = {
      libraries: 'id',
      scans: 'id',
      file_issues: 'library_id, rel_path',
      hash_conflicts: 'id',
      excluded_files: 'library_id, rel_path',
      media_items: 'id',
      media_formats: 'id',
      format_hashes: 'item_id, sha256',
      calibre_reports: 'library_id',
    };
    try {
      await sql.raw(`drop schema if exists ${replay} cascade`).execute(database.db);
      await migrate(database.db, replay, migrations);
      await asTables<CatalogDb, NoTables>(database.db)
        .transaction()
        .execute((trx) => replayCatalog(trx, replay, log));
      const rows = async (schema: string, table: (typeof REPLAYED_TABLES)[number]) =>
        (await sql.raw<Record<string, unknown>>(`select * from ${schema}.${table} order by ${keys[table]}`).execute(database.db)).rows.map((r) =>
          strip(r, ...(caches[table] ?? [])),
        );
      for (const table of REPLAYED_TABLES) {
        const live = await rows('catalog', table);
        // no calibre library in this run (test/e2e/calibre-import.e2e.test.ts replays its report)
        if (table !== 'hash_conflicts' && table !== 'calibre_reports') expect(live.length, table).toBeGreaterThan(0);
        expect(await rows(replay, table), table).toEqual(live);
      }
      expect((await rows('catalog', 'hash_conflicts')).some((c) => c.status === 'resolved')).toBe(true);
      // the run left what the item records must carry: a missing item, absent files, old hashes, broken catalogued files
      const live = async (q: string) => (await sql.raw<Record<string, unknown>>(q).execute(database.db)).rows;
      expect(await live(`select id from catalog.media_items where state = 'missing'`)).toHaveLength(1);
      expect((await live(`select id from catalog.media_formats where not present`)).length).toBeGreaterThan(0);
      expect((await live(`select item_id from catalog.format_hashes group by item_id having count(*) > 1`)).length).toBeGreaterThan(0);
      expect((await live(`select id from catalog.media_items where cover_ready`)).length).toBeGreaterThan(0);
      expect(await live(`select id from ${replay}.media_items where cover_ready`)).toEqual([]);
      // the next new file row after a replay gets an id of its own
      const next = await live(`select nextval(pg_get_serial_sequence('${replay}.media_formats', 'id')) as n`);
      const max = await live(`select max(id) as n from catalog.media_formats`);
      expect(Number(next[0]!.n)).toBe(Number(max[0]!.n) + 1);
    } finally {
      await sql
        .raw(`drop schema if exists ${replay} cascade`)
        .execute(database.db)
        .catch(() => undefined);
      await database.close();
    }
  });

  it('folds into the file issues and pending conflicts the API lists', () => {
    const key = (i: { library_id: string; file_path: string }) => `${i.library_id}/${i.file_path}`;
    const sortBy = (a: { library_id: string; file_path: string }, z: { library_id: string; file_path: string }) => key(a).localeCompare(key(z));
    expect(api_.issues.map(key)).toContain(`${lib.id}/inbox/half.epub`);
    expect(api_.issues.map(key)).toContain(`${lib.id}/${epubs[10]!.path}`);
    expect(api_.issues.map(key)).not.toContain(`${lib.id}/corrupt/zero.cbz`);
    expect([...folded.issues.values()].sort(sortBy)).toEqual([...api_.issues].sort(sortBy));
    const conflicts = api_.conflicts.map((c) => ({ ...c, items: c.items.map((i: Record<string, unknown>) => strip(i, 'usage')) }));
    expect(conflicts.length).toBeGreaterThan(0);
    const byId = (a: { id: string }, z: { id: string }) => a.id.localeCompare(z.id);
    expect(conflictsOf(folded).sort(byId)).toEqual(conflicts.sort(byId));
  });
});
