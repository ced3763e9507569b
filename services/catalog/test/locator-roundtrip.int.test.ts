// Position round trips over real books: for every EPUB of test/fixtures/corpus40 and the shared
// samples, CFI → canonical → XPointer → canonical → CFI is lossless to the character, the restore
// handles land on the same character, and a percentage maps back within 0.5 %.
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { extract } from '../src/formats';
import * as L from '@bindery/locator';

const REPO = join(import.meta.dirname, '../../..');
const CORPUS = join(REPO, 'test/fixtures/corpus40');
const SAMPLES = join(REPO, '../shared/peers/samples/books');
if (!existsSync(SAMPLES)) console.warn(`locator round trips: ${SAMPLES} is absent; only the corpus is used`);

const epubs = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.toLowerCase().endsWith('.epub'))
        .map((f) => join(dir, f))
    : [];
const books = [...epubs(CORPUS), ...epubs(SAMPLES)];

/** positions worth testing in a document: every run's first, middle and last character, and its end */
function positions(index: L.LocatorIndex, spine: number): number[] {
  const d = index.docs[spine];
  if (!d) return [0];
  const out = new Set<number>([0, d.n]);
  let pos = 0;
  for (const k of d.t) {
    if (k > -2) continue;
    const len = (-k - 2) >> 1;
    out.add(pos);
    out.add(pos + (len >> 1));
    out.add(pos + len - 1);
    pos += len;
  }
  return [...out].sort((a, b) => a - b);
}

/** white space KOReader drops has no XPointer of its own: those positions land on the next kept text */
function inDroppedSpace(index: L.LocatorIndex, pos: L.Canonical): boolean {
  const xp = L.canonicalToXPointer(index, pos);
  return L.xpointerToCanonical(index, xp)!.pos.offset !== pos.offset;
}

describe('locator round trips', () => {
  it('has books to test', () => {
    expect(books.length).toBeGreaterThan(30);
  });
  for (const file of books) {
    it(relative(REPO, file), async () => {
      let x: Awaited<ReturnType<typeof extract>>;
      try {
        x = await extract(file, 'epub', { renderPdfCover: false });
      } catch {
        return; // the samples hold broken EPUBs on purpose: they have no index to test
      }
      expect(x.locator).toBeTruthy();
      // as the reading service holds it: through JSON, the shapes as typed arrays
      const index = JSON.parse(JSON.stringify(x.locator)) as L.LocatorIndex;
      for (const d of index.docs) if (d) d.t = Int32Array.from(d.t);
      expect(index.spine.length).toBe(index.docs.length);
      let checked = 0;
      let dropped = 0;
      let images = 0;
      for (let spine = 0; spine < index.spine.length; spine++) {
        for (const at of positions(index, spine)) {
          let pos = { spine, offset: at };
          let cfi = L.canonicalToCfi(index, pos);
          let fromCfi = L.cfiToCanonical(index, cfi);
          if (fromCfi && fromCfi.pos.offset !== at && /\/\d+(?:\[[^\]]*\])?\)$/.test(cfi)) {
            // white space before an image: the CFI names the image, which then reads as itself
            expect(fromCfi.pos.offset, cfi).toBeGreaterThan(at);
            expect(L.canonicalToXPointer(index, pos), cfi).toMatch(/\.0$/);
            images++;
            pos = fromCfi.pos;
            cfi = L.canonicalToCfi(index, pos);
            fromCfi = L.cfiToCanonical(index, cfi);
          }
          const offset = pos.offset;
          expect(fromCfi, cfi).toEqual({ pos, healed: [] });
          const xp = L.canonicalToXPointer(index, fromCfi!.pos);
          const fromXp = L.xpointerToCanonical(index, xp);
          expect(fromXp?.healed, xp).toEqual([]);
          if (inDroppedSpace(index, pos)) {
            dropped++;
            // the next character KOReader keeps; after the last one, the end of the last one
            expect(fromXp!.pos.spine).toBe(spine);
            if (fromXp!.pos.offset < offset) expect(xp).toBe(L.canonicalToXPointer(index, { spine, offset: index.docs[spine]!.n }));
            continue;
          }
          expect(fromXp!.pos, xp).toEqual(pos);
          expect(L.canonicalToCfi(index, fromXp!.pos)).toBe(cfi);
          const handles = L.canonicalToRestore(index, pos);
          expect(L.restoreToCanonical(index, handles), JSON.stringify(handles)).toEqual({ pos, healed: [] });
          const pct = L.canonicalToPercentage(index, pos);
          expect(pct).toBeGreaterThanOrEqual(0);
          expect(pct).toBeLessThanOrEqual(1);
          expect(Math.abs(L.canonicalToPercentage(index, L.percentageToCanonical(index, pct)) - pct)).toBeLessThanOrEqual(0.005);
          checked++;
        }
      }
      expect(checked + dropped).toBeGreaterThan(0);
      expect(images).toBeLessThanOrEqual(checked + dropped);
    });
  }
});
