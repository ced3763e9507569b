// The calibre library as records: every book (a first scan) or what changed since a watermark (the
// live pickup after calibre wrote metadata.db). The rows are fetched in the read transaction and
// mapped after it ends, so calibre waits for our lock only while SQLite runs.
import { instantKey } from './fields';
import { type ReadOptions, withCalibreDb } from './open';
import { ALL_BOOKS, buildBooks, type FetchedBooks, fetchBooks, readStamps, someBooks } from './rows';
import { CalibreError, type CalibreChanges, type CalibreErrorCode, type CalibreLibrary, type CalibreNote } from './types';

/** One record per calibre book of the library at `root` (the folder holding metadata.db). */
export async function readCalibreLibrary(root: string, options: ReadOptions = {}): Promise<CalibreLibrary> {
  const fetched = await withCalibreDb(root, (db) => fetchBooks(db, ALL_BOOKS), options);
  const notes: CalibreNote[] = [];
  const books = buildBooks(fetched, notes);
  return { books, last_modified: newest(books.map((b) => b.last_modified)), notes };
}

/** The books calibre added or changed after `since` (a `last_modified` this module returned; null
 * for all), whole, and which of the `known` ids are gone. calibre keeps no record of deletions, so
 * the caller says what it has; a merge shows as the kept book changed and the other deleted. */
export async function changedSince(root: string, since: string | null, known: Iterable<number> = [], options: ReadOptions = {}): Promise<CalibreChanges> {
  const after = instantKey(since);
  const { stamps, fetched } = await withCalibreDb(
    root,
    (db) => {
      const stamps = readStamps(db);
      const changed = stamps.filter((s) => since === null || instantKey(s.last_modified) > after).map((s) => s.id);
      const fetched: FetchedBooks | null = changed.length === 0 ? null : fetchBooks(db, changed.length === stamps.length ? ALL_BOOKS : someBooks(changed));
      return { stamps, fetched };
    },
    options,
  );
  const ids = stamps.map((s) => s.id);
  const present = new Set(ids);
  const notes: CalibreNote[] = [];
  const books = fetched === null ? [] : buildBooks(fetched, notes);
  const deleted = [...new Set(known)].filter((id) => !present.has(id)).sort((a, b) => a - b);
  return { books, deleted, ids, last_modified: newest(stamps.map((s) => s.last_modified)) ?? since, notes };
}

function newest(stamps: (string | null)[]): string | null {
  let best: string | null = null;
  let bestKey = '';
  for (const s of stamps) {
    const key = instantKey(s);
    if (s !== null && key > bestKey) [best, bestKey] = [s, key];
  }
  return best;
}

/** What a read gives across a thread boundary: the changes, or the failure's code and words (a CalibreError does not survive structured cloning). */
export type CalibreOutcome = { ok: true; changes: CalibreChanges } | { ok: false; code: CalibreErrorCode; message: string };

/** A read of the library at `root`: what changed after `since` (null: every book), and which of the `known` ids are gone. */
export interface CalibreAsk {
  root: string;
  since: string | null;
  known: number[];
}

export async function readCalibreOutcome(ask: CalibreAsk): Promise<CalibreOutcome> {
  try {
    return { ok: true, changes: await changedSince(ask.root, ask.since, ask.known) };
  } catch (e) {
    if (e instanceof CalibreError) return { ok: false, code: e.code, message: e.message };
    throw e;
  }
}
