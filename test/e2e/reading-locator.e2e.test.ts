// Positions checked against the book (docs/decisions.md, "Reading: locator index and healing"): a
// scanned EPUB's locator index lets the server heal a CFI past a document's end, a stale spine step,
// an element that moved, a percentage that disagrees with the position, and turn KOReader's XPointer
// into the canonical position; the restore handles come back derived, and only for known positions.
// Highlights, notes and bookmarks are placed the same way ("Reading: annotation positions").
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeEpub } from '../../services/catalog/test/fixtures/books';
import { availableModes } from '../support/bindery';
import { createLibrary, emptyDir, items, scan } from './catalog-helpers';
import { api, eventually, expectError, instances, register, type Account, type Call } from './helpers';
import { put } from './reading-helpers';

const modes = await availableModes();
const get = instances(modes);

const page = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body>${body}</body></html>`;
const H1 = 'Chapter One';
const P1 = 'It was a dark and stormy night.';
const P2 = 'The rain fell in torrents, except at occasional intervals.';
const Q1 = 'Meanwhile 🐉 the dragon slept.';
const Q2 = 'Nobody woke it.';
const NOTE = 'Note one.';
// the spine: a cover and the notes are non-linear, and still count in spine steps and XPointers
const OPF = `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">urn:uuid:5f0c6a52-3c2e-4d7e-9a59-1b8a0d7e4c11</dc:identifier><dc:title>Locator Book</dc:title><dc:creator>A. Writer</dc:creator><dc:language>en</dc:language></metadata>
<manifest><item id="cover" href="cover.xhtml" media-type="application/xhtml+xml"/><item id="ch1" href="ch1.xhtml" media-type="application/xhtml+xml"/><item id="notes" href="notes.xhtml" media-type="application/xhtml+xml"/><item id="ch2" href="ch2.xhtml" media-type="application/xhtml+xml"/></manifest>
<spine><itemref idref="cover" linear="no"/><itemref idref="ch1"/><itemref idref="notes" linear="no"/><itemref idref="ch2"/></spine></package>`;
const EPUB = makeEpub(OPF, [
  { name: 'OEBPS/cover.xhtml', data: page('<div><img src="c.jpg" alt="cover"/></div>'), deflate: true },
  { name: 'OEBPS/ch1.xhtml', data: page(`<section id="s1"><h1>${H1}</h1><p id="p1">${P1}</p><p>${P2}</p></section>`), deflate: true },
  { name: 'OEBPS/notes.xhtml', data: page(`<p>${NOTE}</p>`), deflate: true },
  { name: 'OEBPS/ch2.xhtml', data: page(`<p id="q1">${Q1}</p><p>${Q2}</p>`), deflate: true },
]);
// every document weighs its text (the cover, none, weighs 1)
const TOTAL = 1 + (H1.length + P1.length + P2.length) + NOTE.length + (Q1.length + Q2.length);
const pct = (before: number) => Math.round((before / TOTAL) * 1e6) / 1e6;
const CH1 = 1;
const CH2 = 1 + H1.length + P1.length + P2.length + NOTE.length;

describe.each(modes)('reading positions against the locator index (%s)', (mode) => {
  let call: Call;
  let reader: Account;
  let book: string;

  beforeAll(async () => {
    call = api(await get(mode));
    const admin = await register(call);
    const dir = emptyDir();
    writeFileSync(join(dir, 'locator-book.epub'), EPUB);
    const lib = await createLibrary(call, admin.token, { name: `Locator ${mode}`, folders: [dir], watch: false });
    await scan(call, admin.token, lib.id);
    book = (await items(call, admin.token, lib.id))[0]!.id;
    reader = await register(call);
    // the reading service has the item's facts once a position of it comes back healed
    const probe = await register(call);
    await eventually(async () => {
      const r = await put(call, probe.token, book, { percentage: 0.5, epubcfi: 'epubcfi(/6/4!/4/2/2/1:0)' });
      expect(r.json.progress?.xpointer).toBeDefined();
    }, 30_000);
  }, 240_000);

  it('derives every notation from a CFI that points into the book', async () => {
    const offset = H1.length + P1.length + 4;
    const r = await put(call, reader.token, book, { percentage: 0.3, epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/6/1:4)' });
    expect(r.status, r.text).toBe(200);
    expect(r.json.healed).toEqual([]);
    expect(r.json.progress).toMatchObject({
      percentage: 0.3,
      epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/6/1:4)',
      spine_index: 1,
      doc_offset: offset,
      xpointer: '/body/DocFragment[2]/body/section/p[2]/text().4',
      anchor_href: 'ch1.xhtml',
      css_selector: '#s1 > p:nth-child(3)',
      char_offset: 4,
    });
    expect(Math.abs(pct(CH1 + offset) - 0.3)).toBeLessThanOrEqual(0.02);
    const g = await call('GET', `/api/media-items/${book}/progress`, { token: reader.token });
    expect(g.json).toEqual(r.json.progress);
  });

  it('heals a CFI past the end of its text, and a percentage that disagrees with it', async () => {
    const r = await put(call, reader.token, book, { percentage: 0.3, epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/4[p1]/1:500)' });
    expect(r.status, r.text).toBe(200);
    const at = pct(CH1 + H1.length + P1.length);
    expect(r.json.healed).toEqual([
      `epubcfi: character offset 500 is past the end of its text (${P1.length} characters); moved to its end`,
      `percentage: 0.3 disagreed with the position (${at}); set from the position`,
    ]);
    // the end of a paragraph is where the next one starts
    expect(r.json.progress).toMatchObject({ epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/6/1:0)', percentage: at, css_selector: '#s1 > p:nth-child(3)', char_offset: 0 });
  });

  it('heals a step past the last element of a document', async () => {
    const r = await put(call, reader.token, book, { percentage: 0.1, epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/40/1:0)' });
    const end = pct(CH1 + H1.length + P1.length + P2.length);
    expect(r.json.healed).toEqual([
      "epubcfi: /4/2/40 is past the last child of its element; moved to the element's end",
      `percentage: 0.1 disagreed with the position (${end}); set from the position`,
    ]);
    expect(r.json.progress.epubcfi).toBe(`epubcfi(/6/4[ch1]!/4/2[s1]/6/1:${P2.length})`);
  });

  it('heals a stale spine step by its idref, and by anchor_href', async () => {
    const byId = await put(call, reader.token, book, { percentage: pct(CH2), epubcfi: 'epubcfi(/6/6[ch2]!/4/2[q1]/1:0)' });
    expect(byId.json.healed).toEqual(['epubcfi: spine step 6 was stale; [ch2] is spine step 8']);
    expect(byId.json.progress).toMatchObject({ epubcfi: 'epubcfi(/6/8[ch2]!/4/2[q1]/1:0)', spine_index: 3, anchor_href: 'ch2.xhtml', css_selector: '#q1', char_offset: 0 });
    // a reader that counted linear items only, with the document's href
    const byHref = await put(call, reader.token, book, { percentage: pct(CH2 + 5), epubcfi: 'epubcfi(/6/4!/4/2/1:5)', anchor_href: 'ch2.xhtml' });
    expect(byHref.json.healed).toEqual(['epubcfi: spine step 4 disagreed with anchor_href ch2.xhtml; set to spine step 8']);
    expect(byHref.json.progress).toMatchObject({ epubcfi: 'epubcfi(/6/8[ch2]!/4/2[q1]/1:5)', spine_index: 3, doc_offset: 5 });
  });

  it('follows an element that moved by its id', async () => {
    const r = await put(call, reader.token, book, { percentage: pct(CH1 + H1.length + 3), epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/2[p1]/1:3)' });
    expect(r.json.healed).toEqual(['epubcfi: [p1] was not at /4/2/2; followed its id to /4/2[s1]/4[p1]']);
    expect(r.json.progress).toMatchObject({ epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/4[p1]/1:3)', css_selector: '#p1', char_offset: 3 });
  });

  it("converts KOReader's XPointer (code points) to the canonical position", async () => {
    // a new device for a book mid-read would open a conflict: this one says it knows better
    // 12 code points into "Meanwhile 🐉 the…" are 13 UTF-16 units: the dragon is two
    const r = await put(call, reader.token, book, {
      percentage: pct(CH2 + 13),
      epubcfi: '/body/DocFragment[4]/body/p[1]/text().12',
      client: 'koreader',
      device: 'kobo-libra',
      force: true,
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.healed).toEqual([]);
    expect(r.json.progress).toMatchObject({
      epubcfi: 'epubcfi(/6/8[ch2]!/4/2[q1]/1:13)',
      xpointer: '/body/DocFragment[4]/body/p[1]/text().12',
      spine_index: 3,
      doc_offset: 13,
      anchor_href: 'ch2.xhtml',
      css_selector: '#q1',
      char_offset: 13,
      client: 'koreader',
    });
    const past = await put(call, reader.token, book, { percentage: 1, epubcfi: '/body/DocFragment[4]/body/p[2]/text().99', client: 'koreader', device: 'kobo-libra' });
    expect(past.json.healed).toEqual([`xpointer: character offset 99 is past the end of its text (${Q2.length} characters); moved to its end`]);
    expect(past.json.progress).toMatchObject({ epubcfi: `epubcfi(/6/8[ch2]!/4/4/1:${Q2.length})`, percentage: 1, finished: true });
  });

  it('lands restore handles, and drops an href that is not in the book', async () => {
    const r = await put(call, reader.token, book, { percentage: 0.5, anchor_href: 'ch1.xhtml', css_selector: '#p1', char_offset: 3 });
    const at = pct(CH1 + H1.length + 3);
    expect(r.json.healed).toEqual([`percentage: 0.5 disagreed with the position (${at}); set from the position`]);
    expect(r.json.progress).toMatchObject({ epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/4[p1]/1:3)', percentage: at, css_selector: '#p1', char_offset: 3 });
    const gone = await put(call, reader.token, book, { percentage: 0.5, anchor_href: 'chapter-99.xhtml', css_selector: '#x', char_offset: 3 });
    expect(gone.json.healed).toEqual(['anchor_href: chapter-99.xhtml is not a document of this book; dropped with its css_selector and char_offset']);
    for (const k of ['anchor_href', 'css_selector', 'char_offset', 'epubcfi']) expect(gone.json.progress).not.toHaveProperty(k);
    expect(gone.json.progress.percentage).toBe(0.5);
  });

  it('confirms a position by the text the reader saw, moves it where that text is, and places a bare percentage by it', async () => {
    const near = await put(call, reader.token, book, { percentage: pct(CH1 + H1.length), epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/4[p1]/1:0)', context_text: 'It was a dark' });
    expect(near.json.healed).toEqual([]);
    expect(near.json.progress).toMatchObject({ epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/4[p1]/1:0)', context_text: 'It was a dark' });
    const nowhere = await put(call, reader.token, book, {
      percentage: pct(CH1 + H1.length),
      epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/4[p1]/1:0)',
      context_text: 'words this book never had',
    });
    expect(nowhere.json.healed).toEqual([]);
    const moved = await put(call, reader.token, book, { percentage: pct(CH2 + Q1.length), epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/4[p1]/1:0)', context_text: Q2 });
    expect(moved.json.healed).toEqual(['context_text: not found at the position; found in ch2.xhtml and moved there']);
    expect(moved.json.progress).toMatchObject({
      epubcfi: 'epubcfi(/6/8[ch2]!/4/4/1:0)',
      spine_index: 3,
      doc_offset: Q1.length,
      anchor_href: 'ch2.xhtml',
      css_selector: 'body > p:nth-child(2)',
      char_offset: 0,
    });
    const bare = await put(call, reader.token, book, { percentage: 0.5, context_text: 'stormy  night.' });
    const at = pct(CH1 + H1.length + P1.indexOf('stormy'));
    expect(bare.json.healed).toEqual([
      'context_text: whitespace collapsed',
      'context_text: found in ch1.xhtml; the position was set from it',
      `percentage: 0.5 disagreed with the position (${at}); set from the position`,
    ]);
    expect(bare.json.progress).toMatchObject({ percentage: at, epubcfi: `epubcfi(/6/4[ch1]!/4/2[s1]/4[p1]/1:${P1.indexOf('stormy')})`, css_selector: '#p1' });
  });

  it('places annotations as spans in the same canonical form, with every notation, and heals them like positions', async () => {
    const hl = (body: Record<string, unknown>, who = reader) => call('POST', `/api/media-items/${book}/highlights`, { token: who.token, body });
    // a web highlight: a CFI range over "a dark and sto"
    const web = await hl({ position: { epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/4[p1],/1:7,/1:21)' }, text: P1.slice(7, 21) });
    expect(web.status, web.text).toBe(201);
    expect(web.json.healed).toEqual([]);
    expect(web.json.position).toEqual({
      epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/4[p1],/1:7,/1:21)',
      pos0: '/body/DocFragment[2]/body/section/p[1]/text().7',
      pos1: '/body/DocFragment[2]/body/section/p[1]/text().21',
      percentage: pct(CH1 + H1.length + 7),
      spine_index: 1,
      doc_offset: H1.length + 7,
      end_spine_index: 1,
      end_doc_offset: H1.length + 21,
    });
    expect((await call('GET', `/api/highlights/${web.json.id}`, { token: reader.token })).json.position).toEqual(web.json.position);
    // KOReader's pos0/pos1 (code points: "the dragon" after the two-unit dragon) read as a CFI range
    const ko = await hl({ pos0: '/body/DocFragment[4]/body/p[1]/text().12', pos1: '/body/DocFragment[4]/body/p[1]/text().22', text: 'the dragon', page: 7 });
    expect(ko.status, ko.text).toBe(201);
    expect(ko.json.healed).toEqual([]);
    expect(ko.json.position).toMatchObject({ epubcfi: 'epubcfi(/6/8[ch2]!/4/2[q1],/1:13,/1:23)', page: 7, doc_offset: 13, end_doc_offset: 23 });

    // an end past its text, a stale spine step on both ends, a percentage that disagrees
    const past = await hl({ pos0: '/body/DocFragment[4]/body/p[2]/text().0', pos1: '/body/DocFragment[4]/body/p[2]/text().99', text: Q2, percentage: 0.1 });
    expect(past.json.healed).toEqual([
      `pos1: character offset 99 is past the end of its text (${Q2.length} characters); moved to its end`,
      `percentage: 0.1 disagreed with the position (${pct(CH2 + Q1.length)}); set from the position`,
    ]);
    expect(past.json.position).toMatchObject({ epubcfi: `epubcfi(/6/8[ch2]!/4/4,/1:0,/1:${Q2.length})`, pos1: `/body/DocFragment[4]/body/p[2]/text().${Q2.length}` });
    const stale = await hl({ position: { epubcfi: 'epubcfi(/6/6[ch2]!/4/2[q1],/1:0,/1:9)' }, text: 'Meanwhile' });
    expect(stale.json.healed).toEqual(['epubcfi: spine step 6 was stale; [ch2] is spine step 8', 'epubcfi end: spine step 6 was stale; [ch2] is spine step 8']);
    expect(stale.json.position.epubcfi).toBe('epubcfi(/6/8[ch2]!/4/2[q1],/1:0,/1:9)');
    // an element that moved, followed by its id
    const moved = await hl({ position: { epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/2[p1],/1:0,/1:6)' }, text: 'It was' });
    expect(moved.json.healed).toEqual([
      'epubcfi: [p1] was not at /4/2/2; followed its id to /4/2[s1]/4[p1]',
      'epubcfi end: [p1] was not at /4/2/2; followed its id to /4/2[s1]/4[p1]',
    ]);
    expect(moved.json.position.epubcfi).toBe('epubcfi(/6/4[ch1]!/4/2[s1]/4[p1],/1:0,/1:6)');
    // the highlighted text is elsewhere: the span moves there, to its length
    const text = P2.slice(4, 20);
    const found = await hl({ position: { epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/4[p1],/1:4,/1:20)' }, text });
    expect(found.json.healed).toEqual(['text: not found at the position; found in ch1.xhtml and moved there']);
    expect(found.json.position).toMatchObject({ epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/6,/1:4,/1:20)', pos0: '/body/DocFragment[2]/body/section/p[2]/text().4' });
    // an update that moves it is placed and healed too
    const up = await call('PATCH', `/api/highlights/${found.json.id}`, { token: reader.token, body: { position: { epubcfi: 'epubcfi(/6/4[ch1]!/4/2[s1]/6,/1:4,/1:500)' } } });
    expect(up.status, up.text).toBe(200);
    expect(up.json.healed).toEqual([`epubcfi end: character offset 500 is past the end of its text (${P2.length} characters); moved to its end`]);
    expect(up.json.position.epubcfi).toBe(`epubcfi(/6/4[ch1]!/4/2[s1]/6,/1:4,/1:${P2.length})`);
    // a bookmark is a point: a CFI and pos0, no pos1
    const mark = await call('POST', `/api/media-items/${book}/bookmarks`, { token: reader.token, body: { position: { epubcfi: 'epubcfi(/6/8[ch2]!/4/4/1:3)' } } });
    expect(mark.json.position).toEqual({
      epubcfi: 'epubcfi(/6/8[ch2]!/4/4/1:3)',
      pos0: '/body/DocFragment[4]/body/p[2]/text().3',
      percentage: pct(CH2 + Q1.length + 3),
      spine_index: 3,
      doc_offset: Q1.length + 3,
    });
    // a highlight sent as a point where its text starts spans that text (KOReader draws none without an end)
    const point = await hl({ position: { epubcfi: 'epubcfi(/6/8[ch2]!/4/2[q1]/1:13)' }, text: 'the dragon' });
    expect(point.status, point.text).toBe(201);
    expect(point.json.healed).toEqual(['text: the highlight was a point; its end was set where its text ends']);
    expect(point.json.position).toMatchObject({
      epubcfi: 'epubcfi(/6/8[ch2]!/4/2[q1],/1:13,/1:23)',
      pos0: '/body/DocFragment[4]/body/p[1]/text().12',
      pos1: '/body/DocFragment[4]/body/p[1]/text().22',
      doc_offset: 13,
      end_doc_offset: 23,
    });
    // another user sees none of it
    const other = await register(call);
    expect((await call('GET', `/api/media-items/${book}/highlights`, { token: other.token })).json).toEqual({ data: [] });
    expectError(await call('GET', `/api/highlights/${web.json.id}`, { token: other.token }), 404, 'annotation not found');
    expectError(
      await call('PATCH', `/api/highlights/${web.json.id}`, { token: other.token, body: { position: { epubcfi: 'epubcfi(/6/4!/4/2/1:0)' } } }),
      404,
      'annotation not found',
    );
  });
});
