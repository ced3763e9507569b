// The Kobo sync token: ours round-trips with its generation, the store's token and the digest of
// the Kobo it was made for; the store's, Calibre-Web's and Komga's are accepted as "nothing from us"
// (the store part kept); garbage and oversized tokens are a full sync, never an error.
import { describe, expect, it } from 'vitest';
import { deviceDigest, makeSyncToken, parseSyncToken } from '../src/kobo/sync-token';
import { fractionToPlace, locationToPlace, placeToLocation, type SpanMap } from '../src/kobo/kepubs';

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64');

describe('Kobo sync token', () => {
  it('round-trips ours', () => {
    expect(parseSyncToken(makeSyncToken(7, null))).toEqual({ gen: 7, store: null, after: null, kind: 'bindery' });
    expect(parseSyncToken(makeSyncToken(1, 'abc.def'))).toEqual({ gen: 1, store: 'abc.def', after: null, kind: 'bindery' });
  });
  it('carries where a continued sync goes on, and drops a cursor that is not a key', () => {
    const id = '0b6f6a3e-2f3c-4d7e-9a51-0c2d3e4f5a6b';
    expect(parseSyncToken(makeSyncToken(3, null, `i:${id}`))).toEqual({ gen: 3, store: null, after: { phase: 'i', id }, kind: 'bindery' });
    expect(parseSyncToken(makeSyncToken(3, null, `t:${id}`)).after).toEqual({ phase: 't', id });
    for (const bad of [`x:${id}`, `i:${id.toUpperCase()}`, `i:${id}'; drop table`, 'i:'])
      expect(parseSyncToken(makeSyncToken(3, null, bad))).toEqual({ gen: 3, store: null, after: null, kind: 'bindery' });
  });
  it('names the Kobo it was made for by a digest of its id', () => {
    const kobo = '0b6f6a3e-2f3c-4d7e-9a51-0c2d3e4f5a6b';
    const t = parseSyncToken(makeSyncToken(4, null, undefined, kobo));
    expect(t).toEqual({ gen: 4, store: null, after: null, device: deviceDigest(kobo), kind: 'bindery' });
    expect(t.device).toMatch(/^[0-9a-f]{12}$/);
    expect(deviceDigest(kobo.toUpperCase())).toBe(t.device);
    expect(deviceDigest('1b6f6a3e-2f3c-4d7e-9a51-0c2d3e4f5a6b')).not.toBe(t.device);
    // the id itself is not in the token
    expect(Buffer.from(makeSyncToken(4, null, undefined, kobo).slice('BINDERY.'.length), 'base64url').toString()).not.toContain(kobo);
  });
  it('accepts and replaces foreign tokens', () => {
    expect(parseSyncToken('eyJhIjoxfQ.eyJiIjoyfQ')).toEqual({ gen: 0, store: 'eyJhIjoxfQ.eyJiIjoyfQ', kind: 'store' });
    expect(parseSyncToken(b64({ version: '1-1-0', data: { raw_kobo_store_token: 'x.y', books_last_modified: 1 } }))).toEqual({ gen: 0, store: 'x.y', kind: 'calibre-web' });
    expect(parseSyncToken(`KOMGA.${b64({ ongoingSyncPointId: 'a', rawKoboSyncToken: 's.t' })}`)).toEqual({ gen: 0, store: 's.t', kind: 'komga' });
    expect(parseSyncToken(undefined)).toEqual({ gen: 0, store: null, kind: 'none' });
    for (const bad of [
      '%%%',
      'BINDERY.!!!',
      `BINDERY.${Buffer.from('{"v":2,"g":1}').toString('base64url')}`,
      `BINDERY.${Buffer.from('{"v":1,"g":-1}').toString('base64url')}`,
      'x'.repeat(10_000),
    ])
      expect(parseSyncToken(bad)).toMatchObject({ gen: 0, kind: 'unreadable' });
  });
});

describe('Kobo locations through the span map', () => {
  const map: SpanMap = {
    v: 1,
    docs: [
      { href: 'cover.xhtml', path: 'OEBPS/cover.xhtml', n: 0, spans: [] },
      { href: 'Text/ch1.xhtml', path: 'OEBPS/Text/ch1.xhtml', n: 100, spans: ['kobo.1.1', 0, 'kobo.1.2', 40, 'kobo.2.1', 70] },
    ],
  };
  it('maps a span in a file to its place and back', () => {
    expect(locationToPlace(map, 'OEBPS/Text/ch1.xhtml', 'kobo.1.2')).toEqual({ spine: 1, offset: 40, anchor_href: 'Text/ch1.xhtml' });
    expect(locationToPlace(map, 'Text/ch1.xhtml', 'kobo.2.1')).toEqual({ spine: 1, offset: 70, anchor_href: 'Text/ch1.xhtml' });
    expect(locationToPlace(map, 'OEBPS/Text/ch1.xhtml', 'kobo.9.9')).toBeNull();
    expect(locationToPlace(map, 'nowhere.xhtml', 'kobo.1.1')).toBeNull();
    expect(placeToLocation(map, 1, 55)).toEqual({ Source: 'OEBPS/Text/ch1.xhtml', Value: 'kobo.1.2', Type: 'KoboSpan' });
    // a place on a page without spans goes to the next span
    expect(placeToLocation(map, 0, 0)).toEqual({ Source: 'OEBPS/Text/ch1.xhtml', Value: 'kobo.1.1', Type: 'KoboSpan' });
    expect(fractionToPlace(map, 0.5)).toEqual({ spine: 1, offset: 50 });
  });
});
