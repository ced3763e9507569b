// Comic pages for OPDS-PSE streaming, read straight from the CBZ on disk by the gateway (which
// already serves library files; a page of several MB has no business on the bus). Page order
// must be the catalog's, whose page_count the feeds announce: images outside hidden folders and
// __MACOSX, in natural order (services/catalog/src/formats/comic.ts, images.ts, text.ts).
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import type Sharp from 'sharp';

const PAGE_EXTENSIONS = new Set(['jpg', 'jpeg', 'png', 'gif', 'webp', 'avif']);
/** no single page is read past this, whatever the archive claims */
export const MAX_PAGE_BYTES = 64 * 1024 * 1024;
/** what any PSE reader shows; everything else (WebP, AVIF) is converted to JPEG */
const SHOWABLE = new Set(['image/jpeg', 'image/png', 'image/gif']);

export function isPageName(name: string): boolean {
  const parts = name.split(/[/\\]/u);
  if (parts.some((p) => p.startsWith('.') || p === '__MACOSX')) return false;
  const base = parts[parts.length - 1] ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 && PAGE_EXTENSIONS.has(base.slice(dot + 1).toLowerCase());
}

/** Digit runs by value, the rest case-insensitively; ties by fewer leading zeros, then code units. */
export function naturalCompare(a: string, b: string): number {
  const ta = a.toLowerCase().match(/\d+|\D+/gu) ?? [];
  const tb = b.toLowerCase().match(/\d+|\D+/gu) ?? [];
  let padding = 0;
  for (let i = 0; i < Math.min(ta.length, tb.length); i++) {
    const x = ta[i] as string;
    const y = tb[i] as string;
    if (x === y) continue;
    if (/^\d/u.test(x) && /^\d/u.test(y)) {
      const nx = x.replace(/^0+/u, '');
      const ny = y.replace(/^0+/u, '');
      if (nx.length !== ny.length) return nx.length - ny.length;
      if (nx !== ny) return nx < ny ? -1 : 1;
      padding ||= x.length - y.length;
      continue;
    }
    return x < y ? -1 : 1;
  }
  if (ta.length !== tb.length) return ta.length - tb.length;
  if (padding) return padding;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function imageType(b: Buffer): string | null {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (b.length >= 6 && (b.subarray(0, 6).toString('latin1') === 'GIF87a' || b.subarray(0, 6).toString('latin1') === 'GIF89a')) return 'image/gif';
  if (b.length >= 12 && b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  if (b.length >= 12 && b.subarray(4, 8).toString('latin1') === 'ftyp') return 'image/avif';
  return null;
}

function listEntries(zip: ZipFile): Promise<Entry[]> {
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

async function readEntry(zip: ZipFile, e: Entry): Promise<Buffer> {
  if (e.isEncrypted() || e.uncompressedSize > MAX_PAGE_BYTES) throw new Error('page unreadable');
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const c of await zip.openReadStreamPromise(e)) {
    total += (c as Buffer).length;
    if (total > MAX_PAGE_BYTES) throw new Error('page too large');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks, total);
}

export interface Page {
  data: Buffer;
  type: string;
}

/** One page (0-based) of a CBZ, or null when there is no such page. Throws on a broken archive. */
export async function cbzPage(file: string, index: number): Promise<Page | null> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false });
  zip.on('error', () => {});
  try {
    const pages = (await listEntries(zip)).filter((e) => isPageName(e.fileName)).sort((a, b) => naturalCompare(a.fileName, b.fileName));
    const entry = pages[index];
    if (!entry) return null;
    const data = await readEntry(zip, entry);
    return { data, type: imageType(data) ?? 'application/octet-stream' };
  } finally {
    zip.close();
  }
}

/** sharp is loaded on first use, not at start (it is the largest module a start would load) */
let sharpModule: Promise<typeof Sharp> | null = null;
const loadSharp = () => (sharpModule ??= import('sharp').then((m) => m.default));

/**
 * A page as the reader can show it: unchanged when it is JPEG, PNG or GIF and no narrower than
 * asked; otherwise converted to JPEG, scaled down to `maxWidth` (never up).
 */
export async function showable(page: Page, maxWidth: number | null): Promise<Page> {
  if (SHOWABLE.has(page.type) && maxWidth === null) return page;
  const sharp = await loadSharp();
  const img = sharp(page.data, { failOn: 'none', limitInputPixels: 268_402_689 });
  if (SHOWABLE.has(page.type)) {
    const { width } = await img.metadata();
    if (width !== undefined && width <= maxWidth!) return page;
  }
  const out = img.rotate();
  if (maxWidth !== null) out.resize({ width: maxWidth, withoutEnlargement: true });
  return { data: await out.jpeg({ quality: 85, mozjpeg: false }).toBuffer(), type: 'image/jpeg' };
}
