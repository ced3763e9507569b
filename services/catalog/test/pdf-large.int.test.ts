// What a PDF costs in memory is bounded: pdf.js needs the whole file, so a PDF over the parse cap
// is catalogued from its names without being read, and smaller ones are still parsed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { extract } from '../src/formats';
import { MAX_PDF_PARSE_BYTES } from '../src/formats/limits';

const MiB = 1024 * 1024;
const tmp = mkdtempSync(join(tmpdir(), 'bindery-pdf-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A one-page PDF with a title, its xref offsets computed; `padding` bytes of comment lines after it. */
function pdf(title: string, padding = 0): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>',
    `<< /Title (${title}) /Author (Ann Author) >>`,
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info 4 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  const line = `%${'x'.repeat(1022)}\n`;
  return Buffer.concat([Buffer.from(out, 'latin1'), Buffer.alloc(padding, line)]);
}

async function peakDuring<T>(work: () => Promise<T>): Promise<{ result: T; grew: number }> {
  const before = process.memoryUsage().arrayBuffers;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 2);
  const result = await work().finally(() => clearInterval(sampler));
  return { result, grew: Math.max(peak, process.memoryUsage().arrayBuffers) - before };
}

describe('PDF memory bounds', () => {
  it('parses a PDF under the cap', async () => {
    const path = join(tmp, 'small.pdf');
    writeFileSync(path, pdf('Small Title', 4 * MiB));
    const r = await extract(path, 'pdf', { renderPdfCover: false });
    expect(r.metadata).toMatchObject({ title: 'Small Title', page_count: 1 });
    expect(r.metadata.contributors).toEqual([{ name: 'Ann Author', role: 'author' }]);
  });

  it('catalogues a PDF over the cap without reading it', async () => {
    const path = join(tmp, 'large.pdf');
    writeFileSync(path, pdf('Large Title', MAX_PDF_PARSE_BYTES + MiB));
    const { result, grew } = await peakDuring(() => extract(path, 'pdf', { renderPdfCover: false }));
    expect(result.metadata.title).toBeNull();
    expect(result.metadata.page_count).toBeNull();
    expect(grew).toBeLessThan(16 * MiB);
  }, 60_000);
});
