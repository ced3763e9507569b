// CBR through the real unrar (wasm) on archives written here: metadata and cover, a large file
// read without holding it in memory, bombs refused by their headers, archive names never paths.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BookError, extract } from '../src/formats';
import { ArchiveLimitError } from '../src/formats/book-error';
import { jpeg } from './fixtures/books';
import { buildRar } from './fixtures/rar-writer';

const MiB = 1024 * 1024;
const tmp = mkdtempSync(join(tmpdir(), 'bindery-cbr-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function file(name: string, bytes: Buffer): string {
  const p = join(tmp, name);
  writeFileSync(p, bytes);
  return p;
}

async function failure(path: string): Promise<BookError> {
  const e = await extract(path, 'cbr').then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(BookError);
  return e as BookError;
}

describe('CBR', () => {
  it('reads ComicInfo.xml, counts the pages and takes the first page as the cover', async () => {
    const first = await jpeg(20, 30, '#123');
    const path = file(
      'comic.cbr',
      buildRar([
        { name: 'ComicInfo.xml', data: '<ComicInfo><Title>Rar Title</Title><Series>Rar Saga</Series><Number>4</Number></ComicInfo>' },
        { name: 'p10.jpg', data: await jpeg(5, 5) },
        { name: 'p2.jpg', data: await jpeg(6, 6) },
        { name: 'P1.jpg', data: first },
      ]),
    );
    const r = await extract(path, 'cbr');
    expect(r.metadata).toMatchObject({ title: 'Rar Title', series: 'Rar Saga', series_index: 4, page_count: 3 });
    expect(r.cover?.equals(first)).toBe(true);
    // the page entries in reading order: what the gateway streams, page n = entry n
    expect(r.pages).toEqual(['P1.jpg', 'p2.jpg', 'p10.jpg']);
  });

  it('reads a large CBR without holding it in memory', async () => {
    const page = Buffer.alloc(24 * MiB, 0x5a);
    page.set(await jpeg(4, 4), 0);
    const cover = await jpeg(8, 8);
    const pages = [{ name: 'p0.jpg', data: cover }, ...Array.from({ length: 8 }, (_, i) => ({ name: `p${i + 1}.jpg`, data: page }))];
    const path = file('large.cbr', buildRar(pages));
    const before = process.memoryUsage().arrayBuffers;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 2);
    const r = await extract(path, 'cbr').finally(() => clearInterval(sampler));
    peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    expect(r.metadata.page_count).toBe(9);
    expect(r.cover?.equals(cover)).toBe(true);
    // the 192 MiB archive is never read into memory, not even in part
    expect(peak - before).toBeLessThan(16 * MiB);
  }, 60_000);

  it('refuses an archive whose page is declared larger than the page cap', async () => {
    const path = file('bomb.cbr', buildRar([{ name: 'p1.jpg', data: await jpeg(5, 5), declaredSize: 1024 * MiB }]));
    const e = await failure(path);
    expect(e).toBeInstanceOf(ArchiveLimitError);
    expect(e.message).toBe('not a valid CBR: p1.jpg is larger than 64 MiB');
  });

  it('never writes an entry where its name points', async () => {
    const target = join(tmp, 'escaped-page.jpg');
    const path = file('escape.cbr', buildRar([{ name: target, data: await jpeg(5, 5) }]));
    const r = await extract(path, 'cbr');
    expect(r.metadata.page_count).toBe(1);
    expect(r.cover).not.toBeNull();
    expect(existsSync(target)).toBe(false);
  });

  it('rejects what is not RAR', async () => {
    expect((await failure(file('text.cbr', Buffer.from('just some text, not a rar archive')))).message).toBe('not a valid CBR: not a RAR archive');
    expect((await failure(file('empty.cbr', Buffer.alloc(0)))).message).toBe('not a valid CBR: empty file');
  });
});
