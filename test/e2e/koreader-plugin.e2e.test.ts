// The KOReader plugin API (docs/decisions.md, "KOReader sync"): device-authenticated progress,
// metadata, library, bookmarks and resolve; book resolution by uuid, SHA-256, file name, title and
// author; the five annotation rules, each with its test; one user's data never another's. Annotation
// places are one canonical form (docs/decisions.md, "Reading: annotation positions"): a KOReader
// highlight reads as a CFI range on the web and a web highlight as XPointers here, to the character.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { epubText } from '../../services/catalog/src/formats/epub';
import { openZip } from '../../services/catalog/src/formats/zip';
import { availableModes } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { asDevice, enroll, type Enrolled } from './device-helpers';
import { api, eventually, expectError, instances, register, type Account, type Call } from './helpers';
import { list, luaFiles, luaMissing, luaSyntaxErrors, PLUGIN_DIR, READER, runDriver, type Line } from './koplugin-driver';
import * as L from '@bindery/locator';

const modes = await availableModes();
const get = instances(modes);

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const K = '/api/sync/koreader';
const CROWN = join(FIXTURE, 'J. R. Hartley/The Hidden Crown (1864).epub');
// the crown's locator index and text, as the catalog makes them, to name places in it
const { index: idx, texts } = await epubText(CROWN);
const pctOf = (at: L.Canonical) => Math.round(L.canonicalToPercentage(idx, at) * 1e6) / 1e6;

/** A span of about `len` characters of the crown's longest document from `at` of it, starting at a word and ending inside one. */
function span(at: number, len: number) {
  const spine = texts.reduce((best, t, i) => (t.length > texts[best]!.length ? i : best), 0);
  const t = texts[spine]!;
  let s = Math.floor(t.length * at);
  while (!(/\s/.test(t[s - 1] ?? '') && /\w/.test(t[s] ?? ''))) s++;
  let e = s + len;
  while (!(/\w/.test(t[e - 1] ?? '') && /\w/.test(t[e] ?? ''))) e++;
  const start = { spine, offset: s };
  const end = { spine, offset: e };
  return { start, end, text: t.slice(s, e), pos0: L.canonicalToXPointer(idx, start), pos1: L.canonicalToXPointer(idx, end), cfi: L.canonicalToCfiRange(idx, start, end) };
}
/** why the plugin's own client cannot run here (no LuaJIT, luasocket or lua-cjson), or null */
const noLua = luaMissing();
const withLua = (name: string) => (noLua ? `${name} — skipped: ${noLua}` : name);

describe('bindery.koplugin sources', () => {
  it.skipIf(noLua !== null)(withLua('every Lua file of the plugin and its driver compiles under LuaJIT'), () => {
    const files = luaFiles();
    expect(files.map((f) => f.split('/').pop()).sort()).toEqual([
      '_meta.lua',
      'binderyclient.lua',
      'binderysha256.lua',
      'driver.lua',
      'fake_koreader.lua',
      'main.lua',
      'reader.lua',
    ]);
    for (const f of files) expect(luaSyntaxErrors(f), f).toBe('');
    // and a broken file is reported, so the check can fail
    const bad = join(mkdtempSync(join(tmpdir(), 'koplugin-')), 'bad.lua');
    writeFileSync(bad, 'local x = = 1\n');
    expect(luaSyntaxErrors(bad)).toMatch(/unexpected symbol near '='/);
  });
});

