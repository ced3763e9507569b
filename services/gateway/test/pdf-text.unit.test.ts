// The PDF text layer's server side (opds/pdf-text.ts): text runs from pdf.js become boxes as shares of
// the page (upright, rotated pages and a scale), blanks and runs without size are left out; a search
// finds a word with its context, case-insensitively; a real PDF written here gives its words with
// boxes where they were drawn, a page without text no runs, and a truncated file a clear error.
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findIn, MAX_TEXT_BYTES, PdfTexts, PdfTextError, pageString, runBoxes, TEXT_TOO_LARGE } from '../src/opds/pdf-text';

/** pdf.js's viewport at scale 1 for an upright page `w` × `h` points: y flipped, origin at the top. */
const upright = (w: number, h: number) => ({ width: w, height: h, transform: [1, 0, 0, -1, 0, h] });

describe('runBoxes', () => {
  it('an upright run: its advance across, its font height from 0.8 above the baseline to 0.2 below, as shares of the page', () => {
    // 20 pt text at (50, 500) on a 400 × 600 page, 100 pt wide
    const [box] = runBoxes([{ str: 'Hello', transform: [20, 0, 0, 20, 50, 500], width: 100 }], upright(400, 600));
    // top: 600 - 500 - 16 = 84; bottom 600 - 500 + 4 = 104
    expect(box).toEqual({ str: 'Hello', x: 0.125, y: 0.14, w: 0.25, h: 0.0333 });
  });

  it('a scaled viewport gives the same shares', () => {
    const run = { str: 'Hello', transform: [20, 0, 0, 20, 50, 500], width: 100 };
    const scaled = runBoxes([run], { width: 800, height: 1200, transform: [2, 0, 0, -2, 0, 1200] });
    expect(scaled).toEqual(runBoxes([run], upright(400, 600)));
  });

  it('a page turned a quarter (/Rotate 90): the run runs down the shown page', () => {
    // pdf.js's viewport for rotation 90 of a 400 × 600 page: shown 600 × 400
    const view = { width: 600, height: 400, transform: [0, 1, 1, 0, 0, 0] };
    const [box] = runBoxes([{ str: 'Down', transform: [20, 0, 0, 20, 50, 500], width: 100 }], view);
    // baseline start at (500, 50), running +y for 100; "up" is +x for 16, "down" −x for 4
    expect(box).toEqual({ str: 'Down', x: 0.8267, y: 0.125, w: 0.0333, h: 0.25 });
  });

  it('leaves out blank runs, runs without a size, and clamps a run past the edge to the page', () => {
    const boxes = runBoxes(
      [
        { str: '   ', transform: [20, 0, 0, 20, 50, 500], width: 30 },
        { str: 'none', transform: [0, 0, 0, 0, 50, 500], width: 0 },
        { str: 'edge', transform: [20, 0, 0, 20, 380, 590], width: 100 },
      ],
      upright(400, 600),
    );
    expect(boxes).toEqual([{ str: 'edge', x: 0.95, y: 0, w: 0.05, h: 0.0233 }]);
  });

  it('a page without size gives no runs', () => {
    expect(runBoxes([{ str: 'x', transform: [1, 0, 0, 1, 0, 0], width: 1 }], upright(0, 0))).toEqual([]);
  });
});

describe('findIn', () => {
  it('every hit, case-insensitive, with context and ellipses where cut; regex characters are plain text', () => {
    const text = `${'a'.repeat(50)} The Lighthouse stood. the lighthouse fell ${'b'.repeat(50)}`;
    const hits = findIn(text, 'lighthouse', 3, 10);
    expect(hits.map((h) => [h.page, h.match])).toEqual([
      [3, 'Lighthouse'],
      [3, 'lighthouse'],
    ]);
    expect(hits[0]!.pre).toBe(`…${'a'.repeat(35)} The `);
    expect(hits[1]!.post).toBe(` fell ${'b'.repeat(34)}…`);
    expect(findIn('cost (1+2) here', '(1+2)', 0, 10).map((h) => h.match)).toEqual(['(1+2)']);
    expect(findIn('x.y', 'x*', 0, 10)).toEqual([]);
  });
  it('a space in the query matches any run of blanks; at most `max` hits', () => {
    expect(findIn('old   harbour', 'old harbour', 0, 10).map((h) => h.match)).toEqual(['old   harbour']);
    expect(findIn('aa aa aa aa', 'aa', 0, 2)).toHaveLength(2);
  });
  it('pageString joins the runs with single spaces', () => {
    expect(
      pageString([
        { str: 'one ', x: 0, y: 0, w: 0, h: 0 },
        { str: 'two', x: 0, y: 0, w: 0, h: 0 },
      ]),
    ).toBe('one two');
  });
});

