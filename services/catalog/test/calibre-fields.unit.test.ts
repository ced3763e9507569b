// calibre's stored values to the catalog's: language codes, dates, ratings, identifiers, paths.
import { describe, expect, it } from 'vitest';
import { addIdentifier, description, instantKey, language, libraryPath, rating, text, timestamp, yearOf } from '../src/calibre/fields';

describe('calibre fields', () => {
  it("maps calibre's ISO 639-2/3 codes to the tags EPUBs carry", () => {
    expect(['eng', 'fra', 'fre', 'ger', 'deu', 'jpn', 'ell', 'zho', 'nld', 'ast', 'en', 'pt-BR'].map(language)).toEqual([
      'en',
      'fr',
      'fr',
      'de',
      'de',
      'ja',
      'el',
      'zh',
      'nl',
      'ast',
      'en',
      'pt-BR',
    ]);
    expect(['und', 'zxx', '', '<script>', 'e', 'english', null, 42].map(language)).toEqual([null, null, null, null, null, null, null, null]);
  });

  it('keeps microseconds in timestamps and orders instants by them', () => {
    expect(timestamp('2026-12-02 07:19:22.868064+00:00')).toBe('2026-12-02T07:19:22.868064+00:00');
    expect(timestamp('2026-12-02T07:19:22+00:00')).toBe('2026-12-02T07:19:22+00:00');
    expect(timestamp('yesterday')).toBeNull();
    const a = instantKey('2026-12-02T07:19:22.868064+00:00');
    expect(instantKey('2026-12-02T07:19:22.868065+00:00') > a).toBe(true);
    expect(instantKey('2026-12-02T07:19:22+00:00') < a).toBe(true);
    expect(instantKey('2026-12-02T08:19:22.868064+01:00')).toBe(a);
    expect(instantKey(null)).toBe('');
  });

  it("takes the year of a date, none for calibre's undefined date", () => {
    expect(yearOf('1870-05-02 00:00:00+00:00')).toBe(1870);
    expect(yearOf('0101-01-01 00:00:00+00:00')).toBeNull();
    expect(yearOf(null)).toBeNull();
  });

  it('keeps 0–10 ratings, none for 0', () => {
    expect([0, 1, 7, 10, 12, '8', null].map(rating)).toEqual([null, 1, 7, 10, 10, 8, null]);
  });

  it('lower-cases identifier schemes, keeps ISBNs as digits, drops empty values and keeps the first', () => {
    const ids: Record<string, string> = {};
    addIdentifier(ids, 'ISBN', '978-3-502-19460-6');
    addIdentifier(ids, 'isbn', '9780000000002');
    addIdentifier(ids, 'GoodReads', ' 12345 ');
    addIdentifier(ids, 'amazon', '');
    addIdentifier(ids, '', 'x');
    expect(ids).toEqual({ isbn: '9783502194606', goodreads: '12345' });
  });

  it('cleans comments as EPUB descriptions are cleaned', () => {
    expect(description('<p>One &amp; <i>two</i></p><script>alert(1)</script><style>p{}</style><!-- c --><p>Three</p>')).toBe('One & two\nThree');
    expect(description('<p> </p>')).toBeNull();
    expect(text('  A\u0000\u0007 b\u00a0 c ')).toBe('A b c');
  });

  it('keeps paths inside the library', () => {
    expect(libraryPath('Author/Title (1)', 'Title - Author.epub')).toBe('Author/Title (1)/Title - Author.epub');
    expect(['../x', '/etc/passwd', 'a/../../b', 'a\\b', 'a\u0000b', ''].map((p) => libraryPath(p))).toEqual([null, null, null, null, null, null]);
  });
});