describe.each(modes)('KOReader plugin API (%s)', (mode) => {
  let call: Call;
  let admin: Account;
  let reader: Account;
  let other: Account;
  let dev: Enrolled;
  let otherDev: Enrolled;
  let crown: Record<string, any>;
  let garden: Record<string, any>;
  let comic: Record<string, any>;
  /** an XPointer of the crown at 40 %, as KOReader names the place */
  let xp40: string;
  let base: string;
  let libDir: string;

  const as = (d: Enrolled, r: Parameters<typeof asDevice>[1] = {}) => asDevice(d.token, r);
  const push = (d: Enrolled, book: Record<string, unknown>) => call('POST', `${K}/progress`, as(d, { body: [book] }));
  const meta = (d: Enrolled, id: string) => call('GET', `${K}/metadata/${id}`, as(d));
  const marks = (d: Enrolled, body: Record<string, unknown>) => call('POST', `${K}/bookmarks`, as(d, { body }));
  const web = (kind: string, id: string, a = reader) => call('GET', `/api/media-items/${id}/${kind}`, { token: a.token });

  beforeAll(async () => {
    const b = await get(mode);
    call = api(b);
    base = b.url;
    admin = await register(call);
    reader = await register(call);
    other = await register(call);
    const dir = emptyDir();
    libDir = dir;
    mkdirSync(join(dir, 'books'), { recursive: true });
    copyFileSync(CROWN, join(dir, 'books/crown.epub'));
    copyFileSync(join(FIXTURE, 'Erik Lindgren/The Long Winter Cycle/02 - A Garden in Winter.epub'), join(dir, 'books/garden.epub'));
    copyFileSync(join(FIXTURE, 'comics/Owlhouse Press/The Midnight Agency/The Midnight Agency v1 #1.cbz'), join(dir, 'books/agency.cbz'));
    const lib = await createLibrary(call, admin.token, { name: `Plugin ${mode}`, folders: [dir], watch: false });
    await scan(call, admin.token, lib.id);
    const list = await items(call, admin.token, lib.id);
    crown = list.find((i) => i.formats[0].file_path === 'books/crown.epub')!;
    garden = list.find((i) => i.formats[0].file_path === 'books/garden.epub')!;
    comic = list.find((i) => i.formats[0].file_path === 'books/agency.cbz')!;
    dev = await enroll(call, reader, 'Kobo Libra');
    otherDev = await enroll(call, other, 'Other Kobo');
    // where KOReader goes for a web position at 40 % (stock sync's pull, through the locator index)
    const scout = await register(call);
    expect((await call('PUT', `/api/media-items/${crown.id}/progress`, { token: scout.token, body: { percentage: 0.4 } })).status).toBe(200);
    const p = await call('GET', `/syncs/progress/${crown.formats[0].partial_md5}`, { headers: { 'x-auth-user': scout.username, 'x-auth-key': md5(scout.password) } });
    xp40 = p.json.progress;
    expect(xp40).toMatch(/^\/body\/DocFragment\[\d+\]\//);
  }, 240_000);

  it('opens to a device credential only', async () => {
    expectError(await call('GET', `${K}/library`), 401, 'device credential required');
    expectError(await call('GET', `${K}/library`, { token: reader.token }), 401, 'device credential required');
    expectError(await call('GET', `${K}/library`, { headers: { authorization: 'Device bdt_nope' } }), 401, 'invalid or revoked device credential');
    // and the credential opens no session route
    expect((await call('GET', '/api/media-items', { headers: { authorization: `Device ${dev.token}` } })).status).toBe(401);
  });

  it('lists the library with each item’s SHA-256', async () => {
    const r = await call('GET', `${K}/library?limit=50`, as(dev));
    expect(r.status, r.text).toBe(200);
    const c = r.json.data.find((b: { uuid: string }) => b.uuid === crown.id);
    expect(c).toMatchObject({ uuid: crown.id, title: crown.title, sha256: crown.sha256, formats: [{ format: crown.formats[0].format, sha256: crown.formats[0].sha256 }] });
    expect(r.json).toMatchObject({ limit: 50, offset: 0 });
    expect(r.json.total).toBeGreaterThanOrEqual(2);
    expectError(await call('GET', `${K}/library?limit=abc`, as(dev)), 400, 'invalid request');
  });

  it('resolves a book by uuid, then SHA-256, then file name, then title and author', async () => {
    const r = (q: string) => call('GET', `${K}/resolve?${q}`, as(dev));
    expect((await r(`uuid=${crown.id}&sha256=${garden.sha256}`)).json).toMatchObject({ media_item_id: crown.id, matched_by: 'uuid', sha256: crown.sha256 });
    expect((await r(`uuid=00000000-0000-4000-8000-000000000000&sha256=${garden.sha256}`)).json).toMatchObject({ media_item_id: garden.id, matched_by: 'sha256' });
    expect((await r(`sha256=${'0'.repeat(64)}&file_path=${encodeURIComponent('/mnt/onboard/Books/crown.epub')}`)).json).toMatchObject({
      media_item_id: crown.id,
      matched_by: 'file_path',
    });
    expect(
      (await r(`file_path=${encodeURIComponent('/mnt/onboard/x.epub')}&title=${encodeURIComponent(crown.title.toUpperCase())}&author=${encodeURIComponent(crown.authors[0])}`))
        .json,
    ).toMatchObject({
      media_item_id: crown.id,
      matched_by: 'title_author',
    });
    expectError(await r(`title=${encodeURIComponent(crown.title)}&author=Somebody%20Else`), 404, 'book not found');
    expectError(await r(''), 400, 'one of uuid, sha256, file_path or title is required');
  });

  it('takes a position as an array of one book; the XPointer in epubcfi is the web’s place too', async () => {
    const r = await push(dev, { uuid: crown.id, sha256: crown.sha256, file_path: '/mnt/onboard/crown.epub', percentage: 0.4, epubcfi: xp40 });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ status: 'saved', media_item_id: crown.id, matched_by: 'uuid', deleted: { highlights: 0, bookmarks: 0 }, ignored: [] });
    const w = await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token });
    expect(w.json).toMatchObject({ percentage: 0.4, xpointer: xp40, client: 'koreader', device: 'Kobo Libra' });
    expect(w.json.epubcfi).toMatch(/^epubcfi\(\/6\//);
    const m = await meta(dev, crown.id);
    expect(m.status, m.text).toBe(200);
    expect(m.json).toMatchObject({ uuid: crown.id, sha256: crown.sha256, percentage: 0.4, koreader_xpointer: xp40, page: null });
    // by SHA-256 alone
    expect((await push(dev, { sha256: crown.sha256, percentage: 0.41, epubcfi: xp40 })).json.matched_by).toBe('sha256');
    expectError(
      await call(
        'POST',
        `${K}/progress`,
        as(dev, {
          body: [
            { uuid: crown.id, percentage: 0.4 },
            { uuid: garden.id, percentage: 0.1 },
          ],
        }),
      ),
      400,
      'invalid request',
    );
    expectError(await call('POST', `${K}/progress`, as(dev, { body: { uuid: crown.id, percentage: 0.4 } })), 400, 'invalid request');
    expectError(await push(dev, { sha256: '1'.repeat(64), percentage: 0.4 }), 404, 'book not found');
  });

  it('opens a progress conflict when the device’s first push disagrees with a book mid-read elsewhere', async () => {
    expect((await call('PUT', `/api/media-items/${garden.id}/progress`, { token: reader.token, body: { percentage: 0.5 } })).status).toBe(200);
    const r = await push(dev, { uuid: garden.id, percentage: 0.05 });
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe('conflict');
    expect(r.json.conflict).toMatchObject({ reason: 'first-push', incoming: { percentage: 0.05, device: 'Kobo Libra' } });
    expect((await call('GET', `/api/media-items/${garden.id}/progress`, { token: reader.token })).json.percentage).toBe(0.5);
  });

  it('rule 1: an annotation carries pos0, pos1, page, text, type, book_sha256, dedup_key and percentage', async () => {
    const at = span(0.2, 40);
    const h = {
      dedup_key: 'h1',
      type: 'highlight',
      pos0: at.pos0,
      pos1: at.pos1,
      page: 12,
      percentage: pctOf(at.start),
      text: 'a line',
      book_sha256: crown.sha256,
      color: 'yellow',
    };
    // a bookmark at the start of the third document: KOReader's short form comes back as the full XPointer
    const b1 = { spine: 2, offset: 0 };
    const r = await marks(dev, { book_uuid: crown.id, highlights: [h], bookmarks: [{ dedup_key: 'b1', pos0: '/body/DocFragment[3].0', page: 20, percentage: pctOf(b1) }] });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ media_item_id: crown.id, created: 2, unchanged: 0, updated: 0, ignored: [], healed: [] });
    const m = await meta(dev, crown.id);
    expect(m.json.highlights).toEqual([{ ...h, note: '', chapter: null, updated_at: expect.any(String) }]);
    expect(m.json.bookmarks).toEqual([
      {
        dedup_key: 'b1',
        type: 'bookmark',
        pos0: L.canonicalToXPointer(idx, b1),
        pos1: null,
        page: 20,
        percentage: pctOf(b1),
        chapter: null,
        text: '',
        note: '',
        color: null,
        book_sha256: crown.sha256,
        updated_at: expect.any(String),
      },
    ]);
    // by SHA-256 too; neither given is refused
    expect((await marks(dev, { book_sha256: crown.sha256, highlights: [h] })).json).toMatchObject({ created: 0, unchanged: 1 });
    expectError(await marks(dev, { highlights: [h] }), 400, 'book_uuid or book_sha256 is required');
  });

  it('rule 2: palette names become web hex; an echo without colour keeps the web colour; a colour sent is a device edit', async () => {
    const w = (await web('highlights', crown.id)).json.data.find((a: { dedup_key: string }) => a.dedup_key === 'h1');
    expect(w.color).toBe('#e0af68');
    expect((await call('PATCH', `/api/highlights/${w.id}`, { token: reader.token, body: { color: '#7aa2f7' } })).status).toBe(200);
    // the device echoes what it has, without a colour
    const echo = await marks(dev, { book_uuid: crown.id, highlights: [{ dedup_key: 'h1', pos0: 'x', text: 'a line' }] });
    expect(echo.json).toMatchObject({ created: 0, unchanged: 1, updated: 0 });
    expect((await web('highlights', crown.id)).json.data.find((a: { dedup_key: string }) => a.dedup_key === 'h1').color).toBe('#7aa2f7');
    expect((await meta(dev, crown.id)).json.highlights[0].color).toBe('blue');
    // the device recolours it
    const edit = await marks(dev, { book_uuid: crown.id, highlights: [{ dedup_key: 'h1', pos0: 'x', text: 'a line', color: 'red' }] });
    expect(edit.json).toMatchObject({ updated: 1 });
    expect((await web('highlights', crown.id)).json.data.find((a: { dedup_key: string }) => a.dedup_key === 'h1').color).toBe('#f7768e');
  });

  it('rule 3: deletions travel only in the explicit arrays, never by absence', async () => {
    expect((await marks(dev, { book_uuid: crown.id, highlights: [], bookmarks: [] })).status).toBe(200);
    expect((await push(dev, { uuid: crown.id, percentage: 0.42, epubcfi: xp40 })).json.deleted).toEqual({ highlights: 0, bookmarks: 0 });
    const m = await meta(dev, crown.id);
    expect(m.json.highlights.map((a: { dedup_key: string }) => a.dedup_key)).toEqual(['h1']);
    expect(m.json.bookmarks.map((a: { dedup_key: string }) => a.dedup_key)).toEqual(['b1']);
    const r = await push(dev, { uuid: crown.id, percentage: 0.42, deleted_bookmarks: ['b1'] });
    expect(r.json.deleted).toEqual({ highlights: 0, bookmarks: 1 });
    expect((await web('bookmarks', crown.id)).json.data).toEqual([]);
  });

  it('rule 4: keys are learned from pulls — a key the server never gave deletes nothing; a web annotation is deleted by the key the metadata gave', async () => {
    const made = await call('POST', `/api/media-items/${crown.id}/highlights`, { token: reader.token, body: { text: 'from the web', percentage: 0.5, color: '#9ece6a' } });
    expect(made.status, made.text).toBe(201);
    const guessed = await push(dev, { uuid: crown.id, percentage: 0.42, deleted_highlights: ['made-up-key'] });
    expect(guessed.json.deleted.highlights).toBe(0);
    expect(guessed.json.ignored).toEqual([{ key: 'made-up-key', reason: 'unknown key' }]);
    expect((await web('highlights', crown.id)).json.data).toHaveLength(2);
    const pulled = (await meta(dev, crown.id)).json.highlights.find((a: { text: string }) => a.text === 'from the web');
    expect(pulled).toMatchObject({ dedup_key: made.json.id, color: 'green' });
    const del = await push(dev, { uuid: crown.id, percentage: 0.42, deleted_highlights: [pulled.dedup_key] });
    expect(del.json.deleted.highlights).toBe(1);
    expect((await web('highlights', crown.id)).json.data.map((a: { dedup_key: string }) => a.dedup_key)).toEqual(['h1']);
  });

  it('rule 5: a stale replay never resurrects, and the tombstones reach the device through the metadata fetch', async () => {
    const w = (await web('highlights', crown.id)).json.data.find((a: { dedup_key: string }) => a.dedup_key === 'h1');
    expect((await call('DELETE', `/api/highlights/${w.id}`, { token: reader.token })).status).toBe(200);
    const replay = await marks(dev, { book_uuid: crown.id, highlights: [{ dedup_key: 'h1', pos0: 'x', text: 'a line', color: 'red' }] });
    expect(replay.json).toMatchObject({ created: 0, ignored: [{ dedup_key: 'h1', reason: 'deleted on the server' }] });
    expect((await web('highlights', crown.id)).json.data).toEqual([]);
    // both lists in one push: each is judged against the book's annotations
    const again = await push(dev, { uuid: crown.id, percentage: 0.42, deleted_highlights: ['h1'], deleted_bookmarks: ['b1', 'h1'] });
    expect(again.json.deleted).toEqual({ highlights: 0, bookmarks: 0 });
    expect(again.json.ignored).toEqual([
      { key: 'h1', reason: 'already deleted' },
      { key: 'b1', reason: 'already deleted' },
      { key: 'h1', reason: 'unknown key' },
    ]);
    const m = await meta(dev, crown.id);
    expect(m.json.highlights).toEqual([]);
    expect(m.json.deleted.highlights).toEqual(expect.arrayContaining(['h1']));
    expect(m.json.deleted.bookmarks).toEqual(['b1']);
    // restored on the web (the history is the way back), it is live for the device again
    expect((await call('POST', `/api/annotations/${w.id}/restore`, { token: reader.token })).status).toBe(200);
    expect((await meta(dev, crown.id)).json.highlights.map((a: { dedup_key: string }) => a.dedup_key)).toEqual(['h1']);
  });

  it("keeps one user's positions and annotations from another's device", async () => {
    const m = await meta(otherDev, crown.id);
    expect(m.status, m.text).toBe(200);
    expect(m.json).toMatchObject({ percentage: null, koreader_xpointer: null, highlights: [], bookmarks: [], deleted: { highlights: [], notes: [], bookmarks: [] } });
    expect((await push(otherDev, { uuid: crown.id, percentage: 0.9 })).json.status).toBe('saved');
    expect((await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token })).json.percentage).toBe(0.42);
    expectError(await meta(dev, '00000000-0000-4000-8000-000000000000'), 404, 'book not found');
  });

  it('offers the plugin as a zip of the bindery.koplugin folder, to anyone, and names the address at registration and approval', async () => {
    const z = await call('GET', '/api/koreader/plugin');
    expect(z.status, z.text).toBe(200);
    expect(z.headers.get('content-type')).toBe('application/zip');
    expect(z.headers.get('content-disposition')).toBe('attachment; filename="bindery.koplugin.zip"');
    expect(Number(z.headers.get('content-length'))).toBe(z.bytes.length);
    // unpacked, it is the folder: the same files under bindery.koplugin/, byte for byte
    const zip = await openZip('', 'plugin zip', z.bytes);
    const names = zip.entries.map((e) => e.fileName);
    const folder = readdirSync(PLUGIN_DIR, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => relative(PLUGIN_DIR, join(e.parentPath, e.name)).split(sep).join('/'))
      .sort();
    expect(folder).toContain('main.lua');
    expect(names).toEqual(folder.map((f) => `bindery.koplugin/${f}`));
    for (const e of zip.entries) expect((await zip.read(e, 1 << 24)).equals(readFileSync(join(PLUGIN_DIR, e.fileName.slice('bindery.koplugin/'.length)))), e.fileName).toBe(true);
    zip.close();
    // kept: the same bytes again, and a revalidation with its ETag is a 304
    const again = await call('GET', '/api/koreader/plugin', { token: reader.token });
    expect(again.bytes.equals(z.bytes)).toBe(true);
    const etag = z.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const same = await call('GET', '/api/koreader/plugin', { headers: { 'if-none-match': etag } });
    expect([same.status, same.bytes.length]).toEqual([304, 0]);
    const head = await call('HEAD', '/api/koreader/plugin');
    expect([head.status, head.headers.get('content-type'), head.bytes.length]).toEqual([200, 'application/zip', 0]);
    // other methods: no such route (fastify answers 404 for a method it has no route for)
    for (const m of ['POST', 'PUT', 'DELETE']) expectError(await call(m, '/api/koreader/plugin', { body: {} }), 404, 'not found');
    expectError(await call('GET', '/api/koreader/plugin/main.lua'), 404, 'not found');

    // the registration's instructions and the approval page name the address
    const reg = await call('POST', '/api/devices/register', { body: { name: 'Plugin reader', client: 'koreader' } });
    expect(reg.status, reg.text).toBe(201);
    expect(reg.json.setup_instructions).toContain(`${base}/api/koreader/plugin`);
    const page = await call('GET', `/devices/approve/${reg.json.user_code}`, { cookie: `token=${reader.token}` });
    expect(page.status, page.text).toBe(200);
    expect(page.text).toContain('<a id="plugin-download" href="/api/koreader/plugin" download>bindery.koplugin.zip</a>');
  });

  it('queues a position for the user’s other devices, never back to the device that pushed it (plugin and stock kosync with its sync key)', async () => {
    const u = await register(call);
    const a = await enroll(call, u, 'Queue Kobo A');
    const b = await enroll(call, u, 'Queue Kobo B');
    expect(a.sync_key).toMatch(/^[a-z2-9]{5}(-[a-z2-9]{5}){3}$/);
    const queue = async (d: Enrolled) => {
      const r = await call('GET', `/api/devices/${d.device_id}/queue`, { token: u.token });
      expect(r.status, r.text).toBe(200);
      return (r.json.entries as { media_item_id: string; action: string; reason: string }[]).filter((e) => e.action === 'progress');
    };
    // the plugin: A pushes the crown; B is told, A is not
    const pushed = await push(a, { uuid: crown.id, percentage: 0.3, epubcfi: xp40 });
    expect(pushed.json.status, pushed.text).toBe('saved');
    expect(pushed.json.progress).toMatchObject({ client: 'koreader', device: 'Queue Kobo A' });
    const forB = await eventually(async () => {
      const q = await queue(b);
      expect(q.length).toBe(1);
      return q;
    });
    expect(forB).toMatchObject([{ media_item_id: crown.id, reason: 'reading position changed on Queue Kobo A' }]);
    // B's entry and A's (if any) come from the same event: A's queue is final here
    expect(await queue(a)).toEqual([]);

    // stock Progress sync signed in with A's sync key: the same rule
    const kosync = { 'x-auth-user': u.username, 'x-auth-key': md5(a.sync_key) };
    const gi = (await epubText(join(libDir, 'books/garden.epub'))).index;
    const xp25 = L.canonicalToXPointer(gi, L.percentageToCanonical(gi, 0.25));
    const put = await call('PUT', '/syncs/progress', {
      headers: kosync,
      body: { document: garden.formats[0].partial_md5, progress: xp25, percentage: 0.25, device: 'Kobo', device_id: 'c0ffee00c0ffee00' },
    });
    expect(put.status, put.text).toBe(200);
    const forB2 = await eventually(async () => {
      const q = await queue(b);
      expect(q.length).toBe(2);
      return q;
    });
    expect(forB2.find((e) => e.media_item_id === garden.id)).toMatchObject({ reason: 'reading position changed on Queue Kobo A' });
    expect(await queue(a)).toEqual([]);
    const onWeb = await call('GET', `/api/media-items/${garden.id}/progress`, { token: u.token });
    expect(onWeb.json).toMatchObject({ xpointer: xp25, client: 'koreader', device: 'Queue Kobo A' });
    expect(Math.abs(onWeb.json.percentage - 0.25)).toBeLessThanOrEqual(0.01);

    // B's first push of the garden, mid-read on A, is a conflict; keeping it on the web queues it for A, not B
    const first = await push(b, { uuid: garden.id, percentage: 0.5 });
    expect(first.json.status, first.text).toBe('conflict');
    expect(first.json.conflict.incoming).toMatchObject({ device: 'Queue Kobo B', bindery_device_id: b.device_id });
    const kept = await call('POST', `/api/progress-conflicts/${first.json.conflict.id}/resolve`, { token: u.token, body: { keep: 'incoming' } });
    expect(kept.status, kept.text).toBe(200);
    const forA = await eventually(async () => {
      const q = await queue(a);
      expect(q.length).toBe(1);
      return q;
    });
    expect(forA).toMatchObject([{ media_item_id: garden.id, reason: 'reading position changed on Queue Kobo B' }]);
    expect((await queue(b)).map((e) => e.media_item_id).sort()).toEqual([crown.id, garden.id].sort());

    // a sync-key push for a document Bindery does not know, linked later on the web: still A's own
    const doc = md5(`unknown-${mode}-${u.username}`);
    const stored = await call('PUT', '/syncs/progress', {
      headers: kosync,
      body: { document: doc, progress: '2', percentage: 0.3, device: 'Kobo', device_id: 'c0ffee00c0ffee00' },
    });
    expect(stored.status, stored.text).toBe(200);
    const linked = await call('PUT', `/api/kosync/documents/${doc}`, { token: u.token, body: { media_item_id: comic.id } });
    expect(linked.status, linked.text).toBe(200);
    expect((await call('GET', `/api/media-items/${comic.id}/progress`, { token: u.token })).json).toMatchObject({ page: 2, device: 'Queue Kobo A' });
    await eventually(async () => {
      const q = await queue(b);
      expect(q.map((e) => e.media_item_id).sort()).toEqual([crown.id, garden.id, comic.id].sort());
    });
    expect((await queue(a)).map((e) => e.media_item_id)).toEqual([garden.id]);
  });

  it('keeps annotation places in one canonical form: KOReader XPointers read as a CFI range on the web, and back, to the character', async () => {
    // made on the device: the web reads the CFI range of the same characters
    const k = span(0.3, 60);
    const fromDevice = await marks(dev, { book_uuid: crown.id, highlights: [{ dedup_key: 'span-k', pos0: k.pos0, pos1: k.pos1, text: k.text, color: 'green' }] });
    expect(fromDevice.json).toMatchObject({ created: 1, ignored: [], healed: [] });
    const onWeb = (await web('highlights', crown.id)).json.data.find((a: { dedup_key: string }) => a.dedup_key === 'span-k');
    expect(onWeb.position).toEqual({
      epubcfi: k.cfi,
      pos0: k.pos0,
      pos1: k.pos1,
      percentage: pctOf(k.start),
      spine_index: k.start.spine,
      doc_offset: k.start.offset,
      end_spine_index: k.end.spine,
      end_doc_offset: k.end.offset,
    });
    // that CFI written on the web is, for the device, the very XPointers it sent
    const again = await call('POST', `/api/media-items/${crown.id}/highlights`, { token: reader.token, body: { position: { epubcfi: onWeb.position.epubcfi }, text: k.text } });
    expect(again.status, again.text).toBe(201);
    expect(again.json.healed).toEqual([]);
    expect((await meta(dev, crown.id)).json.highlights.find((a: { dedup_key: string }) => a.dedup_key === again.json.id)).toMatchObject({ pos0: k.pos0, pos1: k.pos1 });

    // made on the web: the device reads XPointers, and sending them back gives the web its CFI
    const w = span(0.6, 45);
    const fromWeb = await call('POST', `/api/media-items/${crown.id}/highlights`, { token: reader.token, body: { position: { epubcfi: w.cfi }, text: w.text, color: '#7aa2f7' } });
    expect(fromWeb.status, fromWeb.text).toBe(201);
    expect(fromWeb.json).toMatchObject({ healed: [], position: { epubcfi: w.cfi, pos0: w.pos0, pos1: w.pos1, doc_offset: w.start.offset, end_doc_offset: w.end.offset } });
    const pulled = (await meta(dev, crown.id)).json.highlights.find((a: { dedup_key: string }) => a.dedup_key === fromWeb.json.id);
    expect(pulled).toMatchObject({ pos0: w.pos0, pos1: w.pos1, text: w.text, color: 'blue', percentage: pctOf(w.start) });
    const back = await marks(dev, { book_uuid: crown.id, highlights: [{ dedup_key: 'span-w', pos0: pulled.pos0, pos1: pulled.pos1, text: w.text }] });
    expect(back.json).toMatchObject({ created: 1, healed: [] });
    expect((await web('highlights', crown.id)).json.data.find((a: { dedup_key: string }) => a.dedup_key === 'span-w').position.epubcfi).toBe(w.cfi);

    // a device end past its text is healed, and the answer says so
    const past = k.pos1.replace(/\.\d+$/, '.99999');
    const healed = await marks(dev, { book_uuid: crown.id, notes: [{ dedup_key: 'span-past', pos0: k.pos0, pos1: past, text: k.text, note: 'mine' }] });
    expect(healed.json.created, healed.text).toBe(1);
    expect(healed.json.healed).toEqual([
      { dedup_key: 'span-past', healed: [expect.stringMatching(/^pos1: character offset 99999 is past the end of its text \(\d+ characters\); moved to its end$/)] },
    ]);
    const note = (await meta(dev, crown.id)).json.notes.find((a: { dedup_key: string }) => a.dedup_key === 'span-past');
    expect(note.pos0).toBe(k.pos0);
    expect(note.pos1).toMatch(/\.\d+$/);
    expect(note.pos1).not.toBe(past);

    // a fixed-layout book's place is its page: one past the last is the last, and the percentage follows the page
    const pages = comic.page_count as number;
    expect(pages).toBeGreaterThan(2);
    const paged = await marks(dev, {
      book_uuid: comic.id,
      bookmarks: [
        { dedup_key: 'page-past', page: pages + 5, percentage: 0.5 },
        { dedup_key: 'page-2', page: 2 },
      ],
    });
    expect(paged.json).toMatchObject({ created: 2, ignored: [] });
    expect(paged.json.healed).toEqual([
      {
        dedup_key: 'page-past',
        healed: [`page: ${pages + 5} is past the last page (${pages}); moved to the last page`, `percentage: 0.5 disagreed with page ${pages} of ${pages}; set from the page`],
      },
    ]);
    const comicMarks = (await meta(dev, comic.id)).json.bookmarks;
    expect(comicMarks.map((b: Record<string, unknown>) => [b.dedup_key, b.page, b.percentage, b.pos0])).toEqual([
      ['page-2', 2, Math.round((1 / (pages - 1)) * 1e6) / 1e6, null],
      ['page-past', pages, 1, null],
    ]);

    // another user's device and session see none of it
    expect((await meta(otherDev, crown.id)).json.highlights).toEqual([]);
    expectError(await call('GET', `/api/highlights/${fromWeb.json.id}`, { token: other.token }), 404, 'annotation not found');
  });
  it.skipIf(noLua !== null)(
    withLua(
      'the plugin’s client (LuaJIT): registers and is approved, pushes a position and annotations, pulls the web’s, deletes through deleted_highlights and deleted_bookmarks',
    ),
    async () => {
      const owner = await register(call);
      const work = mkdtempSync(join(tmpdir(), 'koplugin-'));
      const state = join(work, 'state.json');
      const book = join(libDir, 'books/crown.epub');
      const driver = async (command: string, session: Record<string, unknown>) => {
        const file = join(work, `${command}-${Math.random().toString(36).slice(2)}.json`);
        writeFileSync(file, JSON.stringify({ file: book, ...session }));
        const r = await runDriver([command, state, file]);
        expect(r.code, `${r.stderr}\n${JSON.stringify(r.lines)}`).toBe(0);
        return r.lines.at(-1)!;
      };

      // the SHA-256 the plugin computes is the catalog's
      const sha = (await runDriver(['sha256', book])).lines[0]!;
      expect(sha.sha256).toBe(createHash('sha256').update(readFileSync(book)).digest('hex'));
      expect(sha.sha256).toBe(crown.sha256);

      // registration: the device shows the approval address, the user approves, the poll collects the credential
      let code = '';
      const enrolled = await runDriver(['enroll', state, base, `Lua Kobo ${mode}`], async (l: Line) => {
        if (l.event !== 'registered') return;
        code = l.user_code;
        expect(l.auth_url).toBe(`/devices/approve/${l.user_code}`);
        expect(l.approval_url).toBe(`${base}/devices/approve/${l.user_code}`);
        expect(l.setup_instructions).toContain(l.approval_url);
        expect(l.poll_interval).toBeGreaterThan(0);
        const a = await call('POST', `/api/devices/${l.user_code}/approve`, { token: owner.token });
        expect(a.status, a.text).toBe(200);
      });
      expect(enrolled.code, enrolled.stderr).toBe(0);
      expect(enrolled.lines[0]!.event).toBe('registered');
      const approved = enrolled.lines.at(-1)!;
      expect(approved).toMatchObject({ event: 'approved', name: `Lua Kobo ${mode}` });
      expect(enrolled.lines.slice(1, -1).every((l) => l.event === 'pending')).toBe(true);
      const kept = JSON.parse(readFileSync(state, 'utf8'));
      expect(kept).toMatchObject({ server: base, device_id: approved.device_id });
      expect(kept.token).toMatch(/^bdt_/);
      const devices = await call('GET', '/api/devices', { token: owner.token });
      expect(devices.json.devices.map((d: { id: string; name: string }) => [d.id, d.name])).toEqual([[approved.device_id, `Lua Kobo ${mode}`]]);
      expect(code).toMatch(/^[0-9A-F]{12}$/i);

      // the book was opened on the web first (at its start: no conflict with the device's first push)
      const opened = await call('PUT', `/api/media-items/${crown.id}/progress`, { token: owner.token, body: { percentage: 0.01 } });
      expect([opened.status, opened.json.status]).toEqual([200, 'saved']);
      // reading on the device: a position (XPointer) and a red highlight, at places the book has
      const hs = span(0.2, 24);
      const h = { datetime: '2026-11-20 10:00:00', drawer: 'lighten', color: 'red', pos0: hs.pos0, pos1: hs.pos1, page: hs.pos0, pageno: 3, text: hs.text, chapter: 'One' };
      const pushed = await driver('push', { percentage: 0.4, xpointer: xp40, annotations: [h] });
      // the book is found by its SHA-256 once, then pushed by the uuid learned
      expect(pushed).toMatchObject({ event: 'pushed', uuid: crown.id, matched_by: 'sha256', sha256: crown.sha256 });
      expect(kept.books).toEqual({});
      expect(JSON.parse(readFileSync(state, 'utf8')).books[book]).toMatchObject({ uuid: crown.id, sha256: crown.sha256 });
      expect(pushed.progress).toMatchObject({ status: 'saved', media_item_id: crown.id, matched_by: 'uuid', deleted: { highlights: 0, bookmarks: 0 } });
      expect(pushed.annotations).toMatchObject({ created: 1, unchanged: 0, updated: 0 });
      const hKey = Object.keys(pushed.synced)[0]!;
      expect(pushed.synced).toEqual({ [hKey]: 'highlight' });
      expect(hKey).toMatch(/^ko-[0-9a-f]{32}$/);
      const w = await call('GET', `/api/media-items/${crown.id}/progress`, { token: owner.token });
      expect(w.status, w.text).toBe(200);
      expect(Math.abs(w.json.percentage - 0.4)).toBeLessThanOrEqual(0.01);
      expect(w.json).toMatchObject({ xpointer: xp40, client: 'koreader', device: `Lua Kobo ${mode}` });
      const webH = (await web('highlights', crown.id, owner)).json.data;
      expect(webH).toMatchObject([{ dedup_key: hKey, text: h.text, color: '#f7768e', position: { pos0: h.pos0, pos1: h.pos1 } }]);
      // pushing again changes nothing: the key is the same
      expect((await driver('push', { percentage: 0.4, xpointer: xp40, annotations: [h] })).annotations).toMatchObject({ created: 0, unchanged: 1 });

      // the latest position is this device's own: nothing to move, even from elsewhere in the book
      const own = await driver('pull', { percentage: 0.3, annotations: [h] });
      expect([own.position, own.position_reason]).toEqual([null, "the latest position is this device's"]);

      // read further on the web, and highlighted there: the device is offered the web's place and gets the highlight
      const further = await call('PUT', `/api/media-items/${crown.id}/progress`, { token: owner.token, body: { percentage: 0.6 } });
      expect([further.status, further.json.status]).toEqual([200, 'saved']);
      const ps = span(0.62, 12);
      const placed = { pos0: ps.pos0, pos1: ps.pos1 };
      const made = await call('POST', `/api/media-items/${crown.id}/highlights`, {
        token: owner.token,
        body: { text: 'from the web', percentage: 0.6, color: '#7aa2f7', ...placed },
      });
      expect(made.status, made.text).toBe(201);
      // one without an XPointer KOReader cannot place: it is not brought over, so never deleted from there
      const unplaced = await call('POST', `/api/media-items/${crown.id}/highlights`, { token: owner.token, body: { text: 'no XPointer', percentage: 0.65 } });
      expect(unplaced.status, unplaced.text).toBe(201);
      // made on the web reader from a CFI range alone: the server gives it XPointers and the device adds it
      const c = span(0.55, 40);
      const fromCfi = await call('POST', `/api/media-items/${crown.id}/highlights`, { token: owner.token, body: { position: { epubcfi: c.cfi }, text: c.text, color: '#9ece6a' } });
      expect(fromCfi.status, fromCfi.text).toBe(201);
      expect(Object.keys(fromCfi.json.position)).not.toContain('xpointer');
      // a point (a point CFI, its text too short to find): KOReader draws no highlight without an end
      const p = span(0.7, 4);
      const point = await call('POST', `/api/media-items/${crown.id}/highlights`, {
        token: owner.token,
        body: { position: { epubcfi: L.canonicalToCfi(idx, p.start) }, text: 'tiny' },
      });
      expect(point.status, point.text).toBe(201);
      expect([point.json.position.pos0, point.json.position.pos1]).toEqual([p.pos0, undefined]);
      const pulled = await driver('pull', { percentage: 0.4, xpointer: xp40, annotations: [h] });
      expect(pulled, pulled.position_reason).toMatchObject({ event: 'pulled', uuid: crown.id, position: { forward: true, client: 'web' } });
      expect(Math.abs(pulled.position.percentage - 0.6)).toBeLessThanOrEqual(0.01);
      // in the book's order
      expect(list(pulled.add)).toMatchObject([
        { bindery_key: fromCfi.json.id, text: c.text, color: 'green', bindery_color: 'green', drawer: 'lighten', pos0: c.pos0, pos1: c.pos1, page: c.pos0 },
        { bindery_key: made.json.id, text: 'from the web', color: 'blue', bindery_color: 'blue', drawer: 'lighten', ...placed, page: placed.pos0 },
      ]);
      expect(list(pulled.add)[0]!.pos_percent).toBe(pctOf(c.start));
      expect(list(pulled.remove)).toEqual([]);
      expect(pulled.synced).toEqual({ [hKey]: 'highlight', [made.json.id]: 'highlight', [fromCfi.json.id]: 'highlight' });
      // already there, the device is not moved
      const same = await driver('pull', { percentage: 0.6, annotations: [h, ...list(pulled.add)] });
      expect([same.position, same.position_reason]).toEqual([null, "already at the server's position"]);
      expect(list(same.add)).toEqual([]);

      // all three deleted on the device: the deletions travel in deleted_highlights, and they stay deleted
      const deleted = await driver('push', { percentage: 0.6, annotations: [] });
      expect(deleted.progress.deleted).toEqual({ highlights: 3, bookmarks: 0 });
      expect(list(deleted.progress.ignored)).toEqual([]);
      expect(deleted.synced).toEqual({});
      expect((await web('highlights', crown.id, owner)).json.data.map((a: { text: string }) => a.text).sort()).toEqual(['no XPointer', 'tiny']);
      const after = await driver('pull', { percentage: 0.6, annotations: [] });
      expect(list(after.add)).toEqual([]);
      expect(after.synced).toEqual({});

      // bookmarks: one deleted on the device goes in deleted_bookmarks; one deleted on the web leaves
      // the device at the next pull, and a stale copy sent later is refused and dropped, never re-made
      // (KOReader names a bookmark's place by the XPointer of the text there)
      const b1 = { datetime: '2026-11-20 11:00:00', page: L.canonicalToXPointer(idx, { spine: 2, offset: 0 }), pageno: 5, text: 'chapter two' };
      const b2 = { datetime: '2026-11-20 11:05:00', page: L.canonicalToXPointer(idx, { spine: 3, offset: 0 }), pageno: 9, text: 'chapter three' };
      const marked = await driver('push', { percentage: 0.6, annotations: [b1, b2] });
      expect(marked.annotations).toMatchObject({ created: 2, unchanged: 0 });
      const webB = (await web('bookmarks', crown.id, owner)).json.data as { id: string; dedup_key: string; position: { pos0: string; page: number } }[];
      expect(webB.map((b) => [b.position.pos0, b.position.page]).sort()).toEqual([
        [b1.page, b1.pageno],
        [b2.page, b2.pageno],
      ]);
      const mark = (pos0: string) => webB.find((b) => b.position.pos0 === pos0)!;
      expect(marked.synced).toEqual({ [mark(b1.page).dedup_key]: 'bookmark', [mark(b2.page).dedup_key]: 'bookmark' });
      const dropped = await driver('push', { percentage: 0.6, annotations: [b1] });
      expect(dropped.progress.deleted).toEqual({ highlights: 0, bookmarks: 1 });
      expect((await web('bookmarks', crown.id, owner)).json.data.map((b: { dedup_key: string }) => b.dedup_key)).toEqual([mark(b1.page).dedup_key]);
      expect((await call('DELETE', `/api/bookmarks/${mark(b1.page).id}`, { token: owner.token })).status).toBe(200);
      const gone = await driver('pull', { percentage: 0.6, annotations: [b1] });
      expect(list(gone.remove)).toEqual([mark(b1.page).dedup_key]);
      expect(gone.synced).toEqual({});
      const stale = await driver('push', { percentage: 0.6, annotations: [b1] });
      expect(stale.annotations).toMatchObject({ created: 0, ignored: [{ dedup_key: mark(b1.page).dedup_key, reason: 'deleted on the server' }] });
      expect(list(stale.remove)).toEqual([mark(b1.page).dedup_key]);
      expect(stale.synced).toEqual({});
      expect((await web('bookmarks', crown.id, owner)).json.data).toEqual([]);

      // the reader on the web and another account's device saw none of it
      expect((await meta(otherDev, crown.id)).json.highlights.map((a: { text: string }) => a.text)).not.toContain(h.text);
    },
    120_000,
  );
  it.skipIf(noLua !== null)(
    withLua('the plugin itself (main.lua on stand-ins for KOReader): menu registration, pull on open, debounced push, deletion on close, the web’s position asked for'),
    async () => {
      const owner = await register(call);
      const work = mkdtempSync(join(tmpdir(), 'koplugin-reader-'));
      const book = join(libDir, 'books/crown.epub');
      const progress = async () => (await call('GET', `/api/media-items/${crown.id}/progress`, { token: owner.token })).json;
      const highlights = async () => (await web('highlights', crown.id, owner)).json.data as { id: string; dedup_key: string; text: string }[];
      // a second place KOReader would name, at 50 % (stock sync's pull, through the locator index)
      const scout = await register(call);
      expect((await call('PUT', `/api/media-items/${crown.id}/progress`, { token: scout.token, body: { percentage: 0.5 } })).status).toBe(200);
      const xp50 = (await call('GET', `/syncs/progress/${crown.formats[0].partial_md5}`, { headers: { 'x-auth-user': scout.username, 'x-auth-key': md5(scout.password) } })).json
        .progress as string;
      expect(xp50).toMatch(/^\/body\/DocFragment\[\d+\]\//);
      expect(xp50).not.toBe(xp40);
      const opened = await call('PUT', `/api/media-items/${crown.id}/progress`, { token: owner.token, body: { percentage: 0.01 } });
      expect(opened.json.status).toBe('saved');

      const h1 = { datetime: '2026-11-21 09:00:00', drawer: 'lighten', color: 'yellow', pos0: xp40, pos1: xp40, page: xp40, pageno: 4, text: 'first mark' };
      const h2 = { datetime: '2026-11-21 09:10:00', drawer: 'lighten', color: 'green', pos0: xp50, pos1: xp50, page: xp50, pageno: 6, text: 'second mark' };
      const session = (extra: Record<string, unknown>) =>
        writeFileSync(join(work, 'session.json'), JSON.stringify({ server: base, book, title: crown.title, author: crown.authors[0], ...extra }));
      const run = async (phase: string, check: (l: Line) => unknown) => {
        const r = await runDriver([work, phase], check, READER);
        expect(r.code, `${r.stderr}\n${JSON.stringify(r.lines)}`).toBe(0);
        return r.lines;
      };

      // the file browser: server address, Register, approval in the browser (here: the API)
      session({});
      const reg = await run('register', async (l) => {
        expect(list(l.warnings)).toEqual([]);
        if (l.event === 'server') expect(l).toMatchObject({ server: base, menu: `Server: ${base}`, register_enabled: true });
        if (l.event === 'registered') {
          expect(l).toMatchObject({ pending: true, menu: 'Waiting for approval… (show address)' });
          const code = /\/devices\/approve\/([0-9A-Fa-f]{12})/.exec(l.message)![1]!;
          expect(l.message).toContain(`${base}/devices/approve/${code}`);
          expect(l.message).toContain('KOReader on Kobo Libra 2');
          expect((await call('POST', `/api/devices/${code}/approve`, { token: owner.token })).status).toBe(200);
        }
        if (l.event === 'approved') {
          expect(l).toMatchObject({ has_token: true, pending: false, message_closed: true, device_name: 'KOReader on Kobo Libra 2' });
          expect(l.menu).toBe('Registered as "KOReader on Kobo Libra 2" (register again)');
          expect(list<{ text: string }>(l.shown).map((w) => w.text)).toEqual(['This device is registered with Bindery as "KOReader on Kobo Libra 2".']);
        }
      });
      expect(reg.map((l) => l.event)).toEqual(['server', 'registered', 'approved']);
      expect((await call('GET', '/api/devices', { token: owner.token })).json.devices).toMatchObject([{ id: reg[2]!.device_id, name: 'KOReader on Kobo Libra 2' }]);

      // reading: opening pulls (the web is behind: kept) and sends the highlights, never the opening page
      session({ percentage: 0.4, xpointer: xp40, turn_to: { percentage: 0.5, xpointer: xp50 }, annotations: [h1, h2] });
      const read = await run('read', async (l) => {
        expect(list(l.warnings)).toEqual([]);
        if (l.event === 'opened') {
          expect(list(l.events)).toEqual([]);
          expect(l.sidecar).toMatchObject({ uuid: crown.id, sha256: crown.sha256, server: base });
          expect(Object.values(l.sidecar.synced)).toEqual(['highlight', 'highlight']);
          expect((await highlights()).map((a) => a.text).sort()).toEqual(['first mark', 'second mark']);
          expect((await progress()).percentage).toBe(0.01);
        }
        if (l.event === 'turning') expect((await progress()).percentage).toBe(0.01);
        if (l.event === 'idle') {
          const p = await progress();
          expect(Math.abs(p.percentage - 0.5)).toBeLessThanOrEqual(0.01);
          expect(p).toMatchObject({ xpointer: xp50, client: 'koreader', device: 'KOReader on Kobo Libra 2' });
        }
        if (l.event === 'closed') {
          expect(list(l.annotations).map((a) => a.text)).toEqual(['second mark']);
          expect((await highlights()).map((a) => a.text)).toEqual(['second mark']);
          expect(Object.values(l.sidecar.synced)).toEqual(['highlight']);
        }
      });
      expect(read.map((l) => l.event)).toEqual(['opened', 'turning', 'idle', 'closed']);

      // further on the web, with a highlight placed there: the reopened book asks, then goes there
      const further = await call('PUT', `/api/media-items/${crown.id}/progress`, { token: owner.token, body: { percentage: 0.7 } });
      expect(further.json.status).toBe('saved');
      const made = await call('POST', `/api/media-items/${crown.id}/highlights`, { token: owner.token, body: { text: 'web mark', pos0: xp50, pos1: xp50, color: '#bb9af7' } });
      expect(made.status, made.text).toBe(201);
      session({ percentage: 0.5, xpointer: xp50, annotations: [h2] });
      const again = await run('reopen', async (l) => {
        expect(list(l.warnings)).toEqual([]);
        if (l.event === 'asked') {
          expect(l.question).toBe('Go forward to 70% (read on web)?');
          expect(list(l.annotations).map((a) => [a.text, a.color, a.bindery_key ?? null])).toEqual([
            ['second mark', 'green', null],
            ['web mark', 'purple', made.json.id],
          ]);
          expect(list<{ name: string }>(l.events).map((e) => e.name)).toEqual(['AnnotationsModified']);
        }
        if (l.event === 'moved') {
          expect(list(l.events).at(-1)!.name).toBe('GotoPercent');
          expect(list(l.events).at(-1)!.args[0]).toBeCloseTo(70, 6);
          expect(l.percentage).toBeCloseTo(0.7, 6);
        }
        if (l.event === 'synced') {
          expect(l.moves).toBe(0);
          expect(list<{ text: string }>(l.shown).map((w) => w.text)).toEqual(['Progress pushed to Bindery.']);
          expect(await progress()).toMatchObject({ percentage: 0.7, client: 'koreader', device: 'KOReader on Kobo Libra 2' });
          expect((await highlights()).map((a) => a.text).sort()).toEqual(['second mark', 'web mark']);
        }
      });
      expect(again.map((l) => l.event)).toEqual(['asked', 'moved', 'synced']);
    },
    120_000,
  );
});
