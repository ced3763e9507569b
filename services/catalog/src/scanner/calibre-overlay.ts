// A library folder that holds a calibre library (metadata.db at its root) is read as one, with no
// setting: each of its book files takes calibre's record of the book (title, authors, series and
// index, tags, publisher, language, identifiers, description, year, cover.jpg) over what the file
// embeds, since calibre never writes an owner's edits into the files. The files are still found,
// hashed and served as in any library; calibre's record stands where the file's metadata would.
// A person's edits in Bindery (locked fields) still win over calibre's, as over a file's.
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type CalibreBook,
  CalibreError,
  type CalibreErrorCode,
  type CalibreNote,
  type CalibreRead,
  calibreReport,
  isCalibreLibrary,
  readOpf,
  toBookMetadata,
} from '../calibre/index';
import { isInside } from '@bindery/platform';
import { instantKey } from '../calibre/fields';
import type { Catalog } from '@bindery/contracts';
import type { Ctx } from '../handlers/context';
import { SCHEMA } from '../store/migrations';
import type { CTrx } from '../store/schema';
import { readCalibreOffThread } from '../formats/book-thread';
import type { BookMetadata } from '../formats/index';

/** calibre's record of each book file, by the file's path relative to its library folder (and the folder). */
export type CalibreFiles = Map<string, { book: CalibreBook; root: string }>;

/** What this process last read of a calibre library: its books by id, their notes, and the watermark to ask changes after. */
interface KnownLibrary {
  books: Map<number, CalibreBook>;
  notes: Map<number | null, CalibreNote[]>;
  watermark: string | null;
  /** how many books the last read fetched (every one, or the changed ones) */
  fetched: number;
}
const known = new Map<string, KnownLibrary>();

/** What the last read of the library at `root` held and fetched (null before any). */
export function calibreReadOf(root: string): { books: number; fetched: number } | null {
  const k = known.get(root);
  return k ? { books: k.books.size, fetched: k.fetched } : null;
}

/** Forgets what was read of every calibre library (tests; the next read is a whole one). */
export function forgetCalibreReads(): void {
  known.clear();
}

/**
 * calibre's records for the files of the folders that are calibre libraries (the first folder
 * wins a path, as in the crawl). A library calibre keeps locked past the read's patience fails the
 * scan (the next change or poll tries again, rather than catalogue the files' own metadata over
 * calibre's); a damaged or foreign metadata.db is said in the log and the files speak for themselves.
 * After the first read of a library in this process, only the books calibre changed since (by
 * `last_modified`) are read again, and the deleted ones dropped; `whole` (a full rescan), or a
 * library whose newest change is older than the last one seen (a metadata.db put back from a
 * backup), reads every book.
 */
export async function calibreFiles(folders: readonly string[], warn: (msg: string, err: unknown) => void, reads: CalibreRead[] = [], whole = false): Promise<CalibreFiles> {
  const out: CalibreFiles = new Map();
  for (const root of folders) {
    if (!isCalibreLibrary(root)) continue;
    const r = await readLibrary(root, whole);
    if (!r.ok) {
      if (r.code === 'busy') throw new CalibreError(r.code, r.message);
      warn(`calibre library ${root} could not be read; its files are catalogued by what they embed`, new CalibreError(r.code, r.message));
      reads.push({ folder: root, source: 'metadata.db', books: [], notes: [], error: r.message });
      continue;
    }
    reads.push({ folder: root, source: 'metadata.db', books: r.books, notes: r.notes, error: null });
    for (const book of r.books) for (const f of book.formats) if (!out.has(f.path)) out.set(f.path, { book, root });
  }
  return out;
}

type LibraryRead = { ok: true; books: CalibreBook[]; notes: CalibreNote[] } | { ok: false; code: CalibreErrorCode; message: string };

