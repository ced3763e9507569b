// Pixel bombs and page sizes in page streaming (docs/decisions.md, "Page rendering limits"): a CBZ
// with a 16383² PNG and a PDF with a 9000 pt page come back as bounded pictures rendered outside the
// gateway's process (its peak memory does not move) and the server answers afterwards; widths are
// snapped to a few sizes, no side exceeds 4000 px, nothing is enlarged; a picture over sharp's pixel
// limit is a 422; a full render queue is a 503 with Retry-After (the queue set small here).
import { accessSync, constants as fsConstants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, crc32, deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfFile } from '../bench/gen-files';
import { buildZip } from '../../services/catalog/test/fixtures/zip-writer';
import { availableModes, ROOT, startBindery, type Bindery } from '../support/bindery';
import { createLibrary, items, settled } from './catalog-helpers';
import { api, expectError, register, type Account, type Call } from './helpers';
import { basic } from './opds-helpers';
import { jpegPage, pngPage } from './opds-books';

type Sharp = (input?: unknown) => any;
const sharp = createRequire(join(ROOT, 'services/gateway/package.json'))('sharp') as Sharp;
const modes = await availableModes();

/** whether poppler is on this host's PATH (the gateway draws PDF pages with pdftoppm, sized by pdfinfo) */
const onPath = (name: string) =>
  (process.env.PATH ?? '').split(':').some((d) => {
    try {
      accessSync(join(d, name), fsConstants.X_OK);
      return d !== '';
    } catch {
      return false;
    }
  });
const poppler = onPath('pdftoppm') && onPath('pdfinfo');
const popplerSkip = poppler ? '' : ' [skipped: pdftoppm and pdfinfo are not installed (apt-get install poppler-utils)]';

/** A grey PNG of `w` × `h` black pixels whose header says so: ~260 KB on disk for 16383², 268 megapixels decoded. */
function blackPng(w: number, h: number, rows = h): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale, no interlace
  const idat = deflateSync(Buffer.alloc((w + 1) * rows), { level: 9, strategy: constants.Z_RLE });
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
}

/** A one-page PDF of `w` × `h` points with a filled square on it. */
function onePagePdf(title: string, w: number, h: number): Buffer {
  const content = `0.2 0.4 0.6 rg ${w / 4} ${h / 4} ${w / 2} ${h / 2} re f`;
  return pdfFile(
    [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${w} ${h}] /Contents 4 0 R >>`,
      `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
      `<< /Title (${title}) /Author (Page Tester) >>`,
    ],
    5,
  );
}

/** the peak resident memory of a process, in MiB */
const peakMiB = (pid: number) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB/mu)![1]) / 1024;

