// What the reader asks for before its bundle runs: an EPUB's opening (opening.ts) and its sections
// (sections.ts). The boot script (boot.ts, loaded before the bundle, a few hundred bytes) starts
// them the moment the page is parsed, while the bundle (foliate-js and the reader) is still on its
// way and being evaluated; main.ts takes them over. Without the boot script (a page cached before
// it existed) main.ts starts them itself.
import { markedKept } from '../browser/offline-db';
import { type Opening, opening } from './opening';
import { fetchSections } from './sections';

export interface Early {
  /** an EPUB's opening, or null when the book is not read by parts or there is no network */
  opening: Promise<Opening | null> | null;
  /** an EPUB's sections as the reading service weighs them, or null */
  sections: Promise<unknown> | null;
}

/** where the boot script leaves its requests for the bundle (the two scripts share only the page) */
const KEY = 'binderyReaderEarly';
type Holder = { [KEY]?: Early };

function ask(): Early {
  const root = document.getElementById('reader');
  const format = root?.dataset.format;
  const file = root?.dataset.file;
  const item = root?.dataset.item;
  // a book kept in this browser opens from its kept copy: its opening would be asked for nothing
  const byParts = (format === 'epub' || format === 'kepub') && !!file && navigator.onLine && !(item && markedKept(item));
  return {
    opening: byParts ? opening(file).catch(() => null) : null,
    sections: format === 'epub' && item ? fetchSections(item) : null,
  };
}

/** The boot script's part: asks, and leaves the requests on the page for the bundle. */
export function startEarly(): void {
  (globalThis as Holder)[KEY] = ask();
}

/** The bundle's part: the boot script's requests (once), else its own. */
export function takeEarly(): Early {
  const holder = globalThis as Holder;
  const early = holder[KEY];
  delete holder[KEY];
  return early ?? ask();
}