async function readLibrary(root: string, whole: boolean): Promise<LibraryRead> {
  const before = whole ? undefined : known.get(root);
  // on the book thread: the read is synchronous, about a second of CPU for 10,000 books (a few
  // changed books: milliseconds)
  const r = await readCalibreOffThread({ root, since: before?.watermark ?? null, known: before ? [...before.books.keys()] : [] });
  if (!r.ok) {
    known.delete(root);
    return r;
  }
  const c = r.changes;
  // the library went back in time (another metadata.db in its place): read it whole
  if (before && before.watermark !== null && (c.last_modified === null || instantKey(c.last_modified) < instantKey(before.watermark))) return readLibrary(root, true);
  const lib: KnownLibrary = before ?? { books: new Map(), notes: new Map(), watermark: null, fetched: 0 };
  for (const id of c.deleted) {
    lib.books.delete(id);
    lib.notes.delete(id);
  }
  for (const b of c.books) {
    // a metadata.db book always has its id (only an OPF's may lack one)
    if (b.id === null) continue;
    lib.books.set(b.id, b);
    lib.notes.delete(b.id);
  }
  if (c.books.length > 0 || !before) lib.notes.delete(null);
  for (const n of c.notes) lib.notes.set(n.book_id, [...(lib.notes.get(n.book_id) ?? []), n]);
  lib.watermark = c.last_modified;
  lib.fetched = c.books.length;
  known.set(root, lib);
  const books = [...lib.books.values()].sort((a, b) => (a.id ?? 0) - (b.id ?? 0));
  return { ok: true, books, notes: [...lib.notes.values()].flat() };
}

/** The file's metadata with calibre's fields over it: what calibre does not keep (pages, direction) stays the file's. */
export function withCalibre(file: BookMetadata, book: CalibreBook): BookMetadata {
  const c = toBookMetadata(book);
  return { ...c, page_count: file.page_count, reading_direction: file.reading_direction };
}

/** The book's cover.jpg when calibre says it has one, inside its library folder; else null. */
export function calibreCoverFile(root: string, book: CalibreBook): string | null {
  if (!book.has_cover || !book.cover_path) return null;
  const file = join(root, book.cover_path);
  return isInside(root, file) ? file : null;
}

/** The SHA-256 of the book's cover.jpg when calibre says it has one (the cover's key), else null. */
export async function calibreCoverKey(root: string, book: CalibreBook): Promise<string | null> {
  const file = calibreCoverFile(root, book);
  if (!file) return null;
  try {
    return createHash('sha256')
      .update(await readFile(file))
      .digest('hex');
  } catch {
    return null;
  }
}

/** JSON with every object's keys in order (jsonb gives them back in its own). */
export const sortedJson = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  );

/**
 * The library's migration report from what this scan read of its calibre records, recorded
 * (catalog.calibre-report-recorded.v1, stream `calibre-<library id>`) only when it differs from the
 * last one: a rescan of an unchanged library appends nothing. A library no longer holding any
 * calibre records gets an empty report once.
 */
export async function recordCalibreReport(ctx: Ctx, libraryId: string, reads: readonly CalibreRead[], check: (trx: CTrx) => Promise<void>): Promise<void> {
  const t = ctx.db.withSchema(SCHEMA);
  const last = await t.selectFrom('calibre_reports').select('report').where('library_id', '=', libraryId).executeTakeFirst();
  if (!last && reads.length === 0) return;
  const report: Catalog.CalibreReport = calibreReport(reads);
  if (last && sortedJson(last.report) === sortedJson(report)) return;
  await ctx.tx(async (trx) => {
    await check(trx);
    await ctx.emit(trx, `calibre-${libraryId}`, [{ type: 'catalog.calibre-report-recorded.v1', data: { library_id: libraryId, report } }]);
  });
}

/** A book folder's metadata.opf as last read, by its path: read again only when its time changes. */
const opfCache = new Map<string, { mtimeMs: number; book: CalibreBook | null; error: string | null }>();
const OPF_CACHE_MAX = 50_000;

