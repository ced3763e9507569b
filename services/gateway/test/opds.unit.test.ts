// The OPDS pieces that need no server: paging rules, Basic header parsing, summaries, stable ids,
// and the Atom a feed renders to.
import { describe, expect, it } from 'vitest';
import { acquisitionFeed, encodePath, nameUuid, navigationFeed, openSearchDescription, plainText } from '../src/opds/atom';
import { PAGE_MESSAGE, parsePaging, PER_PAGE_MESSAGE } from '../src/opds/paging';
import { parseBasic } from '../src/opds/reader-auth';

describe('OPDS paging', () => {
  it('defaults to page 1 of 50 and takes page and per_page', () => {
    expect(parsePaging({})).toEqual({ ok: true, value: { page: 1, perPage: 50, offset: 0 } });
    expect(parsePaging({ page: '3', per_page: '20' })).toEqual({ ok: true, value: { page: 3, perPage: 20, offset: 40 } });
    expect(parsePaging({ page: '', per_page: '' })).toEqual({ ok: true, value: { page: 1, perPage: 50, offset: 0 } });
    expect(parsePaging({ page: ['2', '9'], per_page: '200' })).toEqual({ ok: true, value: { page: 2, perPage: 200, offset: 200 } });
  });
  it.each([['0'], ['-1'], ['1.5'], ['abc'], ['99999999']])('refuses page=%s', (page) => {
    expect(parsePaging({ page })).toEqual({ ok: false, error: { code: 'validation', message: PAGE_MESSAGE } });
  });
  it.each([['0'], ['201'], ['ten'], ['1e2']])('refuses per_page=%s', (per_page) => {
    expect(parsePaging({ per_page })).toEqual({ ok: false, error: { code: 'validation', message: PER_PAGE_MESSAGE } });
  });
});

describe('HTTP Basic header', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  it('splits at the first colon, so passwords may hold colons, and reads UTF-8', () => {
    expect(parseBasic(`Basic ${b64('anna:pa:ss')}`)).toEqual({ login: 'anna', password: 'pa:ss' });
    expect(parseBasic(`basic ${b64('Zoë:pässword')}`)).toEqual({ login: 'Zoë', password: 'pässword' });
  });
  it('tells no Basic header from a broken one', () => {
    expect(parseBasic(undefined)).toBeNull();
    expect(parseBasic('Bearer abc')).toBeNull();
    expect(parseBasic('Basic')).toBe('malformed');
    expect(parseBasic('Basic !!!')).toBe('malformed');
    expect(parseBasic(`Basic ${b64('no-colon')}`)).toBe('malformed');
  });
});

describe('OPDS rendering', () => {
  it('gives a name the same version-5 UUID every time', () => {
    expect(nameUuid('authors/Erik Lindgren')).toBe(nameUuid('authors/Erik Lindgren'));
    expect(nameUuid('authors/Erik Lindgren')).not.toBe(nameUuid('authors/Erik Lindgreen'));
    expect(nameUuid('x')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
  it('turns an HTML description into bounded plain text', () => {
    expect(plainText('<p>Fish &amp; <b>chips</b></p>\n<script>x()</script>  end')).toBe('Fish & chips end');
    expect(plainText('a'.repeat(3000)).length).toBe(2000);
  });
  it('percent-encodes each path segment, keeping the slashes', () => {
    expect(encodePath('A b/C&D #1.cbz')).toBe('A%20b/C%26D%20%231.cbz');
  });
  it('escapes text, drops characters XML cannot carry, and writes paging links', () => {
    const xml = navigationFeed(
      {
        key: 'k',
        title: 'A & B <C>\u0001',
        kind: 'navigation',
        base: '/opds',
        self: '/opds/x?page=2&per_page=1',
        updated: '2026-01-01T00:00:00.000Z',
        paging: { page: 2, perPage: 1, offset: 1, total: 3, path: '/opds/x', query: { q: 'a b' } },
      },
      [],
    );
    expect(xml).toContain('<title>A &amp; B &lt;C&gt;</title>');
    expect(xml).toContain('<link rel="first" href="/opds/x?q=a+b&amp;page=1&amp;per_page=1"');
    expect(xml).toContain('<link rel="last" href="/opds/x?q=a+b&amp;page=3&amp;per_page=1"');
    expect(xml).toContain('<link rel="previous" href="/opds/x?q=a+b&amp;page=1&amp;per_page=1"');
    expect(xml).toContain('<link rel="next" href="/opds/x?q=a+b&amp;page=3&amp;per_page=1"');
    expect(xml).toContain(
      '<opensearch:totalResults>3</opensearch:totalResults><opensearch:itemsPerPage>1</opensearch:itemsPerPage><opensearch:startIndex>2</opensearch:startIndex>',
    );
  });
  it('gives an acquisition link per format with its type and length', () => {
    const item = {
      id: '11111111-1111-4111-8111-111111111111',
      library_id: '22222222-2222-4222-8222-222222222222',
      title: 'T',
      authors: ['A'],
      tags: ['x'],
      language: 'en',
      publisher: null,
      year: 2001,
      isbn: null,
      description: null,
      series: null,
      series_index: null,
      cover_url: null,
      updated_at: '2026-01-01T00:00:00.000Z',
      formats: [
        { format: 'epub', file_path: 'a b/t.epub', size: 12 },
        { format: 'cbz', file_path: 't.cbz', size: 34 },
      ],
    } as never;
    const xml = acquisitionFeed({ key: 'k', title: 'L', kind: 'acquisition', base: '/opds', self: '/opds/l', updated: '2026-01-01T00:00:00.000Z' }, [item]);
    expect(xml).toContain(
      '<link rel="http://opds-spec.org/acquisition" href="/opds/uploads/library-22222222-2222-4222-8222-222222222222/a%20b/t.epub" type="application/epub+zip" length="12" title="EPUB"/>',
    );
    expect(xml).toContain('type="application/vnd.comicbook+zip" length="34" title="CBZ"/>');
    expect(xml).toContain('<dc:issued>2001</dc:issued>');
    expect(xml).toContain('<category term="x" label="x"/>');
  });
  it('describes search with an absolute {searchTerms} template', () => {
    expect(openSearchDescription('http://h:1', '/opds')).toContain('template="http://h:1/opds/search?q={searchTerms}"');
  });
});
