// The PDF text layer's layout in the reader (reader/pdf-text.ts): where a picture with
// `object-fit: contain` is drawn inside its box, and how a run's box becomes a span's place, font
// size and stretch (the same at any size of the layer).
import { describe, expect, it } from 'vitest';
import { drawnArea, hitRanges, runStyle } from '../../src/reader/pdf-text';

describe('drawnArea', () => {
  it('a box of the picture’s shape: the whole box', () => {
    expect(drawnArea(420, 595, 840, 1190)).toEqual({ x: 0, y: 0, w: 420, h: 595 });
  });
  it('a box wider than the picture: centred across, full height', () => {
    expect(drawnArea(1000, 595, 840, 1190)).toEqual({ x: 290, y: 0, w: 420, h: 595 });
  });
  it('a box taller than the picture: centred down, full width', () => {
    expect(drawnArea(420, 1000, 840, 1190)).toEqual({ x: 0, y: 202.5, w: 420, h: 595 });
  });
  it('a picture not loaded yet: the box', () => {
    expect(drawnArea(300, 200, 0, 0)).toEqual({ x: 0, y: 0, w: 300, h: 200 });
  });
});

describe('runStyle', () => {
  it('places the run by percentages, sizes its type by the box height, stretches it to the box width', () => {
    // a run a quarter of an A5 page wide (420 × 595 pt) and 0.04 high, whose text is 0.5 em per pixel of size
    const s = runStyle({ str: 'Harbour', x: 0.119, y: 0.0602, w: 0.25, h: 0.04 }, 420 / 595, 0.5);
    expect(s.left).toBe('11.9%');
    expect(s.top).toBe('6.02%');
    expect(s.font).toBe(0.04);
    // natural width: 0.5 × 0.04 × 595 pt = 11.9 pt = 0.0283 of 420; stretched to 0.25
    expect(s.stretch).toBe(8.8235);
  });
  it('a run with no measurable text is not stretched', () => {
    expect(runStyle({ str: 'x', x: 0, y: 0, w: 0.1, h: 0.02 }, 1, 0).stretch).toBe(1);
  });
});

describe('hitRanges: where a search marks a page', () => {
  it('marks a match inside one run, every time it occurs, whatever its case', () => {
    expect(hitRanges(['The lighthouse keeper', 'a LIGHTHOUSE'], 'lighthouse')).toEqual([
      [0, 4, 14],
      [1, 2, 12],
    ]);
  });
  it('marks a match across two runs in both, the space between them in neither', () => {
    expect(hitRanges(['The lighthouse keeper', 'counts the ships'], 'keeper counts')).toEqual([
      [0, 15, 21],
      [1, 0, 6],
    ]);
    // the query's spaces match any run of spaces, as the gateway's search
    expect(hitRanges(['the  ships', 'sail'], 'ships   sail')).toEqual([
      [0, 5, 10],
      [1, 0, 4],
    ]);
  });
  it('marks a match over three runs, and nothing for an empty or absent query', () => {
    expect(hitRanges(['a b', 'c', 'd e'], 'b c d')).toEqual([
      [0, 2, 3],
      [1, 0, 1],
      [2, 0, 1],
    ]);
    expect(hitRanges(['a b'], '   ')).toEqual([]);
    expect(hitRanges(['a b'], 'z')).toEqual([]);
    // a query is text, not a pattern
    expect(hitRanges(['cost (2x)', 'a.b'], '(2x)')).toEqual([[0, 5, 9]]);
    expect(hitRanges(['axb'], 'a.b')).toEqual([]);
  });
});
