// The position token's text: what a write answers and what a read may present (ignored when malformed).
import { describe, expect, it } from 'vitest';
import { formatPositions, parsePositions } from '../src/http/position-token';

describe('position token', () => {
  it('reads sources and positions, keeping the highest of a source named twice', () => {
    expect(parsePositions('catalog:120|identity:7')).toEqual({ catalog: 120, identity: 7 });
    expect(parsePositions('catalog:120, identity:7, catalog:90')).toEqual({ catalog: 120, identity: 7 });
    expect(parsePositions('reading:0')).toEqual({ reading: 0 });
  });

  it('ignores anything else', () => {
    for (const bad of [
      '',
      'catalog',
      'catalog:',
      ':3',
      'catalog:-1',
      'catalog:1.5',
      'catalog:1e3',
      'Catalog:1',
      'catalog:1;identity:2',
      `catalog:${'9'.repeat(16)}`,
      `${'a'.repeat(33)}:1`,
      'x'.repeat(513),
    ])
      expect(parsePositions(bad), bad).toBeNull();
    expect(parsePositions(undefined)).toBeNull();
    expect(parsePositions(['catalog:1'])).toBeNull();
    expect(parsePositions(7)).toBeNull();
  });

  it('writes what it reads, sources in order', () => {
    expect(formatPositions({ identity: 7, catalog: 120 })).toBe('catalog:120|identity:7');
    expect(parsePositions(formatPositions({ reading: 3, catalog: 1 }))).toEqual({ catalog: 1, reading: 3 });
  });
});
