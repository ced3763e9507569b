import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BookError, extract, hashFile, writeCovers, type BookFormat, type Extracted } from '../src/formats';
import { ArchiveLimitError } from '../src/formats/book-error';
import { buildMobi, jpeg, lyingPng, makeEpub, png } from './fixtures/books';
import { buildZip } from './fixtures/zip-writer';

// ../shared sits next to the repository: resolved from the repo root; its tests skip when it is absent.
const REPO = join(import.meta.dirname, '../../..');
const BOOKS = join(REPO, '../shared/peers/samples/books');
const HAVE_SAMPLES = existsSync(BOOKS);
if (!HAVE_SAMPLES) console.warn(`skipped: 4 tests of formats-robustness needs ${BOOKS}, which is absent`);
const tmp = mkdtempSync(join(tmpdir(), 'bindery-formats-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function file(name: string, data: Buffer | string): string {
  const path = join(tmp, name);
  writeFileSync(path, data);
  return path;
}

async function failure(path: string, format: BookFormat): Promise<BookError> {
  const result = await extract(path, format).then(
    (r: Extracted) => r,
    (e: unknown) => e,
  );
  expect(result).toBeInstanceOf(BookError);
  return result as BookError;
}

function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

const OPF = (extra = '', manifest = ''): string => `<?xml version="1.0"?>
<package xmlns="http://www.idpf.org/2007/opf" version="2.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">
<dc:title>Built Book</dc:title><dc:creator opf:role="aut">Bea Builder</dc:creator>${extra}</metadata><manifest>${manifest}</manifest></package>`;

describe('EPUB covers', () => {
  it('follows the guide to an XHTML cover page and its first image, with percent-encoded hrefs', async () => {
    const cover = await jpeg(40, 60);
    const page = `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body><div><img src="../images/the%20cover.jpg" alt=""/></div><img src="../images/other.jpg"/></body></html>`;
    const path = file(
      'guide.epub',
      makeEpub(
        OPF('', '<item id="p" href="text/cover.xhtml" media-type="application/xhtml+xml"/>').replace(
          '</package>',
          '<guide><reference type="cover" href="text/cover.xhtml"/></guide></package>',
        ),
        [
          { name: 'OEBPS/text/cover.xhtml', data: page, deflate: true },
          { name: 'OEBPS/images/the cover.jpg', data: cover },
          { name: 'OEBPS/images/other.jpg', data: await jpeg(5, 5) },
        ],
      ),
    );
    const r = await extract(path, 'epub');
    expect(r.metadata.title).toBe('Built Book');
    expect(r.metadata.contributors).toEqual([{ name: 'Bea Builder', role: 'author' }]);
    expect(r.cover?.equals(cover)).toBe(true);
  });

  it('follows an SVG cover page (xlink:href)', async () => {
    const cover = await png(30, 40);
    const page = `<html xmlns="http://www.w3.org/1999/xhtml" xmlns:xlink="http://www.w3.org/1999/xlink"><body><svg xmlns="http://www.w3.org/2000/svg"><image xlink:href="cover.png"/></svg></body></html>`;
    const path = file(
      'svg.epub',
      makeEpub(OPF('<meta name="cover" content="cp"/>', '<item id="cp" href="cover.xhtml" media-type="application/xhtml+xml"/>'), [
        { name: 'OEBPS/cover.xhtml', data: page },
        { name: 'OEBPS/cover.png', data: cover },
      ]),
    );
    expect((await extract(path, 'epub')).cover?.equals(cover)).toBe(true);
  });

  it('falls back to a manifest image named cover, and ignores a cover that is not an image', async () => {
    const cover = await jpeg(10, 10);
    const path = file(
      'named.epub',
      makeEpub(
        OPF('<meta name="cover" content="bogus"/>', '<item id="bogus" href="fake.jpg" media-type="image/jpeg"/><item id="x" href="img/cover.jpg" media-type="image/jpeg"/>'),
        [
          { name: 'OEBPS/fake.jpg', data: 'not an image at all' },
          { name: 'OEBPS/img/cover.jpg', data: cover },
        ],
      ),
    );
    expect((await extract(path, 'epub')).cover?.equals(cover)).toBe(true);
  });

  it('survives a cover entry with broken compressed data', async () => {
    const cover = await jpeg(40, 60);
    const zip = makeEpub(OPF('', '<item id="c" href="cover.jpg" media-type="image/jpeg" properties="cover-image"/>'), [{ name: 'OEBPS/cover.jpg', data: cover, deflate: true }]);
    const at = zip.indexOf(Buffer.from('OEBPS/cover.jpg')) + 'OEBPS/cover.jpg'.length;
    expect(zip.indexOf(Buffer.from('OEBPS/cover.jpg'), at) - at).toBeGreaterThan(100); // the data lies between
    zip.fill(0xff, at + 2, at + 40); // corrupt the entry's deflate stream
    const r = await extract(file('badcover.epub', zip), 'epub');
    expect(r.metadata.title).toBe('Built Book');
    expect(r.cover).toBeNull();
  });
});

describe('broken EPUBs', () => {
  it('says what is missing', async () => {
    const noContainer = buildZip([
      { name: 'mimetype', data: 'application/epub+zip' },
      { name: 'content.opf', data: OPF() },
    ]);
    expect((await failure(file('nocontainer.epub', noContainer), 'epub')).message).toBe('not a valid EPUB: missing META-INF/container.xml');
    const emptyContainer = buildZip([{ name: 'META-INF/container.xml', data: '<container><rootfiles/></container>' }]);
    expect((await failure(file('emptycontainer.epub', emptyContainer), 'epub')).message).toBe('not a valid EPUB: container.xml names no package document');
    const notPackage = makeEpub('<html><body>hi</body></html>');
    expect((await failure(file('notpackage.epub', notPackage), 'epub')).message).toBe('not a valid EPUB: OEBPS/content.opf is not a package document');
    const garbageOpf = makeEpub('\u0000\u0001 garbage <<<< >>>');
    expect((await failure(file('garbageopf.epub', garbageOpf), 'epub')).message).toMatch(/^not a valid EPUB/u);
  });

  it('reports missing and unreadable files as BookErrors', async () => {
    expect((await failure(join(tmp, 'does-not-exist.epub'), 'epub')).message).toBe('cannot read EPUB: file not found');
    mkdirSync(join(tmp, 'dir.epub'), { recursive: true });
    await failure(join(tmp, 'dir.epub'), 'epub');
    for (const format of ['pdf', 'cbz', 'cbr', 'cb7', 'mobi', 'azw3', 'fb2'] as const) {
      await failure(join(tmp, `does-not-exist.${format}`), format);
      await failure(join(tmp, 'dir.epub'), format);
    }
  });

  it('does not block on a FIFO or read a device', async () => {
    const fifo = join(tmp, 'pipe.epub');
    execFileSync('mkfifo', [fifo]);
    expect((await failure(fifo, 'epub')).message).toBe('cannot read EPUB: not a regular file');
    await expect(hashFile(fifo)).rejects.toThrow(/not a regular file/u);
    expect((await failure('/dev/zero', 'pdf')).message).toBe('cannot read PDF: not a regular file');
    rmSync(fifo);
  });

  it('rejects an archive with too many entries before listing them all', async () => {
    const entries = Array.from({ length: 20_001 }, (_, i) => ({ name: `p${i}.jpg`, data: 'x' }));
    const t = Date.now();
    expect((await failure(file('many.cbz', buildZip(entries)), 'cbz')).message).toMatch(/too many entries/u);
    expect(Date.now() - t).toBeLessThan(2000);
  });

  it('rejects encrypted and oddly compressed entries', async () => {
    const zip = makeEpub(OPF());
    const at = zip.lastIndexOf(Buffer.from('OEBPS/content.opf')) - 46; // central directory record
    zip.writeUInt16LE(12, at + 10); // bzip2
    expect((await failure(file('bzip.epub', zip), 'epub')).message).toMatch(/unsupported compression/u);
  });
});

describe('zip bombs', () => {
  const MiB = 1024 * 1024;

  /** A real deflated zip of `size` zeros per name, made by the zip CLI (kilobytes on disk). */
  function zerosZip(name: string, members: string[], size: number, extra: Record<string, string> = {}): string {
    const dir = mkdtempSync(join(tmp, 'bomb-'));
    for (const m of members) {
      mkdirSync(join(dir, m, '..'), { recursive: true });
      execFileSync('truncate', ['-s', String(size), join(dir, m)]);
    }
    for (const [m, text] of Object.entries(extra)) {
      mkdirSync(join(dir, m, '..'), { recursive: true });
      writeFileSync(join(dir, m), text);
    }
    const out = join(tmp, name);
    execFileSync('zip', ['-q', '-r', '-9', out, ...members, ...Object.keys(extra)], { cwd: dir });
    rmSync(dir, { recursive: true, force: true });
    return out;
  }

  /** Rewrites an entry's uncompressed size in both of its headers, as a hostile archive would. */
  function lieAboutSize(path: string, member: string, size: number): void {
    const zip = readFileSync(path);
    const name = Buffer.from(member);
    for (let at = zip.indexOf(name); at >= 0; at = zip.indexOf(name, at + 1)) {
      if (at >= 46 && zip.readUInt32LE(at - 46) === 0x02014b50) zip.writeUInt32LE(size, at - 46 + 24);
      if (at >= 30 && zip.readUInt32LE(at - 30) === 0x04034b50) zip.writeUInt32LE(size, at - 30 + 22);
    }
    writeFileSync(path, zip);
  }

  let bomb: string;
  let liar: string;
  let comic: string;
  let comicLiar: string;
  beforeAll(() => {
    const container = { 'META-INF/container.xml': '<container><rootfiles><rootfile full-path="content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>' };
    bomb = zerosZip('bomb.epub', ['content.opf'], 200 * MiB, container);
    liar = zerosZip('liar.epub', ['content.opf'], 200 * MiB, container);
    lieAboutSize(liar, 'content.opf', 1000);
    comic = zerosZip('bomb.cbz', ['001.jpg', '002.jpg'], 64 * MiB);
    comicLiar = zerosZip('liar.cbz', ['001.jpg'], 64 * MiB, { 'ComicInfo.xml': '<ComicInfo><Title>T</Title></ComicInfo>' });
    lieAboutSize(comicLiar, '001.jpg', 4096);
  }, 60_000);

  async function bounded<T>(work: () => Promise<T>): Promise<T> {
    const rssBefore = process.memoryUsage().rss;
    const t = Date.now();
    const result = await work();
    expect(Date.now() - t).toBeLessThan(5000);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(150 * MiB);
    return result;
  }

  it('the fixtures really are bombs', () => {
    expect(readFileSync(bomb).length).toBeLessThan(1 * MiB);
    expect(readFileSync(comic).length).toBeLessThan(2 * MiB);
  });

  it('refuses an OPF whose declared size is over the cap without inflating it', async () => {
    const e = await bounded(() => failure(bomb, 'epub'));
    expect(e.message).toBe('not a valid EPUB: content.opf is larger than 4 MiB');
  });

  it('stops inflating an OPF that lies about its size', async () => {
    const e = await bounded(() => failure(liar, 'epub'));
    expect(e.message).toBe('not a valid EPUB: content.opf inflates past its declared size');
  });

  it('refuses a comic whose pages inflate like a bomb, without inflating them', async () => {
    const e = await bounded(() => failure(comic, 'cbz'));
    expect(e).toBeInstanceOf(ArchiveLimitError);
    expect(e.message).toMatch(/^not a valid CBZ: 001\.jpg inflates \d+ times its size \(a zip bomb\)$/u);
  });

  it('refuses a comic page declared over the page cap', async () => {
    const big = zerosZip('big.cbz', ['001.jpg'], 64 * MiB + 1);
    const e = await bounded(() => failure(big, 'cbz'));
    expect(e.message).toBe('not a valid CBZ: 001.jpg is larger than 64 MiB');
  });

  it('refuses a comic whose cover page lies about its size', async () => {
    const e = await bounded(() => failure(comicLiar, 'cbz'));
    expect(e).toBeInstanceOf(ArchiveLimitError);
    expect(e.message).toBe('not a valid CBZ: 001.jpg inflates past its declared size');
  });
});

describe('CBZ', () => {
  it('ignores a malformed ComicInfo.xml and uses the first page in natural order', async () => {
    const first = await jpeg(20, 30, '#123');
    const path = file(
      'comic.cbz',
      buildZip([
        { name: 'ComicInfo.xml', data: '<ComicInfo><Title>Broken<Series></ComicInfo' },
        { name: 'p10.jpg', data: await jpeg(5, 5) },
        { name: 'p2.png', data: await png(5, 5) },
        { name: '__MACOSX/._p1.jpg', data: 'junk' },
        { name: 'P1.jpg', data: first },
      ]),
    );
    const r = await extract(path, 'cbz');
    expect(r.metadata.page_count).toBe(3);
    expect(r.metadata.title).toBeNull(); // nothing from a document that is not well-formed
    expect(r.metadata.series).toBeNull();
    expect(r.cover?.equals(first)).toBe(true);
  });

  it('reads a .cbr that is really a zip', async () => {
    const path = file('really-zip.cbr', buildZip([{ name: 'a.jpg', data: await jpeg(5, 5) }]));
    expect((await extract(path, 'cbr')).metadata.page_count).toBe(1);
  });
});

describe('CBR, CB7', () => {
  it('rejects bytes that are not RAR', async () => {
    expect((await failure(file('text.cbr', 'just some text, not a rar archive'), 'cbr')).message).toBe('not a valid CBR: not a RAR archive');
    await failure(file('zero.cbr', ''), 'cbr');
    await failure(file('sig-only.cbr', Buffer.concat([Buffer.from('Rar!\x1a\x07\x01\x00', 'latin1'), Buffer.alloc(64, 0xaa)])), 'cbr');
    await failure(file('sig4.cbr', Buffer.concat([Buffer.from('Rar!\x1a\x07\x00', 'latin1'), Buffer.alloc(64, 0x55)])), 'cbr');
  });

  it('gives an empty result for a 7z comic (no 7z reader) and rejects junk', async () => {
    const r = await extract(file('book.cb7', Buffer.concat([Buffer.from('7z\xbc\xaf\x27\x1c', 'latin1'), Buffer.alloc(100)])), 'cb7');
    expect(r.cover).toBeNull();
    expect(r.metadata.title).toBeNull();
    expect(r.metadata.page_count).toBeNull();
    await failure(file('junk.cb7', 'junk'), 'cb7');
    await failure(file('empty.cb7', ''), 'cb7');
  });
});

describe('MOBI', () => {
  it('reads a Windows-1252 book with several authors and a cover record', async () => {
    const cover = await jpeg(30, 45);
    const path = file(
      'cp.mobi',
      buildMobi({
        fullName: 'Caf\u00e9 Cr\u00e8me',
        encoding: 1252,
        exth: [
          [100, 'Ann \u00c9crivain'],
          [100, 'Bob Writer'],
          [101, 'Pub & Co'],
          [103, '<p>A <i>good</i> book.</p>'],
          [104, '978-0-306-40615-7'],
          [105, 'Drama'],
          [106, '1999-01-01'],
          [524, 'fr'],
          [112, 'calibre:abc'],
          [201, 0],
        ],
        images: [cover, await jpeg(5, 5)],
      }),
    );
    const r = await extract(path, 'mobi');
    expect(r.metadata).toMatchObject({
      title: 'Caf\u00e9 Cr\u00e8me',
      publisher: 'Pub & Co',
      description: 'A good book.',
      isbn: '9780306406157',
      subjects: ['Drama'],
      year: 1999,
      language: 'fr',
      identifiers: { isbn: '9780306406157', calibre: 'abc' },
    });
    expect(r.metadata.contributors).toEqual([
      { name: 'Ann \u00c9crivain', role: 'author' },
      { name: 'Bob Writer', role: 'author' },
    ]);
    expect(r.cover?.equals(cover)).toBe(true);
  });

  it('prefers the EXTH 503 title and ignores a cover offset past the last record', async () => {
    const path = file(
      't.azw3',
      buildMobi({
        fullName: 'Full Name',
        exth: [
          [503, 'Updated Title'],
          [201, 7],
        ],
        images: [await jpeg(5, 5)],
      }),
    );
    const r = await extract(path, 'azw3');
    expect(r.metadata.title).toBe('Updated Title');
    expect(r.cover).toBeNull();
  });

  it.skipIf(!HAVE_SAMPLES)('rejects garbage, empty and truncated files', async () => {
    const good = readFileSync(join(BOOKS, '静かな川.mobi'));
    expect((await failure(file('zero.mobi', ''), 'mobi')).message).toMatch(/^not a valid MOBI/u);
    expect((await failure(file('garbage.mobi', Buffer.alloc(500, 0x41)), 'mobi')).message).toBe('not a valid MOBI: not a Mobipocket file');
    await failure(file('short.mobi', good.subarray(0, 90)), 'mobi');
    await failure(file('cut.azw3', good.subarray(0, 300)), 'azw3');
    const noMobi = Buffer.from(good);
    noMobi.write('XXXX', noMobi.readUInt32BE(78) + 16, 'latin1');
    expect((await failure(file('nomobi.mobi', noMobi), 'mobi')).message).toBe('not a valid MOBI: missing MOBI header');
  });
});

describe('FB2', () => {
  const fb2 = (cover: Buffer, encoding = 'utf-8'): string => `<?xml version="1.0" encoding="${encoding}"?>
<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0" xmlns:l="http://www.w3.org/1999/xlink">
<description><title-info><genre>prose</genre><author><first-name>Anna</first-name><last-name>Karenina</last-name></author>
<book-title>Roman</book-title><lang>ru</lang><coverpage><image l:href="#cover.jpg"/></coverpage></title-info></description>
<body><section><p>Text</p></section></body>
<binary id="cover.jpg" content-type="image/jpeg">${cover.toString('base64').replace(/(.{76})/gu, '$1\n')}</binary>
</FictionBook>`;

  it('reads metadata and the inline cover', async () => {
    const cover = await jpeg(20, 20);
    const r = await extract(file('book.fb2', fb2(cover)), 'fb2');
    expect(r.metadata).toMatchObject({ title: 'Roman', language: 'ru', subjects: ['prose'], contributors: [{ name: 'Anna Karenina', role: 'author' }] });
    expect(r.cover?.equals(cover)).toBe(true);
  });

  it('reads a windows-1251 file and a zipped one', async () => {
    const cover = await jpeg(8, 8);
    const text = fb2(cover, 'windows-1251').replace('Roman', '\u0420\u043e\u043c\u0430\u043d');
    const cp1251 = Buffer.from([...text].map((ch) => (ch.charCodeAt(0) >= 0x410 && ch.charCodeAt(0) <= 0x44f ? ch.charCodeAt(0) - 0x410 + 0xc0 : ch.charCodeAt(0))));
    expect((await extract(file('cp.fb2', cp1251), 'fb2')).metadata.title).toBe('\u0420\u043e\u043c\u0430\u043d');
    const zipped = file('book.fb2.zip', buildZip([{ name: 'book.fb2', data: fb2(cover), deflate: true }]));
    expect((await extract(zipped, 'fb2')).metadata.title).toBe('Roman');
  });

  it('skips the body and handles namespace prefixes and a prolog', async () => {
    const cover = await jpeg(8, 8);
    const doc =
      `<?xml version="1.0"?>\n<!-- made by hand -->\n<!DOCTYPE fb>\n<fb:FictionBook xmlns:fb="http://www.gribuser.ru/xml/fictionbook/2.0" xmlns:xlink="http://www.w3.org/1999/xlink">` +
      `<fb:description><fb:title-info><fb:book-title>Prefixed</fb:book-title><fb:coverpage><fb:image xlink:href="#c1"/></fb:coverpage></fb:title-info></fb:description>` +
      `<fb:body><fb:p>unclosed <fb:b></fb:body><fb:binary id='c0'>AAAA</fb:binary><fb:binary content-type="image/jpeg" id='c1'>${cover.toString('base64')}</fb:binary></fb:FictionBook>`;
    const r = await extract(file('prefixed.fb2', doc), 'fb2');
    expect(r.metadata.title).toBe('Prefixed');
    expect(r.cover?.equals(cover)).toBe(true);
  });

  it('rejects what is not FictionBook', async () => {
    expect((await failure(file('html.fb2', '<html><body/></html>'), 'fb2')).message).toBe('not a valid FB2: no FictionBook root element');
    await failure(file('empty.fb2', ''), 'fb2');
    await failure(file('bin.fb2', Buffer.alloc(100, 0)), 'fb2');
    await failure(file('nofb2.fb2.zip', buildZip([{ name: 'x.txt', data: 'x' }])), 'fb2');
  });
});

describe('PDF', () => {
  it.skipIf(!HAVE_SAMPLES)('rejects a file without a PDF header, and a truncated PDF never hangs', async () => {
    expect((await failure(file('text.pdf', 'hello'), 'pdf')).message).toBe('not a valid PDF: missing %PDF header');
    await failure(file('empty.pdf', ''), 'pdf');
    const good = readFileSync(join(BOOKS, 'The Forgotten Archive_ A Novel - Emil Wójcik.pdf'));
    const cut = file('cut.pdf', good.subarray(0, Math.floor(good.length / 2)));
    const t = Date.now();
    const outcome = await extract(cut, 'pdf').then(
      (r) => r.metadata.page_count,
      (e: unknown) => e,
    );
    expect(outcome === null || typeof outcome === 'number' || outcome instanceof BookError).toBe(true);
    expect(Date.now() - t).toBeLessThan(20_000);
  });
});

describe('writeCovers', () => {
  it('refuses undecodable and oversized images with a BookError', async () => {
    await expect(writeCovers(Buffer.from('not an image'), join(tmp, 'c'), 'k')).rejects.toThrow(new BookError('unreadable cover image'));
    await expect(writeCovers(lyingPng(20_000, 20_000), join(tmp, 'c'), 'k')).rejects.toBeInstanceOf(BookError);
    expect(existsSync(join(tmp, 'c'))).toBe(false);
  });

  it('refuses keys that are not plain file names', async () => {
    const img = await jpeg(10, 10);
    for (const key of ['../x', 'a/b', '', '.hidden']) await expect(writeCovers(img, join(tmp, 'c'), key)).rejects.toBeInstanceOf(TypeError);
  });

  it('flattens transparency, keeps small covers small and replaces earlier files', async () => {
    const dir = join(tmp, 'covers2');
    await writeCovers(await jpeg(2000, 1000), dir, 'b');
    expect(await sharp(join(dir, 'b.jpg')).metadata()).toMatchObject({ width: 1200, height: 600, format: 'jpeg' });
    const out = await writeCovers(await png(100, 150), dir, 'b');
    expect(await sharp(join(dir, out.cover)).metadata()).toMatchObject({ width: 100, height: 150, format: 'jpeg', hasAlpha: false });
    expect(await sharp(join(dir, out.thumbnail)).metadata()).toMatchObject({ width: 300, height: 450 });
    expect(readdirSync(dir).sort()).toEqual(['b-thumb.jpg', 'b.jpg']);
  });
});

describe('mutated samples', () => {
  it.skipIf(!HAVE_SAMPLES)(
    'flipped, cut and spliced bytes give a result or a BookError, never anything else',
    async () => {
      let seed = 20_240_601;
      const random = (n: number): number => {
        seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
        return seed % Math.max(1, n);
      };
      for (const name of readdirSync(BOOKS)) {
        const ext = name.split('.').pop() as BookFormat;
        if (name.endsWith('.tsv')) continue;
        const original = readFileSync(join(BOOKS, name));
        if (original.length === 0) continue;
        for (let i = 0; i < 12; i++) {
          let data = Buffer.from(original);
          if (i % 3 === 0) for (let k = 0; k <= random(20); k++) data[random(data.length)] = random(256);
          if (i % 3 === 1) data = data.subarray(0, random(data.length));
          if (i % 3 === 2) data = Buffer.concat([data.subarray(0, random(data.length)), Buffer.alloc(random(1000), random(256)), data.subarray(random(data.length))]);
          const outcome = await extract(file(`mutant.${ext}`, data), ext).then(
            () => 'ok',
            (e: unknown) => e,
          );
          if (outcome !== 'ok') expect(outcome, `${name} mutation ${i}`).toBeInstanceOf(BookError);
        }
      }
    },
    60_000,
  );
});

describe('resources', () => {
  it.skipIf(!HAVE_SAMPLES)(
    'leaves no file descriptors open after good and bad books alike',
    async () => {
      const before = openFds();
      for (let round = 0; round < 3; round++) {
        for (const name of readdirSync(BOOKS)) {
          const format = name.endsWith('.tsv') ? null : (name.split('.').pop() as BookFormat);
          if (format) await extract(join(BOOKS, name), format).catch(() => null);
        }
        for (const name of readdirSync(tmp)) {
          const ext = name.split('.').pop();
          if (ext && ['epub', 'cbz', 'cbr', 'cb7', 'mobi', 'azw3', 'fb2', 'pdf'].includes(ext)) await extract(join(tmp, name), ext as BookFormat).catch(() => null);
        }
      }
      await new Promise((r) => setTimeout(r, 200));
      expect(openFds()).toBeLessThanOrEqual(before);
    },
    60_000,
  );
});
