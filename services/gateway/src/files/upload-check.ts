// What an uploaded file must be before it joins a library folder: the format its name says, by its
// bytes; whole (not cut short); and no zip bomb. The catalog's scanner reads the book afterwards,
// as it reads any file; this only keeps out what would be a half-written or hostile file on disk.
// ZIP-based formats (EPUB, KEPUB, CBZ, FB2 in a ZIP) are read to their last byte: every entry
// inflated with its size and CRC-32 checked. CBR lists its headers, CB7 checks its start header,
// MOBI/AZW/PRC its record table, PDF its first and last bytes, FB2 its root element's two ends.
import { open } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import type { formatOf } from '@bindery/catalog/format-of';
import { MAX_ARCHIVE_ENTRIES, MAX_FB2_BYTES, MAX_PAGE_RATIO, PAGE_RATIO_FROM_BYTES } from '@bindery/catalog/limits';

/** Why a file is refused: `type` (not what its name says: 415) or `damaged` (truncated, corrupt, a bomb: 422). */
export class UploadRefused extends Error {
  constructor(
    readonly kind: 'type' | 'damaged',
    message: string,
  ) {
    super(message);
  }
}

/** A whole archive may inflate to at most this many times its own size (a book of text compresses ~4x). */
const MAX_ARCHIVE_RATIO = MAX_PAGE_RATIO;
export type BookFormat = NonNullable<ReturnType<typeof formatOf>>;

const LABEL: Record<BookFormat, string> = { epub: 'EPUB', pdf: 'PDF', cbz: 'CBZ', cbr: 'CBR', cb7: 'CB7', mobi: 'MOBI', azw3: 'AZW3', fb2: 'FB2' };
const PAGE = /\.(jpe?g|png|gif|webp|avif|jxl|bmp)$/i;

/** What the first bytes say a file is, for the message when it is not what its name says. */
function sniff(head: Buffer): string | null {
  const s = head.toString('latin1');
  if (s.startsWith('PK\x03\x04') || s.startsWith('PK\x05\x06')) return 'a ZIP archive';
  if (s.includes('%PDF-')) return 'a PDF';
  if (s.startsWith('Rar!\x1a\x07')) return 'a RAR archive';
  if (s.startsWith('7z\xbc\xaf\x27\x1c')) return 'a 7z archive';
  if (s.slice(60, 68) === 'BOOKMOBI' || s.slice(60, 68) === 'TEXtREAd') return 'a MOBI book';
  if (/^(\xef\xbb\xbf)?\s*<(\?xml|FictionBook)/.test(s)) return 'an XML document';
  return null;
}

async function ends(path: string, size: number, n: number): Promise<{ head: Buffer; tail: Buffer }> {
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(Math.min(n, size));
    await fh.read(head, 0, head.length, 0);
    const tail = Buffer.alloc(Math.min(n, size));
    await fh.read(tail, 0, tail.length, size - tail.length);
    return { head, tail };
  } finally {
    await fh.close();
  }
}

/**
 * Checks the stored file `path` (`size` bytes) against the format its name says (`zipped`: an FB2
 * named .fb2.zip). Throws UploadRefused with the message a person reads.
 */
