// Which reader a file gets, by its name alone (the scanner calls this for every file it sees).
import type { BookFormat } from './types';

const BY_EXTENSION: Record<string, BookFormat> = {
  epub: 'epub',
  kepub: 'epub',
  pdf: 'pdf',
  cbz: 'cbz',
  cbr: 'cbr',
  cb7: 'cb7',
  mobi: 'mobi',
  prc: 'mobi',
  azw: 'mobi',
  azw3: 'azw3',
  fb2: 'fb2',
};

/** By extension, case-insensitive; `.kepub.epub` is EPUB and `.fb2.zip` is FB2. Hidden files
 * (a leading '.', which covers macOS AppleDouble `._x.epub` companions) are never books. Only the
 * last path segment is looked at: skipping hidden folders is the scanner's call, since a library
 * root may itself sit under one. */
export function formatOf(fileName: string): BookFormat | null {
  const base = fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
  if (base === '' || base.startsWith('.')) return null;
  const lower = base.toLowerCase();
  if (lower.endsWith('.fb2.zip')) return 'fb2';
  const dot = lower.lastIndexOf('.');
  if (dot <= 0) return null;
  return BY_EXTENSION[lower.slice(dot + 1)] ?? null;
}
