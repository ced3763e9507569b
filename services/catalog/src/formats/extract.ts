// extract(): one entry point over the format readers. Comic archives are routed by their magic
// bytes, since a .cbr that is really a zip (or the reverse) is common in the wild.
import { stat } from 'node:fs/promises';
import { BookError, toBookError } from './book-error';
import { extractCb7, is7z } from './cb7';
import { extractCbr, isRar } from './cbr';
import { extractCbz } from './cbz';
import { extractEpub } from './epub';
import { extractFb2 } from './fb2';
import { readHead } from './file-bytes';
import { extractMobi } from './mobi';
import { extractPdf } from './pdf';
import type { BookFormat, Extracted } from './types';

const LABELS: Record<BookFormat, string> = {
  epub: 'EPUB',
  pdf: 'PDF',
  cbz: 'CBZ',
  cbr: 'CBR',
  cb7: 'CB7',
  mobi: 'MOBI',
  azw3: 'AZW3',
  fb2: 'FB2',
};

/** Metadata and cover bytes of one book. Anything wrong with the file is a BookError. */
export interface ExtractOptions {
  /** render a PDF's first page as its cover (a child process); off during scans, covers come later */
  renderPdfCover?: boolean;
  /** the file's bytes, already read by the caller (zip-based formats then skip reading it again) */
  bytes?: Buffer;
  /** EPUB: build the locator index too (default); scans leave it to the background pass (scanner/indexes.ts) */
  locator?: boolean;
}

export async function extract(path: string, format: BookFormat, opts: ExtractOptions = {}): Promise<Extracted> {
  const label = LABELS[format] ?? 'book';
  try {
    // Opening a FIFO would block for ever, and a device could be read without end.
    if (!(await stat(path)).isFile()) throw new BookError(`cannot read ${label}: not a regular file`);
    switch (format) {
      case 'epub':
        return await extractEpub(path, opts.bytes, opts.locator ?? true);
      case 'pdf':
        return await extractPdf(path, opts.renderPdfCover ?? true);
      case 'cbz':
      case 'cbr':
      case 'cb7':
        return await extractComic(path, format, opts.bytes);
      case 'mobi':
        return await extractMobi(path, 'MOBI');
      case 'azw3':
        return await extractMobi(path, 'AZW3');
      case 'fb2':
        return await extractFb2(path);
      default:
        throw new BookError(`unsupported format: ${String(format)}`);
    }
  } catch (e) {
    throw toBookError(e, label);
  }
}

async function extractComic(path: string, format: 'cbz' | 'cbr' | 'cb7', bytes?: Buffer): Promise<Extracted> {
  const head = await readHead(path, 8, LABELS[format]);
  if (isRar(head)) return extractCbr(path);
  if (is7z(head)) return extractCb7(path);
  if (Buffer.from(head.subarray(0, 2)).toString('latin1') === 'PK') return extractCbz(path, bytes);
  if (format === 'cbr') return extractCbr(path);
  if (format === 'cb7') return extractCb7(path);
  return extractCbz(path, bytes);
}