/**
 * calibre's records from book folders' metadata.opf (calibre's backup, also written by other tools)
 * in the folders that hold no metadata.db: a folder whose book files are one book (one file, or
 * files of one name in several formats) takes its OPF's record as a calibre library's book does.
 * `files` are the book files the walk found ({root, rel}); adds to `out` what it finds and one
 * read per library folder to `reads`. One stat per book folder; an OPF is parsed again only when changed.
 */
export async function opfFiles(files: readonly { root: string; rel: string }[], out: CalibreFiles, reads: CalibreRead[]): Promise<void> {
  const dirs = new Map<string, { root: string; dir: string; names: string[] }>();
  const calibreRoots = new Map<string, boolean>();
  for (const f of files) {
    let isLibrary = calibreRoots.get(f.root);
    if (isLibrary === undefined) {
      isLibrary = isCalibreLibrary(f.root);
      calibreRoots.set(f.root, isLibrary);
    }
    if (isLibrary) continue;
    const cut = f.rel.lastIndexOf('/');
    const dir = cut < 0 ? '' : f.rel.slice(0, cut);
    const key = `${f.root}\u0000${dir}`;
    const d = dirs.get(key) ?? { root: f.root, dir, names: [] };
    d.names.push(f.rel.slice(cut + 1));
    dirs.set(key, d);
  }
  const byRoot = new Map<string, CalibreRead>();
  const list = [...dirs.values()];
  for (let i = 0; i < list.length; i += 32) {
    const slice = list.slice(i, i + 32);
    // calibre's backup is metadata.opf; calibre's export (and other tools) name it after the book's files
    const opfOf = async (d: (typeof slice)[number]) => {
      const st = await stat(join(d.root, d.dir, 'metadata.opf')).catch(() => null);
      if (st?.isFile()) return { name: 'metadata.opf', st };
      const stem = d.names[0]!.replace(/(\.kepub)?\.[A-Za-z0-9]+$/u, '');
      const named = `${stem}.opf`;
      const other = d.names.length > 0 ? await stat(join(d.root, d.dir, named)).catch(() => null) : null;
      return other?.isFile() ? { name: named, st: other } : null;
    };
    const stats = await Promise.all(slice.map(opfOf));
    for (let j = 0; j < slice.length; j++) {
      const found = stats[j];
      if (!found) continue;
      const { st, name } = found;
      const d = slice[j]!;
      const where = `${d.dir || '(the library folder)'}/${name}`;
      const read = byRoot.get(d.root) ?? { folder: d.root, source: 'metadata.opf' as const, books: [], notes: [], error: null };
      byRoot.set(d.root, read);
      const stems = new Set(d.names.map((n) => n.toLowerCase().replace(/(\.kepub)?\.[a-z0-9]+$/u, '')));
      if (stems.size > 1) {
        read.notes.push({ book_id: null, field: 'metadata.opf', reason: `${where} not used: the folder holds ${stems.size} different books` });
        continue;
      }
      const path = join(d.root, d.dir, name);
      let cached = opfCache.get(path);
      if (!cached || cached.mtimeMs !== st.mtimeMs) {
        try {
          cached = { mtimeMs: st.mtimeMs, book: await readOpf(path, d.root), error: null };
        } catch (e) {
          cached = { mtimeMs: st.mtimeMs, book: null, error: e instanceof Error ? e.message : String(e) };
        }
        if (opfCache.size >= OPF_CACHE_MAX) opfCache.clear();
        opfCache.set(path, cached);
      }
      if (!cached.book) {
        read.notes.push({ book_id: null, field: 'metadata.opf', reason: `${where}: ${cached.error}` });
        continue;
      }
      read.books.push(cached.book);
      for (const f of cached.book.formats) if (!out.has(f.path)) out.set(f.path, { book: cached.book, root: d.root });
    }
  }
  reads.push(...byRoot.values());
}
