// The position rules on their own: CFI checks and healing, percentages on both scales, pages, the
// first-page guard and when two devices disagree; annotation spans read, healed, moved and written back.
import { describe, expect, it } from 'vitest';
import { anchorOf, byText, needleOf, parseColor, placeAnnotation, placePage, type AnnotationPosition } from '../src/domain/annotation';
import { conflictReason, guardKeeps, parseCfi, parsePosition } from '../src/domain/position';
import { parseRules } from '../src/domain/rules';
import type * as Locator from '@bindery/locator';

describe('EPUB CFI', () => {
  it('finds the spine step, counting non-linear items', () => {
    expect(parseCfi('epubcfi(/6/2!/4/1:0)')).toEqual({ cfi: 'epubcfi(/6/2!/4/1:0)', spineIndex: 0, healed: [] });
    expect(parseCfi('epubcfi(/6/14[chap07]!/4[body]/10/2/1:355[abc])')!.spineIndex).toBe(6);
  });
  it('heals a missing wrapper and a range', () => {
    expect(parseCfi('/6/4!/4/2/1:0')).toEqual({ cfi: 'epubcfi(/6/4!/4/2/1:0)', spineIndex: 1, healed: ['epubcfi: added the epubcfi( ) wrapper'] });
    expect(parseCfi('epubcfi(/6/4!/4/10,/2/1:3,/2/1:9)')!.cfi).toBe('epubcfi(/6/4!/4/10/2/1:3)');
  });
  it('refuses what is not a CFI', () => {
    for (const bad of ['', 'chapter 3', 'epubcfi(/6/3!/4)', 'epubcfi(/4/2!/4)', 'epubcfi(/6/0!/4)', 'epubcfi(/6/4!/4[x)', 'epubcfi(/6/4,/2)'])
      expect(parseCfi(bad), bad).toBeNull();
  });
});

