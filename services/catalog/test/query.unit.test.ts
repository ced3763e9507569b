// The query-string rules of the item list and search (`@bindery/catalog/query`), which the catalog's
// handlers and the gateway's read models both apply: values, defaults and the exact messages.
import { describe, expect, it } from 'vitest';
import { Catalog } from '@bindery/contracts';
import { checkSearchLengths, filterValue, parseBool, parseLibraryIdParam, parseLimit, parseOffset, parseSort, q1, SORTS } from '../src/domain/query';

const message = (r: { ok: boolean; error?: { message: string } }) => (r.ok ? null : r.error?.message);

describe('query-string rules', () => {
  it('takes the last value of a repeated parameter', () => {
    expect(q1({ a: ['1', '2'], b: 'x' }, 'a')).toBe('2');
    expect(q1({ b: 'x' }, 'b')).toBe('x');
    expect(q1({}, 'c')).toBeUndefined();
  });

  it('reads limit and offset, with their defaults and bounds', () => {
    expect(parseLimit(undefined)).toEqual({ ok: true, value: 50 });
    expect(parseLimit('', 100)).toEqual({ ok: true, value: 100 });
    expect(parseLimit('1000')).toEqual({ ok: true, value: 1000 });
    expect(message(parseLimit('1001'))).toBe('limit must be an integer between 1 and 1000');
    expect(message(parseLimit('0', 20, 200))).toBe('limit must be an integer between 1 and 200');
    expect(message(parseLimit('2.5'))).toBe('limit must be an integer between 1 and 1000');
    expect(parseOffset(undefined)).toEqual({ ok: true, value: 0 });
    expect(parseOffset('30')).toEqual({ ok: true, value: 30 });
    expect(message(parseOffset('-1'))).toBe('offset must be a non-negative integer');
    expect(message(parseOffset('10000001'))).toBe('offset must be a non-negative integer');
  });

  it('reads flags and library ids', () => {
    expect(parseBool('YES', 'has_cover')).toEqual({ ok: true, value: true });
    expect(parseBool('0', 'has_cover')).toEqual({ ok: true, value: false });
    expect(parseBool(undefined, 'has_cover')).toEqual({ ok: true, value: undefined });
    expect(message(parseBool('maybe', 'has_cover'))).toBe('has_cover must be true or false');
    expect(parseLibraryIdParam('0F8FAD5B-D9CB-469F-A165-70867728950E')).toEqual({ ok: true, value: '0f8fad5b-d9cb-469f-a165-70867728950e' });
    expect(message(parseLibraryIdParam('nope'))).toBe('invalid library id');
  });

  it('reads sort orders, and names every key in the message of a bad one', () => {
    expect(parseSort(undefined)).toEqual({ ok: true, value: { key: 'title', desc: false } });
    expect(parseSort('-year')).toEqual({ ok: true, value: { key: 'year', desc: true } });
    expect(parseSort('Author:desc')).toEqual({ ok: true, value: { key: 'author', desc: true } });
    expect(parseSort('added,asc')).toEqual({ ok: true, value: { key: 'created_at', desc: false } });
    expect(message(parseSort('rating'))).toBe('invalid sort. must be one of: title, created_at, updated_at, series, year, author (prefix - or suffix :desc for descending)');
    // names every object has are not sort keys
    for (const k of ['constructor', '__proto__', 'tostring', 'hasownproperty']) expect(message(parseSort(k)), k).toMatch(/^invalid sort/);
    expect(Object.keys(SORTS)).toEqual([...Catalog.SORT_KEYS]);
  });

  it('tells exact filters from fuzzy ones and cleans their text', () => {
    expect(filterValue('  "Le  Guin" ')).toEqual({ exact: true, value: 'Le Guin' });
    expect(filterValue('le\u00a0guin')).toEqual({ exact: false, value: 'le guin' });
    expect(filterValue('"')).toEqual({ exact: false, value: '"' });
  });

  it('bounds every search text parameter at 200 characters', () => {
    expect(checkSearchLengths({ q: 'x'.repeat(200), authors: ['y'.repeat(500), 'ok'] })).toEqual({ ok: true, value: undefined });
    expect(message(checkSearchLengths({ series_filter: 'x'.repeat(201) }))).toBe('series_filter must be at most 200 characters');
  });
});
