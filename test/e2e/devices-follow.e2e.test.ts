// Devices that follow each other (issue 46; docs/decisions.md, "Devices follow the position they
// were given"), against the real server in both modes: two Kobos of one person (each its own
// registration) and a stock-kosync KOReader read one book in turn — Kobo A to 42 %, Kobo B syncs,
// is given 42 %, reads to 55 % and pushes: no conflict, and A's next sync gets 55 %; KOReader pulls
// 55 % and pushes 60 %: no conflict; the web, given 60 % by its read, saves 65 %: no conflict; a Kobo
// that was never given the position pushes an older place, and one given 65 % pushes from before
// it: the `first-push` conflict as before.
// Then a Kobo coming from the Kobo store (its token, another Kobo's, garbage, none) gets a full
// sync of every book, `auth/device` echoes the device's UserKey, and the KOReader plugin (its
// metadata pull) and a stock KOReader signed in by a device's sync key follow as well.
import { createHash, randomUUID } from 'node:crypto';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { asDevice, enroll } from './device-helpers';
import { api, eventually, instances, register, type Account, type Call } from './helpers';
import { entryBook, koboSync, smallEpub, type SyncRun } from './kobo-helpers';

const modes = await availableModes();
const get = instances(modes);
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const CROWN = join(FIXTURE, 'J. R. Hartley/The Hidden Crown (1864).epub');
/** KOReader's id of its device (stock kosync sends it with every push) */
const KO_ID = 'f00dfeed0123456789abcdef01234567';
const KO_LABEL = `KOReader_libra ${KO_ID.slice(0, 8)}`;

