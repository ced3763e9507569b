// The web reader's settings kept in the profile (issue 45): for all books and a book's own, checked
// strictly by the reading service, served from the gateway's read model; another user sees none.
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, expectError, instances, NO_SUCH_ID, register, type Account, type Call } from './helpers';
import { shelf, type Shelf } from './reading-helpers';

const modes = await availableModes();
const get = instances(modes);

describe.each(modes)('reader settings (%s)', (mode) => {
  let call: Call;
  let s: Shelf;
  let reader: Account;
  let other: Account;
  let book: string;

  beforeAll(async () => {
    call = api(await get(mode));
    s = await shelf(call, `Reader settings ${mode}`, ['Settled', 'Second']);
    reader = await register(call);
    other = await register(call);
    book = s.items[0]!.id;
  }, 180_000);

  it('keeps the settings for all books and a book of its own, and forgets the book’s', async () => {
    const none = await call('GET', '/api/reader-settings', { token: reader.token });
    expect(none.status, none.text).toBe(200);
    expect(none.json).toEqual({ all_books: null });

    const all = { font_size: 140, font_family: 'sans', line_spacing: '1.9', margins: 'wide', text_align: 'justify', hyphens: 'auto', theme: 'sepia' };
    const put = await call('PUT', '/api/reader-settings', { token: reader.token, body: all });
    expect(put.status, put.text).toBe(200);
    expect(put.json).toMatchObject({ message: 'reader settings saved', media_item_id: null, settings: all });
    // read back at once from the read model (the write waited for it)
    const got = await call('GET', '/api/reader-settings', { token: reader.token });
    expect(got.json).toEqual({ all_books: { settings: all, updated_at: put.json.updated_at } });

    const own = { font_size: 80, font_family: 'mono' };
    const putBook = await call('PUT', `/api/media-items/${book}/reader-settings`, { token: reader.token, body: own });
    expect(putBook.status, putBook.text).toBe(200);
    expect(putBook.json).toMatchObject({ message: 'reader settings saved', media_item_id: book, settings: own });
    const both = await call('GET', `/api/media-items/${book}/reader-settings`, { token: reader.token });
    expect(both.status, both.text).toBe(200);
    expect(both.json).toEqual({
      media_item_id: book,
      all_books: { settings: all, updated_at: put.json.updated_at },
      this_book: { settings: own, updated_at: putBook.json.updated_at },
    });
    // another book has none of its own
    const second = await call('GET', `/api/media-items/${s.items[1]!.id}/reader-settings`, { token: reader.token });
    expect(second.json.this_book).toBeNull();

    // a replacement is whole: absent fields go back to the reader's default
    const smaller = await call('PUT', '/api/reader-settings', { token: reader.token, body: { font_size: 90 } });
    expect(smaller.status, smaller.text).toBe(200);
    expect((await call('GET', '/api/reader-settings', { token: reader.token })).json.all_books.settings).toEqual({ font_size: 90 });

    // another user sees nothing of them
    expect((await call('GET', '/api/reader-settings', { token: other.token })).json).toEqual({ all_books: null });
    expect((await call('GET', `/api/media-items/${book}/reader-settings`, { token: other.token })).json).toEqual({ media_item_id: book, all_books: null, this_book: null });

    const removed = await call('DELETE', `/api/media-items/${book}/reader-settings`, { token: reader.token });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.json).toEqual({ message: 'reader settings removed', media_item_id: book });
    expect((await call('GET', `/api/media-items/${book}/reader-settings`, { token: reader.token })).json.this_book).toBeNull();
  });

  it('refuses values out of range, unknown settings and other books with clear messages, and keeps nothing', async () => {
    const before = (await call('GET', '/api/reader-settings', { token: reader.token })).json;
    const cases: [unknown, string][] = [
      [{ font_size: 59 }, 'font_size must be a whole number from 60 to 250 (per cent)'],
      [{ font_size: 251 }, 'font_size must be a whole number from 60 to 250 (per cent)'],
      [{ font_size: 100.5 }, 'font_size must be a whole number from 60 to 250 (per cent)'],
      [{ font_size: '120' }, 'font_size must be a whole number from 60 to 250 (per cent)'],
      [{ font_family: 'comic' }, 'font_family must be one of publisher, serif, sans, mono'],
      [{ line_spacing: 1.5 }, 'line_spacing must be one of publisher, 1.2, 1.5, 1.9'],
      [{ margins: 'huge' }, 'margins must be one of narrow, normal, wide'],
      [{ text_align: 'center' }, 'text_align must be one of publisher, justify, start'],
      [{ hyphens: 'yes' }, 'hyphens must be one of publisher, auto, none'],
      [{ theme: 'neon' }, 'theme must be one of profile, light, sepia, dark, black'],
      [{ theme: 'dark\u0000' }, 'theme must not contain control characters'],
      [{ font_size: 100, colour: 'red' }, 'unknown reader setting: colour; known: font_size, font_family, line_spacing, margins, text_align, hyphens, theme'],
      [{}, 'at least one reader setting is required: font_size, font_family, line_spacing, margins, text_align, hyphens, theme'],
    ];
    for (const [body, message] of cases) {
      expectError(await call('PUT', '/api/reader-settings', { token: reader.token, body }), 400, message);
      expectError(await call('PUT', `/api/media-items/${book}/reader-settings`, { token: reader.token, body }), 400, message);
    }
    expectError(await call('PUT', '/api/reader-settings', { token: reader.token, body: [1, 2] }), 400, 'invalid request');
    expectError(await call('PUT', '/api/media-items/not-an-id/reader-settings', { token: reader.token, body: { font_size: 100 } }), 400, 'invalid media item id');
    expectError(await call('PUT', `/api/media-items/${NO_SUCH_ID}/reader-settings`, { token: reader.token, body: { font_size: 100 } }), 404, 'media item not found');
    expectError(await call('GET', `/api/media-items/${NO_SUCH_ID}/reader-settings`, { token: reader.token }), 404, 'media item not found');
    expectError(await call('DELETE', `/api/media-items/${NO_SUCH_ID}/reader-settings`, { token: reader.token }), 404, 'media item not found');
    expect((await call('GET', '/api/reader-settings')).status).toBe(401);
    // nothing was kept by the refusals
    expect((await call('GET', '/api/reader-settings', { token: reader.token })).json).toEqual(before);
    expect((await call('GET', `/api/media-items/${book}/reader-settings`, { token: reader.token })).json.this_book).toBeNull();
  });
});
