// Editing a book's metadata and cover as events (issue 43): a field a person sets is locked and
// wins over what a rescan reads from the file, until the person resets it (then the file's value
// comes back at once); a cover is a picture uploaded or a page of the book, kept across rescans and
// reset to the book's own; the gateway's read models show each change; files on disk never change.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes, startBindery } from '../support/bindery';
import { api, eventually, expectError, instances, register, type Account, type Call } from './helpers';
import { byPath, createLibrary, items, scan } from './catalog-helpers';
import { smallEpub } from './kobo-helpers';
import { pngPage, writePageBooks } from './opds-books';

const ROOTS = mkdtempSync(join(tmpdir(), 'bindery-edits-'));
process.env.LIBRARY_ROOTS = ROOTS;
afterAll(() => rmSync(ROOTS, { recursive: true, force: true }));

const modes = await availableModes();
const get = instances(modes);
const EDITOR_REQUIRED = 'metadata editing access required';
const RESET_INVALID =
  'reset_fields must be a list of: title, sort_title, authors, contributors, series, series_index, language, publisher, isbn, description, identifiers, tags, year, reading_direction, cover';
const COVER_INVALID = 'the cover must be a JPEG, PNG, WebP or GIF image of at most 20 MB and 100 million pixels';
const PAGE_INVALID = 'page must be a page number of the book (1 is the first)';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe.each(modes)('editing books (%s)', (mode) => {
  let call: Call;
  let base: string;
  let admin: Account;
  let user: Account;
  let libraryId: string;
  let book: Record<string, any>;
  let comic: Record<string, any>;
  const bookPath = join('books', 'edited.epub');

  /** A body of bytes with its type, as an editor's browser sends a picture. */
  const putBytes = async (path: string, token: string, type: string, data: Buffer) => {
    const r = await fetch(`${(await get(mode)).url}${path}`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': type }, body: data });
    const text = await r.text();
    return { status: r.status, text, json: text ? JSON.parse(text) : null, headers: r.headers };
  };
  const itemNow = async (id: string) => {
    const r = await call('GET', `/api/media-items/${id}`, { token: admin.token });
    expect(r.status, r.text).toBe(200);
    return r.json;
  };

  beforeAll(async () => {
    call = api(await get(mode));
    admin = await register(call);
    user = await register(call);
    base = join(ROOTS, mode);
    mkdirSync(join(base, 'books'), { recursive: true });
    writeFileSync(join(base, bookPath), smallEpub('The File Title', 'Ann Author', `edit-${mode}`));
    await writePageBooks(base);
    libraryId = (await createLibrary(call, admin.token, { name: `Edits ${mode}`, folders: [base], watch: false })).id;
    await scan(call, admin.token, libraryId);
    const list = await items(call, admin.token, libraryId);
    book = byPath(list, 'books/edited.epub');
    comic = byPath(list, 'comics/Zip Comic.cbz');
    expect(book?.title).toBe('The File Title');
    expect(comic, JSON.stringify(list.map((i) => i.file_path))).toBeTruthy();
  });

  it('locks what a person sets, keeps it over a rescan of a rewritten file, and gives the file’s value back on reset', async () => {
    const path = `/api/media-items/${book.id}`;
    expect(book.locked_fields).toEqual([]);
    const before = sha(readFileSync(join(base, bookPath)));

    expectError(await call('PATCH', path, { token: user.token, body: { title: 'Not Mine' } }), 403, EDITOR_REQUIRED);
    expectError(await call('PATCH', path, { token: admin.token, body: { reset_fields: ['title', 'shoe_size'] } }), 400, RESET_INVALID);
    expectError(await call('PATCH', path, { token: admin.token, body: { reset_fields: 'title' } }), 400, RESET_INVALID);
    expectError(
      await call('PATCH', path, { token: admin.token, body: { identifiers: { 'not a scheme': '1' } } }),
      400,
      'identifiers must be an object of scheme names (a-z, 0-9, _ or -, at most 32) to values (at most 200 characters), at most 50',
    );

    const r = await call('PATCH', path, {
      token: admin.token,
      body: { title: 'A Person’s Title', series: 'Saga', series_index: 2.5, identifiers: { goodreads: '4242', ISBN: '9780000000002' }, sort_title: 'Persons Title, A' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      title: 'A Person’s Title',
      sort_title: 'Persons Title, A',
      series: 'Saga',
      series_index: 2.5,
      identifiers: { goodreads: '4242', isbn: '9780000000002' },
      authors: ['Ann Author'],
      locked_fields: ['identifiers', 'series', 'series_index', 'sort_title', 'title'],
    });
    // the file is never written
    expect(sha(readFileSync(join(base, bookPath)))).toBe(before);

    // the file changes on disk: a rescan takes its new author (nobody set one), not its new title
    writeFileSync(join(base, bookPath), smallEpub('The Second File Title', 'Bea Author', `edit-${mode}`, 'Other words entirely, and more of them.'));
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(base, bookPath), later, later);
    const done = await scan(call, admin.token, libraryId);
    expect(done.counts.updated, JSON.stringify(done)).toBe(1);
    const rescanned = await itemNow(book.id);
    expect(rescanned).toMatchObject({
      id: book.id,
      title: 'A Person’s Title',
      sort_title: 'Persons Title, A',
      series: 'Saga',
      series_index: 2.5,
      authors: ['Bea Author'],
      locked_fields: ['identifiers', 'series', 'series_index', 'sort_title', 'title'],
    });
    // the read models (search, OPDS) show the person's title
    const found = await call('GET', `/api/media-items/search?q=${encodeURIComponent('Person’s')}&library_id=${libraryId}`, { token: admin.token });
    expect(found.json.data.map((i: { id: string }) => i.id)).toEqual([book.id]);

    // reset: the title (and its sort title with it) from the file as last read, at once
    const reset = await call('PATCH', path, { token: admin.token, body: { reset_fields: ['title', 'series'] } });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.json).toMatchObject({ title: 'The Second File Title', sort_title: 'second file title', series: null, series_index: 2.5 });
    expect(reset.json.locked_fields).toEqual(['identifiers', 'series_index']);
    await eventually(async () => expect((await itemNow(book.id)).title).toBe('The Second File Title'));
  });

  it('bulk edits lock the fields they set', async () => {
    const r = await call('POST', '/api/media-items/bulk-update', {
      token: admin.token,
      body: { ids: [comic.id], changes: { language: 'ja', reading_direction: 'rtl', add_tags: ['manga'] } },
    });
    expect(r.status, r.text).toBe(200);
    const now = await itemNow(comic.id);
    expect(now).toMatchObject({ language: 'ja', reading_direction: 'rtl', locked_fields: ['language', 'reading_direction', 'tags'] });
    expect(now.tags).toContain('manga');
    await scan(call, admin.token, libraryId, true);
    expect(await itemNow(comic.id)).toMatchObject({ language: 'ja', reading_direction: 'rtl', locked_fields: ['language', 'reading_direction', 'tags'] });
  });

  it('sets a cover from a picture or a page, keeps it over a rescan, and resets it to the book’s own', async () => {
    const path = `/api/media-items/${comic.id}/cover`;
    const own = await call('GET', comic.cover_url, { token: admin.token });
    expect(own.status, own.text).toBe(200);

    // refused: another user, no picture, a picture that is not one, a page the book does not have
    expectError((await putBytes(path, user.token, 'image/png', await pngPage(300, 400, '#123456'))) as never, 403, EDITOR_REQUIRED);
    expectError((await putBytes(path, admin.token, 'text/plain', Buffer.from('hello'))) as never, 415, COVER_INVALID);
    expectError((await putBytes(path, admin.token, 'image/png', Buffer.from('not a png at all'))) as never, 400, COVER_INVALID);
    expectError(await call('PUT', path, { token: admin.token, body: { page: 999 } }), 400, PAGE_INVALID);
    expectError(await call('PUT', path, { token: admin.token, body: { page: 0 } }), 400, PAGE_INVALID);

    // a picture: a new address, a new picture behind it
    const set = await putBytes(path, admin.token, 'image/png', await pngPage(300, 400, '#123456'));
    expect(set.status, set.text).toBe(200);
    expect(set.json.cover_url).toMatch(new RegExp(`^/api/media-items/${comic.id}/cover\\?v=[0-9a-f]{12}$`));
    expect(set.json.locked_fields).toContain('cover');
    const pic = await eventually(async () => {
      const x = await call('GET', set.json.cover_url, { token: admin.token });
      expect(x.status).toBe(200);
      expect(x.headers.get('etag')).not.toBe(own.headers.get('etag'));
      return x;
    });
    expect(pic.headers.get('content-type')).toBe('image/jpeg');

    // a page of the book as the cover
    const page = await call('PUT', path, { token: admin.token, body: { page: 2 } });
    expect(page.status, page.text).toBe(200);
    expect(page.json.cover_url).not.toBe(set.json.cover_url);

    // a full rescan keeps the person's cover
    await scan(call, admin.token, libraryId, true);
    expect((await itemNow(comic.id)).cover_url).toBe(page.json.cover_url);

    // reset: the book's own cover again
    expectError(await call('DELETE', path, { token: user.token }), 403, EDITOR_REQUIRED);
    const back = await call('DELETE', path, { token: admin.token });
    expect(back.status, back.text).toBe(200);
    expect(back.json.cover_url).toBe(`/api/media-items/${comic.id}/cover`);
    expect(back.json.locked_fields).not.toContain('cover');
    const again = await eventually(async () => {
      const x = await call('GET', back.json.cover_url, { token: admin.token });
      expect(x.headers.get('etag')).toBe(own.headers.get('etag'));
      return x;
    });
    expect(again.bytes.equals(own.bytes)).toBe(true);
  });
});

