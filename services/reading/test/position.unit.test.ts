// The position rules on their own: CFI checks and healing, percentages on both scales, pages, the
// first-page guard and when two devices disagree.
import { describe, expect, it } from 'vitest';
import { conflictReason, guardKeeps, parseCfi, parsePosition } from '../src/domain/position';
import { parseColor } from '../src/domain/annotation';
import { parseRules } from '../src/domain/rules';

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
