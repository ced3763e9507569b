// A backup that restores (issue 46), against the real server in both modes: a server filled with
// accounts, a library, positions from three devices (the web, a Kobo, a stock KOReader), highlights,
// notes, collections, devices with their Kobo and KOReader credentials and settings is backed up with
// `pnpm backup` while another account writes positions without a pause; `pnpm restore` puts it into
// an empty data directory (embedded) or an empty database and a fresh NATS (distributed); the
// restored server answers every list of every resource as the first did, the old sign-ins, tokens
// and device credentials still work, and the load's account holds a position it had written.
// Refused: a damaged or cut-short archive (nothing written), a target that is not empty, a
// non-admin's download. The schedule writes into its folder and keeps the newest `backup_keep`.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, resolveBackends, startNatsServer } from '../support/backends';
import { availableModes, type Bindery, startBindery, type Mode } from '../support/bindery';
import { createLibrary, emptyDir, items, scan } from './catalog-helpers';
import { asDevice, enroll, type Enrolled } from './device-helpers';
import { api, eventually, instances, login, putSettings, register, type Account, type Call } from './helpers';
import { koboSync, smallEpub } from './kobo-helpers';
import { cli, manifestOf } from './backup-helpers';

const modes = await availableModes();
const get = instances(modes);
const md5 = (s: string) => createHash('md5').update(s).digest('hex');

/** Where a restore goes, and the server started on it afterwards. */
interface Target {
  env: Record<string, string>;
  start(): Promise<Bindery>;
  /** the data directory's entries (embedded) or the Bindery schemas with tables (distributed) */
  contents(): Promise<string[]>;
  drop(): Promise<void>;
}

async function newTarget(mode: Mode): Promise<Target> {
  if (mode === 'embedded') {
    const parent = mkdtempSync(join(tmpdir(), 'bindery-restore-'));
    const dir = join(parent, 'data');
    return {
      env: { DATA_DIR: dir },
      start: () => startBindery('embedded', { DATA_DIR: dir, SCAN_ON_STARTUP: 'false' }),
      contents: async () => (existsSync(dir) ? readdirSync(dir) : []),
      drop: async () => rmSync(parent, { recursive: true, force: true }),
    };
  }
  const backends = await resolveBackends();
  const db = await createTestDatabase(backends.postgresUrl!);
  const nats = await startNatsServer();
  const pg = (await import('pg')).default;
  return {
    env: { DATABASE_URL: db.url, NATS_URL: nats.url },
    start: () => startBindery('distributed', { DATABASE_URL: db.url, NATS_URL: nats.url, SCAN_ON_STARTUP: 'false' }),
    contents: async () => {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        return (
          await c.query<{ s: string }>(
            "select distinct table_schema as s from information_schema.tables where table_schema in ('identity','catalog','reading','device_sync','gateway') order by 1",
          )
        ).rows.map((r) => r.s);
      } finally {
        await c.end();
      }
    },
    drop: async () => {
      await nats.stop();
      await db.drop();
    },
  };
}

