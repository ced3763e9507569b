// Native Kobo sync (docs/decisions.md, "Native Kobo sync"), with a simulated Kobo against the real
// server in both modes: setup and the store address, the start-up calls, a first sync of 250 books
// paged at 100 (each exactly once), an unchanged second sync, books added, changed and removed
// between syncs, a rewritten file, reading state both ways through our KEPUB's spans (and KOReader's
// pull at the same place), highlights both ways with the device's change check, tags as collections
// both ways, a book removed on the device, a Kobo limited to its shelves, a hidden library's books
// removed, another user's books never offered, other store calls empty or passed to a stand-in
// store only when an admin says so, a replaced and a revoked token refused, hostile bodies refused
// without loss.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { epubText } from '../../services/catalog/src/formats/epub';
import { availableModes } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { api, eventually, instances, putSettings, register, type Account, type Call } from './helpers';
import { entryBook, koboSpans, koboSync, smallEpub, unzip } from './kobo-helpers';
import * as L from '@bindery/locator';

// a stand-in for Kobo's store, for the calls an admin lets through (the servers started here inherit the address)
const store = createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ from: 'store', method: req.method, path: req.url, authorization: req.headers.authorization ?? null }));
});
await new Promise<void>((r) => store.listen(0, '127.0.0.1', r));
process.env.KOBO_STORE_URL = `http://127.0.0.1:${(store.address() as AddressInfo).port}`;
afterAll(() => new Promise<void>((r) => store.close(() => r())));

const modes = await availableModes();
const get = instances(modes);
const CROWN = join(FIXTURE, 'J. R. Hartley/The Hidden Crown (1864).epub');
const { texts, index } = await epubText(CROWN);

/** 246 small books and the crown in the main library, 3 in the library hidden later: 250 in all. */
const MAIN_SMALL = 246;
/** A small book whose chapter says `text`. */
const smallEpubWith = (text: string) => smallEpub('Small Book 5', 'Ann Author', randomUUID(), text);