describe.each(modes)('devices that follow each other (%s)', (mode) => {
  let call: Call;
  let admin: Account;
  let reader: Account;
  /** another account that sees the library: it finds the XPointer of a place (as KOReader would name it) */
  let scout: Account;
  let books: Record<string, any>[];
  let crown: Record<string, any>;
  const kobos: Record<string, { id: string; path: string; token: string | null }> = {};

  const newKobo = async (name: string) => {
    const r = await call('POST', '/api/devices/kobo', { token: reader.token, body: { name } });
    expect(r.status, r.text).toBe(201);
    kobos[name] = { id: r.json.device.id, path: `/kobo/${r.json.kobo_url.split('/kobo/')[1]}`, token: null };
  };
  /** A Kobo's sync, repeated (its last token each time) until `until` holds: another replica's read model may lag a moment. */
  const syncUntil = async (name: string, until: (run: SyncRun) => boolean): Promise<SyncRun> => {
    const k = kobos[name]!;
    return eventually(async () => {
      const run = await koboSync(call, k.path, k.token);
      k.token = run.token;
      expect(until(run), JSON.stringify(run.entries.map((e) => entryBook(e)))).toBe(true);
      return run;
    }, 15_000);
  };
  const stateOf = (run: SyncRun, id: string) => run.entries.find((e) => e.ChangedReadingState?.ReadingState.EntitlementId === id)?.ChangedReadingState.ReadingState;
  const putState = (name: string, id: string, percent: number) =>
    call('PUT', `${kobos[name]!.path}/v1/library/${id}/state`, {
      body: { ReadingStates: [{ CurrentBookmark: { ProgressPercent: percent }, Statistics: { SpentReadingMinutes: 3 }, StatusInfo: { Status: 'Reading' } }] },
    });
  const progress = async () => (await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token })).json;
  const conflicts = async () => (await call('GET', '/api/progress-conflicts', { token: reader.token })).json;
  const koHeaders = () => ({ 'x-auth-user': reader.username, 'x-auth-key': md5(reader.password), accept: 'application/vnd.koreader.v1+json' });
  const doc = () => crown.formats[0].partial_md5 as string;
  /** The XPointer of a place of the crown, as KOReader names it (the scout's own position, pulled back). */
  const xpointerAt = async (percentage: number): Promise<string> => {
    const w = await call('PUT', `/api/media-items/${crown.id}/progress`, { token: scout.token, body: { percentage, force: true } });
    expect(w.status, w.text).toBe(200);
    const p = await call('GET', `/syncs/progress/${doc()}`, { headers: { 'x-auth-user': scout.username, 'x-auth-key': md5(scout.password) } });
    expect(p.status, p.text).toBe(200);
    expect(p.json.progress).toMatch(/^\/body\/DocFragment\[\d+\]/);
    return p.json.progress;
  };

  beforeAll(async () => {
    call = api(await get(mode));
    admin = await register(call);
    reader = await register(call);
    scout = await register(call);
    const dir = emptyDir();
    copyFileSync(CROWN, join(dir, 'crown.epub'));
    for (let i = 1; i <= 3; i++) writeFileSync(join(dir, `small-${i}.epub`), smallEpub(`Follow Book ${i}`, 'Fay Follow', randomUUID()));
    const lib = await createLibrary(call, admin.token, { name: `Follow ${mode}`, folders: [dir], watch: false });
    await scan(call, admin.token, lib.id);
    books = await items(call, admin.token, lib.id);
    expect(books.length).toBe(4);
    crown = books.find((b) => b.formats[0].file_path === 'crown.epub')!;
    for (const name of ['Kobo A', 'Kobo B', 'Kobo C', 'Kobo D']) await newKobo(name);
  }, 240_000);

  it('Kobo A reads to 42 %; Kobo B is given 42 %, reads on to 55 % without a conflict; A is given 55 %', async () => {
    const first = await syncUntil('Kobo A', (r) => r.entries.filter((e) => e.NewEntitlement).length === 4);
    expect(first.entries.filter((e) => e.ChangedReadingState)).toEqual([]);
    const a = await putState('Kobo A', crown.id, 42);
    expect(a.status, a.text).toBe(200);
    expect(a.json).toMatchObject({ RequestResult: 'Success', UpdateResults: [{ EntitlementId: crown.id, CurrentBookmarkResult: { Result: 'Success' } }] });
    expect(await progress()).toMatchObject({ percentage: 0.42, client: 'kobo', device: 'Kobo A', version: 1 });

    // B's first sync: the crown's state at 42 % (on its own as well as in the entitlement)
    const b = await syncUntil('Kobo B', (r) => stateOf(r, crown.id)?.CurrentBookmark.ProgressPercent === 42);
    expect(stateOf(b, crown.id)!.StatusInfo.Status).toBe('Reading');
    const pushed = await putState('Kobo B', crown.id, 55);
    expect(pushed.status, pushed.text).toBe(200);
    expect(pushed.json.RequestResult).toBe('Success');
    expect(await progress()).toMatchObject({ percentage: 0.55, client: 'kobo', device: 'Kobo B', version: 2 });
    expect(await conflicts()).toEqual({ data: [] });

    // A's next sync gets 55 %; B's has nothing (it wrote it)
    const back = await syncUntil('Kobo A', (r) => stateOf(r, crown.id)?.CurrentBookmark.ProgressPercent === 55);
    expect(back.entries.map((e) => entryBook(e))).toEqual([{ kind: 'ChangedReadingState', id: crown.id }]);
    expect((await koboSync(call, kobos['Kobo B']!.path, kobos['Kobo B']!.token)).entries).toEqual([]);
  });

  it('a stock KOReader pulls 55 % and pushes 60 % without a conflict; the web, given 60 %, saves 65 %', async () => {
    const at60 = await xpointerAt(0.6);
    const pulled = await call('GET', `/syncs/progress/${doc()}`, { headers: koHeaders() });
    expect(pulled.status, pulled.text).toBe(200);
    expect(pulled.json).toEqual({
      document: doc(),
      percentage: 0.55,
      progress: expect.stringMatching(/^\/body\/DocFragment\[\d+\]/),
      device: 'Kobo B',
      device_id: md5('bindery:Kobo B'),
      timestamp: expect.any(Number),
    });
    const push = await call('PUT', '/syncs/progress', {
      headers: koHeaders(),
      body: { document: doc(), progress: at60, percentage: 0.6, device: 'KOReader_libra', device_id: KO_ID },
    });
    expect(push.status, push.text).toBe(200);
    expect(push.json).toEqual({ document: doc(), timestamp: expect.any(Number) });
    expect(await progress()).toMatchObject({ percentage: 0.6, client: 'koreader', device: KO_LABEL, xpointer: at60, version: 3 });
    expect(await conflicts()).toEqual({ data: [] });

    // the web reads the position (as the reader's page does), then saves where it got to
    const read = await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token });
    expect(read.json).toMatchObject({ percentage: 0.6, device: KO_LABEL, version: 3 });
    const web = await call('PUT', `/api/media-items/${crown.id}/progress`, { token: reader.token, body: { percentage: 0.65, client: 'web', device: 'web' } });
    expect(web.status, web.text).toBe(200);
    expect(web.json).toMatchObject({ status: 'saved', healed: [], progress: { percentage: 0.65, client: 'web', device: 'web', version: 4 } });
    expect(await conflicts()).toEqual({ data: [] });

    // the Kobos are given 65 %
    for (const name of ['Kobo A', 'Kobo B']) await syncUntil(name, (r) => stateOf(r, crown.id)?.CurrentBookmark.ProgressPercent === 65);
  });

  it('a device that was never given the position pushes an older place: the first-push conflict, as before', async () => {
    const c = await putState('Kobo C', crown.id, 30);
    expect(c.status, c.text).toBe(200);
    expect(await progress()).toMatchObject({ percentage: 0.65, device: 'web', version: 4 });
    const open = await conflicts();
    expect(open.data).toHaveLength(1);
    expect(open.data[0]).toMatchObject({
      media_item_id: crown.id,
      status: 'open',
      reason: 'first-push',
      current: { percentage: 0.65, client: 'web', device: 'web', version: 4 },
      incoming: { percentage: 0.3, client: 'kobo', device: 'Kobo C' },
    });
    // a Kobo that was given 65 % but pushes from an older place than it was given: the same
    await syncUntil('Kobo D', (r) => stateOf(r, crown.id)?.CurrentBookmark.ProgressPercent === 65);
    const d = await putState('Kobo D', crown.id, 40);
    expect(d.status).toBe(200);
    expect(await progress()).toMatchObject({ percentage: 0.65, device: 'web', version: 4 });
    const two = await conflicts();
    expect(two.data.map((x: Record<string, any>) => [x.reason, x.incoming.device, x.incoming.percentage]).sort()).toEqual([
      ['first-push', 'Kobo C', 0.3],
      ['first-push', 'Kobo D', 0.4],
    ]);
    const dismiss = await call('POST', '/api/progress-conflicts/dismiss-all', { token: reader.token });
    expect(dismiss.status, dismiss.text).toBe(200);
    expect(dismiss.json.succeeded).toHaveLength(2);
  });

  it('a Kobo coming from the Kobo store (or with a token that is not its own) gets a full sync of every book', async () => {
    const a = kobos['Kobo A']!;
    // A holds every book: an unchanged sync is empty
    const same = await koboSync(call, a.path, a.token);
    expect(same.entries).toEqual([]);
    const full = (run: SyncRun) => {
      const got = run.entries.map((e) => entryBook(e)!).filter((x) => x.kind === 'NewEntitlement');
      expect(got.map((x) => x.id).sort()).toEqual(books.map((x) => x.id).sort());
      // the reading state travels on its own as well
      expect(stateOf(run, crown.id)!.CurrentBookmark.ProgressPercent).toBe(65);
      expect(run.token).toMatch(/^BINDERY\./);
    };
    for (const foreign of [
      'eyJhIjoxfQ.eyJiIjoyfQ', // the store's
      '%%% not a token %%%', // unreadable
      kobos['Kobo B']!.token!, // another Kobo's (ours, made for B)
      null, // none
    ]) {
      const run = await koboSync(call, a.path, foreign);
      full(run);
      // and from its new token on, only changes
      expect((await koboSync(call, a.path, run.token)).entries).toEqual([]);
      a.token = run.token;
    }
  });

  it('auth/device echoes the UserKey the device sends, the same every time', async () => {
    const a = kobos['Kobo A']!;
    const token = a.path.split('/kobo/')[1];
    const body = {
      AffiliateName: 'Kobo',
      AppVersion: '4.38.21908',
      ClientKey: 'ck',
      DeviceId: 'did',
      PlatformId: '00000000-0000-0000-0000-000000000387',
      SerialNumber: 'N4181',
      UserKey: 'b3c0a1e2-user-key',
    };
    for (let i = 0; i < 3; i++) {
      const r = await call('POST', `${a.path}/v1/auth/device`, { body });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ AccessToken: token, RefreshToken: token, TokenType: 'Bearer', TrackingId: a.id, UserKey: 'b3c0a1e2-user-key' });
    }
    // a device that sends none gets its owner's id, as the profile says
    const none = await call('POST', `${a.path}/v1/auth/device`, { body: { ...body, UserKey: undefined } });
    expect(none.json.UserKey).toBe(reader.id);
    expect((await call('GET', `${a.path}/v1/user/profile`)).json.UserKey).toBe(reader.id);
    // the key the device names in its header is the profile's too
    expect((await call('GET', `${a.path}/v1/user/profile`, { headers: { 'x-kobo-userkey': 'b3c0a1e2-user-key' } })).json.UserKey).toBe('b3c0a1e2-user-key');
  });
  it('the KOReader plugin, given 65 % by its metadata pull, pushes 70 %; a stock KOReader signed in by a sync key, given 70 %, pushes 75 %: no conflict', async () => {
    const plugin = await enroll(call, reader, 'Plugin Libra');
    const meta = await call('GET', `/api/sync/koreader/metadata/${crown.id}`, asDevice(plugin.token));
    expect(meta.status, meta.text).toBe(200);
    expect(meta.json).toMatchObject({ uuid: crown.id, percentage: 0.65, progress: { percentage: 0.65, device: 'web', version: 4 } });
    const pushed = await call('POST', '/api/sync/koreader/progress', asDevice(plugin.token, { body: [{ uuid: crown.id, percentage: 0.7 }] }));
    expect(pushed.status, pushed.text).toBe(200);
    expect(pushed.json).toMatchObject({
      status: 'saved',
      media_item_id: crown.id,
      healed: [],
      progress: { percentage: 0.7, client: 'koreader', device: 'Plugin Libra', version: 5 },
    });
    expect(pushed.json.conflict).toBeUndefined();

    // (one device fewer: the account holds at most five)
    expect((await call('DELETE', `/api/devices/${kobos['Kobo C']!.id}`, { token: reader.token })).status).toBe(200);
    const keyed = await enroll(call, reader, 'Keyed Kobo');
    const at75 = await xpointerAt(0.75);
    const headers = { 'x-auth-user': reader.username, 'x-auth-key': md5(keyed.sync_key), accept: 'application/vnd.koreader.v1+json' };
    const pulled = await call('GET', `/syncs/progress/${doc()}`, { headers });
    expect(pulled.status, pulled.text).toBe(200);
    expect(pulled.json).toMatchObject({ document: doc(), percentage: 0.7, device: 'Plugin Libra', device_id: md5('bindery:Plugin Libra') });
    const push = await call('PUT', '/syncs/progress', { headers, body: { document: doc(), progress: at75, percentage: 0.75, device: 'Kobo_frost', device_id: KO_ID } });
    expect(push.status, push.text).toBe(200);
    expect(push.json).toEqual({ document: doc(), timestamp: expect.any(Number) });
    expect(await progress()).toMatchObject({ percentage: 0.75, client: 'koreader', device: 'Keyed Kobo', version: 6 });
    expect(await conflicts()).toEqual({ data: [] });
  });
});
