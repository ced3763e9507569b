// The KEPUB thread converts exactly as the answering thread would, and refuses what the converter refuses.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { convertToKepub } from '../src/formats/kepub';
import { convertOffThread, stopThread, threadReady, threadRunning } from '../src/formats/kepub-thread';

const CORPUS = join(import.meta.dirname, '../../../test/fixtures/corpus40');
/** the corpus's good EPUBs, by its manifest (kind `book`) */
const books = readFileSync(join(CORPUS, 'manifest.tsv'), 'utf8')
  .split('\n')
  .map((l) => l.split('\t'))
  .filter(([path, kind]) => kind === 'book' && path?.endsWith('.epub'))
  .map(([path]) => join(CORPUS, path!));

describe('KEPUB conversion on its own thread', () => {
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
});
