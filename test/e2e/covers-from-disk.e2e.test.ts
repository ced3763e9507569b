// Covers without a bus call per request: the gateway reads the file the catalog rendered when it can
// reach the catalog's cover directory (embedded mode; COVERS_DIR on a shared volume when distributed),
// and asks the catalog only for a cover not rendered yet.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes, startBindery, type Bindery } from '../support/bindery';
import { freePort, sample } from '../support/ops';
import { api, register, type Account, type Call } from './helpers';
import { copyOf, createLibrary, FIXTURE, items, settled } from './catalog-helpers';

const modes = await availableModes();

async function coveredItem(call: Call, admin: Account): Promise<Record<string, any>> {
  const lib = await createLibrary(call, admin.token, { name: `Covers ${Date.now()}`, folders: [copyOf(FIXTURE)], watch: false });
  await settled(call, admin.token, lib.id);
  const item = (await items(call, admin.token, lib.id)).find((i) => i.cover_url);
  expect(item).toBeDefined();
  return item!;
}

describe.skipIf(!modes.includes('distributed'))('covers from a shared directory (distributed, COVERS_DIR)', () => {
  const covers = mkdtempSync(join(tmpdir(), 'bindery-covers-'));
  let b: Bindery;
  let call: Call;
  let admin: Account;
  beforeAll(async () => {
    b = await startBindery('distributed', { COVERS_DIR: covers });
    call = api(b);
    admin = await register(call);
  }, 120_000);
  afterAll(async () => {
    await b?.stop();
    rmSync(covers, { recursive: true, force: true });
  });

  it('serves covers and thumbnails with the catalog stopped, with the same validators', async () => {
    const item = await coveredItem(call, admin);
    const first = await call('GET', item.cover_url, { token: admin.token });
    expect(first.status).toBe(200);
    const thumb = await call('GET', item.thumbnail_url, { token: admin.token });
    expect(thumb.status).toBe(200);
    const catalog = b.procs.find((p) => p.output().includes('bindery catalog started'))!;
    await catalog.stop();
    const again = await call('GET', item.cover_url, { token: admin.token });
    expect(again.status).toBe(200);
    expect(again.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.compare(again.bytes, first.bytes)).toBe(0);
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect((await call('GET', item.cover_url, { token: admin.token, headers: { 'if-none-match': first.headers.get('etag')! } })).status).toBe(304);
    const thumbAgain = await call('GET', item.thumbnail_url, { token: admin.token });
    expect(thumbAgain.status).toBe(200);
    expect(Buffer.compare(thumbAgain.bytes, thumb.bytes)).toBe(0);
    // OPDS and its thumbnails take the same path
    expect((await call('GET', `/opds/covers/${item.id}`, { token: admin.token })).status).toBe(200);
  });
});

describe.skipIf(!modes.includes('embedded'))('covers from the catalog’s directory (embedded)', () => {
  let b: Bindery;
  let call: Call;
  let admin: Account;
  let ops: number;
  beforeAll(async () => {
    ops = await freePort();
    b = await startBindery('embedded', { OPS_PORT: String(ops) });
    call = api(b);
    admin = await register(call);
  }, 120_000);
  afterAll(() => b?.stop());

  it('answers repeated cover requests without asking the catalog', async () => {
    const item = await coveredItem(call, admin);
    expect((await call('GET', item.cover_url, { token: admin.token })).status).toBe(200);
    expect((await call('GET', item.thumbnail_url, { token: admin.token })).status).toBe(200);
    const asked = async () =>
      sample(await (await fetch(`http://127.0.0.1:${ops}/metrics`)).text(), 'bindery_rpc_duration_seconds_count', {
        side: 'client',
        subject: 'bindery.rpc.catalog.item-cover',
        outcome: 'ok',
      }) ?? 0;
    const before = await asked();
    for (let i = 0; i < 5; i++) {
      expect((await call('GET', item.cover_url, { token: admin.token })).status).toBe(200);
      expect((await call('GET', item.thumbnail_url, { token: admin.token })).status).toBe(200);
    }
    expect(await asked()).toBe(before);
  });
});
