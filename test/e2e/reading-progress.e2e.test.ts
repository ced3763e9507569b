// Reading positions (docs/decisions.md, "Reading"): one position per user and book, checked and
// healed, guarded against a first page, with a history; per user and per library access.
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, expectError, instances, NO_SUCH_ID, register, type Account, type Call } from './helpers';
import { put, shelf, type Shelf } from './reading-helpers';

const modes = await availableModes();
const get = instances(modes);

const CFI = 'epubcfi(/6/4[chap01]!/4[body01]/10[para05]/3:10)';

describe.each(modes)('reading progress (%s)', (mode) => {
  let call: Call;
  let s: Shelf;
  let reader: Account;
  let other: Account;
  let book: string;

  beforeAll(async () => {
    call = api(await get(mode));
    s = await shelf(call, `Progress ${mode}`, ['First Book', 'Second Book', 'Third Book', { title: 'A Comic', page_count: 9 }]);
    reader = await register(call);
    other = await register(call);
    book = s.items[0]!.id;
  }, 180_000);

  it('stores a position in three tiers and gives it back, without handles it does not know', async () => {
    const r = await put(call, reader.token, book, { percentage: 0.42, context_text: 'It was a  dark\nnight', epubcfi: CFI });
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe('saved');
    expect(r.json.healed).toEqual(['context_text: whitespace collapsed']);
    expect(r.json.progress).toMatchObject({
      media_item_id: book,
      percentage: 0.42,
      epubcfi: CFI,
      spine_index: 1,
      context_text: 'It was a dark night',
      client: 'web',
      device: 'web',
      version: 1,
      finished: false,
    });
    const g = await call('GET', `/api/media-items/${book}/progress`, { token: reader.token });
    expect(g.status, g.text).toBe(200);
    expect(g.json).toEqual(r.json.progress);
    for (const k of ['anchor_href', 'css_selector', 'char_offset']) expect(g.json).not.toHaveProperty(k);
  });

  it('answers readers writing at once (committed together) each with its own outcome, and reads each back at once', async () => {
    const readers: Account[] = [];
    for (let i = 0; i < 12; i++) readers.push(await register(call));
    // two start mid-book: one then sends a first page (kept), the other writes from a new device (a conflict)
    for (const r of readers.slice(0, 2)) expect((await put(call, r.token, book, { percentage: 0.5 })).json.status).toBe('saved');
    const finished = `/api/media-items?library_id=${s.library.id}&read_status=finished`;
    const answers = await Promise.all(
      readers.map(async (r, i) => {
        const body = i === 0 ? { percentage: 0 } : i === 1 ? { percentage: 0.1, device: 'phone' } : { percentage: 1, device: `e-reader ${i}` };
        const w = await put(call, r.token, book, body);
        // read your writes: the list from the gateway's read model has it as soon as the write answered
        const listed = await call('GET', finished, { token: r.token });
        return { w, listed: (listed.json.data as { id: string }[]).map((x) => x.id) };
      }),
    );
    expect(answers.map((a) => a.w.status)).toEqual(readers.map(() => 200));
    expect(answers.map((a) => a.w.json.status)).toEqual(['kept', 'conflict', ...readers.slice(2).map(() => 'saved')]);
    expect(answers[0]!.w.json.progress.percentage).toBe(0.5);
    expect(answers[1]!.w.json.conflict).toMatchObject({ media_item_id: book, status: 'open', reason: 'first-push' });
    for (const [i, a] of answers.entries()) {
      if (i < 2) {
        expect(a.listed).toEqual([]);
        continue;
      }
      expect(a.w.json.progress).toMatchObject({ media_item_id: book, percentage: 1, finished: true, device: `e-reader ${i}`, version: 1 });
      expect(a.listed).toEqual([book]);
      const g = await call('GET', `/api/media-items/${book}/progress`, { token: readers[i]!.token });
      expect(g.json).toEqual(a.w.json.progress);
      const h = await call('GET', `/api/progress/${book}/history`, { token: readers[i]!.token });
      expect(h.json.data.map((x: { percentage: number; device: string }) => [x.percentage, x.device])).toEqual([[1, `e-reader ${i}`]]);
    }
    expect((await call('GET', `/api/media-items/${book}/progress`, { token: readers[1]!.token })).json.percentage).toBe(0.5);
    expect((await call('GET', '/api/progress-conflicts', { token: readers[1]!.token })).json.data).toHaveLength(1);
  });

  it('accepts percentages on 0..100 and heals what it can, saying so', async () => {
    const r = await put(call, reader.token, book, { percentage: 55, epubcfi: '/6/4!/4/2/1:0' });
    expect(r.status, r.text).toBe(200);
    expect(r.json.progress.percentage).toBe(0.55);
    expect(r.json.progress.epubcfi).toBe('epubcfi(/6/4!/4/2/1:0)');
    expect(r.json.healed).toEqual(['percentage: read as 0..100 and stored as a fraction', 'epubcfi: added the epubcfi( ) wrapper']);
    const range = await put(call, reader.token, book, { percentage: 0.56, epubcfi: 'epubcfi(/6/4!/4/10,/2/1:3,/2/1:9)' });
    expect(range.json.progress.epubcfi).toBe('epubcfi(/6/4!/4/10/2/1:3)');
    expect(range.json.healed).toEqual(['epubcfi: a range was collapsed to its start']);
    // a fixed-layout page: the percentage follows the page
    const comic = s.items[3]!.id;
    const p = await put(call, reader.token, comic, { page: 5 });
    expect(p.json.progress).toMatchObject({ page: 5, page_count: 9, percentage: 0.5 });
    const wrong = await put(call, reader.token, comic, { page: 9, page_count: 9, percentage: 0.2 });
    expect(wrong.json.progress.percentage).toBe(1);
    expect(wrong.json.progress.finished).toBe(true);
    expect(wrong.json.healed).toEqual(['percentage: 0.2 disagreed with page 9 of 9; set from the page']);
  });

  it('refuses what cannot be a position, and changes nothing', async () => {
    const before = (await call('GET', `/api/media-items/${book}/progress`, { token: reader.token })).json;
    expectError(await put(call, reader.token, book, { epubcfi: CFI }), 400, 'percentage is required');
    expectError(await put(call, reader.token, book, { percentage: 101 }), 400, 'percentage must be a number between 0 and 1, or between 0 and 100');
    expectError(await put(call, reader.token, book, { percentage: -0.1 }), 400, 'percentage must be a number between 0 and 1, or between 0 and 100');
    expectError(await put(call, reader.token, book, { percentage: 'half' }), 400, 'percentage must be a number between 0 and 1, or between 0 and 100');
    expectError(await put(call, reader.token, book, { percentage: 0.5, epubcfi: 'epubcfi(/6/3!/4/2)' }), 400, 'epubcfi is not a valid EPUB CFI');
    expectError(await put(call, reader.token, book, { percentage: 0.5, epubcfi: 'chapter 3' }), 400, 'epubcfi is not a valid EPUB CFI');
    expectError(await put(call, reader.token, book, { percentage: 0.5, char_offset: -1 }), 400, 'char_offset must be a whole number of at least 0');
    expectError(await call('PUT', `/api/media-items/${book}/progress`, { token: reader.token, raw: '[0.5]' }), 400, 'invalid request');
    expect((await call('GET', `/api/media-items/${book}/progress`, { token: reader.token })).json).toEqual(before);
  });

  it('keeps a later position when a first page comes in, unless forced', async () => {
    const kept = await put(call, reader.token, book, { percentage: 0 });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.json.status).toBe('kept');
    expect(kept.json.progress.percentage).toBe(0.56);
    expect(kept.json.healed).toEqual(['guard: a first-page position did not overwrite the later position at 0.56']);
    expect((await call('GET', `/api/media-items/${book}/progress`, { token: reader.token })).json.percentage).toBe(0.56);
    const forced = await put(call, reader.token, book, { percentage: 0, force: true });
    expect(forced.json.status).toBe('saved');
    expect(forced.json.progress.percentage).toBe(0);
    expect((await put(call, reader.token, book, { percentage: 0.6 })).json.status).toBe('saved');
  });

  it('returns the restore handles only while they are known', async () => {
    const r = await put(call, reader.token, book, { percentage: 0.61, anchor_href: 'Text/ch02.xhtml', css_selector: '#p12', char_offset: 40 });
    expect(r.json.progress).toMatchObject({ anchor_href: 'Text/ch02.xhtml', css_selector: '#p12', char_offset: 40 });
    const next = await put(call, reader.token, book, { percentage: 0.62 });
    for (const k of ['anchor_href', 'css_selector', 'char_offset', 'epubcfi']) expect(next.json.progress).not.toHaveProperty(k);
  });

  it('keeps every accepted position in the history, with client and device, newest first', async () => {
    const h = await call('GET', `/api/progress/${book}/history`, { token: reader.token });
    expect(h.status, h.text).toBe(200);
    expect(h.json.media_item_id).toBe(book);
    expect(h.json.data.map((e: { percentage: number }) => e.percentage)).toEqual([0.62, 0.61, 0.6, 0, 0.56, 0.55, 0.42]);
    expect(h.json.data.at(-1)).toMatchObject({ client: 'web', device: 'web', reason: 'saved', epubcfi: CFI });
    // the progress record's own id leads to the same history
    const g = await call('GET', `/api/media-items/${book}/progress`, { token: reader.token });
    const byId = await call('GET', `/api/progress/${g.json.id}/history`, { token: reader.token });
    expect(byId.json).toEqual(h.json);
  });

  it('never registers /api/progress/<id>', async () => {
    for (const method of ['GET', 'POST', 'DELETE', 'PUT'])
      expectError(
        await call(method, `/api/progress/${book}`, { token: reader.token, ...(method === 'GET' || method === 'DELETE' ? {} : { body: { percentage: 0.3 } }) }),
        404,
        'not found',
      );
  });

  it('keeps positions per user: another user sees none of it', async () => {
    expectError(await call('GET', `/api/media-items/${book}/progress`, { token: other.token }), 404, 'progress not found');
    expectError(await call('GET', `/api/progress/${book}/history`, { token: other.token }), 404, 'progress not found');
    const mine = (await call('GET', `/api/media-items/${book}/progress`, { token: reader.token })).json;
    // another user's progress record id is nothing to them
    expectError(await call('GET', `/api/progress/${mine.id}/history`, { token: other.token }), 404, 'media item not found');
    expectError(await call('DELETE', `/api/media-items/${book}/progress`, { token: other.token }), 404, 'progress not found');
    const theirs = await put(call, other.token, book, { percentage: 0.1 });
    expect(theirs.json.progress.version).toBe(1);
    expect((await call('GET', `/api/media-items/${book}/progress`, { token: reader.token })).json).toEqual(mine);
  });

  it('answers 404 for an item the caller cannot see, 400 for a malformed id, 401 without a session', async () => {
    const grant = await call('PUT', `/api/auth/users/${other.id}/libraries`, { token: s.admin.token, body: { all_libraries: false, library_ids: [] } });
    expect(grant.status, grant.text).toBe(200);
    expectError(await call('GET', `/api/media-items/${book}/progress`, { token: other.token }), 404, 'media item not found');
    expectError(await put(call, other.token, book, { percentage: 0.2 }), 404, 'media item not found');
    expectError(await call('GET', `/api/progress/${book}/history`, { token: other.token }), 404, 'media item not found');
    expectError(await call('DELETE', `/api/media-items/${book}/progress`, { token: other.token }), 404, 'media item not found');
    expectError(await call('GET', `/api/media-items/${NO_SUCH_ID}/progress`, { token: reader.token }), 404, 'media item not found');
    expectError(await call('GET', '/api/media-items/nope/progress', { token: reader.token }), 400, 'invalid media item id');
    expectError(await call('GET', `/api/media-items/${book}/progress`), 401, 'authentication required');
    expect((await call('PUT', `/api/auth/users/${other.id}/libraries`, { token: s.admin.token, body: { all_libraries: true } })).status).toBe(200);
  });

  it('keeps positions and history across a restart', async () => {
    const before = (await call('GET', `/api/media-items/${book}/progress`, { token: reader.token })).json;
    const history = (await call('GET', `/api/progress/${book}/history`, { token: reader.token })).json;
    await (await get(mode)).restart();
    expect((await call('GET', `/api/media-items/${book}/progress`, { token: reader.token })).json).toEqual(before);
    expect((await call('GET', `/api/progress/${book}/history`, { token: reader.token })).json).toEqual(history);
    expect((await put(call, reader.token, book, { percentage: 0.63 })).json.progress.version).toBe(before.version + 1);
  }, 180_000);

  it('removes a position; the history keeps it', async () => {
    const d = await call('DELETE', `/api/media-items/${book}/progress`, { token: reader.token });
    expect(d.status, d.text).toBe(200);
    expect(d.json).toEqual({ message: 'progress deleted' });
    expectError(await call('GET', `/api/media-items/${book}/progress`, { token: reader.token }), 404, 'progress not found');
    const h = await call('GET', `/api/progress/${book}/history`, { token: reader.token });
    expect(h.json.data[0]).toMatchObject({ reason: 'deleted', percentage: 0 });
    expect(h.json.data[1].percentage).toBe(0.63);
  });
});