describe.each(modes)('Kobo sync (%s)', (mode) => {
  let call: Call;
  let admin: Account;
  let reader: Account;
  let other: Account;
  let main: Record<string, any>;
  let hidden: Record<string, any>;
  let otherLib: Record<string, any>;
  let mainDir: string;
  let mainItems: Record<string, any>[];
  let hiddenItems: Record<string, any>[];
  let otherItems: Record<string, any>[];
  let crown: Record<string, any>;
  let comic: Record<string, any>;
  let device: string;
  /** the store path of the Kobo: `/kobo/<token>` */
  let kobo: string;
  let token: string;

  beforeAll(async () => {
    const b = await get(mode);
    call = api(b);
    admin = await register(call);
    reader = await register(call);
    other = await register(call);
    mainDir = emptyDir();
    mkdirSync(join(mainDir, 'books'), { recursive: true });
    for (let i = 1; i <= MAIN_SMALL; i++) writeFileSync(join(mainDir, `books/book-${String(i).padStart(3, '0')}.epub`), smallEpub(`Small Book ${i}`, 'Ann Author', randomUUID()));
    copyFileSync(CROWN, join(mainDir, 'books/crown.epub'));
    // a comic: never offered to a Kobo (docs/decisions.md, "Native Kobo sync")
    copyFileSync(join(FIXTURE, 'comics/Owlhouse Press/The Midnight Agency/The Midnight Agency v1 #1.cbz'), join(mainDir, 'comic.cbz'));
    const hiddenDir = emptyDir();
    for (let i = 1; i <= 3; i++) writeFileSync(join(hiddenDir, `h${i}.epub`), smallEpub(`Hidden Book ${i}`, 'Hal Hidden', randomUUID()));
    const otherDir = emptyDir();
    for (let i = 1; i <= 2; i++) writeFileSync(join(otherDir, `o${i}.epub`), smallEpub(`Other Book ${i}`, 'Otto Other', randomUUID()));
    main = await createLibrary(call, admin.token, { name: `Kobo main ${mode}`, folders: [mainDir], watch: false });
    hidden = await createLibrary(call, admin.token, { name: `Kobo hidden ${mode}`, folders: [hiddenDir], watch: false });
    otherLib = await createLibrary(call, admin.token, { name: `Kobo other ${mode}`, folders: [otherDir], watch: false });
    for (const l of [main, hidden, otherLib]) await scan(call, admin.token, l.id);
    mainItems = await items(call, admin.token, main.id);
    hiddenItems = await items(call, admin.token, hidden.id);
    otherItems = await items(call, admin.token, otherLib.id);
    expect(mainItems.length).toBe(MAIN_SMALL + 2);
    comic = mainItems.find((i) => i.formats[0].file_path === 'comic.cbz')!;
    mainItems = mainItems.filter((i) => i !== comic);
    crown = mainItems.find((i) => i.formats[0].file_path === 'books/crown.epub')!;
    // the reader sees the main and the hidden library, not the other one
    const g = await call('PUT', `/api/auth/users/${reader.id}/libraries`, { token: admin.token, body: { all_libraries: false, library_ids: [main.id, hidden.id] } });
    expect(g.status, g.text).toBe(200);
    const grant = await call('PUT', `/api/auth/users/${other.id}/libraries`, { token: admin.token, body: { all_libraries: false, library_ids: [otherLib.id] } });
    expect(grant.status, grant.text).toBe(200);
  }, 300_000);

  it('a Kobo made by its owner gets a store address; the token is kept only as a hash', async () => {
    const r = await call('POST', '/api/devices/kobo', { token: reader.token, body: { name: 'Libra 2' } });
    expect(r.status, r.text).toBe(201);
    expect(r.json.device).toMatchObject({ name: 'Libra 2', client: 'kobo' });
    expect(r.json.kobo_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/kobo\/bkt_[A-Za-z0-9_-]{43}$/);
    expect(r.json.kobo_config).toEqual({ file: '.kobo/Kobo/Kobo eReader.conf', section: '[OneStoreServices]', line: `api_endpoint=${r.json.kobo_url}` });
    device = r.json.device.id;
    token = r.json.kobo_url.split('/kobo/')[1];
    kobo = `/kobo/${token}`;
    // the device list never shows the token
    const list = await call('GET', '/api/devices', { token: reader.token });
    expect(list.text).not.toContain(token);
    expect(list.json.devices.find((d: { id: string }) => d.id === device)).toMatchObject({ client: 'kobo' });
    // a registration with client kobo, approved, carries its address in the approval's answer
    const reg = await call('POST', '/api/devices/register', { body: { name: 'Clara', client: 'kobo', model: 'Clara HD' } });
    const a = await call('POST', `/api/devices/${reg.json.user_code}/approve`, { token: other.token });
    expect(a.status, a.text).toBe(200);
    expect(a.json.kobo_url).toMatch(/\/kobo\/bkt_/);
    expect(a.json.kobo_config.line).toBe(`api_endpoint=${a.json.kobo_url}`);
  });

  it('answers the start-up calls so the device never shows a sign-in error', async () => {
    const auth = await call('POST', `${kobo}/v1/auth/device`, { body: { AffiliateName: 'Kobo', ClientKey: 'x', DeviceId: 'y', PlatformId: 'z', SerialNumber: 'n' } });
    expect(auth.status, auth.text).toBe(200);
    expect(auth.json).toMatchObject({ TokenType: 'Bearer', AccessToken: expect.any(String), RefreshToken: expect.any(String), UserKey: expect.any(String) });
    const init = await call('GET', `${kobo}/v1/initialization`);
    expect(init.status).toBe(200);
    expect(init.headers.get('x-kobo-apitoken')).toBe('e30=');
    const res = init.json.Resources;
    expect(res.library_sync).toMatch(new RegExp(`${kobo}/v1/library/sync$`));
    expect(res.image_url_template).toMatch(new RegExp(`${kobo}/v1/books/\\{ImageId\\}/thumbnail/\\{Width\\}/\\{Height\\}/false/image\\.jpg$`));
    expect(res.image_url_quality_template).toContain('/{Width}/{Height}/{Quality}/{IsGreyscale}/image.jpg');
    expect(res.reading_services_host).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await call('GET', `${kobo}/v1/user/profile`)).status).toBe(200);
    expect((await call('GET', `${kobo}/v1/user/loyalty/benefits`)).status).toBe(200);
    const any = await call('GET', `${kobo}/v1/products/featured/abc`);
    expect([any.status, any.json]).toEqual([200, {}]);
    // the reading-services host: answered, never a 401, whatever the bearer
    for (const [m, p] of [
      ['POST', '/api/v3/content/checkforchanges'],
      ['GET', `/api/v3/content/${crown.id}/annotations`],
      ['GET', '/api/UserStorage/Metadata'],
    ] as const) {
      const r = await call(m, p, { headers: { authorization: 'Bearer nonsense' }, ...(m === 'POST' ? { body: [] } : {}) });
      expect(r.status, `${m} ${p}`).toBe(200);
    }
  });

  it('other store calls are answered empty, or passed on to the store when an admin says so', async () => {
    const path = `${kobo}/v1/products/featured/abc?x=1`;
    expect((await call('GET', path)).json).toEqual({});
    expect((await putSettings(call, admin.token, { kobo_store_proxy: true })).status).toBe(200);
    const r = await eventually(async () => {
      const x = await call('GET', path, { headers: { authorization: `Bearer ${token}` } });
      expect(x.json.from).toBe('store');
      return x;
    });
    // the store gets the device's path, never our token or its bearer for us
    expect(r.json).toEqual({ from: 'store', method: 'GET', path: '/v1/products/featured/abc?x=1', authorization: null });
    // what Bindery answers itself is never passed on
    expect((await call('GET', `${kobo}/v1/initialization`)).json.Resources.library_sync).toContain(kobo);
    expect((await putSettings(call, admin.token, { kobo_store_proxy: false })).status).toBe(200);
    await eventually(async () => expect((await call('GET', path)).json).toEqual({}));
  });

  let last: string;
  it('first sync: 250 books paged at 100, each exactly once, none of another user’s', async () => {
    const run = await koboSync(call, kobo, 'eyJ2ZXJzaW9uIjoiMS0xLTAiLCJkYXRhIjp7fX0='); // a Calibre-Web token: accepted, replaced
    expect(run.pages.map((p) => (p.json as unknown[]).length)).toEqual([100, 100, 50]);
    expect(run.pages.map((p) => p.headers.get('x-kobo-sync'))).toEqual(['continue', 'continue', null]);
    const ids = run.entries.map((e) => entryBook(e)!).filter((b) => b.kind === 'NewEntitlement');
    expect(ids.length).toBe(250);
    expect(new Set(ids.map((b) => b.id)).size).toBe(250);
    expect(new Set(ids.map((b) => b.id))).toEqual(new Set([...mainItems, ...hiddenItems].map((i) => i.id)));
    for (const o of [...otherItems, comic]) expect(run.pages.map((p) => p.text).join('')).not.toContain(o.id);
    expect((await call('GET', `${kobo}/v1/books/${comic.id}/file/kepub`)).status).toBe(404);
    const c = run.entries.find((e) => e.NewEntitlement?.BookEntitlement.Id === crown.id)!.NewEntitlement;
    expect(c.BookEntitlement).toMatchObject({ IsRemoved: false, Status: 'Active', OriginCategory: 'Imported', Accessibility: 'Full' });
    expect(c.BookEntitlement.Created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(c.BookMetadata).toMatchObject({ Title: crown.title, EntitlementId: crown.id, Contributors: crown.authors });
    expect(c.BookMetadata.DownloadUrls[0]).toMatchObject({ Format: 'KEPUB', Platform: 'Generic' });
    expect(c.BookMetadata.DownloadUrls[0].Url).toMatch(new RegExp(`${kobo}/v1/books/${crown.id}/file/kepub$`));
    last = run.token;
  }, 120_000);

  it('an unchanged second sync is empty', async () => {
    const run = await koboSync(call, kobo, last);
    expect(run.entries).toEqual([]);
    expect(run.pages.length).toBe(1);
    last = run.token;
  });

  it('an answer the device never got is sent again (its token never came back)', async () => {
    const book = mainItems.find((i) => i.formats[0].file_path === 'books/book-001.epub')!;
    expect((await call('PUT', `/api/media-items/${book.id}`, { token: admin.token, body: { title: 'Small Book One' } })).status).toBe(200);
    const lost = await koboSync(call, kobo, last);
    expect(lost.entries.map((e) => entryBook(e))).toEqual([{ kind: 'ChangedEntitlement', id: book.id, removed: false }]);
    // the device retries with its previous token: the same change again
    const again = await koboSync(call, kobo, last);
    expect(again.entries.map((e) => entryBook(e))).toEqual([{ kind: 'ChangedEntitlement', id: book.id, removed: false }]);
    expect(again.entries[0]!.ChangedEntitlement.BookMetadata.Title).toBe('Small Book One');
    last = (await koboSync(call, kobo, again.token)).token;
  });

  it('a book added, one changed and one removed between syncs', async () => {
    writeFileSync(join(mainDir, 'books/new-book.epub'), smallEpub('A New Book', 'Ned New', randomUUID()));
    await scan(call, admin.token, main.id);
    const added = (await items(call, admin.token, main.id)).find((i) => i.formats[0].file_path === 'books/new-book.epub')!;
    const changed = mainItems.find((i) => i.formats[0].file_path === 'books/book-002.epub')!;
    const removed = mainItems.find((i) => i.formats[0].file_path === 'books/book-003.epub')!;
    expect((await call('PUT', `/api/media-items/${changed.id}`, { token: admin.token, body: { title: 'Small Book Two, Revised' } })).status).toBe(200);
    expect((await call('DELETE', `/api/media-items/${removed.id}`, { token: admin.token })).status).toBe(200);
    const run = await koboSync(call, kobo, last);
    const got = run.entries.map((e) => entryBook(e)!);
    expect(got).toHaveLength(3);
    expect(got).toContainEqual({ kind: 'NewEntitlement', id: added.id, removed: false });
    expect(got).toContainEqual({ kind: 'ChangedEntitlement', id: changed.id, removed: false });
    expect(got).toContainEqual({ kind: 'ChangedEntitlement', id: removed.id, removed: true });
    last = (await koboSync(call, kobo, run.token)).token;
    expect((await koboSync(call, kobo, last)).entries).toEqual([]);
  });

  it('a book whose file changed is sent again, and its KEPUB is made from the new file', async () => {
    const book = mainItems.find((i) => i.formats[0].file_path === 'books/book-005.epub')!;
    const before = await call('GET', `${kobo}/v1/books/${book.id}/file/kepub`);
    expect(
      koboSpans(before.bytes)
        .map((s) => s.text)
        .join(''),
    ).not.toContain('Rewritten');
    writeFileSync(join(mainDir, 'books/book-005.epub'), smallEpubWith('Rewritten now. Still short.'));
    await scan(call, admin.token, main.id);
    const run = await koboSync(call, kobo, last);
    expect(run.entries.map((e) => entryBook(e))).toEqual([{ kind: 'ChangedEntitlement', id: book.id, removed: false }]);
    last = run.token;
    const after = await call('GET', `${kobo}/v1/books/${book.id}/file/kepub`);
    expect(after.status).toBe(200);
    expect(koboSpans(after.bytes).map((s) => s.text)).toContain('Rewritten now. ');
  });

  let spans: { source: string; id: string; text: string }[];
  it('downloads the KEPUB with Content-Length; it is an EPUB with the source’s text in Kobo spans', async () => {
    const r = await call('GET', `${kobo}/v1/books/${crown.id}/file/kepub`);
    expect(r.status, r.text.slice(0, 200)).toBe(200);
    expect(Number(r.headers.get('content-length'))).toBe(r.bytes.length);
    const files = unzip(r.bytes);
    expect(files.get('mimetype')?.toString()).toBe('application/epub+zip');
    spans = koboSpans(r.bytes);
    expect(spans.length).toBeGreaterThan(50);
    const all = texts.join('');
    for (const s of spans.slice(0, 40)) expect(all).toContain(s.text.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').trim().slice(0, 20));
    // a cover at the size asked
    const cover = await call('GET', `${kobo}/v1/books/${crown.id}.x/thumbnail/120/180/false/image.jpg`);
    expect([200, 404]).toContain(cover.status);
    if (cover.status === 200) expect(cover.headers.get('content-type')).toBe('image/jpeg');
  });

  it('reading state from the Kobo: a span becomes the web’s position, and is not sent back', async () => {
    const s = spans[Math.floor(spans.length * 0.6)]!;
    const put = await call('PUT', `${kobo}/v1/library/${crown.id}/state`, {
      body: {
        ReadingStates: [
          {
            CurrentBookmark: { ProgressPercent: 60, ContentSourceProgressPercent: 10, Location: { Value: s.id, Type: 'KoboSpan', Source: s.source } },
            Statistics: { SpentReadingMinutes: 5, RemainingTimeMinutes: 30 },
            StatusInfo: { Status: 'Reading' },
          },
        ],
      },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.json).toMatchObject({ RequestResult: 'Success', UpdateResults: [{ EntitlementId: crown.id, CurrentBookmarkResult: { Result: 'Success' } }] });
    const w = await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token });
    expect(w.json).toMatchObject({ client: 'kobo', device: 'Libra 2' });
    // the web's place is the span's first character
    const text = s.text.replace(/&amp;/g, '&').trim().slice(0, 12);
    expect(texts[w.json.spine_index]!.slice(w.json.doc_offset, w.json.doc_offset + 40)).toContain(text);
    // KOReader's stock sync pulls the same place (within 1 %)
    const md5 = (x: string) => createHash('md5').update(x).digest('hex');
    const ko = await call('GET', `/syncs/progress/${crown.formats[0].partial_md5}`, { headers: { 'x-auth-user': reader.username, 'x-auth-key': md5(reader.password) } });
    expect(ko.status, ko.text).toBe(200);
    expect(Math.abs(Number(ko.json.percentage) - w.json.percentage)).toBeLessThan(0.01);
    // GET state gives the same span back
    const g = await call('GET', `${kobo}/v1/library/${crown.id}/state`);
    expect(g.json[0].CurrentBookmark.Location).toEqual({ Value: s.id, Type: 'KoboSpan', Source: s.source });
    // the device has what it wrote: nothing comes back
    const run = await koboSync(call, kobo, last);
    expect(run.entries).toEqual([]);
    last = run.token;
  });

  it('reading state from the web reaches the Kobo at the same place (within 1 %), and Finished is finished', async () => {
    // the web's first write of a book the Kobo is reading would open a conflict (the rules as for
    // KOReader); the reader settles it by writing with force
    const web = await call('PUT', `/api/media-items/${crown.id}/progress`, { token: reader.token, body: { percentage: 0.4, force: true } });
    expect(web.status, web.text).toBe(200);
    expect(web.json.status).toBe('saved');
    // another replica's read model may lag a moment behind the web's write
    const run = await eventually(async () => {
      const r = await koboSync(call, kobo, last);
      expect(r.entries.length).toBeGreaterThan(0);
      return r;
    });
    expect(run.entries.map((e) => entryBook(e))).toEqual([{ kind: 'ChangedReadingState', id: crown.id }]);
    const rs = run.entries[0]!.ChangedReadingState.ReadingState;
    expect(rs.StatusInfo.Status).toBe('Reading');
    expect(rs.CurrentBookmark.ProgressPercent).toBeCloseTo(40, 0);
    const loc = rs.CurrentBookmark.Location;
    expect(loc.Type).toBe('KoboSpan');
    last = run.token;
    // the Kobo sends that place back as its own page turn: the web lands within 1 % of 40 %
    const back = await call('PUT', `${kobo}/v1/library/${crown.id}/state`, {
      body: { ReadingStates: [{ CurrentBookmark: { ProgressPercent: 40, Location: loc }, StatusInfo: { Status: 'Reading' } }] },
    });
    expect(back.status).toBe(200);
    const w = await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token });
    expect(Math.abs(w.json.percentage - 0.4)).toBeLessThan(0.01);
    // Finished, sent with the first span: the book is finished, not at its start
    const first = spans[0]!;
    await call('PUT', `${kobo}/v1/library/${crown.id}/state`, {
      body: {
        ReadingStates: [{ CurrentBookmark: { ProgressPercent: 0, Location: { Value: first.id, Type: 'KoboSpan', Source: first.source } }, StatusInfo: { Status: 'Finished' } }],
      },
    });
    const f = await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token });
    expect(f.json.percentage).toBe(1);
    // the first-page guard applies as for KOReader: a position at or below 1 % does not overwrite it
    const guard = await call('PUT', `${kobo}/v1/library/${crown.id}/state`, {
      body: { ReadingStates: [{ CurrentBookmark: { ProgressPercent: 0.5 }, StatusInfo: { Status: 'Reading' } }] },
    });
    expect(guard.json.RequestResult).toBe('Success');
    expect((await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token })).json.percentage).toBe(1);
    last = (await koboSync(call, kobo, last)).token;
  });

  it('a highlight both ways: one made on the Kobo is the web’s, one made on the web the Kobo gets', async () => {
    const s = spans.filter((x) => x.text.length > 60)[10]!;
    const words = s.text.replace(/&amp;/g, '&').replace(/^\s+/, '');
    const lead = s.text.length - s.text.replace(/^\s+/, '').length;
    const path = `span#${s.id.replace(/\./g, '\\.')}`;
    const kobo1 = {
      id: 'kobo-highlight-1',
      type: 'highlight',
      highlightedText: words.slice(0, 25),
      highlightColor: '#FFFF00',
      clientLastModifiedUtc: new Date().toISOString(),
      location: { span: { chapterFilename: s.source, chapterProgress: 0.5, chapterTitle: '', startPath: path, startChar: lead, endPath: path, endChar: lead + 25 } },
    };
    const bearer = { authorization: `Bearer ${token}` };
    const patch = (body: unknown) => call('PATCH', `/api/v3/content/${crown.id}/annotations`, { headers: bearer, body });
    expect((await patch({ updatedAnnotations: [kobo1], deletedAnnotationIds: [] })).status).toBe(204);
    // a replay changes nothing
    expect((await patch({ updatedAnnotations: [kobo1], deletedAnnotationIds: [] })).status).toBe(204);
    const web = await call('GET', `/api/media-items/${crown.id}/highlights`, { token: reader.token });
    const mine = web.json.data.filter((a: { dedup_key: string }) => a.dedup_key === 'kobo:kobo-highlight-1');
    expect(mine).toHaveLength(1);
    expect(mine[0].text).toBe(words.slice(0, 25));
    const p = mine[0].position;
    expect(texts[p.spine_index]!.slice(p.doc_offset, p.end_doc_offset)).toBe(words.slice(0, 25));
    // made on the web, 200 characters further on
    const at = { spine: p.spine_index as number, offset: (p.doc_offset as number) + 200 };
    let o = at.offset;
    while (!/\s/.test(texts[at.spine]![o - 1] ?? ' ') || /\s/.test(texts[at.spine]![o] ?? ' ')) o++;
    const text = texts[at.spine]!.slice(o, o + 20);
    const made = await call('POST', `/api/media-items/${crown.id}/highlights`, {
      token: reader.token,
      body: { position: { epubcfi: L.canonicalToCfiRange(index, { spine: at.spine, offset: o }, { spine: at.spine, offset: o + 20 }) }, text },
    });
    expect(made.status, made.text).toBe(201);
    // the device asks what changed: the book is named (a web highlight to deliver), a book with nothing of ours is not
    const check = (body: unknown, headers: Record<string, string> = bearer) => call('POST', '/api/v3/content/checkforchanges', { headers, body });
    const small = mainItems.find((i) => i.formats[0].file_path === 'books/book-030.epub')!;
    const kobosOwn = 'W/"A:1408092558-7Uhimw6qgE"';
    expect(
      (
        await check([
          { ContentId: crown.id, etag: kobosOwn },
          { ContentId: small.id, etag: kobosOwn },
        ])
      ).json,
    ).toEqual([crown.id]);
    const got = await call('GET', `/api/v3/content/${crown.id}/annotations`, { headers: bearer });
    expect(got.status).toBe(200);
    const etag = got.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"bindery:/);
    // with the ETag we gave: nothing changed, until something does
    expect((await check([{ ContentId: crown.id, etag }])).json).toEqual([]);
    expect((await check([{ ContentId: crown.id, etag }], {})).json).toEqual([]);
    const ids = got.json.annotations.map((a: { id: string }) => a.id);
    expect(ids).toContain('kobo-highlight-1');
    expect(ids).toContain(made.json.id);
    const w = got.json.annotations.find((a: { id: string }) => a.id === made.json.id);
    expect(w).toMatchObject({ type: 'highlight', highlightedText: text });
    expect(w.location.span.startPath).toMatch(/^span#kobo\\\.\d+\\\.\d+$/);
    // the Kobo's span and character name the web's first character
    const ks = spans.find((x) => x.id === w.location.span.startPath.replace('span#', '').replace(/\\/g, '') && x.source === w.location.span.chapterFilename)!;
    expect(ks.text.replace(/&amp;/g, '&').slice(w.location.span.startChar)).toMatch(new RegExp(`^${text.slice(0, 5).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    // deleted on the Kobo: gone from the web
    expect((await patch({ updatedAnnotations: [], deletedAnnotationIds: ['kobo-highlight-1'] })).status).toBe(204);
    expect((await check([{ ContentId: crown.id, etag }])).json).toEqual([crown.id]);
    const after = await call('GET', `/api/media-items/${crown.id}/highlights`, { token: reader.token });
    expect(after.json.data.map((a: { dedup_key: string }) => a.dedup_key)).not.toContain('kobo:kobo-highlight-1');
    // without a Kobo's bearer: answered, nothing changed
    expect((await call('PATCH', `/api/v3/content/${crown.id}/annotations`, { body: { updatedAnnotations: [kobo1] } })).status).toBe(204);
  });

  it('tags: a shelf made on the device is a collection; one made on the web reaches the device', async () => {
    const small = mainItems.find((i) => i.formats[0].file_path === 'books/book-010.epub')!;
    const made = await call('POST', `${kobo}/v1/library/tags`, { body: { Name: 'On the Kobo', Items: [{ RevisionId: crown.id, Type: 'ProductRevisionTagItem' }] } });
    expect(made.status, made.text).toBe(201);
    const tagId = made.json as string;
    const cols = await call('GET', '/api/collections', { token: reader.token });
    expect(cols.json.data.find((c: { id: string }) => c.id === tagId)).toMatchObject({ name: 'On the Kobo' });
    const members = await call('GET', `/api/collections/${tagId}/items`, { token: reader.token });
    expect(members.json.data.map((b: { media_item_id: string }) => b.media_item_id)).toEqual([crown.id]);
    expect((await call('POST', `${kobo}/v1/library/tags/${tagId}/items`, { body: { Items: [{ RevisionId: small.id, Type: 'ProductRevisionTagItem' }] } })).status).toBe(201);
    expect((await call('PUT', `${kobo}/v1/library/tags/${tagId}`, { body: { Name: 'Kobo shelf' } })).status).toBe(200);
    expect((await call('POST', `${kobo}/v1/library/tags/${tagId}/items/delete`, { body: { Items: [{ RevisionId: crown.id, Type: 'ProductRevisionTagItem' }] } })).status).toBe(200);
    const after = await call('GET', `/api/collections/${tagId}/items`, { token: reader.token });
    expect(after.json.data.map((b: { media_item_id: string }) => b.media_item_id)).toEqual([small.id]);
    // made on the web
    const web = await call('POST', '/api/collections', { token: reader.token, body: { name: 'Web shelf' } });
    expect(web.status, web.text).toBe(201);
    await call('POST', `/api/collections/${web.json.id}/items`, { token: reader.token, body: { media_item_ids: [crown.id] } });
    const run = await koboSync(call, kobo, last);
    const webTag = run.entries.find((e) => e.NewTag?.Tag.Id === web.json.id)?.NewTag.Tag;
    expect(webTag).toMatchObject({ Name: 'Web shelf', Type: 'UserTag', Items: [{ RevisionId: crown.id, Type: 'ProductRevisionTagItem' }] });
    expect(run.entries.find((e) => e.NewTag?.Tag.Id === tagId)?.NewTag.Tag).toMatchObject({ Name: 'Kobo shelf', Items: [{ RevisionId: small.id }] });
    last = run.token;
    // deleted on the web: DeletedTag
    expect((await call('DELETE', `/api/collections/${web.json.id}`, { token: reader.token })).status).toBe(200);
    const del = await koboSync(call, kobo, last);
    expect(del.entries).toEqual([{ DeletedTag: { Tag: { Id: web.json.id, LastModified: expect.any(String) } } }]);
    // deleted on the device: the collection goes
    expect((await call('DELETE', `${kobo}/v1/library/tags/${tagId}`)).status).toBe(200);
    await eventually(async () => expect((await call('GET', `/api/collections/${tagId}`, { token: reader.token })).status).toBe(404));
    last = (await koboSync(call, kobo, del.token)).token;
  });

  it('a book removed on the device is recorded, not offered again, and its file stays', async () => {
    const book = mainItems.find((i) => i.formats[0].file_path === 'books/book-020.epub')!;
    const r = await call('DELETE', `${kobo}/v1/library/${book.id}`);
    expect(r.status, r.text).toBe(204);
    const run = await koboSync(call, kobo, last);
    expect(run.entries.map((e) => entryBook(e)?.id)).not.toContain(book.id);
    expect((await call('GET', `/api/media-items/${book.id}`, { token: reader.token })).status).toBe(200);
    last = run.token;
  });

  it('a hidden library’s books are removed from the device at the next sync', async () => {
    const g = await call('PUT', `/api/auth/users/${reader.id}/libraries`, { token: admin.token, body: { all_libraries: false, library_ids: [main.id] } });
    expect(g.status, g.text).toBe(200);
    const run = await koboSync(call, kobo, last);
    const got = run.entries.map((e) => entryBook(e)!);
    expect(got.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      hiddenItems.map((i) => ({ kind: 'ChangedEntitlement', id: i.id, removed: true })).sort((a, b) => a.id.localeCompare(b.id)),
    );
    // and their metadata, state and file are no longer answered
    expect((await call('GET', `${kobo}/v1/library/${hiddenItems[0]!.id}/metadata`)).status).toBe(404);
    expect((await call('GET', `${kobo}/v1/books/${hiddenItems[0]!.id}/file/kepub`)).status).toBe(404);
    last = run.token;
  });

  it('a Kobo set to its shelves only: the other books leave it (paged), a shelved collection’s books and tag arrive', async () => {
    expect((await call('PUT', `/api/devices/${device}/kobo`, { token: reader.token, body: { books: 'nothing' } })).status).toBe(400);
    const set = await call('PUT', `/api/devices/${device}/kobo`, { token: reader.token, body: { books: 'shelves' } });
    expect(set.status, set.text).toBe(200);
    const gone = await koboSync(call, kobo, last);
    expect(gone.pages.length).toBe(3);
    expect(gone.pages.slice(0, 2).map((p) => (p.json as unknown[]).length)).toEqual([100, 100]);
    const removed = gone.entries.map((e) => entryBook(e)).filter((b) => b !== null);
    expect(removed.every((b) => b.kind === 'ChangedEntitlement' && b.removed)).toBe(true);
    expect(new Set(removed.map((b) => b.id)).size).toBe(removed.length);
    expect(removed.map((b) => b.id)).toContain(crown.id);
    last = gone.token;
    const col = await call('POST', '/api/collections', { token: reader.token, body: { name: 'For the Kobo' } });
    await call('POST', `/api/collections/${col.json.id}/items`, { token: reader.token, body: { media_item_ids: [crown.id] } });
    expect((await call('POST', `/api/devices/${device}/shelves`, { token: reader.token, body: { collection_id: col.json.id } })).status).toBe(201);
    const back = await koboSync(call, kobo, last);
    const got = back.entries.map((e) => entryBook(e)).filter((b) => b !== null);
    expect(got.filter((b) => b.kind === 'NewEntitlement').map((b) => b.id)).toEqual([crown.id]);
    expect(back.entries.find((e) => e.NewTag)?.NewTag.Tag).toMatchObject({ Id: col.json.id, Name: 'For the Kobo', Items: [{ RevisionId: crown.id }] });
    last = back.token;
  });

  it('hostile input is refused with 400 and loses nothing', async () => {
    const before = (await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token })).json;
    const bad = [
      JSON.stringify({ ReadingStates: [{ CurrentBookmark: { ProgressPercent: 50, Location: { Value: 'kobo.1.1\u0000', Type: 'KoboSpan', Source: 'x' } } }] }),
      '{"ReadingStates":[{"CurrentBookmark":{"ProgressPercent":50,"Location":{"Value":"\\ud800","Type":"KoboSpan","Source":"x"}}}]}',
      `${'{"a":'.repeat(200)}1${'}'.repeat(200)}`,
      JSON.stringify({ ReadingStates: [{ CurrentBookmark: { ProgressPercent: 'lots' } }] }),
      JSON.stringify({ ReadingStates: [{ CurrentBookmark: { ProgressPercent: 1e9 } }] }),
      JSON.stringify({ ReadingStates: 'no' }),
    ];
    for (const raw of bad) {
      const r = await call('PUT', `${kobo}/v1/library/${crown.id}/state`, { raw });
      expect(r.status, raw.slice(0, 60)).toBe(400);
    }
    const tagBad = await call('POST', `${kobo}/v1/library/tags`, { raw: JSON.stringify({ Name: 'x\u0001y', Items: [] }) });
    expect(tagBad.status).toBe(400);
    const after = (await call('GET', `/api/media-items/${crown.id}/progress`, { token: reader.token })).json;
    expect(after).toEqual(before);
  });

  it('a replaced token stops working at once; a deleted Kobo’s token is refused', async () => {
    const r = await call('POST', `/api/devices/${device}/kobo-token`, { token: reader.token });
    expect(r.status, r.text).toBe(200);
    const fresh = `/kobo/${r.json.kobo_url.split('/kobo/')[1]}`;
    expect((await call('GET', `${kobo}/v1/library/sync`)).status).toBe(401);
    expect((await call('GET', `${kobo}/v1/initialization`)).status).toBe(401);
    const run = await koboSync(call, fresh, last);
    expect(run.entries).toEqual([]);
    // another user cannot replace it
    expect((await call('POST', `/api/devices/${device}/kobo-token`, { token: other.token })).status).toBe(404);
    expect((await call('DELETE', `/api/devices/${device}`, { token: reader.token })).status).toBe(200);
    expect((await call('GET', `${fresh}/v1/library/sync`)).status).toBe(401);
    expect((await call('POST', `${fresh}/v1/auth/device`, { body: {} })).status).toBe(401);
    // the reading-services host still never says 401
    expect((await call('POST', '/api/v3/content/checkforchanges', { headers: { authorization: `Bearer ${token}` }, body: [] })).status).toBe(200);
  });
});
