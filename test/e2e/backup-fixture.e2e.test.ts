// A backup made by an earlier release still restores (issue 46). test/fixtures/backup/ holds
// archives made by a release with what was put into them (`<name>.json`): each is restored into an
// empty target of its mode, the server started on it, and what the archive holds is asked back:
// password sign-ins, the library and its books, positions, annotations, collections, devices with
// their Kobo address and KOReader credentials, the settings. A release that changes the format keeps
// these archives and adds its own.
//
// BINDERY_BACKUP_FIXTURE=write makes this release's archives (one per mode available) instead.
import { createHash, randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, resolveBackends, startNatsServer } from '../support/backends';
import { availableModes, type Bindery, ROOT, startBindery, type Mode } from '../support/bindery';
import { cli } from './backup-helpers';
import { createLibrary, emptyDir, items, scan } from './catalog-helpers';
import { asDevice, enroll } from './device-helpers';
import { api, login, putSettings, register } from './helpers';
import { koboSync, smallEpub } from './kobo-helpers';

const DIR = join(ROOT, 'test/fixtures/backup');
const modes = await availableModes();
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const PASSWORD = 'fixture-passw0rd';

interface Recorded {
  mode: Mode;
  admin: { username: string; id: string };
  reader: { username: string; id: string };
  library: string;
  books: { id: string; title: string; partial_md5: string }[];
  kobo_path: string;
  device_token: string;
  collection: string;
}

async function fresh(mode: Mode): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (mode === 'embedded') {
    const parent = mkdtempSync(join(tmpdir(), 'bindery-fixture-'));
    return { env: { DATA_DIR: join(parent, 'data') }, drop: async () => rmSync(parent, { recursive: true, force: true }) };
  }
  const db = await createTestDatabase((await resolveBackends()).postgresUrl!);
  const nats = await startNatsServer();
  return {
    env: { DATABASE_URL: db.url, NATS_URL: nats.url },
    drop: async () => {
      await nats.stop();
      await db.drop();
    },
  };
}

