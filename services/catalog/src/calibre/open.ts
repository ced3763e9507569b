// metadata.db opened read-only, read in one short transaction, retried while calibre writes.
// calibre keeps the database in rollback-journal mode: our read holds a shared lock only while its
// statements run, so calibre's next commit waits at most that long (its own busy timeout covers it);
// while calibre commits we get SQLITE_BUSY and try again after a short pause, off the event loop.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { CalibreError } from './types';

export interface ReadOptions {
  /** how long to keep trying while calibre holds the database (default 10 s) */
  busyBudgetMs?: number;
}

/** SQLite's own wait inside one attempt; short, because it blocks the thread it runs on. */
const BUSY_TIMEOUT_MS = 50;
const FIRST_PAUSE_MS = 25;
const MAX_PAUSE_MS = 500;

export function databasePath(root: string): string {
  return join(root, 'metadata.db');
}

/** A calibre library is a folder with metadata.db at its root. */
export function isCalibreLibrary(root: string): boolean {
  try {
    return statSync(databasePath(root)).isFile();
  } catch {
    return false;
  }
}

/** Runs `read` against the library's metadata.db in one read transaction (one consistent state),
 * retrying from the start while the database is busy. */
export async function withCalibreDb<T>(root: string, read: (db: Database.Database) => T, options: ReadOptions = {}): Promise<T> {
  const file = databasePath(root);
  if (!existsSync(file)) throw new CalibreError('missing', `${root} is not a calibre library: it has no metadata.db`);
  const deadline = Date.now() + (options.busyBudgetMs ?? 10_000);
  let pause = FIRST_PAUSE_MS;
  for (;;) {
    try {
      return readOnce(file, read);
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/u.test(code)) {
        if (Date.now() + pause > deadline) {
          throw new CalibreError('busy', `calibre library ${root}: metadata.db stayed locked by another program for ${options.busyBudgetMs ?? 10_000} ms`, { cause: e });
        }
        await sleep(pause);
        pause = Math.min(pause * 2, MAX_PAUSE_MS);
        continue;
      }
      throw explain(root, e);
    }
  }
}

function readOnce<T>(file: string, read: (db: Database.Database) => T): T {
  // readonly: SQLite opens the file O_RDONLY and never creates a journal, so nothing is written
  // into the calibre library, not even a lock file.
  const db = new Database(file, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  try {
    db.exec('BEGIN');
    try {
      return read(db);
    } finally {
      if (db.inTransaction) db.exec('COMMIT');
    }
  } finally {
    db.close();
  }
}

function explain(root: string, e: unknown): Error {
  if (e instanceof CalibreError) return e;
  const code = String((e as { code?: unknown }).code ?? '');
  const detail = e instanceof Error ? e.message : String(e);
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new CalibreError('corrupt', `calibre library ${root}: metadata.db cannot be read (${detail})`, { cause: e });
  }
  if (code === 'SQLITE_READONLY_ROLLBACK' || code === 'SQLITE_READONLY_RECOVERY') {
    return new CalibreError('unfinished-write', `calibre library ${root}: metadata.db has a write calibre did not finish; open the library in calibre once (${detail})`, {
      cause: e,
    });
  }
  if (code === 'SQLITE_ERROR' && /no such (table|column)/u.test(detail)) {
    return new CalibreError('not-calibre', `calibre library ${root}: metadata.db is not a calibre database (${detail})`, { cause: e });
  }
  return e instanceof Error ? e : new Error(detail);
}