describe.each(modes)('edits survive (%s)', (mode) => {
  it('a restart of every process and a rebuild of the catalog read model: the title, the locks and the cover stay, and a rescan after them keeps them', {
    timeout: 400_000,
  }, async () => {
    const dir = join(ROOTS, `survive-${mode}`);
    mkdirSync(join(dir, 'books'), { recursive: true });
    writeFileSync(join(dir, 'books', 'kept.epub'), smallEpub('A Wrong Title', 'Kay Keeper', `survive-${mode}`));
    const b = await startBindery(mode, { LIBRARY_ROOTS: ROOTS });
    try {
      let call = api(b);
      const admin = await register(call);
      const lib = (await createLibrary(call, admin.token, { name: `Survive ${mode}`, folders: [dir], watch: false })).id;
      await scan(call, admin.token, lib);
      const book = (await items(call, admin.token, lib))[0]!;
      expect(book.title).toBe('A Wrong Title');
      const fixed = await call('PATCH', `/api/media-items/${book.id}`, { token: admin.token, body: { title: 'The Right Title', series: 'Kept Things', series_index: 3 } });
      expect(fixed.status, fixed.text).toBe(200);
      const cover = await fetch(`${b.url}/api/media-items/${book.id}/cover`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'image/png' },
        body: await pngPage(200, 300, '#204060'),
      });
      expect(cover.status).toBe(200);
      const coverUrl = ((await cover.json()) as { cover_url: string }).cover_url;
      const picture = await eventually(async () => {
        const x = await call('GET', coverUrl, { token: admin.token });
        expect(x.status).toBe(200);
        return x.bytes;
      });
      const expected = {
        title: 'The Right Title',
        series: 'Kept Things',
        series_index: 3,
        cover_url: coverUrl,
        locked_fields: ['cover', 'series', 'series_index', 'sort_title', 'title'],
      };
      const check = async () => {
        const r = await call('GET', `/api/media-items/${book.id}`, { token: admin.token });
        expect(r.status, r.text).toBe(200);
        expect({ ...r.json, locked_fields: [...r.json.locked_fields].sort() }).toMatchObject(expected);
        const pic = await call('GET', coverUrl, { token: admin.token });
        expect(pic.status).toBe(200);
        expect(sha(pic.bytes)).toBe(sha(picture));
      };
      await check();

      await b.restart();
      call = api(b);
      await eventually(check, 30_000);

      const rebuilt = await call('POST', '/api/admin/projections/catalog/rebuild?wait=true', { token: admin.token });
      expect(rebuilt.status, rebuilt.text).toBe(200);
      await check();

      // the file rewritten with yet another title: the person's fields still win, the file's others follow
      writeFileSync(join(dir, 'books', 'kept.epub'), smallEpub('Another Wrong Title', 'Kay Keeper Second', `survive-${mode}`));
      await scan(call, admin.token, lib, true);
      await check();
      expect((await call('GET', `/api/media-items/${book.id}`, { token: admin.token })).json.authors).toEqual(['Kay Keeper Second']);
    } finally {
      await b.stop();
    }
  });
});
