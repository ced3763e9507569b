// CB7 (a 7z of page images): no 7z reader is available to us, so a CB7 yields no metadata and no
// cover. title and page_count stay null and the catalog falls back to the file name. The file is
// still checked to be a 7z archive, so junk named .cb7 is reported like any other bad book.
import { BookError } from './book-error';
import { readHead } from './file-bytes';
import { emptyMetadata, type Extracted } from './types';

const SEVEN_Z_MAGIC = '7z\xbc\xaf\x27\x1c';

export function is7z(head: Uint8Array): boolean {
  return Buffer.from(head.subarray(0, 6)).toString('latin1') === SEVEN_Z_MAGIC;
}

export async function extractCb7(path: string): Promise<Extracted> {
  const head = await readHead(path, 6, 'CB7');
  if (head.length === 0) throw new BookError('not a valid CB7: empty file');
  if (!is7z(head)) throw new BookError('not a valid CB7: not a 7z archive');
  return { metadata: emptyMetadata(), cover: null };
}
