// Pages of zip-based books (CBZ, image-only EPUB) for page streaming, read straight from the file
// on disk by the gateway (which already serves library files; a page of several MB has no business
// on the bus). Which entries are pages, in what order, is the catalog's page list.
import yauzl, { type Entry, type ZipFile } from 'yauzl';

/** no single page is read past this, whatever the archive claims */
export const MAX_PAGE_BYTES = 64 * 1024 * 1024;
/** what any PSE reader shows; everything else (WebP, AVIF) is converted to JPEG */
export const SHOWABLE = new Set(['image/jpeg', 'image/png', 'image/gif']);

export function imageType(b: Buffer): string | null {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (b.length >= 6 && (b.subarray(0, 6).toString('latin1') === 'GIF87a' || b.subarray(0, 6).toString('latin1') === 'GIF89a')) return 'image/gif';
  if (b.length >= 12 && b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  if (b.length >= 12 && b.subarray(4, 8).toString('latin1') === 'ftyp') return 'image/avif';
  return null;
}

export function listEntries(zip: ZipFile): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const out: Entry[] = [];
    zip.on('entry', (e: Entry) => {
      if (!e.fileName.endsWith('/')) out.push(e);
      zip.readEntry();
    });
    zip.once('end', () => resolve(out));
    zip.once('error', reject);
    zip.readEntry();
  });
}

/** An archive opened for reading entries one at a time; its errors surface on reads, not as events. */
export async function openZip(file: string): Promise<ZipFile> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false });
  zip.on('error', () => {});
  return zip;
}

/** One entry's bytes, at most `cap` (declared and read). */
export async function readEntry(zip: ZipFile, e: Entry, cap = MAX_PAGE_BYTES): Promise<Buffer> {
  if (e.isEncrypted() || e.uncompressedSize > cap) throw new Error('entry unreadable');
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const c of await zip.openReadStreamPromise(e)) {
    total += (c as Buffer).length;
    if (total > cap) throw new Error('entry too large');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks, total);
}

export interface Page {
  data: Buffer;
  type: string;
}

/** The entry `name` of a zip (CBZ, EPUB), or null when the archive has no such entry. Throws on a broken archive. */
export async function zipPage(file: string, name: string): Promise<Page | null> {
  const zip = await openZip(file);
  try {
    const entry = (await listEntries(zip)).find((e) => e.fileName === name);
    if (!entry) return null;
    const data = await readEntry(zip, entry);
    return { data, type: imageType(data) ?? 'application/octet-stream' };
  } finally {
    zip.close();
  }
}
