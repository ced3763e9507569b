// A PDF's cover is its first page, rendered by poppler's pdftoppm when the host has it (pdf.js
// alone cannot rasterise in Node without a canvas library). No pdftoppm, no cover.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { findExecutable } from '@bindery/platform';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sniffImage } from './images';
import { MAX_COVER_BYTES, PDF_RENDER_TIMEOUT_MS } from './limits';

export const findPdftoppm = () => findExecutable('pdftoppm');

/** Page 1 as a JPEG at most 600 px on its longer side, or null (no pdftoppm, a failure, a timeout). */
export async function renderFirstPage(pdfPath: string): Promise<Buffer | null> {
  const exe = await findPdftoppm();
  if (!exe) return null;
  const dir = await mkdtemp(join(tmpdir(), 'bindery-pdf-'));
  try {
    const prefix = join(dir, 'cover');
    // An absolute path can never be taken for an option.
    const args = ['-jpeg', '-f', '1', '-l', '1', '-scale-to', '600', '-singlefile', resolve(pdfPath), prefix];
    await new Promise<void>((done, fail) => {
      execFile(exe, args, { timeout: PDF_RENDER_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 1024 * 1024 }, (err) => (err ? fail(err) : done()));
    });
    const out = `${prefix}.jpg`;
    if ((await stat(out)).size > MAX_COVER_BYTES) return null;
    const bytes = await readFile(out);
    return sniffImage(bytes) ? bytes : null;
  } catch {
    return null;
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}
