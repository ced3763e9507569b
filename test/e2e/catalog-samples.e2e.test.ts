// PDF, MOBI, AZW3, CBZ (manga) and EPUB samples made by real tools, in a library with two folders:
// metadata from each format's own header, and the SHA-256 and KOReader document id of every file
// equal to the reference values computed with KOReader's own code.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, instances, register, type Account, type Call } from './helpers';
import { byPath, copyOf, createLibrary, emptyDir, FIXTURE, items, manifest, SAMPLES, settled } from './catalog-helpers';
import { ROOT } from '../support/bindery';
import { writeFileSync } from 'node:fs';
import { buildMobi } from '../../services/catalog/test/fixtures/books';

const modes = await availableModes();
const get = instances(modes);

// ../shared sits next to the repository (resolved from its root): without it this file skips.
const GOLDEN = join(ROOT, '../shared/peers/samples/koreader-partial-md5.tsv');
const HAVE_SAMPLES = existsSync(join(SAMPLES, 'manifest.tsv')) && existsSync(GOLDEN);
if (!HAVE_SAMPLES) console.warn(`skipped: sample books need ${SAMPLES} and ${GOLDEN}, which are absent`);
const samples = (HAVE_SAMPLES ? readFileSync(join(SAMPLES, 'manifest.tsv'), 'utf8') : 'header')
  .trimEnd()
  .split('\n')
  .slice(1)
  .map((l) => {
    const [path, kind, format, title, authors] = l.split('\t');
    return { path: path!, kind: kind!, format: format!, title: title!, authors: authors ? authors.split(' & ') : [] };
  });
const golden = new Map(
  (HAVE_SAMPLES ? readFileSync(GOLDEN, 'utf8') : 'header')
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((l) => l.split('\t'))
    .filter((c) => c[0] === 'samples')
    .map((c) => [c[1]!, { sha256: c[3]!, partial_md5: c[4]! }]),
);
const good = samples.filter((s) => s.kind === 'book');
const extra = manifest(FIXTURE).find((r) => r.kind === 'book' && r.format === 'epub3')!;

describe.skipIf(!HAVE_SAMPLES).each(modes)('sample books in a two-folder library (%s)', (mode) => {
  let call: Call;
  let admin: Account;
  let list: Record<string, any>[];
  let lib: Record<string, any>;

  beforeAll(async () => {
    call = api(await get(mode));
    admin = await register(call);
    const a = copyOf(SAMPLES);
    const b = emptyDir();
    copyFileSync(join(FIXTURE, extra.path), join(b, 'second folder book.epub'));
    lib = await createLibrary(call, admin.token, { name: 'Samples', folders: [a, b], watch: false });
    expect(lib.folders).toEqual([a, b]);
    await settled(call, admin.token, lib.id);
    list = await items(call, admin.token, lib.id);
  });

  it('reads title and authors from PDF, MOBI, AZW3, CBZ and EPUB files', () => {
    expect(new Set(good.map((g) => g.format))).toEqual(new Set(['pdf', 'mobi', 'azw3', 'epub3', 'epub2', 'cbz']));
    for (const g of good) {
      const item = byPath(list, g.path);
      expect(item, g.path).toBeDefined();
      expect(item.title, g.path).toBe(g.title);
      expect(item.authors, g.path).toEqual(g.authors);
    }
  });

  it("stores each format's SHA-256 and KOReader partial MD5, equal to the reference ids", () => {
    for (const g of good) {
      const f = byPath(list, g.path).formats.find((x: { file_path: string }) => x.file_path === g.path);
      const ref = golden.get(g.path);
      expect(ref, g.path).toBeDefined();
      expect(f.sha256, g.path).toBe(ref!.sha256);
      expect(f.partial_md5, g.path).toBe(ref!.partial_md5);
    }
  });

  it('finds books in every folder and serves them from the right one', async () => {
    const item = byPath(list, 'second folder book.epub');
    expect(item.sha256).toBe(extra.sha256);
    const r = await call('GET', item.file_url, { token: admin.token });
    expect(r.status).toBe(200);
    expect(r.bytes.length).toBe(extra.bytes);
    const pdf = byPath(list, good.find((g) => g.format === 'pdf')!.path);
    const p = await call('GET', pdf.file_url, { token: admin.token, headers: { range: 'bytes=0-4' } });
    expect(p.status).toBe(206);
    expect(p.text).toBe('%PDF-');
    expect(p.headers.get('content-type')).toBe('application/pdf');
    const mobi = byPath(list, good.find((g) => g.format === 'mobi')!.path);
    expect((await call('HEAD', mobi.file_url, { token: admin.token })).headers.get('content-type')).toBe('application/x-mobipocket-ebook');
  });

  it('lists every unreadable sample as an issue', async () => {
    const r = await call('GET', `/api/scanner/issues?library_id=${lib.id}`, { token: admin.token });
    expect(r.json.data.map((i: { file_path: string }) => i.file_path).sort()).toEqual(
      samples
        .filter((s) => s.kind === 'corrupt')
        .map((s) => s.path)
        .sort(),
    );
  });

  it("makes one item of several formats of one book, and keeps other authors' same-titled books apart", async () => {
    const dir = emptyDir();
    const title = extra.title.trim();
    copyFileSync(join(FIXTURE, extra.path), join(dir, 'book.epub'));
    writeFileSync(join(dir, 'book.mobi'), buildMobi({ fullName: title, exth: [[100, extra.authors[0]!]] }));
    writeFileSync(join(dir, 'other.mobi'), buildMobi({ fullName: title, exth: [[100, 'Somebody Else Entirely']] }));
    mkdirSync(join(dir, 'elsewhere'));
    writeFileSync(join(dir, 'elsewhere', 'book.mobi'), buildMobi({ fullName: title, exth: [[100, extra.authors[0]!]] }));
    const l = await createLibrary(call, admin.token, { name: 'Formats', folders: [dir], watch: false });
    await settled(call, admin.token, l.id);
    const got = await items(call, admin.token, l.id);
    expect(got).toHaveLength(3);
    const both = byPath(got, 'book.epub');
    expect(both.formats.map((f: { format: string; file_path: string }) => [f.format, f.file_path]).sort()).toEqual([
      ['epub', 'book.epub'],
      ['mobi', 'book.mobi'],
    ]);
    expect(byPath(got, 'other.mobi').id).not.toBe(both.id);
    expect(byPath(got, 'elsewhere/book.mobi').id).not.toBe(both.id);
  });
});
