// Media item search end to end on the generated corpus: fuzzy and quoted-exact field filters,
// exact year, boolean and format filters, free text, autocomplete and paging; and the sort orders
// of the item list, on a small shelf of items made through the API.
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, expectError, instances, NO_SUCH_ID, register, type Account, type Call } from './helpers';
import { copyOf, createLibrary, emptyDir, FIXTURE, items, manifest, settled, type ManifestRow } from './catalog-helpers';

const modes = await availableModes();
const get = instances(modes);
/** manifest.tsv has a publisher column too */
type Row = ManifestRow & { publisher: string };
const books = (manifest() as Row[]).filter((r) => r.kind === 'book' || r.kind === 'duplicate');
const LIMIT = 'limit must be an integer between 1 and 1000';

type Item = Record<string, any>;
/** The file paths of items, sorted: what a result is compared by. */
const paths = (list: Item[]) => list.map((i) => i.file_path as string).sort();
const manifestPaths = (pred: (r: Row) => boolean) =>
  books
    .filter(pred)
    .map((r) => r.path)
    .sort();
const q = (v: string) => encodeURIComponent(v);

/** The shelf the sort orders are checked on: distinct first letters, so every collation agrees. */
const SHELF = [
  { title: 'The Zebra Key', authors: ['Nora Bell'], series: 'Alpha Saga', series_index: 2, year: 1990 },
  { title: 'Apple Orchard', authors: ['Petra Quill'], year: 2005 },
  { title: 'A Kite Festival', authors: ['Ivo Chen'], series: 'Alpha Saga', series_index: 1, year: 1975 },
  { title: 'Mango Tree', series: 'beta cycle', series_index: 1 },
  { title: 'Drift Lines', authors: ['Gil Ortiz'], year: 1960 },
  { title: 'Harbor Lights', authors: ['Uma Stone'], series: 'Beta Cycle', series_index: 2, year: 2020 },
  { title: 'Quartz Bay', authors: ['Ada Frost'], year: 1990 },
  { title: 'Lemon Grove', authors: ['Kai Moss'], year: 1999 },
];
const CREATED = SHELF.map((s) => s.title);

