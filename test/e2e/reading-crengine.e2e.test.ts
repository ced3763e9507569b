// KOReader's element pointers and crengine's text numbering through the running server, in both
// modes (docs/decisions.md, "Reading: crengine's text nodes"): the hand-written position book is
// scanned; every probe's CFI, written by the web, comes back with its XPointer, and its XPointer,
// written by KOReader (web API and stock sync), comes back with its CFI at the same text; a push at
// a heading or an image shows on the web at that heading or image.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ELEMENT_POINTERS, POSITION_BOOK, PROBES } from '../../services/catalog/test/fixtures/position-book';
import { availableModes } from '../support/bindery';
import { createLibrary, emptyDir, items, scan } from './catalog-helpers';
import { api, eventually, instances, register, type Account, type Call } from './helpers';
import { put } from './reading-helpers';

const modes = await availableModes();
const get = instances(modes);
const md5 = (s: string) => createHash('md5').update(s).digest('hex');

describe.each(modes)('KOReader positions on the hand-written book (%s)', (mode) => {
  let call: Call;
  let reader: Account;
  let book: Record<string, any>;

  beforeAll(async () => {
    call = api(await get(mode));
    const admin = await register(call);
    const dir = emptyDir();
    writeFileSync(join(dir, 'position-book.epub'), POSITION_BOOK);
    const lib = await createLibrary(call, admin.token, { name: `Positions ${mode}`, folders: [dir], watch: false });
    await scan(call, admin.token, lib.id);
    book = (await items(call, admin.token, lib.id))[0]!;
    reader = await register(call);
    const probe = await register(call);
    await eventually(async () => {
      const r = await put(call, probe.token, book.id, { percentage: 0.5, epubcfi: PROBES[0]!.cfi });
      expect(r.json.progress?.xpointer).toBeDefined();
    }, 30_000);
  }, 240_000);

  for (const p of PROBES) {
    it(`${p.what}: a CFI comes back with its XPointer, the XPointer with its CFI`, async () => {
      const web = await put(call, reader.token, book.id, { percentage: 0.5, epubcfi: p.cfi, force: true });
      expect(web.status, web.text).toBe(200);
      expect(web.json.progress).toMatchObject({ epubcfi: p.cfi, xpointer: p.xpointer, css_selector: p.css_selector, char_offset: p.char_offset });
      const ko = await put(call, reader.token, book.id, { percentage: web.json.progress.percentage, epubcfi: p.xpointer, force: true });
      expect(ko.status, ko.text).toBe(200);
      expect(ko.json.healed).toEqual([]);
      expect(ko.json.progress).toMatchObject({
        epubcfi: p.cfi,
        xpointer: p.xpointer,
        spine_index: web.json.progress.spine_index,
        doc_offset: web.json.progress.doc_offset,
        percentage: web.json.progress.percentage,
      });
    });
  }

  it('shows a stock-sync push at a heading or an image on the web at that heading or image', async () => {
    // a reader with no web position yet: a device's first push for a book read elsewhere opens a conflict instead
    const ko = await register(call);
    const headers = { 'x-auth-user': ko.username, 'x-auth-key': md5(ko.password), accept: 'application/vnd.koreader.v1+json' };
    const document = book.formats[0].partial_md5 as string;
    for (const e of ELEMENT_POINTERS) {
      const pushed = await call('PUT', '/syncs/progress', {
        headers,
        body: { document, progress: e.xpointer, percentage: 0.4, device: 'Kobo_frost', device_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90' },
      });
      expect(pushed.status, pushed.text).toBe(200);
      await eventually(async () => {
        const g = await call('GET', `/api/media-items/${book.id}/progress`, { token: ko.token });
        expect(g.json.epubcfi, e.xpointer).toBe(e.cfi);
      }, 10_000);
    }
    // the image of the figure: the web lands on the <img> itself
    const g = await call('GET', `/api/media-items/${book.id}/progress`, { token: ko.token });
    expect(g.json).toMatchObject({ anchor_href: 'ch2.xhtml', css_selector: 'body > p:nth-child(1) > img:nth-child(1)', char_offset: 0 });
  });
});