export async function checkUpload(path: string, size: number, format: BookFormat, zipped = false): Promise<void> {
  const label = LABEL[format];
  if (size === 0) throw new UploadRefused('damaged', `not a valid ${label}: the file is empty`);
  const { head, tail } = await ends(path, size, 4096);
  const is = sniff(head);
  const wrongType = (wanted: string) => new UploadRefused('type', `not a valid ${label}: the file is ${is ? `${is}, not ${wanted}` : `not ${wanted}`}`);
  switch (format) {
    case 'epub':
    case 'cbz':
      if (is !== 'a ZIP archive') throw wrongType('a ZIP archive');
      return checkZip(path, size, format, label);
    case 'fb2':
      if (zipped) {
        if (is !== 'a ZIP archive') throw wrongType('a ZIP archive');
        return checkZip(path, size, 'fb2', label);
      }
      if (is !== 'an XML document') throw wrongType('an XML document');
      if (size > MAX_FB2_BYTES) throw new UploadRefused('damaged', `not a valid FB2: larger than ${MAX_FB2_BYTES / 2 ** 20} MiB (an FB2 is read whole)`);
      if (!head.toString('utf8').includes('<FictionBook')) throw new UploadRefused('type', 'not a valid FB2: no <FictionBook> element');
      if (!/<\/FictionBook>\s*$/.test(tail.toString('latin1'))) throw new UploadRefused('damaged', 'not a valid FB2: the file is truncated (it does not end with </FictionBook>)');
      return;
    case 'pdf':
      if (is !== 'a PDF') throw wrongType('a PDF');
      if (!tail.subarray(-2048).toString('latin1').includes('%%EOF')) throw new UploadRefused('damaged', 'not a valid PDF: the file is truncated (no %%EOF at its end)');
      return;
    case 'cbr':
      if (is !== 'a RAR archive') throw wrongType('a RAR archive');
      return checkRar(path);
    case 'cb7':
      if (is !== 'a 7z archive') throw wrongType('a 7z archive');
      return check7z(head, size);
    case 'mobi':
    case 'azw3':
      if (is !== 'a MOBI book') throw wrongType('a MOBI book');
      return checkPalmDb(path, head, size, label);
  }
}

// ---------------------------------------------------------------- ZIP

async function checkZip(path: string, size: number, format: 'epub' | 'cbz' | 'fb2', label: string): Promise<void> {
  const damaged = (why: string) => new UploadRefused('damaged', `not a valid ${label}: ${why}`);
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false });
  } catch (e) {
    throw damaged(`the archive is truncated or corrupt (${firstLine(e)})`);
  }
  zip.on('error', () => {});
  try {
    if (zip.entryCount > MAX_ARCHIVE_ENTRIES) throw damaged(`too many entries in the archive (${zip.entryCount}, at most ${MAX_ARCHIVE_ENTRIES})`);
    const names: string[] = [];
    let declared = 0;
    for (;;) {
      const e = await nextEntry(zip).catch((err) => {
        throw damaged(`the archive is truncated or corrupt (${firstLine(err)})`);
      });
      if (!e) break;
      if (e.fileName.endsWith('/')) continue;
      names.push(e.fileName);
      if (e.isEncrypted()) throw damaged(`${e.fileName} is encrypted`);
      if (e.compressionMethod !== 0 && e.compressionMethod !== 8) throw damaged(`${e.fileName} uses an unsupported compression method`);
      declared += e.uncompressedSize;
      if (e.uncompressedSize >= PAGE_RATIO_FROM_BYTES && e.uncompressedSize / Math.max(1, e.compressedSize) > MAX_PAGE_RATIO) {
        throw damaged(`${e.fileName} inflates more than ${MAX_PAGE_RATIO} times its packed size (a zip bomb)`);
      }
      if (declared > Math.max(PAGE_RATIO_FROM_BYTES, size * MAX_ARCHIVE_RATIO)) throw damaged(`the archive inflates more than ${MAX_ARCHIVE_RATIO} times its size (a zip bomb)`);
      await readWhole(zip, e).catch((err) => {
        throw err instanceof UploadRefused ? err : damaged(`${e.fileName} is truncated or corrupt (${firstLine(err)})`);
      });
    }
    const lower = names.map((n) => n.toLowerCase());
    if (format === 'epub' && !lower.includes('meta-inf/container.xml')) throw damaged('no META-INF/container.xml in the archive');
    if (format === 'cbz' && !names.some((n) => PAGE.test(n))) throw damaged('no page images in the archive');
    if (format === 'fb2' && !lower.some((n) => n.endsWith('.fb2'))) throw damaged('no .fb2 document in the archive');
  } finally {
    zip.close();
  }
}