/** A PDF of A5-sized pages (420 × 595 pt): lines of 24 pt Helvetica from (50, 540), or null for a page with only a grey block. */
function pdf(pages: (string[] | null)[]): Buffer {
  const objects = ['<< /Type /Catalog /Pages 2 0 R >>', '', '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'];
  const kids: number[] = [];
  for (const lines of pages) {
    const content = lines ? `BT /F1 24 Tf 50 540 Td 30 TL ${lines.map((l) => `(${l}) Tj T*`).join(' ')} ET` : '0.5 g 40 40 340 515 re f';
    objects.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 420 595] /Contents ${objects.length} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`);
    kids.push(objects.length);
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

describe('PdfTexts on real files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bindery-pdf-text-'));
  const file = join(dir, 'book.pdf');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(file, pdf([['Harbour lights', 'second line'], null, ['The lighthouse keeper']]));

  it('a page: its words with boxes where they were drawn; a page without text: no runs; past the end: null', async () => {
    const texts = new PdfTexts();
    const first = await texts.page(file, 0);
    expect(first).toMatchObject({ page: 0, width: 420, height: 595 });
    expect(first!.items.map((i) => i.str)).toEqual(['Harbour lights', 'second line']);
    const [line] = first!.items;
    // the baseline at y 540 of 595, 24 pt: top at (595 - 540 - 19.2) / 595
    expect(line!.x).toBeCloseTo(50 / 420, 3);
    expect(line!.y).toBeCloseTo((595 - 540 - 19.2) / 595, 3);
    expect(line!.h).toBeCloseTo(24 / 595, 3);
    expect(line!.w).toBeGreaterThan(0.3);
    expect(line!.w).toBeLessThan(0.5);
    expect(first!.items[1]!.y).toBeCloseTo(line!.y + 30 / 595, 3);
    expect(await texts.page(file, 1)).toEqual({ page: 1, width: 420, height: 595, items: [] });
    expect(await texts.page(file, 3)).toBeNull();
  });

  it('a search: the pages where the word is, in order', async () => {
    const r = await new PdfTexts().search(file, 'LIGHT');
    expect(r).toEqual({
      searched: 3,
      truncated: false,
      hits: [
        { page: 0, pre: 'Harbour ', match: 'light', post: 's second line' },
        { page: 2, pre: 'The ', match: 'light', post: 'house keeper' },
      ],
    });
  });

  it('a search over pages all read already does not open the file again', async () => {
    const copy = join(dir, 'copy.pdf');
    const bytes = pdf([['Harbour lights'], ['lighthouse']]);
    writeFileSync(copy, bytes);
    utimesSync(copy, 1_700_000_000, 1_700_000_000);
    const texts = new PdfTexts();
    const first = await texts.search(copy, 'light', 2);
    expect(first.hits.map((h) => h.page)).toEqual([0, 1]);
    // the file made unreadable but its version kept (same size, same mtime): the pages come from the cache
    writeFileSync(copy, Buffer.alloc(bytes.length, 0x20));
    utimesSync(copy, 1_700_000_000, 1_700_000_000);
    expect(await texts.search(copy, 'light', 2)).toEqual(first);
    // without the count it reads the file, which now fails
    await expect(texts.search(copy, 'light')).rejects.toThrow(/^cannot read the PDF text: /);
  });

  it('a truncated PDF: a PdfTextError saying it cannot be read', async () => {
    const broken = join(dir, 'broken.pdf');
    writeFileSync(broken, pdf([['Harbour lights']]).subarray(0, 60));
    const e = await new PdfTexts().page(broken, 0).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PdfTextError);
    expect((e as Error).message).toMatch(/^cannot read the PDF text: /);
  });

  it('a file over the size limit is not read', async () => {
    const big = join(dir, 'big.pdf');
    writeFileSync(big, Buffer.alloc(MAX_TEXT_BYTES + 1));
    await expect(new PdfTexts().page(big, 0)).rejects.toThrow(TEXT_TOO_LARGE);
  });
});
