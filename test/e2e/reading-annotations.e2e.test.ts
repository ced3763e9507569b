// Highlights, notes, bookmarks and ratings (docs/decisions.md, "Reading"): per user and item, with
// dedup keys, soft delete, restore and purge; another user sees none of it.
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, expectError, instances, NO_SUCH_ID, register, type Account, type Call } from './helpers';
import { shelf, type Shelf } from './reading-helpers';

const modes = await availableModes();
const get = instances(modes);

describe.each(modes)('annotations and ratings (%s)', (mode) => {
  let call: Call;
  let s: Shelf;
  let reader: Account;
  let other: Account;
  let book: string;
  let hl: Record<string, any>;

  beforeAll(async () => {
    call = api(await get(mode));
    s = await shelf(call, `Annotations ${mode}`, ['Annotated', 'Hidden']);
    reader = await register(call);
    other = await register(call);
    book = s.items[0]!.id;
  }, 180_000);

  it('creates, lists, reads and updates highlights, notes and bookmarks', async () => {
    const r = await call('POST', `/api/media-items/${book}/highlights`, {
      token: reader.token,
      body: {
        position: { percentage: 40, epubcfi: '/6/4!/4/2/1:5', pos0: '/body/DocFragment[2]/body/p[1]/text().5' },
        text: 'a line worth keeping',
        note: 'why',
        color: 'Yellow',
        dedup_key: 'k1',
      },
    });
    expect(r.status, r.text).toBe(201);
    // a write answers what placing the position in the book healed (nothing: this book has no locator index)
    const { healed, ...made } = r.json;
    expect(healed).toEqual([]);
    hl = made;
    expect(hl).toMatchObject({ media_item_id: book, type: 'highlight', text: 'a line worth keeping', note: 'why', color: '#e0af68', dedup_key: 'k1', deleted_at: null });
    expect(hl.position).toEqual({ percentage: 0.4, epubcfi: 'epubcfi(/6/4!/4/2/1:5)', pos0: '/body/DocFragment[2]/body/p[1]/text().5' });
    // the same dedup_key again is the same highlight
    const again = await call('POST', `/api/media-items/${book}/highlights`, {
      token: reader.token,
      body: { position: { percentage: 0.4 }, text: 'a line worth keeping', dedup_key: 'k1' },
    });
    expect(again.status, again.text).toBe(200);
    expect(again.json).toEqual({ ...hl, healed: [] });
    const note = await call('POST', `/api/media-items/${book}/notes`, { token: reader.token, body: { position: { page: 3 }, text: 'remember this', color: '#ABC' } });
    expect(note.status, note.text).toBe(201);
    expect(note.json.color).toBe('#aabbcc');
    // a flat position, as KOReader writes annotations
    const flat = await call('POST', `/api/media-items/${book}/bookmarks`, { token: reader.token, body: { pos0: '/body/DocFragment[3]/body/p[1]', page: 12, percentage: 0.3 } });
    expect(flat.status, flat.text).toBe(201);
    expect(flat.json.position).toEqual({ percentage: 0.3, page: 12, pos0: '/body/DocFragment[3]/body/p[1]' });
    expect((await call('DELETE', `/api/bookmarks/${flat.json.id}`, { token: reader.token })).status).toBe(200);
    expect((await call('DELETE', `/api/annotations/${flat.json.id}`, { token: reader.token })).status).toBe(200);
    const mark = await call('POST', `/api/media-items/${book}/bookmarks`, { token: reader.token, body: { position: { percentage: 0.1 } } });
    expect(mark.status, mark.text).toBe(201);
    expect(mark.json).toMatchObject({ type: 'bookmark', text: '' });
    const list = await call('GET', `/api/media-items/${book}/highlights`, { token: reader.token });
    expect(list.json).toEqual({ data: [hl] });
    expect((await call('GET', `/api/media-items/${book}/bookmarks`, { token: reader.token })).json.data.map((b: { id: string }) => b.id)).toEqual([mark.json.id]);
    expect((await call('GET', `/api/highlights/${hl.id}`, { token: reader.token })).json).toEqual(hl);
    // a highlight is not a note
    expectError(await call('GET', `/api/notes/${hl.id}`, { token: reader.token }), 404, 'annotation not found');
    const up = await call('PUT', `/api/highlights/${hl.id}`, { token: reader.token, body: { color: '#00ff00', note: 'changed' } });
    expect(up.status, up.text).toBe(200);
    expect(up.json).toMatchObject({ id: hl.id, color: '#00ff00', note: 'changed', text: 'a line worth keeping', healed: [] });
    const { healed: _, ...updated } = up.json;
    hl = updated;
  });

  it('refuses bad annotations', async () => {
    const post = (kind: string, body: Record<string, unknown>) => call('POST', `/api/media-items/${book}/${kind}`, { token: reader.token, body });
    expectError(await post('highlights', { text: 'x' }), 400, 'position is required (percentage, epubcfi, page or pos0)');
    expectError(await post('highlights', { position: { percentage: 0.2 } }), 400, 'text is required for a highlight');
    expectError(await post('notes', { position: { percentage: 0.2 }, text: '  ' }), 400, 'text is required for a note');
    expectError(await post('highlights', { position: { percentage: 0.2 }, text: 'x', color: 'mauve-ish' }), 400, 'color must be a hex colour like #ffcc00');
    expectError(await post('highlights', { position: { epubcfi: 'nope' }, text: 'x' }), 400, 'epubcfi is not a valid EPUB CFI');
    expectError(await call('PUT', `/api/highlights/${hl.id}`, { token: reader.token, body: { color: 12 } }), 400, 'color must be a hex colour like #ffcc00');
    expectError(await call('GET', '/api/highlights/nope', { token: reader.token }), 400, 'invalid annotation id');
    expectError(await call('GET', `/api/highlights/${NO_SUCH_ID}`, { token: reader.token }), 404, 'annotation not found');
    expect((await call('GET', `/api/media-items/${book}/highlights`, { token: reader.token })).json.data.length).toBe(1);
  });

  it("never shows or changes another user's annotations", async () => {
    expect((await call('GET', `/api/media-items/${book}/highlights`, { token: other.token })).json).toEqual({ data: [] });
    expectError(await call('GET', `/api/highlights/${hl.id}`, { token: other.token }), 404, 'annotation not found');
    expectError(await call('PUT', `/api/highlights/${hl.id}`, { token: other.token, body: { note: 'mine now' } }), 404, 'annotation not found');
    expectError(await call('DELETE', `/api/highlights/${hl.id}`, { token: other.token }), 404, 'annotation not found');
    expectError(await call('POST', `/api/annotations/${hl.id}/restore`, { token: other.token }), 404, 'annotation not found');
    expectError(await call('DELETE', `/api/annotations/${hl.id}`, { token: other.token }), 404, 'annotation not found');
    // their own dedup_key k1 is theirs alone
    expect(
      (await call('POST', `/api/media-items/${book}/highlights`, { token: other.token, body: { position: { percentage: 0.5 }, text: 'theirs', dedup_key: 'k1' } })).status,
    ).toBe(201);
    expect((await call('GET', `/api/highlights/${hl.id}`, { token: reader.token })).json).toEqual(hl);
  });

  it('soft-deletes, lists the deleted, restores and purges', async () => {
    const d = await call('DELETE', `/api/highlights/${hl.id}`, { token: reader.token });
    expect(d.status, d.text).toBe(200);
    expect(d.json).toEqual({ message: 'highlight deleted' });
    expect((await call('GET', `/api/media-items/${book}/highlights`, { token: reader.token })).json).toEqual({ data: [] });
    expectError(await call('GET', `/api/highlights/${hl.id}`, { token: reader.token }), 404, 'annotation not found');
    // a replay of a deleted highlight does not bring it back
    expectError(
      await call('POST', `/api/media-items/${book}/highlights`, { token: reader.token, body: { position: { percentage: 0.4 }, text: 'a line worth keeping', dedup_key: 'k1' } }),
      409,
      'an annotation with this dedup_key was deleted; restore it instead',
    );
    const del = await call('GET', `/api/media-items/${book}/annotations/deleted`, { token: reader.token });
    expect(del.json.data.map((a: { id: string }) => a.id)).toEqual([hl.id]);
    expect(del.json.data[0].deleted_at).not.toBeNull();
    expect((await call('GET', `/api/media-items/${book}/annotations/deleted`, { token: other.token })).json).toEqual({ data: [] });
    const back = await call('POST', `/api/annotations/${hl.id}/restore`, { token: reader.token });
    expect(back.status, back.text).toBe(200);
    expect(back.json).toMatchObject({ id: hl.id, deleted_at: null, note: 'changed' });
    expectError(await call('POST', `/api/annotations/${hl.id}/restore`, { token: reader.token }), 404, 'annotation not found');
    // only a deleted annotation can be purged
    expectError(await call('DELETE', `/api/annotations/${hl.id}`, { token: reader.token }), 404, 'annotation not found');
    expect((await call('DELETE', `/api/highlights/${hl.id}`, { token: reader.token })).status).toBe(200);
    const p = await call('DELETE', `/api/annotations/${hl.id}`, { token: reader.token });
    expect(p.json).toEqual({ message: 'annotation purged' });
    expect((await call('GET', `/api/media-items/${book}/annotations/deleted`, { token: reader.token })).json).toEqual({ data: [] });
    const notes = (await call('GET', `/api/media-items/${book}/notes`, { token: reader.token })).json.data;
    expect((await call('DELETE', `/api/notes/${notes[0].id}`, { token: reader.token })).status).toBe(200);
    const all = await call('DELETE', `/api/media-items/${book}/annotations/deleted`, { token: reader.token });
    expect(all.json).toEqual({ message: 'deleted annotations purged', purged: 1 });
  });

  it('rates: create, update, delete; per user', async () => {
    expectError(await call('GET', `/api/media-items/${book}/rating`, { token: reader.token }), 404, 'rating not found');
    const c = await call('POST', `/api/media-items/${book}/rating`, { token: reader.token, body: { rating: 4.5, review: 'fine' } });
    expect(c.status, c.text).toBe(201);
    expect(c.json).toMatchObject({ media_item_id: book, rating: 4.5, review: 'fine' });
    expectError(await call('POST', `/api/media-items/${book}/rating`, { token: reader.token, body: { rating: 3 } }), 409, 'rating already exists');
    const u = await call('PUT', `/api/media-items/${book}/rating`, { token: reader.token, body: { rating: 3 } });
    expect(u.status, u.text).toBe(200);
    expect(u.json).toMatchObject({ rating: 3, review: 'fine' });
    for (const bad of [0, 5.5, 2.3, 'x', null])
      expectError(
        await call('PUT', `/api/media-items/${book}/rating`, { token: reader.token, body: { rating: bad } }),
        400,
        'rating must be a number from 0.5 to 5 in steps of 0.5',
      );
    expectError(await call('GET', `/api/media-items/${book}/rating`, { token: other.token }), 404, 'rating not found');
    expectError(await call('DELETE', `/api/media-items/${book}/rating`, { token: other.token }), 404, 'rating not found');
    expect((await call('GET', `/api/media-items/${book}/rating`, { token: reader.token })).json.rating).toBe(3);
    expect((await call('DELETE', `/api/media-items/${book}/rating`, { token: reader.token })).json).toEqual({ message: 'rating deleted' });
    expectError(await call('GET', `/api/media-items/${book}/rating`, { token: reader.token }), 404, 'rating not found');
  });

  it('hides everything on a book in a library the caller can no longer see', async () => {
    const h = await call('POST', `/api/media-items/${book}/bookmarks`, { token: other.token, body: { position: { percentage: 0.3 } } });
    expect(h.status).toBe(201);
    expect((await call('PUT', `/api/auth/users/${other.id}/libraries`, { token: s.admin.token, body: { library_ids: [] } })).status).toBe(200);
    expectError(await call('GET', `/api/media-items/${book}/bookmarks`, { token: other.token }), 404, 'media item not found');
    expectError(await call('GET', `/api/bookmarks/${h.json.id}`, { token: other.token }), 404, 'annotation not found');
    expectError(await call('PUT', `/api/media-items/${book}/rating`, { token: other.token, body: { rating: 2 } }), 404, 'media item not found');
    expectError(await call('GET', `/api/media-items/${book}/annotations/deleted`, { token: other.token }), 404, 'media item not found');
    expect((await call('PUT', `/api/auth/users/${other.id}/libraries`, { token: s.admin.token, body: { all_libraries: true } })).status).toBe(200);
    expect((await call('GET', `/api/bookmarks/${h.json.id}`, { token: other.token })).status).toBe(200);
  });
});