function nextEntry(zip: ZipFile): Promise<Entry | null> {
  return new Promise((resolve, reject) => {
    const done = () => {
      zip.off('entry', onEntry).off('end', onEnd).off('error', onError);
    };
    const onEntry = (e: Entry) => {
      done();
      resolve(e);
    };
    const onEnd = () => {
      done();
      resolve(null);
    };
    const onError = (err: unknown) => {
      done();
      reject(err);
    };
    zip.on('entry', onEntry).on('end', onEnd).on('error', onError);
    zip.readEntry();
  });
}

/** Inflates an entry to its end, its length held to the declared size (yauzl) and its CRC-32 compared. */
async function readWhole(zip: ZipFile, e: Entry): Promise<void> {
  const stream = await zip.openReadStreamPromise(e);
  let crc = 0;
  for await (const chunk of stream) crc = crc32(chunk as Buffer, crc);
  if (crc >>> 0 !== e.crc32 >>> 0) throw new Error('CRC-32 mismatch');
}

// ---------------------------------------------------------------- RAR, 7z, MOBI

async function checkRar(path: string): Promise<void> {
  const { createExtractorFromFile } = await import('node-unrar-js');
  let headers: { name: string; packSize: number; unpSize: number; flags: { directory: boolean } }[];
  try {
    const rar = await createExtractorFromFile({ filepath: path });
    headers = [...rar.getFileList().fileHeaders];
  } catch (e) {
    throw new UploadRefused('damaged', `not a valid CBR: the archive is truncated or corrupt (${firstLine(e)})`);
  }
  const files = headers.filter((h) => !h.flags.directory);
  if (files.length > MAX_ARCHIVE_ENTRIES) throw new UploadRefused('damaged', `not a valid CBR: too many entries in the archive (${files.length}, at most ${MAX_ARCHIVE_ENTRIES})`);
  for (const h of files) {
    if (h.unpSize >= PAGE_RATIO_FROM_BYTES && h.unpSize / Math.max(1, h.packSize) > MAX_PAGE_RATIO) {
      throw new UploadRefused('damaged', `not a valid CBR: ${h.name} inflates more than ${MAX_PAGE_RATIO} times its packed size (a zip bomb)`);
    }
  }
  if (!files.some((h) => PAGE.test(h.name))) throw new UploadRefused('damaged', 'not a valid CBR: no page images in the archive');
}

/** A 7z's start header says where its last header is: past the end of the file, it was cut short. */
function check7z(head: Buffer, size: number): void {
  if (head.length < 32) throw new UploadRefused('damaged', 'not a valid CB7: the file is truncated');
  const end = 32n + head.readBigUInt64LE(12) + head.readBigUInt64LE(20);
  if (end > BigInt(size)) throw new UploadRefused('damaged', 'not a valid CB7: the file is truncated (its header lies past the end)');
}

/** A Palm database's record table: every record starts inside the file, in order. */
async function checkPalmDb(path: string, head: Buffer, size: number, label: string): Promise<void> {
  const count = head.length >= 78 ? head.readUInt16BE(76) : 0;
  if (count === 0) throw new UploadRefused('damaged', `not a valid ${label}: no records`);
  const table = Buffer.alloc(count * 8);
  const fh = await open(path, 'r');
  try {
    const { bytesRead } = await fh.read(table, 0, table.length, 78);
    if (bytesRead < table.length) throw new UploadRefused('damaged', `not a valid ${label}: the file is truncated`);
  } finally {
    await fh.close();
  }
  let last = 78 + table.length - 1;
  for (let i = 0; i < count; i++) {
    const at = table.readUInt32BE(i * 8);
    if (at < last || at >= size) throw new UploadRefused('damaged', `not a valid ${label}: the file is truncated or corrupt (record ${i} lies outside it)`);
    last = at;
  }
}

const firstLine = (e: unknown) => ((e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '').slice(0, 120);
