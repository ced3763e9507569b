// Reactions of the reading service (docs/decisions.md, "Reading"): usage counts for the hash-conflict
// list, a kept duplicate that takes every removed copy's reading data (the furthest position wins,
// the other stays in the history), a deleted account's data removed, a removed book found again by
// its SHA-256.
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, eventually, expectError, instances, register, type Account, type Call } from './helpers';
import { createLibrary, emptyDir, FIXTURE, items, settled } from './catalog-helpers';
import { put } from './reading-helpers';

const modes = await availableModes();
const get = instances(modes);
const CLE = join(FIXTURE, 'Amélie Fournier/Inspector Lumière/01 - Une Clé perdue.epub');
const GOLDEN = join(FIXTURE, 'unsorted/Aleksandr_Petrov_Golden_Crowns.epub');

describe.each(modes)('reading reactions (%s)', (mode) => {
  let call: Call;
  let admin: Account;
  let reader: Account;
  let leaver: Account;
  let a: Record<string, any>;
  let b: Record<string, any>;
  let group: Record<string, any>;
  let favourites: string;

  beforeAll(async () => {
    call = api(await get(mode));
    admin = await register(call);
    reader = await register(call);
    leaver = await register(call);
    const dir = emptyDir();
    for (const sub of ['a', 'b']) {
      mkdirSync(join(dir, sub));
      cpSync(CLE, join(dir, sub, 'cle.epub'));
    }
    const lib = await createLibrary(call, admin.token, { name: `Dupes ${mode}`, folders: [dir], watch: false });
    await settled(call, admin.token, lib.id);
    const list = await items(call, admin.token, lib.id);
    a = list.find((i) => i.file_path === 'a/cle.epub')!;
    b = list.find((i) => i.file_path === 'b/cle.epub')!;
    expect(a.sha256).toBe(b.sha256);
  }, 180_000);

  const usage = async () => {
    const r = await call('GET', '/api/admin/hash-conflicts', { token: admin.token });
    expect(r.status, r.text).toBe(200);
    group = r.json.data.find((g: { sha256: string }) => g.sha256 === a.sha256);
    return Object.fromEntries(group.items.map((i: { id: string; usage: unknown }) => [i.id, i.usage]));
  };

  it("counts each item's reading data for the hash-conflict list", async () => {
    expect(await usage()).toEqual({
      [a.id]: { progress: 0, highlights: 0, bookmarks: 0, notes: 0, collections: 0 },
      [b.id]: { progress: 0, highlights: 0, bookmarks: 0, notes: 0, collections: 0 },
    });
    expect((await put(call, reader.token, a.id, { percentage: 0.3, device: 'laptop' })).json.status).toBe('saved');
    expect((await put(call, reader.token, b.id, { percentage: 0.6, device: 'laptop' })).json.status).toBe('saved');
    expect((await put(call, leaver.token, a.id, { percentage: 0.9 })).json.status).toBe('saved');
    const post = (item: string, kind: string, body: Record<string, unknown>) => call('POST', `/api/media-items/${item}/${kind}`, { token: reader.token, body });
    expect((await post(a.id, 'highlights', { position: { percentage: 0.2 }, text: 'from a' })).status).toBe(201);
    expect((await post(b.id, 'highlights', { position: { percentage: 0.5 }, text: 'from b' })).status).toBe(201);
    expect((await post(b.id, 'bookmarks', { position: { percentage: 0.55 } })).status).toBe(201);
    expect((await post(a.id, 'notes', { position: { percentage: 0.25 }, text: 'note on a' })).status).toBe(201);
    const c = await call('POST', '/api/collections', { token: reader.token, body: { name: 'Keep these' } });
    favourites = c.json.id;
    expect((await call('POST', `/api/collections/${favourites}/items`, { token: reader.token, body: { media_item_ids: [b.id] } })).status).toBe(200);
    expect((await call('PUT', `/api/media-items/${b.id}/rating`, { token: reader.token, body: { rating: 4 } })).status).toBe(201);
    expect(await usage()).toEqual({
      [a.id]: { progress: 2, highlights: 1, bookmarks: 0, notes: 1, collections: 0 },
      [b.id]: { progress: 1, highlights: 1, bookmarks: 1, notes: 0, collections: 1 },
    });
  });

  it("removes a deleted account's reading data", async () => {
    const d = await call('DELETE', `/api/auth/profile/${leaver.id}`, { token: admin.token });
    expect(d.status, d.text).toBe(200);
    await eventually(async () => expect((await usage())[a.id].progress).toBe(1), 10_000);
  });

  it('merges the removed duplicate into the kept item: no position, annotation, membership or rating lost', async () => {
    const r = await call('POST', `/api/admin/hash-conflicts/${group.id}/resolve`, { token: admin.token, body: { action: 'keep', keep_uuid: a.id } });
    expect(r.status, r.text).toBe(200);
    await eventually(async () => expect((await call('GET', `/api/media-items/${a.id}/progress`, { token: reader.token })).json.percentage).toBe(0.6), 10_000);
    const h = await call('GET', `/api/progress/${a.id}/history`, { token: reader.token });
    expect(h.json.data.slice(0, 2).map((e: { percentage: number; reason: string }) => [e.percentage, e.reason])).toEqual([
      [0.6, 'merged'],
      [0.3, 'merged: not the furthest'],
    ]);
    expect((await call('GET', `/api/media-items/${a.id}/highlights`, { token: reader.token })).json.data.map((x: { text: string }) => x.text)).toEqual(['from a', 'from b']);
    expect((await call('GET', `/api/media-items/${a.id}/bookmarks`, { token: reader.token })).json.data.length).toBe(1);
    expect((await call('GET', `/api/media-items/${a.id}/notes`, { token: reader.token })).json.data.length).toBe(1);
    expect((await call('GET', `/api/media-items/${a.id}/rating`, { token: reader.token })).json.rating).toBe(4);
    // the gateway's projection follows the reaction's events a moment later
    await eventually(
      async () =>
        expect((await call('GET', `/api/collections/${favourites}/items`, { token: reader.token })).json.data.map((x: { media_item_id: string }) => x.media_item_id)).toEqual([
          a.id,
        ]),
      10_000,
    );
    expectError(await call('GET', `/api/media-items/${b.id}/progress`, { token: reader.token }), 404, 'media item not found');
    // the dashboard, served from the gateway's projection of reading events, follows the merge
    const d = await eventually(async () => {
      const r = await call('GET', '/api/dashboard/sections', { token: reader.token });
      const cr = r.json.sections.find((x: { query_type: string }) => x.query_type === 'continue-reading');
      expect(cr.books.map((x: { media_item_id: string; percentage: number }) => [x.media_item_id, x.percentage])).toEqual([[a.id, 0.6]]);
      return r;
    }, 10_000);
    const custom = d.json.sections.find((x: { id: string }) => x.id === favourites);
    expect(custom).toBeUndefined(); // not shown on the dashboard unless asked
    expect((await call('PUT', `/api/collections/${favourites}`, { token: reader.token, body: { show_on_dashboard: true } })).status).toBe(200);
    const again = await call('GET', '/api/dashboard/sections', { token: reader.token });
    expect(again.json.sections.find((x: { id: string }) => x.id === favourites).books.map((x: { media_item_id: string }) => x.media_item_id)).toEqual([a.id]);
  });

  it('gives a removed book its reading data back when a file with its hash is catalogued again', async () => {
    const dir = emptyDir();
    cpSync(GOLDEN, join(dir, 'golden.epub'));
    const lib = await createLibrary(call, admin.token, { name: `Golden ${mode}`, folders: [dir], watch: false });
    await settled(call, admin.token, lib.id);
    const g = (await items(call, admin.token, lib.id))[0]!;
    expect((await put(call, reader.token, g.id, { percentage: 0.45, epubcfi: 'epubcfi(/6/8!/4/2/1:0)' })).json.status).toBe('saved');
    expect((await call('POST', `/api/media-items/${g.id}/highlights`, { token: reader.token, body: { position: { percentage: 0.4 }, text: 'golden line' } })).status).toBe(201);
    expect((await call('DELETE', `/api/libraries/${lib.id}`, { token: admin.token })).status).toBe(200);
    const again = await createLibrary(call, admin.token, { name: `Golden again ${mode}`, folders: [dir], watch: false });
    await settled(call, admin.token, again.id);
    const g2 = (await items(call, admin.token, again.id))[0]!;
    expect(g2.sha256).toBe(g.sha256);
    await eventually(async () => {
      const p = await call('GET', `/api/media-items/${g2.id}/progress`, { token: reader.token });
      expect(p.status, p.text).toBe(200);
      expect(p.json).toMatchObject({ percentage: 0.45, spine_index: 3 });
      // the same place, in the canonical form (with its assertions) once the book's locator index was used
      expect(p.json.epubcfi).toMatch(/^epubcfi\(\/6\/8(\[ch002_xhtml\])?!\/4\/2(\[chapter-2\])?\/1:0\)$/);
    }, 10_000);
    expect((await call('GET', `/api/media-items/${g2.id}/highlights`, { token: reader.token })).json.data.map((x: { text: string }) => x.text)).toEqual(['golden line']);
  });
});