describe.each(modes)('search and sorting (%s)', (mode) => {
  let call: Call;
  let admin: Account;
  let user: Account;
  let corpus: Item;
  let shelf: Item;
  let all: Item[];

  /** GET /api/media-items/search in the corpus library, expecting 200. */
  const search = async (query: string, scope = true): Promise<{ data: Item[]; total: number; limit: number; offset: number; suggestions?: Record<string, string[]> }> => {
    const r = await call('GET', `/api/media-items/search?${scope ? `library_id=${corpus.id}&` : ''}${query}`, { token: user.token });
    expect(r.status, `${query}: ${r.text}`).toBe(200);
    return r.json;
  };
  const found = async (query: string) => paths((await search(`${query}&limit=1000`)).data);

  beforeAll(async () => {
    call = api(await get(mode));
    admin = await register(call);
    user = await register(call);
    corpus = await createLibrary(call, admin.token, { name: 'Corpus', folders: [copyOf(FIXTURE)], watch: false });
    shelf = await createLibrary(call, admin.token, { name: 'Shelf', folders: [emptyDir()], watch: false });
    await settled(call, admin.token, corpus.id);
    await settled(call, admin.token, shelf.id);
    all = await items(call, admin.token, corpus.id);
    expect(all).toHaveLength(books.length + 1); // and the comic whose ComicInfo.xml is broken
    for (const s of SHELF) {
      const r = await call('POST', '/api/media-items', { token: admin.token, body: { library_id: shelf.id, ...s } });
      expect(r.status, r.text).toBe(201);
    }
  });

  describe('search', () => {
    it('author_filter is fuzzy: petrov finds both spellings, and so does a typo', async () => {
      const petrov = manifestPaths((r) => r.authors.some((a) => /petrov/i.test(a)));
      expect(petrov).toHaveLength(4);
      const r = await search('author_filter=petrov');
      expect(r).toEqual({ data: expect.any(Array), total: 4, limit: 50, offset: 0 });
      expect(paths(r.data)).toEqual(petrov);
      expect([...new Set(r.data.flatMap((i) => i.authors))].sort()).toEqual(['Aleksandr Petrov', 'Alexander Petrov']);
      for (const v of ['PETROV', 'Petrv', 'Alexander Petrov', 'aleksandr petrov']) expect(await found(`author_filter=${q(v)}`), v).toEqual(petrov);
      expect(await search('author_filter=zzqxvw')).toEqual({ data: [], total: 0, limit: 50, offset: 0 });
    });

    it('a value in double quotes is an exact, case-insensitive match', async () => {
      const only = (name: string) => manifestPaths((r) => r.authors.includes(name));
      expect(await found(`author_filter=${q('"Alexander Petrov"')}`)).toEqual(only('Alexander Petrov'));
      expect(only('Alexander Petrov')).toHaveLength(1);
      expect(await found(`author_filter=${q('"alexander PETROV"')}`)).toEqual(only('Alexander Petrov'));
      expect(await found(`author_filter=${q(' "Aleksandr Petrov" ')}`)).toEqual(only('Aleksandr Petrov'));
      expect((await search(`author_filter=${q('"Petrov"')}`)).total).toBe(0);

      const agency = manifestPaths((r) => r.series === 'The Midnight Agency');
      expect(agency).toHaveLength(4);
      expect(await found(`series_filter=${q('"the midnight agency"')}`)).toEqual(agency);
      expect(await found('series_filter=midnight%20agncy')).toEqual(agency);
      expect((await search(`series_filter=${q('"Midnight Agency"')}`)).total).toBe(0);

      const harbor = manifestPaths((r) => r.publisher === 'Harbor House');
      expect(harbor.length).toBeGreaterThan(3);
      expect(await found(`publisher_filter=${q('"Harbor House"')}`)).toEqual(harbor);
      expect(await found('publisher_filter=harbr')).toEqual(harbor);
      // fuzzy is fuzzy: "house" is enough like Owlhouse Press
      expect(await found('publisher_filter=harbour%20house')).toEqual([...harbor, ...manifestPaths((r) => r.publisher === 'Owlhouse Press')].sort());
      expect((await search(`publisher_filter=${q('"Harbor"')}`)).total).toBe(0);

      const ja = manifestPaths((r) => r.language === 'ja');
      expect(await found(`language_filter=${q('"JA"')}`)).toEqual(ja);
      expect(await found('language_filter=ja')).toEqual(ja);

      // tags come from the files' subjects: genre_filter is the older name of tags_filter
      const mystery = paths(all.filter((i) => i.tags.some((t: string) => t.toLowerCase() === 'mystery')));
      expect(mystery.length).toBeGreaterThan(3);
      expect(mystery.length).toBeLessThan(all.length);
      expect(await found(`tags_filter=${q('"mystery"')}`)).toEqual(mystery);
      expect(await found(`genre_filter=${q('"Mystery"')}`)).toEqual(mystery);
      expect(await found('tags_filter=mystry')).toEqual(mystery);
      expect((await search(`genre_filter=${q('"Myst"')}`)).total).toBe(0);
    });

    it('year, the booleans and format are exact filters', async () => {
      expect(await found('year=2018')).toEqual(manifestPaths((r) => r.year === '2018'));
      expect(await found('year=1936')).toEqual(manifestPaths((r) => r.year === '1936'));
      expect((await search('year=2017')).total).toBe(0);
      for (const y of ['abc', '12345', '-1', '19.5'])
        expectError(await call('GET', `/api/media-items/search?year=${y}`, { token: user.token }), 400, 'year must be an integer between 0 and 9999');

      const covered = paths(all.filter((i) => i.cover_url));
      const bare = paths(all.filter((i) => !i.cover_url));
      expect(bare.length).toBeGreaterThan(0);
      expect(covered.length).toBeGreaterThan(0);
      for (const v of ['true', 'TRUE', '1', 'yes']) expect(await found(`has_cover=${v}`), v).toEqual(covered);
      for (const v of ['false', '0', 'no']) expect(await found(`has_cover=${v}`), v).toEqual(bare);
      expect(await found('has_series=true')).toEqual(paths(all.filter((i) => i.series !== null)));
      expect(await found('has_series=false')).toEqual(paths(all.filter((i) => i.series === null)));
      expect(await found('has_isbn=false')).toEqual(paths(all.filter((i) => i.isbn === null)));
      for (const k of ['has_cover', 'has_series', 'has_isbn', 'has_file']) {
        expectError(await call('GET', `/api/media-items/search?${k}=maybe`, { token: user.token }), 400, `${k} must be true or false`);
      }

      const cbz = paths(all.filter((i) => i.formats.some((f: { format: string }) => f.format === 'cbz')));
      expect(cbz).toEqual(expect.arrayContaining(manifestPaths((r) => r.format === 'cbz')));
      expect(await found('format=cbz')).toEqual(cbz);
      expect(await found('format=CBZ')).toEqual(cbz);
      expect((await search('format=docx')).total).toBe(0);

      // filters combine: a Petrov book that is part of a series
      expect(await found('author_filter=petrov&has_series=true')).toEqual(manifestPaths((r) => r.authors.includes('Aleksandr Petrov') && r.series !== ''));
      expect(await found(`author_filter=petrov&year=1898`)).toEqual(manifestPaths((r) => r.authors.includes('Alexander Petrov')));
    });

    it('free text q looks in titles, authors and series, and ISBNs however they are written', async () => {
      const has = (i: Item, s: string) => [i.title, ...i.authors, i.series ?? ''].some((v: string) => v.toLowerCase().includes(s));
      const carto = paths(all.filter((i) => has(i, 'cartographer')));
      expect(carto).toHaveLength(3);
      expect(await found('q=cartographer')).toEqual(carto);
      expect(await found('q=Okafor')).toEqual(paths(all.filter((i) => has(i, 'okafor'))));
      const isbn = books.find((r) => r.isbn !== '' && r.kind === 'book')!;
      const dashed = `${isbn.isbn.slice(0, 3)}-${isbn.isbn.slice(3, 4)}-${isbn.isbn.slice(4, 9)}-${isbn.isbn.slice(9)}`;
      expect(await found(`q=${q(dashed)}`)).toEqual([isbn.path]);
      // the best match comes first
      const best = await search('q=midnight%20agency&limit=1');
      expect(best.total).toBe(4);
      expect(best.data[0]!.title).toMatch(/^The Midnight Agency #/);
      // LIKE wildcards are plain characters
      const percent = paths(all.filter((i) => i.title.includes('%')));
      expect(percent).toHaveLength(1);
      expect(await found('q=%25')).toEqual(percent);
      expect((await search('q=_')).total).toBe(0);
    });

    it('library_id scopes the search: 400 invalid library id', async () => {
      expectError(await call('GET', '/api/media-items/search?library_id=nope', { token: user.token }), 400, 'invalid library id');
      expectError(await call('GET', `/api/media-items/search?library_id=${corpus.id}0`, { token: user.token }), 400, 'invalid library id');
      expect(await search(`library_id=${NO_SUCH_ID}`, false)).toEqual({ data: [], total: 0, limit: 50, offset: 0 });
      const mine = await search(`library_id=${shelf.id}&limit=1000`, false);
      expect(mine.data.map((i) => i.title).sort()).toEqual([...CREATED].sort());
      expect((await search('limit=1', false)).total).toBe(all.length + SHELF.length);
      expect((await search(`author_filter=${q('"Petra Quill"')}`, false)).data.map((i) => i.title)).toEqual(['Apple Orchard']);
      expect((await search(`author_filter=${q('"Petra Quill"')}`)).total).toBe(0);
      expectError(await call('GET', '/api/media-items/search?q=x'), 401, 'authentication required');
      expectError(await call('GET', `/api/media-items/search?author_filter=${'a'.repeat(201)}`, { token: user.token }), 400, 'author_filter must be at most 200 characters');
    });

    it('pages with limit and offset; total counts every match', async () => {
      const whole = (await search('has_series=true&limit=1000')).data.map((i) => i.id);
      expect(whole.length).toBeGreaterThan(6);
      const p1 = await search('has_series=true&limit=3');
      const p2 = await search('has_series=true&limit=3&offset=3');
      expect(p1).toMatchObject({ total: whole.length, limit: 3, offset: 0 });
      expect(p2).toMatchObject({ total: whole.length, limit: 3, offset: 3 });
      expect([...p1.data, ...p2.data].map((i) => i.id)).toEqual(whole.slice(0, 6));
      expect(await search(`has_series=true&offset=${whole.length}`)).toEqual({ data: [], total: whole.length, limit: 50, offset: whole.length });
      const everything = await search('');
      expect(everything.total).toBe(all.length);
      expect(everything.data).toHaveLength(Math.min(50, all.length));
      const bad = async (query: string, message: string) => expectError(await call('GET', `/api/media-items/search?${query}`, { token: user.token }), 400, message);
      for (const l of ['0', '1001', 'abc']) await bad(`limit=${l}`, LIMIT);
      await bad('offset=-1', 'offset must be a non-negative integer');
    });

    it('autocomplete suggests authors, genres, series and languages, closest first', async () => {
      let r = await search('authors=pet&limit=1');
      expect(r.suggestions).toEqual({ authors: ['Aleksandr Petrov', 'Alexander Petrov'] }); // the more used first
      expect(r.total).toBe(all.length); // suggesting does not filter
      expect((await search('authors=PET')).suggestions).toEqual({ authors: ['Aleksandr Petrov', 'Alexander Petrov'] });
      expect((await search('authors=petrv')).suggestions!.authors).toEqual(expect.arrayContaining(['Aleksandr Petrov', 'Alexander Petrov']));
      // across libraries, a name that starts with what was typed comes before one that only contains it
      expect((await search('authors=pet', false)).suggestions).toEqual({ authors: ['Petra Quill', 'Aleksandr Petrov', 'Alexander Petrov'] });

      r = await search('series=midnight&genres=myst&languages=j');
      expect(r.suggestions).toEqual({ series: ['The Midnight Agency'], genres: ['Mystery'], languages: ['ja'] });
      expect((await search('series=beta', false)).suggestions!.series).toEqual(expect.arrayContaining(['beta cycle', 'Beta Cycle']));

      // nothing typed: the ten most used names
      const count = new Map<string, number>();
      for (const i of all) for (const a of new Set<string>(i.authors)) count.set(a, (count.get(a) ?? 0) + 1);
      const top = (await search('authors=')).suggestions!.authors!;
      expect(top).toHaveLength(10);
      expect(new Set(top).size).toBe(10);
      const n = top.map((a) => count.get(a) ?? 0);
      expect(n).toEqual([...n].sort((a, b) => b - a));
      expect([...count].filter(([, c]) => c > n[9]!).every(([a]) => top.includes(a))).toBe(true);
      expectError(await call('GET', `/api/media-items/search?authors=${'a'.repeat(201)}`, { token: user.token }), 400, 'authors must be at most 200 characters');
    });
  });

  describe('list sort orders', () => {
    const titles = async (query: string) => {
      const r = await call('GET', `/api/media-items?library_id=${shelf.id}&${query}`, { token: user.token });
      expect(r.status, `${query}: ${r.text}`).toBe(200);
      return r.json.data.map((i: Item) => i.title);
    };
    const BY_TITLE = ['Apple Orchard', 'Drift Lines', 'Harbor Lights', 'A Kite Festival', 'Lemon Grove', 'Mango Tree', 'Quartz Bay', 'The Zebra Key'];

    it('title by default, leading articles ignored; - or :desc reverses', async () => {
      expect(await titles('')).toEqual(BY_TITLE);
      for (const s of ['title', 'title:asc', 'TITLE']) expect(await titles(`sort=${s}`), s).toEqual(BY_TITLE);
      for (const s of ['-title', 'title:desc', 'title,desc']) expect(await titles(`sort=${s}`), s).toEqual([...BY_TITLE].reverse());
      expect(await titles('sort=title&limit=3&offset=3')).toEqual(BY_TITLE.slice(3, 6));
    });

    it('year, series and author, missing values last in both directions', async () => {
      expect(await titles('sort=year')).toEqual(['Drift Lines', 'A Kite Festival', 'Quartz Bay', 'The Zebra Key', 'Lemon Grove', 'Apple Orchard', 'Harbor Lights', 'Mango Tree']);
      for (const s of ['-year', 'year:desc', 'YEAR:DESC']) {
        expect(await titles(`sort=${s}`), s).toEqual([
          'Harbor Lights',
          'Apple Orchard',
          'Lemon Grove',
          'Quartz Bay',
          'The Zebra Key',
          'A Kite Festival',
          'Drift Lines',
          'Mango Tree',
        ]);
      }
      // series by name (any case), then by number in the series
      expect(await titles('sort=series')).toEqual(['A Kite Festival', 'The Zebra Key', 'Mango Tree', 'Harbor Lights', 'Apple Orchard', 'Drift Lines', 'Lemon Grove', 'Quartz Bay']);
      expect(await titles('sort=-series')).toEqual([
        'Harbor Lights',
        'Mango Tree',
        'The Zebra Key',
        'A Kite Festival',
        'Apple Orchard',
        'Drift Lines',
        'Lemon Grove',
        'Quartz Bay',
      ]);
      expect(await titles('sort=author')).toEqual(['Quartz Bay', 'Drift Lines', 'A Kite Festival', 'Lemon Grove', 'The Zebra Key', 'Apple Orchard', 'Harbor Lights', 'Mango Tree']);
      expect(await titles('sort=author:desc')).toEqual([
        'Harbor Lights',
        'Apple Orchard',
        'The Zebra Key',
        'Lemon Grove',
        'A Kite Festival',
        'Drift Lines',
        'Quartz Bay',
        'Mango Tree',
      ]);
    });

    it('created_at and updated_at', async () => {
      expect(await titles('sort=created_at')).toEqual(CREATED);
      expect(await titles('sort=added')).toEqual(CREATED);
      expect(await titles('sort=-created_at')).toEqual([...CREATED].reverse());
      const drift = (await call('GET', `/api/media-items?library_id=${shelf.id}&limit=1&offset=1`, { token: user.token })).json.data[0];
      expect(drift.title).toBe('Drift Lines');
      const r = await call('PATCH', `/api/media-items/${drift.id}`, { token: admin.token, body: { tags: ['Edited'] } });
      expect(r.status, r.text).toBe(200);
      expect(await titles('sort=-updated_at')).toEqual(['Drift Lines', ...[...CREATED].reverse().filter((t) => t !== 'Drift Lines')]);
      expect(await titles('sort=updated_at')).toEqual([...CREATED.filter((t) => t !== 'Drift Lines'), 'Drift Lines']);
    });

    it('lists 50 by default, up to 1000, across all libraries without library_id', async () => {
      const total = all.length + SHELF.length;
      expect(total).toBeGreaterThan(50);
      const first = await call('GET', '/api/media-items', { token: user.token });
      expect(first.status, first.text).toBe(200);
      expect(Object.keys(first.json)).toEqual(['data']);
      expect(first.json.data).toHaveLength(50);
      const rest = await call('GET', '/api/media-items?offset=50', { token: user.token });
      expect(rest.json.data).toHaveLength(total - 50);
      const ids = [...first.json.data, ...rest.json.data].map((i: Item) => i.id);
      expect(new Set(ids).size).toBe(total);
      const big = await call('GET', '/api/media-items?limit=1000', { token: user.token });
      expect(big.json.data.map((i: Item) => i.id)).toEqual(ids);
      expectError(await call('GET', '/api/media-items?limit=1001', { token: user.token }), 400, LIMIT);
    });
  });
});
