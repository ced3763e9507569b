// KOReader's numbering on a hand-written book (test/fixtures/position-book.ts): every probe's CFI
// reads back as its XPointer and the other way round, element pointers land on their element, and
// every position of the book survives CFI → XPointer → CFI (or lands on the next text crengine keeps).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { extract } from '../src/formats';
import { indexDocument } from '../src/formats/locator-index';
import { ELEMENT_POINTERS, POSITION_BOOK, PROBES } from './fixtures/position-book';
import * as L from '@bindery/locator';

let index: L.LocatorIndex;

beforeAll(async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'position-book-')), 'book.epub');
  writeFileSync(file, POSITION_BOOK);
  const x = await extract(file, 'epub', { renderPdfCover: false });
  // as the reading service holds it: through JSON, the shapes as typed arrays
  index = JSON.parse(JSON.stringify(x.locator)) as L.LocatorIndex;
  for (const d of index.docs) if (d) d.t = Int32Array.from(d.t);
});

describe('KOReader positions on the hand-written book', () => {
  it('is a version 2 index with crengine text nodes', () => {
    expect(index.v).toBe(2);
    // ch1: " and\n      a " keeps one space of seven; ch2: the <pre>'s opening newline is left out
    expect(index.docs[1]!.kr).toContainEqual([8, 0, 13, 1, 5, 11]);
    expect(index.docs[2]!.kr).toEqual([[13, 0, 20, 1, 0, 1]]);
  });

  for (const p of PROBES) {
    it(`${p.what}: the CFI and the XPointer name the same place`, () => {
      const fromCfi = L.cfiToCanonical(index, p.cfi);
      const fromXp = L.xpointerToCanonical(index, p.xpointer);
      expect(fromCfi?.healed).toEqual([]);
      expect(fromXp?.healed).toEqual([]);
      expect(fromXp!.pos).toEqual(fromCfi!.pos);
      expect(L.canonicalToXPointer(index, fromCfi!.pos)).toBe(p.xpointer);
      expect(L.canonicalToCfi(index, fromXp!.pos)).toBe(p.cfi);
      expect(L.canonicalToRestore(index, fromXp!.pos)).toMatchObject({ css_selector: p.css_selector, char_offset: p.char_offset });
    });
  }

  for (const e of ELEMENT_POINTERS) {
    it(`reads the element pointer ${e.xpointer.replace(/^.*\/body\//, '')} at its element`, () => {
      const r = L.xpointerToCanonical(index, e.xpointer);
      expect(r?.healed).toEqual([]);
      expect(L.canonicalToCfi(index, r!.pos)).toBe(e.cfi);
    });
  }

  it('heals an element pointer past the last child of its element', () => {
    const r = L.xpointerToCanonical(index, '/body/DocFragment[2]/body/section/figure.5');
    expect(r?.healed.map((h) => h.message)).toEqual(["xpointer: /body/DocFragment[2]/body/section/figure.5 is past the last child of its element; moved to the element's end"]);
  });

  it('round-trips every position of the book, or moves it to the next text crengine keeps', () => {
    let exact = 0;
    for (let spine = 0; spine < index.spine.length; spine++) {
      const n = index.docs[spine]!.n;
      for (let offset = 0; offset <= n; offset++) {
        const pos = { spine, offset };
        const xp = L.canonicalToXPointer(index, pos);
        const back = L.xpointerToCanonical(index, xp)!;
        expect(back.healed, xp).toEqual([]);
        // forwards to the next text (or image) crengine keeps; backwards only past the last one
        if (back.pos.offset < offset) expect(xp).toBe(L.canonicalToXPointer(index, { spine, offset: n }));
        // once placed, a position is stable in both notations
        expect(L.canonicalToXPointer(index, back.pos), xp).toBe(xp);
        const cfi = L.canonicalToCfi(index, back.pos);
        expect(L.cfiToCanonical(index, cfi)!.pos, cfi).toEqual(back.pos);
        if (back.pos.offset === offset) exact++;
      }
    }
    // most positions are at characters crengine keeps (white space between blocks is the rest)
    expect(exact).toBeGreaterThan(150);
  });
});

describe('crengine text nodes of one document', () => {
  const doc = (body: string) => {
    const names: string[] = [];
    const d = indexDocument(`<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>${body}</body></html>`, names, new Map());
    return { v: 2, names, spine: [['c', 'c.xhtml', 1]], docs: [d] } as L.LocatorIndex;
  };

  it('keeps white space between inline elements, drops it beside blocks and first in a block', () => {
    const idx = doc('<div>\n  <p>\n  <em>a</em> <em>b</em>\n</p>\n</div>');
    // "\n  " opening the p is never stored; " " between the ems and the trailing "\n" are nodes
    expect(L.canonicalToXPointer(idx, { spine: 0, offset: idx.docs[0]!.n - 4 })).toBe('/body/DocFragment[1]/body/div/p/text()[1].0');
    expect(L.canonicalToXPointer(idx, { spine: 0, offset: idx.docs[0]!.n - 2 })).toBe('/body/DocFragment[1]/body/div/p/text()[2].0');
  });

  it('cuts a run longer than 8,192 characters after its last space', () => {
    const long = `${'word '.repeat(2000)}end`;
    const idx = doc(`<p>${long}</p>`);
    // 8,192 source characters: the last space at 8,189 ends the first node
    expect(L.canonicalToXPointer(idx, { spine: 0, offset: 8190 })).toBe('/body/DocFragment[1]/body/p/text()[2].0');
    expect(L.canonicalToXPointer(idx, { spine: 0, offset: 8189 })).toBe('/body/DocFragment[1]/body/p/text()[1].8189');
    expect(L.xpointerToCanonical(idx, '/body/DocFragment[1]/body/p/text()[2].3')!.pos).toEqual({ spine: 0, offset: 8193 });
  });

  it('does not collapse a space written as an entity', () => {
    const idx = doc('<p>a &#32; b</p>');
    // "a", space, entity space, space, "b": crengine keeps all four before b (the entity resets the run)
    expect(L.canonicalToXPointer(idx, { spine: 0, offset: 4 })).toBe('/body/DocFragment[1]/body/p/text().4');
    const two = doc('<p>a   b</p>');
    expect(L.canonicalToXPointer(two, { spine: 0, offset: 4 })).toBe('/body/DocFragment[1]/body/p/text().2');
  });
});
