// The book thread converts KEPUBs and reads a scan's files exactly as the calling thread would, and
// refuses what the converter refuses.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { convertToKepub } from '../src/formats/kepub';
import { convertOffThread, readOffThread, stopThread, threadReady, threadRunning } from '../src/formats/book-thread';
import { formatOf } from '../src/formats/format-of';
import { readBook, type BookToRead } from '../src/formats/read-book';

const CORPUS = join(import.meta.dirname, '../../../test/fixtures/corpus40');
/** the corpus's good EPUBs, by its manifest (kind `book`) */
const manifest = readFileSync(join(CORPUS, 'manifest.tsv'), 'utf8')
  .split('\n')
  .slice(1)
  .map((l) => l.split('\t'))
  .filter(([path]) => path);
const books = manifest.filter(([path, kind]) => kind === 'book' && path?.endsWith('.epub')).map(([path]) => join(CORPUS, path!));
/** every file of the corpus with a book's extension: good books, corrupt ones, junk named like a book */
const files = manifest.map(([path]) => join(CORPUS, path!)).filter((p) => formatOf(p) !== null);

describe('the book thread', () => {
  afterAll(() => stopThread());

  it('gives the same KEPUB and span map as converting here, book after book on one thread', async () => {
    expect(books.length).toBeGreaterThan(5);
    // the first book is converted here while the thread loads; the next ones there
    const first = readFileSync(books[0]!);
    expect((await convertOffThread(first)).data.equals((await convertToKepub(first)).data)).toBe(true);
    expect(await threadReady()).toBe(true);
    for (const file of books.slice(0, 6)) {
      const src = readFileSync(file);
      const [there, here] = await Promise.all([convertOffThread(src), convertToKepub(src)]);
      expect(threadRunning(), file).toBe(true);
      expect(there.spans, file).toEqual(here.spans);
      expect(there.data.equals(here.data), file).toBe(true);
    }
  }, 60_000);

  it('refuses a file that is not an EPUB with the converter’s own message', async () => {
    const bad = Buffer.from('not a zip at all');
    const here = await convertToKepub(bad).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(here).not.toBe('');
    await expect(convertOffThread(bad)).rejects.toThrow(here);
    expect(threadRunning()).toBe(true);
  });

  it('reads every file of a scan as this thread does: hashes, metadata, pages, or the same error', async () => {
    expect(await threadReady()).toBe(true);
    const kinds = new Set<string>();
    for (const abs of files) {
      const book: BookToRead = { abs, format: formatOf(abs)!, size: statSync(abs).size, knownSha: null };
      const [there, here] = await Promise.all([readOffThread(book), readBook(book)]);
      expect(threadRunning(), abs).toBe(true);
      expect(there, abs).toEqual(here);
      kinds.add(!here.ok ? 'unreadable' : here.extractError ? 'refused' : 'read');
    }
    // the corpus has both good and corrupt books
    expect([...kinds].sort()).toEqual(['read', 'refused']);
    const gone = await readOffThread({ abs: join(CORPUS, 'no such book.epub'), format: 'epub', size: 1, knownSha: null });
    expect(gone).toEqual({ ok: false, error: 'file could not be read: ENOENT' });
    // bytes already catalogued are only hashed
    const known = await readBook({ abs: books[0]!, format: 'epub', size: statSync(books[0]!).size, knownSha: null });
    const again = await readOffThread({ abs: books[0]!, format: 'epub', size: statSync(books[0]!).size, knownSha: known.ok ? known.hashes.sha256 : 'x' });
    expect(again).toEqual({ ok: true, hashes: known.ok && known.hashes });
  }, 60_000);
});
