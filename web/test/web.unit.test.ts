// The web app's pure pieces: redirect targets, the theme mapping, the library's query and API URL,
// and that rendering escapes what a hostile title holds.
import { describe, expect, it } from 'vitest';
import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { localTarget } from '../src/http';
import { schemeOf } from '../src/theme';
import { apiUrl, libraryQuery, pageUrl } from '../src/pages/library';
import { BookCard, type Item } from '../src/pages/books';

describe('localTarget', () => {
  it('keeps paths of this site', () => {
    for (const p of ['/dashboard', '/library?sort=-created_at&q=a%20b', '/devices/approve/ABC123', '/']) expect(localTarget(p)).toBe(p);
  });
  it('refuses other origins, backslashes, spaces, control characters and overlong values', () => {
    for (const p of [
      '//evil.example',
      '///evil.example',
      'https://evil.example/',
      '/\\evil.example',
      '/a\\b',
      'dashboard',
      '/a b',
      '/a\nb',
      '/x\u0000',
      `/${'a'.repeat(2048)}`,
      42,
      null,
      undefined,
    ])
      expect(localTarget(p)).toBe('/dashboard');
    expect(localTarget('//x', '/')).toBe('/');
  });
});

describe('schemeOf', () => {
  it('maps the free-text theme to light, dark or system', () => {
    expect(schemeOf('tokyo-night')).toBe('dark');
    expect(schemeOf(undefined)).toBe('dark');
    expect(schemeOf('')).toBe('dark');
    expect(schemeOf('light')).toBe('light');
    expect(schemeOf('Tokyo-Night-Day')).toBe('light');
    expect(schemeOf('catppuccin-latte')).toBe('light');
    expect(schemeOf('rose-pine-dawn')).toBe('light');
    expect(schemeOf('system')).toBe('system');
    expect(schemeOf('dracula')).toBe('dark');
  });
});

describe('the library query', () => {
  it('asks the search (which counts the matches) with the sort, the library and every filter', () => {
    expect(apiUrl(libraryQuery({}))).toBe('/api/media-items/search?limit=24&offset=0&sort=title');
    expect(apiUrl(libraryQuery({ sort: '-created_at', offset: '24' }))).toBe('/api/media-items/search?limit=24&offset=24&sort=-created_at');
    expect(apiUrl(libraryQuery({ q: ' dune ', author: '"Frank Herbert"', format: 'EPUB', tag: 'sf', series: 'x' }))).toBe(
      '/api/media-items/search?limit=24&offset=0&q=dune&author_filter=%22Frank+Herbert%22&series_filter=x&format=epub&tags_filter=sf',
    );
    expect(apiUrl(libraryQuery({ library: '7f0c2a4e-5b1d-4c3e-9a8f-1b2c3d4e5f60', state: 'reading', sort: 'author' }))).toBe(
      '/api/media-items/search?limit=24&offset=0&sort=author&library_id=7f0c2a4e-5b1d-4c3e-9a8f-1b2c3d4e5f60&read_status=reading',
    );
  });
  it('drops what it does not know: sorts, formats, offsets', () => {
    expect(libraryQuery({ sort: 'drop table', format: 'exe', offset: '-3', state: 'lost' })).toEqual({
      q: '',
      library: '',
      author: '',
      series: '',
      format: '',
      tag: '',
      state: '',
      sort: 'title',
      offset: 0,
    });
    expect(libraryQuery({ state: 'finished' }).state).toBe('finished');
    expect(libraryQuery({ offset: '1.5' }).offset).toBe(0);
    expect(libraryQuery({ q: ['a', 'b'] }).q).toBe('');
  });
  it('links the next page with the same filters', () => {
    expect(pageUrl(libraryQuery({ tag: 'sf', sort: 'author' }), 24)).toBe('/library?tag=sf&sort=author&offset=24');
    expect(pageUrl(libraryQuery({}), 0)).toBe('/library');
  });
});

describe('rendering', () => {
  it('escapes a hostile title and author', () => {
    const item = { id: 'i1', title: '<script>alert(1)</script>', authors: ['<img src=x onerror=alert(2)>'], cover_url: null } as unknown as Item;
    const html = renderToString(h(BookCard, { item, progress: 0.5 }));
    expect(html).toContain('&lt;script>alert(1)&lt;/script>');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).toContain('<progress max="100" value="50" aria-label="&lt;script>alert(1)&lt;/script>: 50% read">');
  });
});