describe('positions', () => {
  it('takes fractions and percentages', () => {
    const a = parsePosition({ percentage: 0.25 });
    const b = parsePosition({ percentage: '25' });
    expect(a.ok && a.position.percentage).toBe(0.25);
    expect(b.ok && b.position.percentage).toBe(0.25);
    expect(b.ok && b.healed).toEqual(['percentage: read as 0..100 and stored as a fraction']);
    expect(parsePosition({})).toEqual({ ok: false, message: 'percentage is required' });
    expect(parsePosition({ percentage: 100.5 }).ok).toBe(false);
  });
  it('sets the percentage of a fixed-layout book from its page', () => {
    const p = parsePosition({ page: 3 }, 5);
    expect(p.ok && p.position).toEqual({ page: 3, page_count: 5, percentage: 0.5 });
    expect(parsePosition({ page: 6 }, 5)).toEqual({ ok: false, message: 'page must not be past page_count' });
  });
  it('clamps a page past the last to the last when asked (KOReader stock sync), and says so', () => {
    expect(parsePosition({ page: 9, percentage: 1 }, 5, { clampPage: true })).toEqual({
      ok: true,
      position: { page: 5, page_count: 5, percentage: 1 },
      healed: ['page: 9 is past the last page (5); moved to the last page'],
      force: false,
    });
  });
  it('keeps a KOReader XPointer as its own notation', () => {
    const p = parsePosition({ percentage: 0.5, epubcfi: '/body/DocFragment[3]/body/p[2]/text().10' });
    expect(p.ok && p.position.xpointer).toBe('/body/DocFragment[3]/body/p[2]/text().10');
  });
  it('guards a later position against a first page', () => {
    expect(guardKeeps(0.5, 0, false)).toBe(true);
    expect(guardKeeps(0.5, 0.01, false)).toBe(true);
    expect(guardKeeps(0.5, 0, true)).toBe(false);
    expect(guardKeeps(0.005, 0, false)).toBe(false);
    expect(guardKeeps(null, 0, false)).toBe(false);
  });
  it('opens a conflict only when two devices disagree', () => {
    const cur = { percentage: 0.4, device: 'laptop', version: 3 };
    expect(conflictReason(cur, { percentage: 0.7, device: 'kobo' }, false)).toBe('first-push');
    expect(conflictReason(cur, { percentage: 0.405, device: 'kobo' }, false)).toBeNull();
    expect(conflictReason(cur, { percentage: 0.7, device: 'kobo' }, true)).toBeNull();
    expect(conflictReason(cur, { percentage: 0.7, device: 'kobo', baseVersion: 2 }, true)).toBe('concurrent');
    expect(conflictReason(cur, { percentage: 0.7, device: 'laptop', baseVersion: 1 }, true)).toBeNull();
    expect(conflictReason({ ...cur, percentage: 1 }, { percentage: 0.2, device: 'kobo' }, false)).toBeNull();
  });
  it('a device given the current position follows it (decision "Devices follow the position they were given")', () => {
    const cur = { percentage: 0.4, device: 'laptop', version: 3 };
    // given the current version (3, at 0.4): reading on is a plain write, so is a place within 1 % behind
    expect(conflictReason(cur, { percentage: 0.55, device: 'kobo' }, false, { version: 3, percentage: 0.4 })).toBeNull();
    expect(conflictReason(cur, { percentage: 0.395, device: 'kobo' }, false, { version: 3, percentage: 0.4 })).toBeNull();
    // pushing from an older place than the one it was given: the conflict as before
    expect(conflictReason(cur, { percentage: 0.2, device: 'kobo' }, false, { version: 3, percentage: 0.4 })).toBe('first-push');
    // given a version another device has since replaced: stale, the conflict as before
    expect(conflictReason(cur, { percentage: 0.55, device: 'kobo' }, false, { version: 2, percentage: 0.3 })).toBe('first-push');
    // never given any: as before
    expect(conflictReason(cur, { percentage: 0.55, device: 'kobo' }, false, null)).toBe('first-push');
    // a write naming the current version was given it; one naming an older version was not
    expect(conflictReason(cur, { percentage: 0.55, device: 'kobo', baseVersion: 3 }, false)).toBeNull();
    expect(conflictReason(cur, { percentage: 0.2, device: 'kobo', baseVersion: 3 }, false)).toBe('first-push');
    expect(conflictReason(cur, { percentage: 0.55, device: 'kobo', baseVersion: 2 }, false, { version: 3, percentage: 0.4 })).toBe('first-push');
    // a device that wrote the book before: receipts change nothing
    expect(conflictReason(cur, { percentage: 0.2, device: 'kobo' }, true, { version: 3, percentage: 0.4 })).toBeNull();
    expect(conflictReason(cur, { percentage: 0.7, device: 'kobo', baseVersion: 2 }, true, { version: 3, percentage: 0.4 })).toBe('concurrent');
  });
});

describe('colours and rules', () => {
  it('maps palette names and normalises hex', () => {
    expect(parseColor('Yellow')).toBe('#e0af68');
    expect(parseColor('#ABC')).toBe('#aabbcc');
    expect(parseColor('12ab34')).toBe('#12ab34');
    expect(parseColor('mauve')).toBeNull();
    // names the palette object inherits are no colours
    expect(parseColor('constructor')).toBeNull();
    expect(parseColor('toString')).toBeNull();
    expect(parseColor('__proto__')).toBeNull();
  });
  it('checks rule fields, operators and values', () => {
    expect(parseRules({ conditions: [{ field: 'progress', op: 'gte', value: 50 }] })).toEqual({
      ok: true,
      value: { match: 'all', conditions: [{ field: 'progress', op: 'gte', value: 0.5 }] },
    });
    expect(parseRules({ conditions: [{ field: 'read_status', op: 'equals', value: 'skimmed' }] })).toEqual({
      ok: false,
      message: 'rules.conditions[0].value must be one of unread, reading, finished',
    });
    expect(parseRules({ match: 'some', conditions: [] })).toEqual({ ok: false, message: "rules.match must be 'all' or 'any'" });
  });
});

