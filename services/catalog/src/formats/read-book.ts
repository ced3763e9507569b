// What a scan reads from one book file: its hashes, then (unless its bytes are already catalogued)
// its metadata and page list. Runs on the book thread (book-thread.ts) or, where none runs, on the
// caller's; the answer is plain data either way, an unreadable file included.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { BookError } from './book-error';
import { extract } from './extract';
import { hashBytes, hashFile, type FileHashes } from './hash-file';
import type { BookFormat, Extracted } from './types';

/** books up to this size are read whole once: the same bytes are hashed and then unzipped */
const SMALL_BOOK = 4 * 1024 * 1024;

export interface BookToRead {
  abs: string;
  format: BookFormat;
  size: number;
  /** the SHA-256 the caller already has this file's metadata for: matching bytes are only hashed */
  knownSha: string | null;
  /**
   * another file whose SHA-256 the read also gives (`sideSha`) when it reads the book's metadata:
   * a calibre book's cover.jpg, the cover's key (scanner/calibre-overlay.ts)
   */
  sideFile?: string;
}

export type BookRead =
  /** the bytes could not be read (no hashes) */
  | { ok: false; error: string }
  /**
   * hashed; `extracted` (its cover bytes left out: covers are made after the scan) or
   * `extractError` unless the bytes had `knownSha`; `sideSha` with `extracted` when a side file was
   * asked for (null: it could not be read)
   */
  | { ok: true; hashes: FileHashes; extracted?: Extracted; hasCover?: boolean; extractError?: string; sideSha?: string | null };

export async function readBook(b: BookToRead): Promise<BookRead> {
  let bytes: Buffer | undefined;
  let hashes: FileHashes;
  try {
    if (b.size <= SMALL_BOOK && (b.format === 'epub' || b.format === 'cbz')) {
      bytes = await readFile(b.abs);
      hashes = hashBytes(bytes);
    } else hashes = await hashFile(b.abs);
  } catch (e) {
    return { ok: false, error: `file could not be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
  }
  if (hashes.sha256 === b.knownSha) return { ok: true, hashes };
  try {
    // locator indexes are built after the scan, with the covers (scanner/indexes.ts)
    const x = await extract(b.abs, b.format, { renderPdfCover: false, bytes, locator: false });
    const sideSha = b.sideFile ? await sha256Of(b.sideFile) : undefined;
    return { ok: true, hashes, extracted: { ...x, cover: null }, hasCover: Boolean(x.cover || x.coverLater), ...(sideSha !== undefined ? { sideSha } : {}) };
  } catch (e) {
    return { ok: true, hashes, extractError: e instanceof BookError ? e.message : `file could not be read: ${(e as Error).message}` };
  }
}

/** The SHA-256 of a whole (small) file, or null when it cannot be read. */
async function sha256Of(path: string): Promise<string | null> {
  try {
    return createHash('sha256')
      .update(await readFile(path))
      .digest('hex');
  } catch {
    return null;
  }
}