if (process.env.BINDERY_BACKUP_FIXTURE === 'write') {
  describe.each(modes)('write this release’s backup fixture (%s)', (mode) => {
    it('fills a server and backs it up', async () => {
      const b = await startBindery(mode, { SCAN_ON_STARTUP: 'false' });
      try {
        const call = api(b);
        const admin = await register(call, { name: 'fixtureadmin', password: PASSWORD });
        const reader = await register(call, { name: 'fixturereader', password: PASSWORD });
        const dir = emptyDir();
        for (let i = 1; i <= 2; i++) writeFileSync(join(dir, `book-${i}.epub`), smallEpub(`Fixture Book ${i}`, 'Fia Fixture', randomUUID()));
        const lib = await createLibrary(call, admin.token, { name: 'Fixture library', folders: [dir], watch: false });
        await scan(call, admin.token, lib.id);
        const books = (await items(call, admin.token, lib.id)).sort((x, y) => x.title.localeCompare(y.title));
        expect((await call('PUT', `/api/media-items/${books[0]!.id}/progress`, { token: reader.token, body: { percentage: 0.25 } })).status).toBe(200);
        const k = await call('POST', '/api/devices/kobo', { token: reader.token, body: { name: 'Fixture Kobo' } });
        expect(k.status, k.text).toBe(201);
        const koboPath = `/kobo/${k.json.kobo_url.split('/kobo/')[1]}`;
        await koboSync(call, koboPath, null);
        const ko = await call('PUT', '/syncs/progress', {
          headers: { 'x-auth-user': reader.username, 'x-auth-key': md5(PASSWORD), accept: 'application/vnd.koreader.v1+json' },
          body: {
            document: books[1]!.formats[0].partial_md5,
            progress: '/body/DocFragment[1]/body/p[1]/text().0',
            percentage: 0.5,
            device: 'Libra',
            device_id: 'f00dfeed0123456789abcdef01234567',
          },
        });
        expect(ko.status, ko.text).toBe(200);
        expect(
          (
            await call('POST', `/api/media-items/${books[0]!.id}/highlights`, {
              token: reader.token,
              body: { position: { percentage: 0.3 }, text: 'a line from an earlier release', color: 'Yellow', dedup_key: 'f1' },
            })
          ).status,
        ).toBe(201);
        const fav = await call('POST', '/api/collections', { token: reader.token, body: { name: 'Fixture shelf' } });
        expect(fav.status, fav.text).toBe(201);
        const dev = await enroll(call, reader, 'Fixture KOReader');
        await putSettings(call, admin.token, { settings: { login_max_attempts: 9 } });
        mkdirSync(DIR, { recursive: true });
        const name = `v1-${mode}`;
        const file = join(DIR, `${name}.zip`);
        rmSync(file, { force: true });
        const env: Record<string, string> =
          mode === 'embedded' ? { BINDERY_URL: b.url, BINDERY_TOKEN: admin.token } : { DATABASE_URL: b.env.DATABASE_URL!, NATS_URL: b.env.NATS_URL! };
        const made = await cli('backup', [file], env);
        expect(made.err).toBe('');
        const recorded: Recorded = {
          mode,
          admin: { username: admin.username, id: admin.id },
          reader: { username: reader.username, id: reader.id },
          library: lib.id,
          books: books.map((x) => ({ id: x.id, title: x.title, partial_md5: x.formats[0].partial_md5 })),
          kobo_path: koboPath,
          device_token: dev.token,
          collection: fav.json.id,
        };
        writeFileSync(join(DIR, `${name}.json`), `${JSON.stringify(recorded, null, 2)}\n`);
      } finally {
        await b.stop();
      }
    }, 300_000);
  });
} else {
  const fixtures = existsSync(DIR) ? readdirSync(DIR).filter((n) => n.endsWith('.zip')) : [];
  if (fixtures.length === 0) describe.skip('backup fixtures (none in test/fixtures/backup)', () => it('needs an archive', () => undefined));
  for (const name of fixtures) {
    const recorded = JSON.parse(readFileSync(join(DIR, name.replace(/\.zip$/, '.json')), 'utf8')) as Recorded;
    const run = modes.includes(recorded.mode) ? describe : describe.skip;
    run(`a backup of an earlier release restores: ${name}`, () => {
      const started: Bindery[] = [];
      const targets: { drop(): Promise<void> }[] = [];
      afterAll(async () => {
        for (const b of started) await b.stop().catch(() => undefined);
        for (const t of targets) await t.drop().catch(() => undefined);
      });

      it('restores into an empty target and answers what it holds', async () => {
        const t = await fresh(recorded.mode);
        targets.push(t);
        // a copy: the restore reads it only, but the committed file stays untouched whatever happens
        const copy = join(tmpdir(), `bindery-fixture-${randomUUID()}.zip`);
        copyFileSync(join(DIR, name), copy);
        const r = await cli('restore', [copy], t.env);
        rmSync(copy, { force: true });
        expect(r.err).toBe('');
        expect(r.code).toBe(0);
        // the library's folder was the writing machine's: no scan at start, so its books stay as they were
        const b = await startBindery(recorded.mode, { ...t.env, SCAN_ON_STARTUP: 'false' });
        started.push(b);
        const call = api(b);
        const admin = await login(call, recorded.admin.username, PASSWORD);
        expect(admin.status, admin.text).toBe(200);
        const reader = await login(call, recorded.reader.username, PASSWORD);
        expect(reader.status, reader.text).toBe(200);
        const at = admin.json.access_token as string;
        const rt = reader.json.access_token as string;
        expect((await call('GET', '/api/auth/profile', { token: rt })).json).toMatchObject({ id: recorded.reader.id, username: recorded.reader.username });
        const libs = await call('GET', '/api/libraries', { token: at });
        expect(libs.json.map((l: { id: string; name: string }) => [l.id, l.name])).toEqual([[recorded.library, 'Fixture library']]);
        const list = await call('GET', '/api/media-items?sort=title', { token: rt });
        expect(list.json.data.map((i: { id: string; title: string }) => [i.id, i.title])).toEqual(recorded.books.map((x) => [x.id, x.title]));
        const [one, two] = recorded.books as [Recorded['books'][number], Recorded['books'][number]];
        expect((await call('GET', `/api/media-items/${one.id}/progress`, { token: rt })).json).toMatchObject({ percentage: 0.25 });
        // KOReader's push is placed by its XPointer: the percentage is the book's own for that place
        const koreader = (await call('GET', `/api/media-items/${two.id}/progress`, { token: rt })).json;
        expect(koreader).toMatchObject({ client: 'koreader', device: 'Libra f00dfeed' });
        const hl = await call('GET', `/api/media-items/${one.id}/highlights`, { token: rt });
        expect(hl.json.data.map((h: { text: string }) => h.text)).toEqual(['a line from an earlier release']);
        expect((await call('GET', '/api/collections', { token: rt })).json.data.map((c: { id: string; name: string }) => [c.id, c.name])).toContainEqual([
          recorded.collection,
          'Fixture shelf',
        ]);
        const devices = await call('GET', '/api/devices', { token: rt });
        expect(devices.json.devices.map((d: { name: string }) => d.name).sort()).toEqual(['Fixture KOReader', 'Fixture Kobo']);
        const settings = await call('GET', '/api/system/settings', { token: at });
        expect(settings.json.settings.find((s: { key: string }) => s.key === 'login_max_attempts').value).toBe(9);
        // the devices' own credentials
        expect((await koboSync(call, recorded.kobo_path, null)).entries.filter((e) => e.NewEntitlement).length).toBe(2);
        expect((await call('GET', '/api/sync/device', asDevice(recorded.device_token))).status).toBe(200);
        const pulled = await call('GET', `/syncs/progress/${two.partial_md5}`, {
          headers: { 'x-auth-user': recorded.reader.username, 'x-auth-key': md5(PASSWORD), accept: 'application/vnd.koreader.v1+json' },
        });
        expect(pulled.status, pulled.text).toBe(200);
        // kosync answers KOReader's own record of the document: what it pushed
        expect(pulled.json.percentage).toBe(0.5);
      }, 300_000);
    });
  }
}
