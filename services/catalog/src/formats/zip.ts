// Bounded ZIP reading for EPUB, CBZ and zipped FB2: the central directory is listed once (capped
// entry count) and only the few entries we need are inflated, each with a byte cap that is
// enforced on the inflated stream itself, not on the size the archive declares.
import { inflateRawSync } from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { ArchiveLimitError, BookError, toBookError } from './book-error';
import { MAX_ARCHIVE_ENTRIES } from './limits';

export interface ZipArchive {
  /** File entries (directories left out), in central-directory order. */
  entries: Entry[];
  /** Exact name first, then Unicode-normalised, then case-insensitive. */
  find(name: string): Entry | null;
  read(entry: Entry, cap: number): Promise<Buffer>;
  close(): void;
}

/** `bytes`: the whole file, when the caller has already read it (small books during a scan). */
export async function openZip(path: string, label: string, bytes?: Buffer): Promise<ZipArchive> {
  let zip: ZipFile;
  try {
    const opts = { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false };
    zip = bytes ? await yauzl.fromBufferPromise(bytes, opts) : await yauzl.openPromise(path, opts);
  } catch (e) {
    throw zipError(e, label);
  }
  // A late error (say, closing the descriptor) must not become an unhandled 'error' event.
  zip.on('error', () => {});
  try {
    if (zip.entryCount > MAX_ARCHIVE_ENTRIES) throw new BookError(`not a valid ${label}: too many entries in archive (${zip.entryCount})`);
    const entries = await listEntries(zip, label);
    return archive(zip, entries, label, bytes);
  } catch (e) {
    zip.close();
    throw e;
  }
}

function listEntries(zip: ZipFile, label: string): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = [];
    const done = (err: unknown): void => {
      zip.removeListener('entry', onEntry);
      zip.removeListener('end', onEnd);
      zip.removeListener('error', onError);
      if (err) reject(zipError(err, label));
      else resolve(entries);
    };
    const onEntry = (entry: Entry): void => {
      if (!entry.fileName.endsWith('/')) entries.push(entry);
      zip.readEntry();
    };
    const onEnd = (): void => done(null);
    const onError = (err: unknown): void => done(err ?? new Error('unreadable archive'));
    zip.on('entry', onEntry);
    zip.once('end', onEnd);
    zip.once('error', onError);
    zip.readEntry();
  });
}

function archive(zip: ZipFile, entries: Entry[], label: string, bytes?: Buffer): ZipArchive {
  const exact = new Map<string, Entry>();
  const loose = new Map<string, Entry>();
  for (const e of entries) {
    if (!exact.has(e.fileName)) exact.set(e.fileName, e);
    const k = looseKey(e.fileName);
    if (!loose.has(k)) loose.set(k, e);
  }
  return {
    entries,
    find: (name) => exact.get(name) ?? exact.get(name.normalize('NFC')) ?? exact.get(name.normalize('NFD')) ?? loose.get(looseKey(name)) ?? null,
    read: (entry, cap) => (bytes && entry.uncompressedSize <= SMALL_ENTRY ? readSmallEntry(bytes, entry, cap, label) : readEntry(zip, entry, cap, label)),
    close: () => zip.close(),
  };
}

function looseKey(name: string): string {
  return name.normalize('NFC').toLowerCase();
}

/** The errors of one entry, after the checks every read makes first (encryption, method, the cap). */
function checked(entry: Entry, cap: number, label: string) {
  const fail = (why: string, cause?: unknown): BookError => new BookError(`not a valid ${label}: ${entry.fileName} ${why}`, { cause });
  const tooBig = (why: string, cause?: unknown): BookError => new ArchiveLimitError(`not a valid ${label}: ${entry.fileName} ${why}`, { cause });
  if (entry.isEncrypted()) throw fail('is encrypted');
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) throw fail('uses an unsupported compression method');
  if (entry.uncompressedSize > cap) throw tooBig(`is larger than ${Math.round(cap / 2 ** 20)} MiB`);
  return { fail, tooBig };
}

/** Entries at most this large, of an archive held in memory, are inflated in one call, not streamed. */
const SMALL_ENTRY = 1024 * 1024;

/**
 * A small entry of an archive in memory (the OPF, container.xml, ComicInfo, a cover): its bytes
 * inflated in one call, with the checks the stream makes (method, encryption, the cap, the declared
 * size both ways). A stream per entry cost a scan more than the inflating itself.
 */
async function readSmallEntry(buf: Buffer, entry: Entry, cap: number, label: string): Promise<Buffer> {
  const { fail, tooBig } = checked(entry, cap, label);
  const at = entry.relativeOffsetOfLocalHeader;
  if (at + 30 > buf.length || buf.readUInt32LE(at) !== 0x04034b50) throw fail('is corrupt (invalid local file header signature)');
  const start = at + 30 + buf.readUInt16LE(at + 26) + buf.readUInt16LE(at + 28);
  const end = start + entry.compressedSize;
  if (end > buf.length) throw fail('is corrupt (file data overflows file bounds)');
  const packed = buf.subarray(start, end);
  let out: Buffer;
  if (entry.compressionMethod === 0) out = Buffer.from(packed);
  else {
    try {
      out = inflateRawSync(packed, { maxOutputLength: Math.max(1, entry.uncompressedSize + 1) });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooBig('inflates past its declared size', e);
      throw fail(`is corrupt (${(e instanceof Error ? e.message : String(e)).split('\n')[0]?.slice(0, 80)})`, e);
    }
  }
  if (out.length > entry.uncompressedSize) throw tooBig('inflates past its declared size');
  if (out.length < entry.uncompressedSize) throw fail(`is corrupt (not enough bytes in the stream. expected ${entry.uncompressedSize}. got only ${out.length})`);
  return out;
}

async function readEntry(zip: ZipFile, entry: Entry, cap: number, label: string): Promise<Buffer> {
  const { fail, tooBig } = checked(entry, cap, label);
  // Never more than both the cap and the declared size; yauzl checks the declared size as well.
  const limit = Math.min(cap, entry.uncompressedSize);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    const stream = await zip.openReadStreamPromise(entry);
    for await (const chunk of stream) {
      total += (chunk as Buffer).length;
      if (total > limit) {
        stream.destroy();
        throw tooBig('inflates past its declared size');
      }
      chunks.push(chunk as Buffer);
    }
  } catch (e) {
    if (e instanceof BookError) throw e;
    const msg = e instanceof Error ? e.message : String(e);
    if (/too many bytes in the stream/iu.test(msg)) throw tooBig('inflates past its declared size', e);
    throw fail(`is corrupt (${msg.split('\n')[0]?.slice(0, 80)})`, e);
  }
  return Buffer.concat(chunks, total);
}

function zipError(e: unknown, label: string): BookError {
  if (e instanceof BookError) return e;
  const msg = e instanceof Error ? e.message : String(e);
  if (/end of central directory record signature not found/iu.test(msg)) return new BookError(`not a valid ${label}: not a zip archive or truncated`, { cause: e });
  if (typeof (e as { code?: unknown } | null)?.code === 'string') return toBookError(e, label);
  return new BookError(`not a valid ${label}: broken zip archive (${msg.split('\n')[0]?.slice(0, 100)})`, { cause: e });
}
