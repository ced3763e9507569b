// The KOReader plugin API (docs/decisions.md, "KOReader sync"): device-authenticated progress,
// metadata, library, bookmarks and resolve; book resolution by uuid, SHA-256, file name, title and
// author; the five annotation rules, each with its test; one user's data never another's. Annotation
// places are one canonical form (docs/decisions.md, "Reading: annotation positions"): a KOReader
// highlight reads as a CFI range on the web and a web highlight as XPointers here, to the character.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Reading } from '@bindery/contracts';
import { epubText } from '../../services/catalog/src/formats/epub';
import { availableModes } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { asDevice, enroll, type Enrolled } from './device-helpers';
import { api, expectError, instances, register, type Account, type Call } from './helpers';

const modes = await availableModes();
const get = instances(modes);

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const K = '/api/sync/koreader';
const L = Reading.Locator;
const CROWN = join(FIXTURE, 'J. R. Hartley/The Hidden Crown (1864).epub');
// the crown's locator index and text, as the catalog makes them, to name places in it
const { index: idx, texts } = await epubText(CROWN);
const pctOf = (at: Reading.Locator.Canonical) => Math.round(L.canonicalToPercentage(idx, at) * 1e6) / 1e6;

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

  const as = (d: Enrolled, r: Parameters<typeof asDevice>[1] = {}) => asDevice(d.token, r);
  const push = (d: Enrolled, book: Record<string, unknown>) => call('POST', `${K}/progress`, as(d, { body: [book] }));
  const meta = (d: Enrolled, id: string) => call('GET', `${K}/metadata/${id}`, as(d));
  const marks = (d: Enrolled, body: Record<string, unknown>) => call('POST', `${K}/bookmarks`, as(d, { body }));
  const web = (kind: string, id: string, a = reader) => call('GET', `/api/media-items/${id}/${kind}`, { token: a.token });

  beforeAll(async () => {
    call = api(await get(mode));
    admin = await register(call);
    reader = await register(call);
    other = await register(call);
    const dir = emptyDir();
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
});
