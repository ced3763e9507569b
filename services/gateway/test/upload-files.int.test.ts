// The upload's file rules on real files in a temporary folder (issue 43, upload): names and subfolders
// judged, a symlink out of the folder refused, " (n)" before the extension and never a replaced file,
// the stream's limit with nothing left, and the content checks of every format (RAR, 7z, MOBI and FB2
// here; the ZIP formats and PDF run through the API in test/e2e/upload.e2e.test.ts).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRar } from '../../catalog/test/fixtures/rar-writer';
import { checkUpload, UploadRefused } from '../src/files/upload-check';
import { BadTarget, checkName, checkSubfolder, place, receive, suffixed, targetDir, TooLarge } from '../src/files/upload-store';

const root = mkdtempSync(join(tmpdir(), 'bindery-upload-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const d = join(root, `d${n++}`);
  mkdirSync(d);
  return d;
};

describe('names, subfolders and where a file goes', () => {
  it('takes a plain name (NFC) and refuses what is not one, with its reason', () => {
    expect(checkName('Cafe\u0301.epub')).toBe('Café.epub');
    for (const [name, why] of [
      ['', 'the file name is empty'],
      ['..', 'the file name must not be "." or ".."'],
      ['a/b.epub', 'the file name must not contain "/" or "\\"'],
      ['.x.epub', 'the file name must not start with "." (hidden files are not catalogued)'],
      ['x\u009b.epub', 'the file name must not contain control characters'],
      [' x.epub', 'the file name must not start or end with spaces'],
    ] as const)
      expect(() => checkName(name), name).toThrow(new BadTarget(why));
    expect(checkSubfolder(undefined)).toEqual([]);
    expect(checkSubfolder('Comics/Série')).toEqual(['Comics', 'Série']);
    expect(() => checkSubfolder('C:/x')).toThrow('the subfolder must be a path inside the folder, not an absolute path');
    expect(() => checkSubfolder(Array.from({ length: 17 }, () => 'a').join('/'))).toThrow('the subfolder is more than 16 folders deep');
  });

  it('puts " (n)" before the extension, a double one kept whole', () => {
    expect(suffixed('Book.epub', 0)).toBe('Book.epub');
    expect(suffixed('Book.epub', 2)).toBe('Book (2).epub');
    expect(suffixed('Book.kepub.epub', 1)).toBe('Book (1).kepub.epub');
    expect(suffixed('Tale.FB2.ZIP', 1)).toBe('Tale (1).FB2.ZIP');
  });

  it('makes missing subfolders, refuses one that is a file or leads out of the folder', async () => {
    const d = fresh();
    const t = await targetDir(d, ['a', 'b']);
    expect(t.made).toEqual([join(d, 'a'), join(d, 'a', 'b')]);
    writeFileSync(join(d, 'file'), 'x');
    await expect(targetDir(d, ['file'])).rejects.toThrow('the subfolder "file" is a file, not a folder');
    const outside = fresh();
    symlinkSync(outside, join(d, 'out'));
    await expect(targetDir(d, ['out', 'deeper'])).rejects.toThrow('the subfolder leads outside the library folder');
    expect(readdirSync(outside)).toEqual([]);
    // a link that stays inside is followed
    symlinkSync(join(d, 'a'), join(d, 'inside'));
    expect((await targetDir(d, ['inside'])).dir).toBe(join(d, 'a'));
  });

  it('streams to a hidden name, hashes it, and places it under a free name without replacing one', async () => {
    const d = fresh();
    writeFileSync(join(d, 'Book.epub'), 'first');
    const got = await receive(Readable.from([Buffer.from('second')]), d, 100);
    expect(got.size).toBe(6);
    expect(got.sha256).toBe('16367aacb67a4a017c8da8ab95682ccb390863780f7114dda0a0e0c55644c7c4');
    expect(readdirSync(d).sort()).toEqual([expect.stringMatching(/^\.bindery-upload-[0-9a-f-]{36}\.part$/), 'Book.epub']);
    expect(await place(got.temp, d, 'Book.epub')).toBe('Book (1).epub');
    expect(readFileSync(join(d, 'Book.epub'), 'utf8')).toBe('first');
    expect(readFileSync(join(d, 'Book (1).epub'), 'utf8')).toBe('second');
    expect(readdirSync(d).sort()).toEqual(['Book (1).epub', 'Book.epub']);
  });

  it('stops at the limit and leaves nothing', async () => {
    const d = fresh();
    await expect(receive(Readable.from([Buffer.alloc(60), Buffer.alloc(60)]), d, 100)).rejects.toBeInstanceOf(TooLarge);
    expect(readdirSync(d)).toEqual([]);
  });
});

describe('content checks', () => {
  const check = async (name: string, bytes: Buffer, format: Parameters<typeof checkUpload>[2]) => {
    const f = join(fresh(), name);
    writeFileSync(f, bytes);
    return checkUpload(f, bytes.length, format).then(
      () => 'ok',
      (e) => (e instanceof UploadRefused ? `${e.kind}: ${e.message}` : Promise.reject(e)),
    );
  };
  const page = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(100, 1)]);

  it('CBR: a RAR with pages passes; no pages, a lying size and garbage are refused', async () => {
    expect(await check('ok.cbr', buildRar([{ name: '001.jpg', data: page }]), 'cbr')).toBe('ok');
    expect(await check('none.cbr', buildRar([{ name: 'notes.txt', data: 'x' }]), 'cbr')).toBe('damaged: not a valid CBR: no page images in the archive');
    expect(await check('bomb.cbr', buildRar([{ name: '001.jpg', data: Buffer.alloc(20_000), declaredSize: 3 * 1024 * 1024 }]), 'cbr')).toBe(
      'damaged: not a valid CBR: 001.jpg inflates more than 100 times its packed size (a zip bomb)',
    );
    expect(await check('zip.cbr', Buffer.from('PK\x03\x04rest', 'latin1'), 'cbr')).toBe('type: not a valid CBR: the file is a ZIP archive, not a RAR archive');
  });

  it('CB7: the start header must fit the file', async () => {
    const head = Buffer.alloc(32);
    Buffer.from('7z\xbc\xaf\x27\x1c\x00\x04', 'latin1').copy(head);
    head.writeBigUInt64LE(10n, 12);
    head.writeBigUInt64LE(5n, 20);
    expect(await check('ok.cb7', Buffer.concat([head, Buffer.alloc(15)]), 'cb7')).toBe('ok');
    expect(await check('cut.cb7', Buffer.concat([head, Buffer.alloc(14)]), 'cb7')).toBe('damaged: not a valid CB7: the file is truncated (its header lies past the end)');
  });

  it('MOBI: every record inside the file, in order', async () => {
    const pdb = (offsets: number[], size: number) => {
      const b = Buffer.alloc(size);
      b.write('BOOKMOBI', 60, 'latin1');
      b.writeUInt16BE(offsets.length, 76);
      offsets.forEach((o, i) => b.writeUInt32BE(o, 78 + i * 8));
      return b;
    };
    expect(await check('ok.mobi', pdb([100, 200], 300), 'mobi')).toBe('ok');
    expect(await check('cut.azw3', pdb([100, 400], 300), 'azw3')).toBe('damaged: not a valid AZW3: the file is truncated or corrupt (record 1 lies outside it)');
    expect(await check('order.mobi', pdb([200, 100], 300), 'mobi')).toBe('damaged: not a valid MOBI: the file is truncated or corrupt (record 1 lies outside it)');
    expect(await check('none.mobi', pdb([], 100), 'mobi')).toBe('damaged: not a valid MOBI: no records');
  });

  it('FB2: the root element opened and closed; a PDF named .fb2 is the wrong type', async () => {
    expect(await check('ok.fb2', Buffer.from('\ufeff<?xml version="1.0"?>\n<FictionBook><body/></FictionBook>\n'), 'fb2')).toBe('ok');
    expect(await check('x.fb2', Buffer.from('<?xml version="1.0"?><html></html>'), 'fb2')).toBe('type: not a valid FB2: no <FictionBook> element');
    expect(await check('pdf.fb2', Buffer.from('%PDF-1.4\n%%EOF'), 'fb2')).toBe('type: not a valid FB2: the file is a PDF, not an XML document');
  });
});