describe.each(modes)('backup and restore (%s)', (mode) => {
  let src: Bindery;
  let call: Call;
  let admin: Account;
  let reader: Account;
  let loader: Account;
  let books: Record<string, any>[];
  let kobo: { path: string };
  let koDevice: Enrolled;
  const work = mkdtempSync(join(tmpdir(), 'bindery-backup-test-'));
  const archive = join(work, 'bindery.zip');
  const targets: Target[] = [];
  const target = async () => {
    const t = await newTarget(mode);
    targets.push(t);
    return t;
  };
  const started: Bindery[] = [];
  afterAll(async () => {
    for (const b of started) await b.stop().catch(() => undefined);
    for (const t of targets) await t.drop().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  });

  const koHeaders = () => ({ 'x-auth-user': reader.username, 'x-auth-key': md5(reader.password), accept: 'application/vnd.koreader.v1+json' });

  /** Every list answer of every resource, for the admin and the reader, with the server's own address made neutral. */
  const answers = async (c: Call, url: string): Promise<Record<string, unknown>> => {
    const out: Record<string, unknown> = {};
    const take = async (who: Account, path: string) => {
      const r = await c('GET', path, { token: who.token });
      out[`${who.username} ${path}`] = { status: r.status, body: JSON.parse(r.text.split(url).join('ORIGIN')) };
    };
    for (const who of [admin, reader]) {
      for (const p of [
        '/api/auth/profile',
        '/api/libraries',
        '/api/media-items?sort=title',
        '/api/collections',
        '/api/devices',
        '/api/sync-queue',
        '/api/progress-conflicts',
        '/api/dashboard/preferences',
        '/api/auth/opds-key',
      ])
        await take(who, p);
      for (const b of books) for (const p of ['progress', 'highlights', 'notes', 'bookmarks', 'rating', 'annotations/deleted']) await take(who, `/api/media-items/${b.id}/${p}`);
    }
    for (const p of ['/api/auth/users', '/api/system/settings', '/api/setup/status']) await take(admin, p);
    const devices = (out[`${reader.username} /api/devices`] as { body: { devices?: { id: string }[] } }).body.devices ?? [];
    for (const d of devices) await take(reader, `/api/devices/${d.id}/shelves`);
    return out;
  };
  let before: Record<string, unknown>;

  beforeAll(async () => {
    src = await get(mode);
    call = api(src);
    admin = await register(call);
    expect(admin.role).toBe('admin');
    reader = await register(call);
    loader = await register(call);
    const dir = emptyDir();
    for (let i = 1; i <= 3; i++) writeFileSync(join(dir, `book-${i}.epub`), smallEpub(`Backup Book ${i}`, 'Bea Backup', randomUUID()));
    const lib = await createLibrary(call, admin.token, { name: `Backup ${mode}`, folders: [dir], watch: false });
    await scan(call, admin.token, lib.id);
    books = (await items(call, admin.token, lib.id)).sort((a, b) => a.title.localeCompare(b.title));
    expect(books.length).toBe(3);
    const [one, two, three] = books as [Record<string, any>, Record<string, any>, Record<string, any>];

    // positions from three devices: the web reads book 1, a Kobo book 2, a stock KOReader book 3
    expect((await call('PUT', `/api/media-items/${one.id}/progress`, { token: reader.token, body: { percentage: 0.25 } })).status).toBe(200);
    const k = await call('POST', '/api/devices/kobo', { token: reader.token, body: { name: 'Kobo Libra' } });
    expect(k.status, k.text).toBe(201);
    kobo = { path: `/kobo/${k.json.kobo_url.split('/kobo/')[1]}` };
    await eventually(async () => expect((await koboSync(call, kobo.path, null)).entries.filter((e) => e.NewEntitlement).length).toBe(3), 15_000);
    const pushed = await call('PUT', `${kobo.path}/v1/library/${two.id}/state`, {
      body: { ReadingStates: [{ CurrentBookmark: { ProgressPercent: 42 }, Statistics: { SpentReadingMinutes: 3 }, StatusInfo: { Status: 'Reading' } }] },
    });
    expect(pushed.status, pushed.text).toBe(200);
    const ko = await call('PUT', '/syncs/progress', {
      headers: koHeaders(),
      body: {
        document: three.formats[0].partial_md5,
        progress: '/body/DocFragment[1]/body/p[1]/text().0',
        percentage: 0.5,
        device: 'Libra',
        device_id: 'f00dfeed0123456789abcdef01234567',
      },
    });
    expect(ko.status, ko.text).toBe(200);
    // highlights, notes, a bookmark, a rating, collections (one shelved on the KOReader device), settings
    expect(
      (
        await call('POST', `/api/media-items/${one.id}/highlights`, {
          token: reader.token,
          body: { position: { percentage: 0.3 }, text: 'a line kept through a restore', note: 'why', color: 'Yellow', dedup_key: 'h1' },
        })
      ).status,
    ).toBe(201);
    expect((await call('POST', `/api/media-items/${two.id}/notes`, { token: reader.token, body: { position: { percentage: 0.4 }, text: 'remember this' } })).status).toBe(201);
    expect((await call('POST', `/api/media-items/${three.id}/bookmarks`, { token: reader.token, body: { position: { percentage: 0.6 } } })).status).toBe(201);
    expect((await call('PUT', `/api/media-items/${one.id}/rating`, { token: reader.token, body: { rating: 4 } })).status).toBe(201);
    const fav = await call('POST', '/api/collections', { token: reader.token, body: { name: 'Favourites', color: '#ff0000', show_on_dashboard: true } });
    expect(fav.status, fav.text).toBe(201);
    expect((await call('POST', `/api/collections/${fav.json.id}/items`, { token: reader.token, body: { media_item_ids: [one.id, three.id] } })).status).toBeLessThan(300);
    koDevice = await enroll(call, reader, 'KOReader Libra');
    expect((await call('POST', `/api/devices/${koDevice.device_id}/shelves`, { token: reader.token, body: { collection_id: fav.json.id } })).status).toBeLessThan(300);
    await putSettings(call, admin.token, { settings: { login_max_attempts: 7, new_users_see_all_libraries: false } });
    expect((await call('GET', '/api/auth/opds-key', { token: reader.token })).status).toBe(200);
    before = await eventually(async () => {
      const a = await answers(call, src.url);
      expect(a[`${reader.username} /api/devices`]).toMatchObject({ status: 200 });
      return a;
    }, 15_000);
  }, 300_000);

  it('a non-admin cannot download a backup; an anonymous caller neither', async () => {
    const r = await call('GET', '/api/admin/backup', { token: reader.token });
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: 'admin access required' });
    expect((await call('GET', '/api/admin/backup')).status).toBe(401);
  });

  it('pnpm backup under write load, pnpm restore into an empty target: every answer and every credential as before', async () => {
    // another account writes positions without a pause while the backup is taken
    let stop = false;
    let acknowledged = 0;
    const load = (async () => {
      for (let i = 1; !stop && i < 100_000; i++) {
        const r = await call('PUT', `/api/media-items/${books[0]!.id}/progress`, { token: loader.token, body: { percentage: (i % 100) / 100, force: true } });
        expect(r.status, r.text).toBe(200);
        acknowledged = i;
      }
    })();
    await eventually(async () => expect(acknowledged).toBeGreaterThan(3), 15_000);
    const atStart = acknowledged;
    const env: Record<string, string> =
      mode === 'embedded' ? { BINDERY_URL: src.url, BINDERY_TOKEN: admin.token } : { DATABASE_URL: src.env.DATABASE_URL!, NATS_URL: src.env.NATS_URL! };
    const made = await cli('backup', [archive], env);
    stop = true;
    await load;
    expect(made.err).toBe('');
    expect(made.code).toBe(0);
    expect(made.out).toMatch(/^backup written: .*bindery\.zip \((embedded|distributed), format 1, \d+ parts; events: identity \d+/);
    const m = await manifestOf(archive);
    expect(m).toMatchObject({ format: 'bindery-backup', format_version: 1, mode });
    expect(m.services.map((s: { service: string }) => s.service)).toEqual(['identity', 'catalog', 'reading', 'device-sync', 'gateway']);
    for (const e of m.entries) expect(e.sha256).toMatch(/^[0-9a-f]{64}$/);
    // the same file name again is refused
    const again = await cli('backup', [archive], env);
    expect(again.code).toBe(1);
    expect(again.err).toBe(`backup failed: ${archive} exists already: name a new file\n`);

    const t = await target();
    const restored = await cli('restore', [archive], t.env);
    expect(restored.err).toBe('');
    expect(restored.code).toBe(0);
    expect(restored.out).toContain('the read models are rebuilt from the logs at the next start');
    // started without a scan at start: a scan would move the library's last_scan_at, which the lists show
    const dst = await t.start();
    started.push(dst);
    const dcall = api(dst);
    const after = await eventually(async () => {
      const a = await answers(dcall, dst.url);
      expect(a).toEqual(before);
      return a;
    }, 60_000);
    // every list of the admin and the reader: 9 each, 6 per book each, 3 of the admin's alone
    expect(Object.keys(after).length).toBeGreaterThanOrEqual(57);

    // the load's account holds one of the positions it wrote: at least those acknowledged before the backup began
    const p = await dcall('GET', `/api/media-items/${books[0]!.id}/progress`, { token: loader.token });
    expect(p.status, p.text).toBe(200);
    expect(p.json.version).toBeGreaterThanOrEqual(atStart);
    expect(p.json.version).toBeLessThanOrEqual(acknowledged + 1);

    // old credentials: the session token, a password sign-in, the Kobo's address, KOReader's sync key and device token
    expect((await dcall('GET', '/api/auth/profile', { token: reader.token })).json.id).toBe(reader.id);
    expect((await login(dcall, reader.username, reader.password)).status).toBe(200);
    const sync = await koboSync(dcall, kobo.path, null);
    expect(sync.entries.filter((e) => e.NewEntitlement).length).toBe(3);
    const pulled = await dcall('GET', `/syncs/progress/${books[2]!.formats[0].partial_md5}`, { headers: koHeaders() });
    expect(pulled.status, pulled.text).toBe(200);
    // kosync answers KOReader's own record of the document: what it pushed
    expect(pulled.json.percentage).toBe(0.5);
    const device = await dcall('GET', '/api/sync/device', asDevice(koDevice.token));
    expect(device.status, device.text).toBe(200);
    // and the restored server takes new writes
    expect((await dcall('PUT', `/api/media-items/${books[1]!.id}/progress`, { token: reader.token, body: { percentage: 0.7, force: true } })).status).toBe(200);
  }, 300_000);

  it('a target that is not empty is refused, and nothing in it changes', async () => {
    const t = await target();
    const first = await cli('restore', [archive], t.env);
    expect(first.code).toBe(0);
    const held = await t.contents();
    const second = await cli('restore', [archive], t.env);
    expect(second.code).toBe(1);
    expect(second.err).toBe(
      mode === 'embedded'
        ? `restore failed: the data directory ${t.env.DATA_DIR} is not empty: a restore writes only into an empty or new data directory (move the old one aside first)\n`
        : 'restore failed: the database already holds Bindery data (schemas catalog, device_sync, gateway, identity, reading): a restore writes only into an empty database (create a new one, or drop those schemas first)\n',
    );
    expect(await t.contents()).toEqual(held);
  }, 120_000);

  it('a damaged or cut-short archive is refused and leaves nothing behind', async () => {
    const whole = readFileSync(archive);
    const cut = join(work, 'cut.zip');
    writeFileSync(cut, whole.subarray(0, Math.floor(whole.length / 2)));
    const t = await target();
    const r = await cli('restore', [cut], t.env);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^restore failed: the backup archive is damaged or incomplete \(.+\); nothing was restored\n$/);
    expect(await t.contents()).toEqual([]);

    // one byte changed inside a part: its checksum (or the ZIP's own) catches it
    const flipped = Buffer.from(whole);
    flipped[Math.floor(flipped.length / 3)]! ^= 0xff;
    const bad = join(work, 'flipped.zip');
    writeFileSync(bad, flipped);
    const f = await cli('restore', [bad], t.env);
    expect(f.code).toBe(1);
    expect(f.err).toMatch(/^restore failed: the backup archive is damaged or incomplete \(.+\); nothing was restored\n$/);
    expect(await t.contents()).toEqual([]);

    const junk = join(work, 'junk.zip');
    writeFileSync(junk, 'not a zip at all');
    const j = await cli('restore', [junk], t.env);
    expect(j.code).toBe(1);
    expect(j.err).toMatch(/^restore failed: the backup archive is damaged or incomplete \(.+\); nothing was restored\n$/);
    expect(await t.contents()).toEqual([]);
  }, 120_000);

  it("the admin's download is a whole archive", async () => {
    const r = await call('GET', '/api/admin/backup', { token: admin.token });
    expect(r.status, r.text.slice(0, 200)).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/zip');
    expect(r.headers.get('content-disposition')).toMatch(/^attachment; filename="bindery-backup-\d{8}T\d{6}Z\.zip"$/);
    const file = join(work, 'download.zip');
    writeFileSync(file, r.bytes);
    expect(await manifestOf(file)).toMatchObject({ format: 'bindery-backup', format_version: 1, mode });
  }, 120_000);

  it('the scheduled backup writes into its folder and keeps the newest backup_keep', async () => {
    const folder = join(work, 'scheduled');
    // three older backups of the schedule's naming and a file of someone else's
    mkdirSync(folder);
    for (const n of ['bindery-backup-20200101T000000Z.zip', 'bindery-backup-20200102T000000Z.zip', 'bindery-backup-20200103T000000Z.zip', 'notes.txt'])
      writeFileSync(join(folder, n), 'old');
    const bad = await call('PUT', '/api/system/settings', { token: admin.token, body: { settings: { backup_folder: 'relative/folder' } } });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ error: 'backup_folder must be an absolute path, or empty' });
    const nul = await call('PUT', '/api/system/settings', { token: admin.token, body: { settings: { backup_folder: join(work, 'a\u0000b') } } });
    expect(nul.status).toBe(400);
    await putSettings(call, admin.token, { settings: { backup_folder: folder, backup_interval_hours: 24, backup_keep: 2 } });
    const names = await eventually(async () => {
      const n = readdirSync(folder).sort();
      expect(n).toHaveLength(3);
      expect(n[1]).toMatch(/^bindery-backup-2\d{7}T\d{6}Z\.zip$/);
      return n;
    }, 60_000);
    expect(names[0]).toBe('bindery-backup-20200103T000000Z.zip');
    expect(names[2]).toBe('notes.txt');
    expect(await manifestOf(join(folder, names[1]!))).toMatchObject({ format: 'bindery-backup', mode });
    await putSettings(call, admin.token, { settings: { backup_folder: '' } });
  }, 120_000);
});
