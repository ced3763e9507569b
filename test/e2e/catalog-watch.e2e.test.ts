// Changes on disk reach the catalog without a manual scan: native file events, chokidar's
// polling fallback, and the periodic reconcile crawl that catches what watching misses.
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes, startBindery, type Bindery } from '../support/bindery';
import { api, eventually, expectError, register, type Account, type Call } from './helpers';
import { createLibrary, emptyDir, FIXTURE, items, manifest, settled } from './catalog-helpers';

const modes = await availableModes();
const epubs = manifest().filter((r) => r.kind === 'book' && r.format === 'epub3');
const [one, two] = [epubs[0]!, epubs[1]!];

/** Copies, rewrites and deletes one file, checking each change arrives on its own. */
async function watchCycle(call: Call, admin: Account, libraryId: string, dir: string, timeoutMs: number): Promise<void> {
  copyFileSync(join(FIXTURE, one.path), join(dir, 'arrived.epub'));
  const item = await eventually(async () => {
    const list = await items(call, admin.token, libraryId);
    expect(list.map((i) => i.file_path)).toEqual(['arrived.epub']);
    return list[0]!;
  }, timeoutMs);
  expect(item.sha256).toBe(one.sha256);
  expect(item.title).toBe(one.title.trim());

  // rewritten in place: the same item, now with the other file's content
  copyFileSync(join(FIXTURE, two.path), join(dir, 'arrived.epub'));
  await eventually(async () => {
    const r = await call('GET', `/api/media-items/${item.id}`, { token: admin.token });
    expect(r.status).toBe(200);
    expect(r.json.sha256).toBe(two.sha256);
    expect(r.json.known_sha256).toEqual(expect.arrayContaining([one.sha256, two.sha256]));
  }, timeoutMs);

  rmSync(join(dir, 'arrived.epub'));
  await eventually(async () => {
    expectError(await call('GET', `/api/media-items/${item.id}`, { token: admin.token }), 404, 'media item not found');
    expect(await items(call, admin.token, libraryId)).toEqual([]);
  }, timeoutMs);
}

describe.each(modes)('watching library folders (%s)', (mode) => {
  let b: Bindery;
  let call: Call;
  let admin: Account;
  beforeAll(async () => {
    b = await startBindery(mode);
    call = api(b);
    admin = await register(call);
  });
  afterAll(() => b?.stop());

  it('picks up a copied, a rewritten and a deleted file without a manual scan', async () => {
    const dir = emptyDir();
    const lib = await createLibrary(call, admin.token, { name: 'Watched', folders: [dir] });
    expect(lib.watch).toBe(true);
    await settled(call, admin.token, lib.id);
    await watchCycle(call, admin, lib.id, dir, 20_000);
  }, 90_000);

  it('does not watch a library with watching turned off', async () => {
    const dir = emptyDir();
    const lib = await createLibrary(call, admin.token, { name: 'Unwatched', folders: [dir], watch: false });
    await settled(call, admin.token, lib.id);
    copyFileSync(join(FIXTURE, one.path), join(dir, 'quiet.epub'));
    await new Promise((r) => setTimeout(r, 4000));
    expect(await items(call, admin.token, lib.id)).toEqual([]);
  });
});

describe('polling and reconcile fallbacks (embedded)', () => {
  it('polls at scan_poll_interval_seconds when file events are not used', async () => {
    const b = await startBindery('embedded', { SCAN_WATCH: 'poll' });
    try {
      const call = api(b);
      const admin = await register(call);
      const r = await call('PUT', '/api/libraries/scan-settings', { token: admin.token, body: { scan_poll_interval_seconds: 1 } });
      expect(r.status, r.text).toBe(200);
      const dir = emptyDir();
      const lib = await createLibrary(call, admin.token, { name: 'Polled', folders: [dir] });
      await settled(call, admin.token, lib.id);
      await watchCycle(call, admin, lib.id, dir, 20_000);
    } finally {
      await b.stop();
    }
  }, 90_000);

  it('a reconcile crawl finds changes when nothing watches', async () => {
    const b = await startBindery('embedded', { SCAN_WATCH: 'off', SCAN_RECONCILE_SECONDS: '2' });
    try {
      const call = api(b);
      const admin = await register(call);
      const dir = emptyDir();
      const lib = await createLibrary(call, admin.token, { name: 'Reconciled', folders: [dir] });
      await settled(call, admin.token, lib.id);
      copyFileSync(join(FIXTURE, one.path), join(dir, 'late.epub'));
      await eventually(async () => expect((await items(call, admin.token, lib.id)).map((i) => i.file_path)).toEqual(['late.epub']), 15_000);
      const status = await call('GET', '/api/scanner/status', { token: admin.token });
      expect(status.json.scans.some((s: { reason: string; library_id: string }) => s.reason === 'reconcile' && s.library_id === lib.id)).toBe(true);
    } finally {
      await b.stop();
    }
  }, 60_000);
});