describe.each(modes)('page rendering limits (%s)', (mode) => {
  let b: Bindery;
  let call: Call;
  let admin: Account;
  let list: Record<string, any>[];
  let dir: string;
  const gatewayPid = () => b.procs.at(-1)!.child.pid!;
  const page = (id: string, n: number, query = '') => call('GET', `/opds/pages/${id}/${n}${query}`, { headers: basic(admin.username, admin.password) });
  const size = async (bytes: Buffer) => {
    const m = await sharp(bytes).metadata();
    return [m.format, m.width, m.height];
  };
  const byTitle = (t: string) => list.find((i) => i.title === t)!.id as string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bindery-page-limits-'));
    mkdirSync(join(dir, 'books'));
    writeFileSync(
      join(dir, 'books/Bomb Comic.cbz'),
      buildZip([
        { name: 'ComicInfo.xml', data: '<ComicInfo><Title>Bomb Comic</Title><Writer>Page Tester</Writer></ComicInfo>' },
        // the cover is an ordinary page: the catalog makes covers from the first one
        { name: '01.jpg', data: await jpegPage(875, 1240, '#345') },
        { name: '02.png', data: blackPng(16383, 16383), deflate: true },
        { name: '03.png', data: await pngPage(6000, 3000, '#a52') },
        // its header claims 20000 × 20000: over the pixel limit, refused before decoding
        { name: '04.png', data: blackPng(20000, 20000, 1) },
      ]),
    );
    writeFileSync(join(dir, 'books/Huge Page.pdf'), onePagePdf('Huge Page', 9000, 9000));
    writeFileSync(join(dir, 'books/Small Page.pdf'), onePagePdf('Small Page', 200, 300));
    // one render at a time and one waiting: a third request at once is refused
    b = await startBindery(mode, { PAGE_RENDER_CONCURRENCY: '1', PAGE_RENDER_QUEUE: '1' });
    call = api(b);
    admin = await register(call);
    const lib = await createLibrary(call, admin.token, { name: 'Limits', folders: [dir], watch: false });
    await settled(call, admin.token, lib.id, undefined, 120_000);
    list = await items(call, admin.token, lib.id);
    expect(list.map((i) => i.title).sort()).toEqual(['Bomb Comic', 'Huge Page', 'Small Page']);
  }, 300_000);
  afterAll(async () => {
    await b?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a 16383² PNG page comes back at most 4000 px a side, drawn outside the gateway process, which still answers', async () => {
    const id = byTitle('Bomb Comic');
    expect((await page(id, 0)).status).toBe(200);
    const before = peakMiB(gatewayPid());
    // the OPDS 2.0 page list asks for JPEG without a width
    const r = await page(id, 1, '?convert=jpeg');
    // without a width or conversion it is not sent as it is either
    const plain = await page(id, 1);
    const narrow = await page(id, 1, '?width=700');
    expect(peakMiB(gatewayPid()) - before).toBeLessThan(100);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('content-type')).toBe('image/jpeg');
    expect(await size(r.bytes)).toEqual(['jpeg', 4000, 4000]);
    expect(await size(plain.bytes)).toEqual(['jpeg', 4000, 4000]);
    expect(await size(narrow.bytes)).toEqual(['jpeg', 640, 640]);
    const after = await page(id, 0, '?width=320');
    expect([after.status, ...(await size(after.bytes))]).toEqual([200, 'jpeg', 320, 453]);
  }, 120_000);

  it('a picture over the pixel limit is 422 with a clear message, and the server answers after it', async () => {
    const id = byTitle('Bomb Comic');
    expectError(await page(id, 3), 422, 'page too large to render within the server limits');
    expect((await page(id, 0)).status).toBe(200);
  });

  it('widths are snapped to a few sizes, capped at 4000 px a side and never enlarged', async () => {
    const id = byTitle('Bomb Comic');
    // an ordinary 875 px page asked at 10000: as it is
    const small = await page(id, 0, '?width=10000');
    expect([small.headers.get('content-type'), ...(await size(small.bytes))]).toEqual(['image/jpeg', 'jpeg', 875, 1240]);
    expect(await size((await page(id, 0, '?width=10000&convert=jpeg')).bytes)).toEqual(['jpeg', 875, 1240]);
    // a 6000 × 3000 page: 4000 on its long side, however wide it is asked
    expect(await size((await page(id, 2)).bytes)).toEqual(['jpeg', 4000, 2000]);
    expect(await size((await page(id, 2, '?width=10000')).bytes)).toEqual(['jpeg', 4000, 2000]);
    // 1000 → 960, 1079 → 960, 1080 → 1080, 50 → 160 (the smallest size)
    expect(await size((await page(id, 2, '?width=1000')).bytes)).toEqual(['jpeg', 960, 480]);
    expect(await size((await page(id, 2, '?width=1079')).bytes)).toEqual(['jpeg', 960, 480]);
    expect(await size((await page(id, 2, '?width=1080')).bytes)).toEqual(['jpeg', 1080, 540]);
    expect(await size((await page(id, 2, '?width=50')).bytes)).toEqual(['jpeg', 160, 80]);
  });

  it.skipIf(!poppler)(
    `a 9000 pt PDF page is drawn at most 4000 px a side; a small one never above 300 dpi${popplerSkip}`,
    async () => {
      const huge = byTitle('Huge Page');
      const started = Date.now();
      for (const q of ['', '?width=10000', '?convert=jpeg']) {
        const r = await page(huge, 0, q);
        expect(r.status, r.text).toBe(200);
        expect(await size(r.bytes)).toEqual(['jpeg', 4000, 4000]);
      }
      expect(await size((await page(huge, 0, '?width=500')).bytes)).toEqual(['jpeg', 480, 480]);
      // pdftoppm alone took 7.4 s at 150 dpi (18750 px a side)
      expect(Date.now() - started).toBeLessThan(20_000);
      const small = byTitle('Small Page');
      // 200 × 300 pt: 150 dpi without a width, 480 for 500, and 300 dpi (833 × 1250) for 10000
      expect(await size((await page(small, 0)).bytes)).toEqual(['jpeg', 416, 625]);
      expect(await size((await page(small, 0, '?width=500')).bytes)).toEqual(['jpeg', 480, 720]);
      expect(await size((await page(small, 0, '?width=10000')).bytes)).toEqual(['jpeg', 833, 1250]);
      expectError(await page(small, 1), 404, 'page not found');
    },
    120_000,
  );

  it('a full render queue answers 503 with Retry-After; the renders it took still finish', async () => {
    const id = byTitle('Bomb Comic');
    // six widths not rendered yet, all at once: one renders, one waits, four are turned away
    const widths = [240, 480, 800, 1280, 1440, 1920];
    const answers = await Promise.all(widths.map((w) => page(id, 1, `?width=${w}`)));
    const statuses = answers.map((a) => a.status);
    expect([...statuses].sort()).toEqual([200, 200, 503, 503, 503, 503]);
    for (const a of answers.filter((x) => x.status === 503)) {
      expectError(a, 503, 'too many pages are being rendered: try again in 2 seconds');
      expect(a.headers.get('retry-after')).toBe('2');
    }
    for (const [i, a] of answers.entries()) if (a.status === 200) expect(await size(a.bytes)).toEqual(['jpeg', widths[i], widths[i]]);
    // once they are done the same requests are served
    const again = await page(id, 1, `?width=${widths[statuses.indexOf(503)]}`);
    expect(again.status).toBe(200);
  }, 120_000);
});
