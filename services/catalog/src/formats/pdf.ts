// PDF: metadata and page count through pdf.js (via unpdf), which needs the file's bytes in memory.
// So what is read is bounded: a PDF over MAX_PDF_PARSE_BYTES is not parsed at all (its names give
// its title and series; its cover is still rendered by pdftoppm, which reads the file itself), and
// large ones are parsed one at a time.
import { stat } from 'node:fs/promises';
import pLimit from 'p-limit';
import { getResolvedPDFJS } from 'unpdf';
import { BookError } from './book-error';
import { readHead, readWholeFile } from './file-bytes';
import { MAX_PDF_PARSE_BYTES, PDF_ONE_AT_A_TIME_BYTES, PDF_TIMEOUT_MS } from './limits';
import { findPdftoppm, renderFirstPage } from './pdf-cover';
import { pdfMetadata, type XmpLookup } from './pdf-metadata';
import { withTimeout } from './timeout';
import { emptyMetadata, type BookMetadata, type Extracted } from './types';

const oneLargeAtATime = pLimit(1);

export async function extractPdf(path: string, render = true): Promise<Extracted> {
  // The header may follow some junk, but only within the first KiB; checked before reading it all.
  const head = await readHead(path, 1024, 'PDF');
  if (head.length === 0) throw new BookError('not a valid PDF: empty file');
  if (!Buffer.from(head).includes('%PDF-')) throw new BookError('not a valid PDF: missing %PDF header');
  const { size } = await stat(path);
  const parse = () => readWholeFile(path, MAX_PDF_PARSE_BYTES, 'PDF').then(readMetadata);
  const metadata = size > MAX_PDF_PARSE_BYTES ? emptyMetadata() : size > PDF_ONE_AT_A_TIME_BYTES ? await oneLargeAtATime(parse) : await parse();
  if (!render) return { metadata, cover: null, coverLater: (await findPdftoppm()) !== null };
  return { metadata, cover: await renderFirstPage(path) };
}

async function readMetadata(bytes: Uint8Array): Promise<BookMetadata> {
  const pdfjs = await getResolvedPDFJS();
  const task = pdfjs.getDocument({
    data: bytes,
    verbosity: 0,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    enableXfa: false,
    stopAtErrors: false,
  });
  try {
    return await withTimeout(
      (async () => {
        const doc = await task.promise;
        const { info, metadata } = await doc.getMetadata();
        return pdfMetadata((info ?? {}) as Record<string, unknown>, (metadata ?? null) as XmpLookup | null, doc.numPages);
      })(),
      PDF_TIMEOUT_MS,
      'not a valid PDF: timed out reading it',
    );
  } catch (e) {
    if (e instanceof BookError) throw e;
    const name = (e as { name?: unknown } | null)?.name;
    if (name === 'PasswordException') throw new BookError('cannot read PDF: password protected', { cause: e });
    const message = e instanceof Error ? e.message : String(e);
    throw new BookError(`not a valid PDF: ${message.split('\n')[0]?.slice(0, 100) || 'unreadable'}`, { cause: e });
  } finally {
    // Destroying the loading task also destroys the document and frees pdf.js's memory.
    await task.destroy().catch(() => {});
  }
}
