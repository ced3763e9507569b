import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { BookError, extract, formatOf, writeCovers } from '../src/formats';
import { findPdftoppm } from '../src/formats/pdf-cover';

// ../shared sits next to the repository: resolved from the repo root; its tests skip when it is absent.
const REPO = join(import.meta.dirname, '../../..');
const BOOKS = join(REPO, '../shared/peers/samples/books');
const HAVE_SAMPLES = existsSync(join(BOOKS, 'manifest.tsv'));
if (!HAVE_SAMPLES) console.warn(`skipped: formats-samples needs ${BOOKS}, which is absent`);

interface Sample {
  path: string;
  kind: string;
  format: string;
  title: string;
  authors: string;
  series: string;
  series_index: string;
  language: string;
  isbn: string;
  publisher: string;
  year: string;
  note: string;
}

const [head, ...lines] = (HAVE_SAMPLES ? readFileSync(join(BOOKS, 'manifest.tsv'), 'utf8') : 'path').split('\n').filter((l) => l.trim() !== '');
const columns = (head as string).split('\t');
const samples: Sample[] = lines.map((l) => {
  const cells = l.split('\t');
  return Object.fromEntries(columns.map((c, i) => [c, cells[i] ?? ''])) as unknown as Sample;
});

/** The manifest spells names in NFC; one file on disk is NFD. */
function onDisk(name: string): string {
  const hit = readdirSync(BOOKS).find((f) => f.normalize('NFC') === name.normalize('NFC'));
  if (!hit) throw new Error(`sample missing: ${name}`);
  return join(BOOKS, hit);
}

const tmp = mkdtempSync(join(tmpdir(), 'bindery-samples-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.skipIf(!HAVE_SAMPLES)('sample books from the manifest (../shared/peers/samples)', () => {
  it('covers the formats the brief names', () => {
    expect(new Set(samples.filter((s) => s.kind === 'book').map((s) => formatOf(s.path)))).toEqual(new Set(['pdf', 'mobi', 'azw3', 'epub', 'cbz']));
    expect(
      samples
        .filter((s) => s.kind === 'corrupt')
        .map((s) => s.path)
        .sort(),
    ).toEqual(['empty.epub', 'garbage.pdf', 'missing-opf.epub', 'no-images.cbz', 'not-a-zip.epub', 'truncated.epub', 'zero.cbz']);
  });

  for (const s of samples.filter((x) => x.kind === 'book')) {
    it(`reads ${s.path}`, async () => {
      const format = formatOf(s.path);
      expect(format).not.toBeNull();
      const { metadata: m } = await extract(onDisk(s.path), format!);
      expect(m.title).toBe(s.title);
      const people = m.contributors.filter((c) => c.role === 'author' || c.role === 'writer').map((c) => c.name);
      for (const author of s.authors.split(/\s*;\s*|\s*&\s*/u).filter(Boolean)) expect(people).toContain(author);
      if (s.language) expect(m.language).toBe(s.language);
      if (s.publisher) expect(m.publisher).toBe(s.publisher);
      if (s.isbn) expect(m.isbn).toBe(s.isbn);
      if (s.year) expect(m.year).toBe(Number(s.year));
      if (s.series) expect(m.series).toBe(s.series);
      if (s.series_index) expect(m.series_index).toBe(Number(s.series_index));
    });
  }

  for (const s of samples.filter((x) => x.kind === 'corrupt')) {
    it(`rejects ${s.path} with a BookError`, async () => {
      const error = await extract(onDisk(s.path), formatOf(s.path)!).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(BookError);
      expect((error as Error).message.length).toBeLessThan(160);
    });
  }

  it('gives the reasons people need to see', async () => {
    const reason = (name: string): Promise<string> =>
      extract(onDisk(name), formatOf(name)!).then(
        () => 'no error',
        (e: Error) => e.message,
      );
    expect(await reason('missing-opf.epub')).toBe('not a valid EPUB: missing EPUB/content.opf');
    expect(await reason('no-images.cbz')).toBe('no images in archive');
    expect(await reason('empty.epub')).toMatch(/^not a valid EPUB/u);
    expect(await reason('garbage.pdf')).toMatch(/^not a valid PDF/u);
  });

  it('reads the comic metadata from ComicInfo.xml', async () => {
    const { metadata: m, cover } = await extract(onDisk('ねこの探偵 - Chapter 004.cbz'), 'cbz');
    expect(m).toMatchObject({ series: 'ねこの探偵', series_index: 4, page_count: 4, reading_direction: 'rtl', year: 2019, publisher: 'Tsuki Shobo', subjects: ['Mystery'] });
    expect(m.contributors).toEqual([
      { name: '佐藤 優', role: 'writer' },
      { name: '佐藤 優', role: 'penciller' },
    ]);
    expect(cover?.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
  });

  it('finds covers where the books have them, and none where they do not', async () => {
    const hasCover = async (name: string): Promise<boolean> => (await extract(onDisk(name), formatOf(name)!)).cover !== null;
    expect(await hasCover('🐉 Dragons & Dungeons 🐉.epub')).toBe(true); // EPUB 3 cover-image
    expect(await hasCover('田中 春樹 - 鉄の川と猫.epub')).toBe(true); // EPUB 2 <meta name="cover">
    expect(await hasCover('Une Bibliothèque perdue.epub')).toBe(false);
    expect(await hasCover('静かな川.mobi')).toBe(true);
    expect(await hasCover('Straße der Ölmühle.azw3')).toBe(false);
  });

  it('renders page 1 of a PDF as its cover when pdftoppm is installed', async () => {
    const { cover } = await extract(onDisk('Naïve Café Résumé.pdf'), 'pdf');
    if (!(await findPdftoppm())) {
      expect(cover).toBeNull();
      return;
    }
    const meta = await sharp(cover!).metadata();
    expect(meta.format).toBe('jpeg');
    expect(Math.max(meta.width, meta.height)).toBe(600);
  });

  it('turns an EPUB cover into a cover and a thumbnail JPEG of the right sizes', async () => {
    const { cover } = await extract(onDisk('🐉 Dragons & Dungeons 🐉.epub'), 'epub');
    const source = await sharp(cover!).metadata();
    const out = await writeCovers(cover!, join(tmp, 'covers', 'nested'), 'book-1');
    expect(out).toEqual({ cover: 'book-1.jpg', thumbnail: 'book-1-thumb.jpg' });
    const big = await sharp(join(tmp, 'covers', 'nested', out.cover)).metadata();
    const thumb = await sharp(join(tmp, 'covers', 'nested', out.thumbnail)).metadata();
    expect(big.format).toBe('jpeg');
    expect(thumb.format).toBe('jpeg');
    expect(Math.max(big.width, big.height)).toBe(Math.min(1200, Math.max(source.width, source.height)));
    expect(thumb.width).toBe(300);
    expect(thumb.height).toBe(Math.round((300 * source.height) / source.width));
    expect(readdirSync(join(tmp, 'covers', 'nested')).sort()).toEqual(['book-1-thumb.jpg', 'book-1.jpg']);
  });
});