describe('annotation spans', () => {
  // two documents: "abcdefgh" + "ijkl", and "second"
  const index: Locator.LocatorIndex = {
    v: 1,
    names: ['p'],
    spine: [
      ['c1', 'c1.xhtml', 1],
      ['c2', 'c2.xhtml', 1],
    ],
    docs: [
      { b: 4, n: 12, t: [0, -(2 + (8 << 1)), -1, 0, -(2 + (4 << 1)), -1] },
      { b: 4, n: 6, t: [0, -(2 + (6 << 1)), -1] },
    ],
  };

  it('reads a span from pos0/pos1 or a CFI range, and writes back every notation', () => {
    const ko = anchorOf(index, { pos0: '/body/DocFragment[1]/body/p[1]/text().2', pos1: '/body/DocFragment[1]/body/p[2]/text().1' });
    expect(ko).toEqual({ anchor: { start: { spine: 0, offset: 2 }, end: { spine: 0, offset: 9 } }, healed: [] });
    const pos: AnnotationPosition = {};
    expect(placeAnnotation(index, pos, ko.anchor!)).toEqual([]);
    expect(pos).toEqual({
      epubcfi: 'epubcfi(/6/2[c1]!/4,/2/1:2,/4/1:1)',
      pos0: '/body/DocFragment[1]/body/p[1]/text().2',
      pos1: '/body/DocFragment[1]/body/p[2]/text().1',
      percentage: 0.111111,
    });
    expect(anchorOf(index, { epubcfi: pos.epubcfi! }).anchor).toEqual(ko.anchor);
  });

  it('heals each end in its own words, swaps a reversed span, and says when pos0 is no place', () => {
    const r = anchorOf(index, { epubcfi: 'epubcfi(/6/2[c1]!/4/2,/1:7,/1:99)' });
    expect(r.healed.map((h) => h.message)).toEqual(['epubcfi end: character offset 99 is past the end of its text (8 characters); moved to its end']);
    const back = anchorOf(index, { pos0: '/body/DocFragment[2]/body/p/text().3', pos1: '/body/DocFragment[1]/body/p[1]/text().1' });
    expect(back.anchor).toEqual({ start: { spine: 0, offset: 1 }, end: { spine: 1, offset: 3 } });
    expect(back.healed.map((h) => h.code)).toEqual(['span-reversed']);
    expect(anchorOf(index, { pos0: 'page 3' })).toEqual({ anchor: null, healed: [{ code: 'not-a-place', message: 'pos0: not a place in this book; kept as sent' }] });
  });

  it('moves a span to where its text is, keeping its length when the text was cut', () => {
    const at = { start: { spine: 0, offset: 0 }, end: { spine: 0, offset: 4 } };
    expect(byText(index, at, { spine: 0, offset: 0, end: 4 }, false, 'abcd')).toEqual({ anchor: at, healed: [] });
    // leading white space in the text is no move
    expect(byText(index, at, { spine: 0, offset: 1, end: 4 }, false, ' bcd').healed).toEqual([]);
    const moved = byText(index, at, { spine: 1, offset: 1, end: 5 }, false, 'econ');
    expect(moved.anchor).toEqual({ start: { spine: 1, offset: 1 }, end: { spine: 1, offset: 5 } });
    expect(moved.healed).toEqual([{ code: 'text-moved', message: 'text: not found at the position; found in c2.xhtml and moved there' }]);
    expect(byText(index, at, { spine: 1, offset: 3, end: 4 }, true, 'x').anchor.end).toEqual({ spine: 1, offset: 6 });
    // a highlight sent as a point where its text starts spans the text
    const point = byText(index, { start: { spine: 0, offset: 0 }, end: null }, { spine: 0, offset: 0, end: 4 }, false, 'abcd');
    expect(point).toEqual({
      anchor: { start: { spine: 0, offset: 0 }, end: { spine: 0, offset: 4 } },
      healed: [{ code: 'text-end', message: 'text: the highlight was a point; its end was set where its text ends' }],
    });
    expect(byText(index, null, { spine: 1, offset: 0, end: 6 }, false, 'second').healed.map((h) => h.code)).toEqual(['text-placed']);
    expect(needleOf('  short ')).toBeNull();
    expect(needleOf('a   longer\ntext')).toEqual({ needle: 'a longer text', cut: false });
  });

  it('takes a fixed-layout page: past the last is the last, and the percentage follows the page', () => {
    const p: AnnotationPosition = { page: 14, percentage: 0.2 };
    expect(placePage(p, 11).map((h) => h.message)).toEqual([
      'page: 14 is past the last page (11); moved to the last page',
      'percentage: 0.2 disagreed with page 11 of 11; set from the page',
    ]);
    expect(p).toEqual({ page: 11, percentage: 1 });
    const q: AnnotationPosition = { page: 6 };
    expect(placePage(q, 11)).toEqual([]);
    expect(q.percentage).toBe(0.5);
  });
});
