// Browsing by series and author over the API, in both modes: GET /api/series (counts, the caller's
// progress and unread count, cover, library filter, text, A-Z letter, sort, read state, paging with a
// total), GET /api/series/<name> (books in index order, what to read next, the numbers missing, the
// first description), GET /api/authors, and the search's sort applied whatever the filters. A user
// never sees a hidden library's series or authors; every bad query value is a 400 with its message.
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes, type Bindery } from '../support/bindery';
import { emptyDir } from './catalog-helpers';
import { makeItem, put } from './reading-helpers';
import { api, eventually, expectError, instances, register, type Account, type Call } from './helpers';

const modes = await availableModes();
const get = instances(modes);

const KAIJU = 'Kaiju Café';
const KAIJU_PATH = `/api/series/${encodeURIComponent(KAIJU)}`;

for (const mode of modes) {
  describe(`browsing by series and author (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let alice: Account;
    let open: string;
    let hidden: string;
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      const lib = async (name: string) => {
        const r = await call('POST', '/api/libraries', { token: admin.token, body: { name, folders: [emptyDir()], watch: false } });
        expect(r.status, r.text).toBe(201);
        return r.json.id as string;
      };
      open = await lib('Open shelf');
      hidden = await lib('Hidden shelf');
      const add = async (library: string, body: Record<string, unknown>) => {
        ids[body.title as string] = (await makeItem(call, admin, library, body)).id;
      };
      // out of order on purpose; volume 4 is missing, and one book has no number
      await add(open, { title: 'Kaiju Café 3', authors: ['Mika Sato'], series: KAIJU, series_index: 3 });
      await add(open, { title: 'Kaiju Café 1', authors: ['Mika Sato'], series: KAIJU, series_index: 1 });
      await add(open, { title: 'Kaiju Café 5', authors: ['Mika Sato'], series: KAIJU, series_index: 5, description: 'The fifth.' });
      await add(open, { title: 'Kaiju Café 2', authors: ['Mika Sato'], series: KAIJU, series_index: 2, description: 'A café for monsters.' });
      await add(open, { title: 'Kaiju Café Extras', authors: ['Mika Sato', 'Ann Walker'], series: KAIJU });
      await add(open, { title: 'Road One', authors: ['Ann Walker'], series: 'The Long Road', series_index: 1 });
      await add(open, { title: 'Road Two', authors: ['Ann Walker'], series: 'the long road', series_index: 2 });
      await add(open, { title: 'Stone Age', authors: ['Örjan Berg'], series: 'Ötzi Tales', series_index: 1 });
      await add(open, { title: '猫の事件', authors: ['田中 春樹'], series: 'ねこの探偵', series_index: 1 });
      await add(open, { title: 'Plain Book', authors: ['Bob Other'] });
      await add(hidden, { title: 'Zebra One', authors: ['Secret Author'], series: 'Zebra', series_index: 1 });
      await add(hidden, { title: 'Kaiju Café 4', authors: ['Mika Sato'], series: KAIJU, series_index: 4 });
      alice = await register(call);
      const g = await call('PUT', `/api/auth/users/${alice.id}/libraries`, { token: admin.token, body: { all_libraries: false, library_ids: [open] } });
      expect(g.status, g.text).toBe(200);
      expect((await put(call, alice.token, ids['Kaiju Café 1']!, { percentage: 1 })).status).toBe(200);
      expect((await put(call, alice.token, ids['Kaiju Café 2']!, { percentage: 0.5 })).status).toBe(200);
    }, 240_000);

    const ok = async (who: Account, path: string) => {
      const r = await call('GET', path, { token: who.token });
      expect(r.status, `${path}: ${r.text}`).toBe(200);
      return r.json;
    };
    const names = async (who: Account, path: string) => ((await ok(who, path)).data as { name: string }[]).map((s) => s.name);

    it("lists every series the caller may see with counts, the caller's progress and unread count, a total, in name order", async () => {
      const page = await ok(alice, '/api/series');
      expect(page.total).toBe(4);
      expect(page.limit).toBe(50);
      expect(page.offset).toBe(0);
      // by name without case or accent; the two spellings of one series are one; the hidden library's series are not there
      expect(page.data.map((s: { name: string }) => s.name)).toEqual([KAIJU, 'Ötzi Tales', expect.stringMatching(/^(The Long Road|the long road)$/), 'ねこの探偵']);
      expect(page.data[0]).toEqual({ name: KAIJU, book_count: 5, read_count: 1, in_progress_count: 1, unread_count: 3, progress: 0.3, cover_item_id: null });
      expect(page.data[2]).toMatchObject({ book_count: 2, read_count: 0, in_progress_count: 0, unread_count: 2, progress: 0 });
      // the admin sees the hidden library: its series, and its volume of Kaiju Café; their own progress (none)
      const all = await ok(admin, '/api/series');
      expect(all.total).toBe(5);
      expect(all.data.find((s: { name: string }) => s.name === KAIJU)).toEqual({
        name: KAIJU,
        book_count: 6,
        read_count: 0,
        in_progress_count: 0,
        unread_count: 6,
        progress: 0,
        cover_item_id: null,
      });
      expect(all.data.map((s: { name: string }) => s.name)).toContain('Zebra');
    });

    it('filters the series by library, text, A-Z letter and read state; sorts; pages with the total', async () => {
      expect(await names(admin, `/api/series?library_id=${hidden}`)).toEqual([KAIJU, 'Zebra']);
      // a library alice may not see has nothing for her
      expect(await ok(alice, `/api/series?library_id=${hidden}`)).toEqual({ data: [], total: 0, limit: 50, offset: 0 });
      expect(await names(alice, `/api/series?library_id=${open}&q=CAF`)).toEqual([KAIJU]);
      expect(await names(alice, '/api/series?q=long')).toHaveLength(1);
      expect(await names(alice, '/api/series?letter=k')).toEqual([KAIJU]);
      expect(await names(alice, '/api/series?letter=O')).toEqual(['Ötzi Tales']);
      expect(await names(alice, `/api/series?letter=${encodeURIComponent('#')}`)).toEqual(['ねこの探偵']);
      expect(await names(alice, '/api/series?letter=z')).toEqual([]);
      expect(await names(alice, '/api/series?read_status=reading')).toEqual([KAIJU]);
      expect(await names(alice, '/api/series?read_status=finished')).toEqual([]);
      expect((await names(alice, '/api/series?read_status=unread')).length).toBe(3);
      expect((await names(alice, '/api/series?sort=-book_count')).slice(0, 2)).toEqual([KAIJU, expect.stringMatching(/long road/i)]);
      // the newest book decides: Kaiju Café's last volume was added before the others
      expect(await names(alice, '/api/series?sort=-created_at')).toEqual(['ねこの探偵', 'Ötzi Tales', expect.stringMatching(/long road/i), KAIJU]);
      expect(await names(alice, '/api/series?sort=-name')).toEqual(['ねこの探偵', expect.stringMatching(/long road/i), 'Ötzi Tales', KAIJU]);
      const second = await ok(alice, '/api/series?limit=2&offset=2');
      expect(second.total).toBe(4);
      expect(second.data.map((s: { name: string }) => s.name)).toEqual([expect.stringMatching(/long road/i), 'ねこの探偵']);
      expect((await ok(alice, '/api/series?offset=10')).data).toEqual([]);
      // the caller's progress moves the counts at once
      expect((await put(call, alice.token, ids['Stone Age']!, { percentage: 1 })).status).toBe(200);
      await eventually(async () => expect(await names(alice, '/api/series?read_status=finished')).toEqual(['Ötzi Tales']));
      expect((await call('DELETE', `/api/media-items/${ids['Stone Age']}/progress`, { token: alice.token })).status).toBe(200);
      await eventually(async () => expect(await names(alice, '/api/series?read_status=finished')).toEqual([]));
    });

    it('one series: books in index order with positions, read next, the missing numbers, the first description; only visible books', async () => {
      const s = await ok(alice, KAIJU_PATH);
      expect(s.data.map((b: { item: { title: string } }) => b.item.title)).toEqual(['Kaiju Café 1', 'Kaiju Café 2', 'Kaiju Café 3', 'Kaiju Café 5', 'Kaiju Café Extras']);
      expect(s.data.map((b: { percentage: number | null }) => b.percentage)).toEqual([1, 0.5, null, null, null]);
      expect(s.data.map((b: { media_item_id: string }) => b.media_item_id)).toEqual(s.data.map((b: { item: { id: string } }) => b.item.id));
      const { data: _d, ...summary } = s;
      expect(summary).toEqual({
        name: KAIJU,
        book_count: 5,
        read_count: 1,
        in_progress_count: 1,
        unread_count: 3,
        progress: 0.3,
        cover_item_id: null,
        description: 'A café for monsters.',
        next_item_id: ids['Kaiju Café 2'],
        next_title: 'Kaiju Café 2',
        next_percentage: 0.5,
        // volume 4 is in a library alice may not see
        missing_numbers: [4],
        missing_count: 1,
        total: 5,
        limit: 200,
        offset: 0,
      });
      // the admin has volume 4: nothing missing; any case of the name finds the series
      const all = await ok(admin, `/api/series/${encodeURIComponent('KAIJU CAFÉ')}`);
      expect(all.name).toBe(KAIJU);
      expect(all.missing_numbers).toEqual([]);
      expect(all.data.map((b: { item: { title: string } }) => b.item.title)).toEqual([
        'Kaiju Café 1',
        'Kaiju Café 2',
        'Kaiju Café 3',
        'Kaiju Café 4',
        'Kaiju Café 5',
        'Kaiju Café Extras',
      ]);
      expect(all.next_item_id).toBe(ids['Kaiju Café 1']);
      expect((await ok(admin, `${KAIJU_PATH}?library_id=${hidden}`)).data.map((b: { item: { title: string } }) => b.item.title)).toEqual(['Kaiju Café 4']);
      // paging keeps the summary of the whole series
      const p = await ok(alice, `${KAIJU_PATH}?limit=2&offset=2`);
      expect(p.data.map((b: { item: { title: string } }) => b.item.title)).toEqual(['Kaiju Café 3', 'Kaiju Café 5']);
      // and names the book to read next though it is on another page
      expect([p.total, p.next_item_id, p.next_title, p.next_percentage]).toEqual([5, ids['Kaiju Café 2'], 'Kaiju Café 2', 0.5]);
      // finishing volume 2 moves "read next" to volume 3
      expect((await put(call, alice.token, ids['Kaiju Café 2']!, { percentage: 1 })).status).toBe(200);
      await eventually(async () => expect((await ok(alice, KAIJU_PATH)).next_item_id).toBe(ids['Kaiju Café 3']));
      expect((await put(call, alice.token, ids['Kaiju Café 2']!, { percentage: 0.5 })).status).toBe(200);
      await eventually(async () => expect((await ok(alice, KAIJU_PATH)).next_item_id).toBe(ids['Kaiju Café 2']));
      // a series of a hidden library, or of no book, does not exist for alice
      for (const path of ['/api/series/Zebra', '/api/series/Nothing%20Here', '/api/series/%20'])
        expectError(await call('GET', path, { token: alice.token }), 404, 'series not found');
      expect((await ok(admin, '/api/series/Zebra')).book_count).toBe(1);
    });

    it('a kept answer names its entity tag: If-None-Match with it is a 304 without a body until the answer changes', async () => {
      const first = await call('GET', KAIJU_PATH, { token: alice.token });
      expect(first.status, first.text).toBe(200);
      const tag = first.headers.get('etag');
      expect(tag).toMatch(/^"[\w-]{27}"$/);
      // the same answer again: the same tag; named, nothing is sent back
      expect((await call('GET', KAIJU_PATH, { token: alice.token })).headers.get('etag')).toBe(tag);
      const same = await call('GET', KAIJU_PATH, { token: alice.token, headers: { 'if-none-match': tag! } });
      expect([same.status, same.text]).toEqual([304, '']);
      // the admin sees another answer (volume 4): alice's tag is not theirs
      const theirs = await call('GET', KAIJU_PATH, { token: admin.token, headers: { 'if-none-match': tag! } });
      expect(theirs.status, theirs.text).toBe(200);
      expect(theirs.headers.get('etag')).not.toBe(tag);
      // alice's progress changes the answer: a new tag, the whole answer
      expect((await put(call, alice.token, ids['Kaiju Café 3']!, { percentage: 0.25 })).status).toBe(200);
      await eventually(async () => {
        const r = await call('GET', KAIJU_PATH, { token: alice.token, headers: { 'if-none-match': tag! } });
        expect(r.status, r.text).toBe(200);
        expect(r.headers.get('etag')).not.toBe(tag);
        expect(r.json.data.map((b: { percentage: number | null }) => b.percentage)).toEqual([1, 0.5, 0.25, null, null]);
      });
      expect((await call('DELETE', `/api/media-items/${ids['Kaiju Café 3']}/progress`, { token: alice.token })).status).toBe(200);
      // a list answer carries one too; an unknown tag is a 200
      const list = await call('GET', '/api/series', { token: alice.token, headers: { 'if-none-match': '"nothing"' } });
      expect(list.status, list.text).toBe(200);
      expect(list.headers.get('etag')).toMatch(/^"[\w-]{27}"$/);
    });

    it('lists the authors with book and series counts, filtered, sorted and paged like the series', async () => {
      const page = await ok(alice, '/api/authors');
      expect(page.total).toBe(5);
      expect(page.data).toEqual([
        { name: 'Ann Walker', book_count: 3, series_count: 2 },
        { name: 'Bob Other', book_count: 1, series_count: 0 },
        { name: 'Mika Sato', book_count: 5, series_count: 1 },
        { name: 'Örjan Berg', book_count: 1, series_count: 1 },
        { name: '田中 春樹', book_count: 1, series_count: 1 },
      ]);
      expect((await names(admin, '/api/authors')).includes('Secret Author')).toBe(true);
      expect(await names(alice, '/api/authors?sort=-book_count&limit=2')).toEqual(['Mika Sato', 'Ann Walker']);
      expect(await names(alice, '/api/authors?letter=o')).toEqual(['Örjan Berg']);
      expect(await names(alice, `/api/authors?letter=${encodeURIComponent('#')}`)).toEqual(['田中 春樹']);
      expect(await names(alice, '/api/authors?q=WALK')).toEqual(['Ann Walker']);
      expect(await names(admin, `/api/authors?library_id=${hidden}`)).toEqual(['Mika Sato', 'Secret Author']);
      expect(await ok(alice, `/api/authors?library_id=${hidden}`)).toEqual({ data: [], total: 0, limit: 50, offset: 0 });
      const last = await ok(alice, '/api/authors?limit=2&offset=4');
      expect([last.total, last.data.map((a: { name: string }) => a.name)]).toEqual([5, ['田中 春樹']]);
    });

    it('refuses every bad query value with a 400 and its message', async () => {
      const bad = async (path: string, message: string) => expectError(await call('GET', path, { token: alice.token }), 400, message);
      for (const list of ['/api/series', '/api/authors']) {
        await bad(`${list}?letter=ab`, 'letter must be one letter from A to Z, or # for names that begin otherwise');
        await bad(`${list}?letter=1`, 'letter must be one letter from A to Z, or # for names that begin otherwise');
        await bad(`${list}?letter=%C3%A9`, 'letter must be one letter from A to Z, or # for names that begin otherwise');
        await bad(`${list}?q=${'x'.repeat(201)}`, 'q must be at most 200 characters');
        await bad(`${list}?q=a%00b`, 'q must not contain control characters');
        await bad(`${list}?letter=%1B`, 'letter must not contain control characters');
        await bad(`${list}?limit=0`, 'limit must be an integer between 1 and 1000');
        await bad(`${list}?limit=1001`, 'limit must be an integer between 1 and 1000');
        await bad(`${list}?offset=-1`, 'offset must be a non-negative integer');
        await bad(`${list}?library_id=nope`, 'invalid library id');
      }
      await bad('/api/series?sort=title', 'invalid sort. must be one of: name, created_at, book_count (prefix - for descending)');
      await bad('/api/authors?sort=created_at', 'invalid sort. must be one of: name, book_count (prefix - for descending)');
      await bad('/api/series?read_status=done', 'read_status must be one of unread, reading, finished');
      await bad(`/api/series/${'x'.repeat(201)}`, 'the name must be at most 200 characters');
      await bad(`${KAIJU_PATH}?limit=x`, 'limit must be an integer between 1 and 1000');
      await bad(`${KAIJU_PATH}?library_id=1`, 'invalid library id');
      expectError(await call('GET', '/api/series/a%00b', { token: alice.token }), 404, 'not found');
      // a hostile name is data: found as it is spelled, never interpreted
      expectError(await call('GET', `/api/series/${encodeURIComponent("<script>alert(1)</script>' or 1=1 --")}`, { token: alice.token }), 404, 'series not found');
      // a long name is one path segment: 150 CJK characters are 1,350 encoded
      const long = '猫'.repeat(150);
      await makeItem(call, admin, hidden, { title: 'Long One', series: long, series_index: 1 });
      expect((await ok(admin, `/api/series/${encodeURIComponent(long)}`)).name).toBe(long);
      expect((await call('GET', '/api/series')).status).toBe(401);
      expect((await call('GET', '/api/authors')).status).toBe(401);
    });

    it('the search orders by the sort asked for whatever the filters, and by relevance then title without one', async () => {
      const titles = async (query: Record<string, string>) =>
        ((await ok(alice, `/api/media-items/search?${new URLSearchParams(query)}`)).data as { title: string }[]).map((i) => i.title);
      const kaiju = { series_filter: `"${KAIJU}"` };
      expect(await titles({ ...kaiju, sort: 'title' })).toEqual(['Kaiju Café 1', 'Kaiju Café 2', 'Kaiju Café 3', 'Kaiju Café 5', 'Kaiju Café Extras']);
      // made 3, 1, 5, 2, Extras
      expect(await titles({ ...kaiju, sort: '-created_at' })).toEqual(['Kaiju Café Extras', 'Kaiju Café 2', 'Kaiju Café 5', 'Kaiju Café 1', 'Kaiju Café 3']);
      expect(await titles({ ...kaiju, sort: 'created_at' })).toEqual(['Kaiju Café 3', 'Kaiju Café 1', 'Kaiju Café 5', 'Kaiju Café 2', 'Kaiju Café Extras']);
      expect(await titles({ author_filter: '"Ann Walker"', sort: '-series' })).toEqual(['Road Two', 'Road One', 'Kaiju Café Extras']);
      expect(await titles({ q: 'Road', sort: '-title' })).toEqual(['Road Two', 'Road One']);
      expectError(
        await call('GET', '/api/media-items/search?format=epub&sort=bogus', { token: alice.token }),
        400,
        'invalid sort. must be one of: title, created_at, updated_at, series, year, author (prefix - or suffix :desc for descending)',
      );
    });
  });
}
