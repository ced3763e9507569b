// One scan of one library: walk the folders, skip what did not change (size + mtime), hash and
// read the rest, and write the outcome batch by batch, each batch one transaction.
// A book keeps its id when its file is rewritten in place (same path) or moved (same SHA-256).
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { crashPoint } from '@bindery/platform';
import { realpath } from 'node:fs/promises';
import { readOffThread } from '../formats/book-thread';
import { readBook, type BookToRead } from '../formats/read-book';
import type { Extracted, FileHashes } from '../formats/index';
import { authorsOf, baseName, groupTitle, normalizeContributors, normalizeList, posixDirname, sortTitle, titleFromFileName, cleanText } from '../domain/normalize';
import { findLibrary } from '../store/libraries';
import { Catalog } from '@bindery/contracts';
import { PAGED_FORMATS, pageList } from '../store/items';
import { addFile, applyScan, changeFile, eventData, fileFieldsOf, type ItemState, loadItem, newFileIds, noteHash, setFields, statesOf } from '../store/item-state';
import type { FormatRow, ItemRow } from '../store/schema';
import { SCHEMA } from '../store/migrations';
import type { Ctx } from '../handlers/context';
import { detectConflicts } from '../handlers/conflicts';
import { forbiddenFolder } from '../handlers/libraries';
import { seriesFromPath } from '../domain/series-from-name';
import { crawl, type FoundFile } from './crawl';
import { calibreCoverFile, calibreCoverKey, calibreFiles, type CalibreFiles, opfFiles, recordCalibreReport, sortedJson, withCalibre } from './calibre-overlay';
import { type CalibreBook, type CalibreRead, calibreData } from '../calibre/index';
import { type BookMetadata, emptyMetadata } from '../formats/types';
import { clearIssues, recordIssue } from './issues';
import { checkAborted, ScanStopped } from './scan-stopped';
import type { CTrx } from '../store/schema';

export interface ScanCounts {
  files_seen: number;
  added: number;
  updated: number;
  relinked: number;
  removed: number;
  unchanged: number;
  errors: number;
}

/** What a scan needs of a file it catalogued before (the page list itself stays in the database). */
const KNOWN_COLUMNS = ['f.id', 'f.item_id', 'f.rel_path', 'f.format', 'f.size', 'f.mtime_ms', 'f.sha256', 'f.present', 'f.pages_read'] as const;
type KnownColumn = (typeof KNOWN_COLUMNS)[number] extends `f.${infer C extends keyof FormatRow}` ? C : never;
type Known = Pick<FormatRow, KnownColumn> & { item_state: ItemRow['state'] };

interface Job {
  file: FoundFile;
  known?: Known;
  hashes?: FileHashes;
  extracted?: Extracted;
  coverKey?: string | null;
  error?: string;
  /** decided before reading metadata */
  kind?: 'touch' | 'rewrite' | 'relink' | 'restore' | 'excluded' | 'new';
  relinkTo?: Known;
  restoreItem?: string;
  /** calibre's record of the file's book, when its folder is a calibre library */
  calibre?: { book: CalibreBook; root: string };
}

export interface ScanTarget {
  id: string;
  library_id: string;
  full_rehash: boolean;
}

/** How a running scan is stopped: the signal is looked at per file, `check` runs in every write. */
export interface ScanGuard {
  signal?: AbortSignal;
  /** throws (a ScanStopped) when this scan may write no more: the lease is lost, the library gone */
  check?: (trx: CTrx) => Promise<void>;
}

export async function scanLibrary(ctx: Ctx, scan: ScanTarget, onProgress: (c: ScanCounts) => Promise<void>, guard: ScanGuard = {}): Promise<ScanCounts> {
  const counts: ScanCounts = { files_seen: 0, added: 0, updated: 0, relinked: 0, removed: 0, unchanged: 0, errors: 0 };
  try {
    return await scanSteps(ctx, scan, onProgress, guard, counts);
  } catch (e) {
    if (e instanceof ScanStopped) e.counts = { ...counts };
    throw e;
  }
}

async function scanSteps(ctx: Ctx, scan: ScanTarget, onProgress: (c: ScanCounts) => Promise<void>, guard: ScanGuard, counts: ScanCounts): Promise<ScanCounts> {
  const { signal } = guard;
  const check = guard.check ?? (async () => undefined);
  const db = ctx.db;
  const t = db.withSchema(SCHEMA);
  const lib = await findLibrary(db, scan.library_id);
  if (!lib) throw new ScanStopped('deleted');

  const known = new Map<string, Known>();
  for (const r of await t
    .selectFrom('media_formats as f')
    .innerJoin('media_items as i', 'i.id', 'f.item_id')
    .select([...KNOWN_COLUMNS, 'i.state as item_state'])
    .where('f.library_id', '=', lib.id)
    .execute())
    known.set(r.rel_path, r);
  const excluded = new Map<string, { sha256: string | null; size: number; mtime_ms: number }>();
  for (const r of await t.selectFrom('excluded_files').selectAll().where('library_id', '=', lib.id).execute()) {
    excluded.set(r.rel_path, { sha256: r.sha256, size: r.size, mtime_ms: r.mtime_ms });
  }
  // every hash of the items that went missing earlier: a file with one of them brings its item back
  const missingBySha = new Map<string, string>();
  for (const r of await t
    .selectFrom('format_hashes as h')
    .innerJoin('media_items as i', 'i.id', 'h.item_id')
    .select(['h.sha256', 'i.id'])
    .where('i.library_id', '=', lib.id)
    .where('i.state', '=', 'missing')
    .orderBy('i.id')
    .execute()) {
    if (!missingBySha.has(r.sha256)) missingBySha.set(r.sha256, r.id);
  }
  const issues = new Map<string, { size: number; mtime_ms: number }>();
  for (const r of await t.selectFrom('file_issues').select(['rel_path', 'size', 'mtime_ms']).where('library_id', '=', lib.id).execute()) {
    issues.set(r.rel_path, { size: r.size, mtime_ms: r.mtime_ms });
  }

  // 1. Walk: note every path, keep the files that need reading.
  const seen = new Set<string>();
  const found: { root: string; rel: string }[] = [];
  const pending: Job[] = [];
  const back: Known[] = [];
  const problems: string[] = [];
  // a folder accepted before the folder rule existed is not walked (the rule: handlers/libraries.ts)
  const folders: string[] = [];
  for (const folder of lib.folders) {
    const real = await realpath(folder).catch(() => null);
    const forbidden = real ? await forbiddenFolder(ctx, real) : null;
    if (forbidden) problems.push(`${folder}: ${forbidden}`);
    else folders.push(folder);
  }
  const calibreReads: CalibreRead[] = [];
  const calibre = await calibreFiles(
    folders,
    (msg, e) => ctx.rt.log.warn({ library: lib.id, err: e instanceof Error ? e.message : String(e) }, msg),
    calibreReads,
    scan.full_rehash,
  );
  for await (const f of crawl(folders, (p) => problems.push(`${p.root}/${p.rel}: ${p.error}`), signal)) {
    checkAborted(signal);
    counts.files_seen++;
    if (seen.has(f.rel)) continue; // the same relative path in an earlier folder wins
    seen.add(f.rel);
    found.push({ root: f.root, rel: f.rel });
    const k = known.get(f.rel);
    const same = (x: { size: number; mtime_ms: number }) => Number(x.size) === f.size && Number(x.mtime_ms) === f.mtimeMs;
    if (k && same(k) && !scan.full_rehash && !needsPages(k)) {
      if (!k.present || k.item_state !== 'active') back.push(k);
      else counts.unchanged++;
      continue;
    }
    const ex = excluded.get(f.rel);
    if (ex && same(ex)) continue;
    const iss = issues.get(f.rel);
    if (!k && iss && same(iss) && !scan.full_rehash) {
      counts.errors++;
      continue;
    }
    const book = calibre.get(f.rel);
    pending.push({ file: f, known: k, ...(book ? { calibre: book } : {}) });
  }
  if (problems.length > 0) ctx.rt.log.warn({ library: lib.id, problems: problems.slice(0, 20) }, 'scan could not read some folders');
  // book folders' metadata.opf where no metadata.db is: their books take its record, as calibre's do
  await opfFiles(found, calibre, calibreReads);
  for (const job of pending)
    if (!job.calibre) {
      const book = calibre.get(job.file.rel);
      if (book) job.calibre = book;
    }

  // Known files not found this time: moved (relinked by hash below) or gone.
  const unseenBySha = new Map<string, Known[]>();
  for (const k of known.values()) {
    if (seen.has(k.rel_path) || !k.present || !k.sha256) continue;
    unseenBySha.set(k.sha256, [...(unseenBySha.get(k.sha256) ?? []), k]);
  }

  // 2. Read and write in batches.
  let lastProgress = Date.now();
  const BATCH = ctx.opts.scanBatch;
  const batches: Job[][] = [];
  for (let i = 0; i < pending.length; i += BATCH) batches.push(pending.slice(i, i + BATCH));
  // new files catalogued by this scan took calibre's record as it is now: followCalibre (below)
  // passes over them (a moved file, relinked, took nothing and is compared)
  const readWithCalibre = new Set<string>();
  // a job holds its book's metadata once read: only its batch may keep it, and only until written
  pending.length = 0;
  const reading = pLimit(Math.max(1, ctx.opts.scanConcurrency));
  const prepareAll = (batch: Job[]) =>
    Promise.all(
      batch.map((job) =>
        reading(async () => {
          if (!signal?.aborted) await prepare(ctx, job, excluded, unseenBySha, missingBySha);
        }),
      ),
    );
  // reading the next batch overlaps writing this one
  let next = batches.length > 0 ? prepareAll(batches[0]!) : null;
  for (let b = 0; b < batches.length; b++) {
    await next;
    const batch = batches[b]!;
    next = b + 1 < batches.length ? prepareAll(batches[b + 1]!) : null;
    try {
      checkAborted(signal);
      await ctx.tx(async (trx) => {
        await ctx.lockLibrary(trx, lib.id);
        await check(trx);
        const isNew = (j: Job) => !j.error && j.kind === 'new';
        const now = await ctx.now(trx);
        for (const job of batch) if (!isNew(job)) await apply(ctx, trx, lib.id, job, counts, now);
        await addNew(ctx, trx, lib.id, batch.filter(isNew), counts, now);
      });
      for (const j of batch) if (j.calibre && !j.error && j.kind === 'new') readWithCalibre.add(j.file.rel);
    } catch (e) {
      await next?.catch(() => undefined);
      throw e;
    }
    crashPoint('scan-after-batch');
    batches[b] = [];
    if (Date.now() - lastProgress >= 1000) {
      lastProgress = Date.now();
      await onProgress(counts);
    }
  }

  // 3. Files back where they were, and files gone.
  const gone = [...unseenBySha.values()].flat();
  if (back.length > 0 || gone.length > 0) {
    for (let i = 0; i < Math.max(back.length, gone.length); i += BATCH) {
      checkAborted(signal);
      await ctx.tx(async (trx) => {
        await ctx.lockLibrary(trx, lib.id);
        await check(trx);
        const now = await ctx.now(trx);
        for (const k of back.slice(i, i + BATCH)) {
          const s = await loadItem(trx, k.item_id, { includeMissing: true });
          if (!s) continue;
          changeFile(s, Number(k.id), { present: true }, now);
          if (activate(s, now)) {
            await emitItem(ctx, trx, s, 'restored');
            counts.relinked++;
          } else {
            // an active item with one more format present again
            await emitItem(ctx, trx, s, 'file');
            counts.unchanged++;
          }
        }
        for (const k of gone.slice(i, i + BATCH)) {
          if (await markGone(ctx, trx, k, now)) counts.removed++;
        }
      });
    }
  }
  checkAborted(signal);
  // Paths with no book file now (deleted or unreadable): forget their old problems.
  const staleIssues = [...issues.keys()].filter((p) => !seen.has(p));
  for (let i = 0; i < staleIssues.length; i += 500) {
    await ctx.tx((trx) => clearIssues(ctx, trx, lib.id, staleIssues.slice(i, i + 500)));
  }

  // the files this scan read took calibre's record as it is now: only the others are compared
  if (calibre.size > 0) await followCalibre(ctx, lib.id, calibre, readWithCalibre, check, signal);
  await recordCalibreReport(ctx, lib.id, calibreReads, check);
  await ctx.tx(async (trx) => {
    await check(trx);
    await detectConflicts(ctx, trx);
  });
  return counts;
}

/**
 * Hashes a file and reads its metadata when the outcome needs it. Runs outside any transaction; the
 * file work itself on the book thread (formats/book-thread.ts), but for PDFs: pdf.js is read here,
 * where it is loaded anyway, rather than held a second time by the thread.
 */
async function prepare(_ctx: Ctx, job: Job, excluded: Map<string, { sha256: string | null }>, unseenBySha: Map<string, Known[]>, missingBySha: Map<string, string>): Promise<void> {
  const f = job.file;
  // bytes already catalogued need no metadata (a page list never recorded aside: files catalogued before page lists)
  const knownSha = job.known ? (needsPages(job.known) ? null : job.known.sha256) : (excluded.get(f.rel)?.sha256 ?? null);
  // calibre's cover.jpg is the cover's key: hashed where the book is read, off this thread
  const cover = job.calibre ? calibreCoverFile(job.calibre.root, job.calibre.book) : null;
  const book: BookToRead = { abs: f.abs, format: f.format, size: f.size, knownSha, ...(cover ? { sideFile: cover } : {}) };
  const read = await (f.format === 'pdf' ? readBook(book) : readOffThread(book));
  if (!read.ok) {
    job.error = read.error;
    return;
  }
  job.hashes = read.hashes;
  const sha = job.hashes.sha256;
  if (job.known) {
    job.kind = job.known.sha256 === sha ? 'touch' : 'rewrite';
  } else if (excluded.get(f.rel)?.sha256 === sha) {
    job.kind = 'excluded';
  } else {
    const moved = unseenBySha.get(sha);
    const pick = moved?.find((k) => k.format === f.format) ?? moved?.[0];
    if (pick) {
      moved!.splice(moved!.indexOf(pick), 1);
      if (moved!.length === 0) unseenBySha.delete(sha);
      job.kind = 'relink';
      job.relinkTo = pick;
      return;
    }
    // a book that went missing earlier, now back at another path
    const prev = missingBySha.get(sha);
    if (prev) {
      job.kind = 'restore';
      job.restoreItem = prev;
      return;
    }
    job.kind = 'new';
  }
  if (job.kind === 'excluded' || (job.kind === 'touch' && !needsPages(job.known!))) return;
  if (read.extractError !== undefined || !read.extracted) {
    job.error = read.extractError ?? 'file could not be read: no metadata';
    return;
  }
  job.extracted = read.extracted;
  // the cover files themselves are made after the scan (scanner/covers.ts); calibre's cover.jpg first
  job.coverKey = (cover ? (read.sideSha ?? null) : null) ?? (read.hasCover ? sha : null);
}

/** What a scan reads from a file into its item. */
type ScannedFields = Pick<
  ItemRow,
  | 'title'
  | 'sort_title'
  | 'contributors'
  | 'authors'
  | 'series'
  | 'series_index'
  | 'language'
  | Catalog.TextField
  | 'description'
  | 'identifiers'
  | 'tags'
  | 'year'
  | 'page_count'
  | 'reading_direction'
  | 'cover_key'
  | 'cover_ready'
  | 'calibre'
> & { group_dir: string; group_title: string };

function metadataFields(file: Pick<FoundFile, 'rel'>, x: Pick<Extracted, 'metadata'>, coverKey: string | null, book?: CalibreBook): ScannedFields {
  const m = book ? withCalibre(x.metadata, book) : x.metadata;
  const contributors = normalizeContributors(m.contributors);
  // what the file (or calibre) says always wins; folder and file names fill in a series it does not
  // name (not in a calibre library: its folders are calibre's "Author/Title (id)")
  const embeddedSeries = m.series ? cleanText(m.series) : '';
  const named = embeddedSeries || book ? null : seriesFromPath(file.rel, authorsOf(contributors));
  const title = (m.title && cleanText(m.title)) || (named?.title && cleanText(named.title)) || titleFromFileName(baseName(file.rel));
  return {
    title,
    sort_title: sortTitle(title, m.language),
    group_dir: posixDirname(file.rel),
    group_title: groupTitle(title),
    contributors,
    authors: authorsOf(contributors),
    series: embeddedSeries || (named ? cleanText(named.series) : null),
    series_index: embeddedSeries ? m.series_index : (named?.index ?? null),
    language: m.language,
    ...Catalog.textDetailsOf(m),
    description: m.description,
    identifiers: m.identifiers,
    tags: normalizeList(m.subjects),
    year: m.year ?? named?.year ?? null,
    page_count: m.page_count,
    reading_direction: m.reading_direction,
    cover_key: coverKey,
    cover_ready: false,
    // calibre's id, rating, read mark and custom columns ride with the item (not lockable: calibre's own)
    calibre: book ? calibreData(book) : null,
  };
}

async function apply(ctx: Ctx, trx: CTrx, libraryId: string, job: Job, counts: ScanCounts, now: Date): Promise<void> {
  const f = job.file;
  if (job.error) {
    counts.errors++;
    // a known file that became unreadable keeps its item; the issue's event refreshes only its
    // stat (and marks its pages read: not read again until it changes), so it is not retried every scan
    await recordIssue(ctx, trx, libraryId, f, job.error);
    if (job.known?.present && statChanged(job.known, f)) await emitUpdated(ctx, trx, job.known.item_id, 'file');
    return;
  }
  await clearIssues(ctx, trx, libraryId, [f.rel]);
  const h = job.hashes!;
  switch (job.kind) {
    case 'excluded':
      await ctx.emit(trx, `excluded-${libraryId}`, [
        { type: 'catalog.excluded-file-touched.v1', data: { library_id: libraryId, file_path: f.rel, size: f.size, mtime_ms: f.mtimeMs } },
      ]);
      return;
    case 'touch': {
      const k = job.known!;
      // a full rescan that found the same bytes at the same size and time changes nothing
      const changed = statChanged(k, f) || !k.present || job.extracted !== undefined;
      if (!changed && k.item_state === 'active') {
        counts.unchanged++;
        return;
      }
      const s = await loadItem(trx, k.item_id, { includeMissing: true });
      if (!s) return;
      // a file catalogued before page lists were recorded gets its list now (the bytes are the same)
      const list = job.extracted ? pageList(job.extracted.pages) : null;
      const paged = job.extracted ? { pages: list, pages_read: true } : {};
      if (changed) changeFile(s, Number(k.id), { size: f.size, mtime_ms: f.mtimeMs, present: true, ...paged }, now);
      // an image-only EPUB catalogued before EPUB pages were counted gets its count with its list
      if (list && k.format === 'epub') setFields(s, { page_count: list.length }, now);
      if (!k.present || k.item_state !== 'active') {
        if (activate(s, now)) {
          await emitItem(ctx, trx, s, 'restored');
          counts.relinked++;
        } else await emitItem(ctx, trx, s, 'file');
      } else {
        // same bytes, new size or time on disk (a touch, a copy with a new time): the record shows
        // both; a page list read now is in the event too (and that it was read, when there is none)
        await emitItem(ctx, trx, s, 'file');
        counts.unchanged++;
      }
      return;
    }
    case 'rewrite': {
      const k = job.known!;
      const s = await loadItem(trx, k.item_id, { includeMissing: true });
      if (!s) return;
      changeFile(
        s,
        Number(k.id),
        { size: f.size, mtime_ms: f.mtimeMs, sha256: h.sha256, partial_md5: h.partial_md5, present: true, pages: pageList(job.extracted!.pages), pages_read: true },
        now,
      );
      noteHash(s, f.format, h.sha256, h.partial_md5, now);
      const primary = s.files.find((x) => x.present);
      setFields(s, { state: 'active', missing_since: null }, now);
      // the file's metadata for every field nobody set (an item made through the API keeps its own)
      if (primary && Number(primary.id) === Number(k.id) && s.row.source === 'scan') applyScan(s, metadataFields(f, job.extracted!, job.coverKey ?? null, job.calibre?.book), now);
      await emitItem(ctx, trx, s, 'scan');
      counts.updated++;
      return;
    }
    case 'relink': {
      const k = job.relinkTo!;
      const s = await loadItem(trx, k.item_id, { includeMissing: true });
      if (!s) return;
      changeFile(s, Number(k.id), { rel_path: f.rel, size: f.size, mtime_ms: f.mtimeMs, present: true }, now);
      setFields(s, { state: 'active', missing_since: null, group_dir: posixDirname(f.rel) }, now);
      await emitItem(ctx, trx, s, 'relink');
      counts.relinked++;
      return;
    }
    case 'restore': {
      const s = await loadItem(trx, job.restoreItem!, { includeMissing: true });
      if (!s) return;
      const [id] = await fileIdsFor(trx, libraryId, [f.rel]);
      // the same bytes at another path: the page list read when they were catalogued still holds
      const known = s.files.find((x) => x.sha256 === h.sha256 && x.pages_read);
      addFile(s, {
        id: id!,
        item_id: s.row.id,
        library_id: libraryId,
        rel_path: f.rel,
        format: f.format,
        size: f.size,
        mtime_ms: f.mtimeMs,
        sha256: h.sha256,
        partial_md5: h.partial_md5,
        present: true,
        created_at: now,
        updated_at: now,
        pages: known?.pages ?? null,
        pages_read: known !== undefined,
      });
      noteHash(s, f.format, h.sha256, h.partial_md5, now);
      setFields(s, { state: 'active', missing_since: null, group_dir: posixDirname(f.rel) }, now);
      await emitItem(ctx, trx, s, 'restored');
      counts.relinked++;
      return;
    }
    case 'new':
    case undefined:
      // new files are written together, per batch, by addNew()
      throw new Error(`apply() was given a ${job.kind ?? 'unprepared'} file: ${f.rel}`);
  }
}

/**
 * Ids for new file rows at these paths: a row already at the path (a file of another item, gone
 * from there) is taken over with its id, as the path is the table's key; the others are new.
 */
async function fileIdsFor(trx: CTrx, libraryId: string, paths: string[]): Promise<number[]> {
  if (paths.length === 0) return [];
  const taken = new Map<string, number>();
  for (const r of await trx.withSchema(SCHEMA).selectFrom('media_formats').select(['id', 'rel_path']).where('library_id', '=', libraryId).where('rel_path', 'in', paths).execute())
    taken.set(r.rel_path, Number(r.id));
  const fresh = await newFileIds(trx, paths.filter((p) => !taken.has(p)).length);
  return paths.map((p) => taken.get(p) ?? fresh.shift()!);
}

/**
 * The batch's new files in a few statements: another format of a book already here (same folder,
 * same title, no file of this format yet, overlapping or absent authors) joins that item;
 * anything else is a new item. Decided in memory against one query for the folders involved.
 */
async function addNew(ctx: Ctx, trx: CTrx, libraryId: string, jobs: Job[], counts: ScanCounts, now: Date): Promise<void> {
  if (jobs.length === 0) return;
  const t = trx.withSchema(SCHEMA);
  const fields = jobs.map((j) => metadataFields(j.file, j.extracted!, j.coverKey ?? null, j.calibre?.book));
  const dirs = [...new Set(fields.map((f) => f.group_dir))];
  interface Candidate {
    id: string;
    authors: string[];
    formats: Set<string>;
    fresh: boolean;
  }
  const byKey = new Map<string, Candidate[]>();
  const keyOf = (dir: string, title: string) => `${dir}\u0000${title}`;
  const existing = await t
    .selectFrom('media_items')
    .select(['id', 'authors', 'group_dir', 'group_title'])
    .where('library_id', '=', libraryId)
    .where('state', '=', 'active')
    .where('source', '=', 'scan')
    .where('group_dir', 'in', dirs)
    .execute();
  if (existing.length > 0) {
    const present = await t
      .selectFrom('media_formats')
      .select(['item_id', 'format'])
      .where(
        'item_id',
        'in',
        existing.map((e) => e.id),
      )
      .where('present', '=', true)
      .execute();
    for (const e of existing) {
      const c: Candidate = {
        id: e.id,
        authors: e.authors,
        formats: new Set(present.filter((p) => p.item_id === e.id).map((p) => p.format)),
        fresh: false,
      };
      // the query's `group_dir in dirs` leaves no null group_dir; group_title is set with it
      const k = keyOf(e.group_dir ?? '', e.group_title ?? '');
      byKey.set(k, [...(byKey.get(k) ?? []), c]);
    }
  }
  const fresh: ItemState[] = [];
  const joined = new Map<string, Job[]>();
  const placed: { job: Job; itemId: string }[] = [];
  jobs.forEach((job, i) => {
    const f = fields[i]!;
    const k = keyOf(f.group_dir, f.group_title);
    const mine = new Set(f.authors.map((a) => a.toLowerCase()));
    const match = (byKey.get(k) ?? []).find(
      (c) => !c.formats.has(job.file.format) && (mine.size === 0 || c.authors.length === 0 || c.authors.some((a) => mine.has(a.toLowerCase()))),
    );
    let itemId: string;
    if (match) {
      itemId = match.id;
      match.formats.add(job.file.format);
      if (!match.fresh) joined.set(match.id, [...(joined.get(match.id) ?? []), job]);
      counts.updated++;
    } else {
      itemId = randomUUID();
      const { cover_ready, ...own } = f;
      fresh.push({
        row: {
          ...own,
          cover_ready,
          locked_fields: [],
          file_fields: fileFieldsOf(f),
          id: itemId,
          library_id: libraryId,
          state: 'active',
          source: 'scan',
          file_path: job.file.rel,
          added_by_admin: null,
          version: 0,
          missing_since: null,
          created_at: now,
          updated_at: now,
        },
        files: [],
        hashes: [],
      });
      byKey.set(k, [...(byKey.get(k) ?? []), { id: itemId, authors: f.authors, formats: new Set([job.file.format]), fresh: true }]);
      counts.added++;
    }
    placed.push({ job, itemId });
  });
  // the items new files join, as they are now (locked: a concurrent change commits before or after)
  const rows =
    joined.size === 0
      ? []
      : await t
          .selectFrom('media_items')
          .selectAll()
          .where('id', 'in', [...joined.keys()])
          .where('state', '=', 'active')
          .orderBy('id')
          .forUpdate()
          .execute();
  const states = new Map<string, ItemState>([...fresh, ...(await statesOf(trx, rows))].map((x) => [x.row.id, x]));
  const ids = await fileIdsFor(
    trx,
    libraryId,
    placed.map((p) => p.job.file.rel),
  );
  placed.forEach(({ job, itemId }, i) => {
    const s = states.get(itemId);
    if (!s) return;
    const h = job.hashes!;
    addFile(s, {
      id: ids[i]!,
      item_id: itemId,
      library_id: libraryId,
      rel_path: job.file.rel,
      format: job.file.format,
      size: job.file.size,
      mtime_ms: job.file.mtimeMs,
      sha256: h.sha256,
      partial_md5: h.partial_md5,
      present: true,
      created_at: now,
      updated_at: now,
      pages: pageList(job.extracted!.pages),
      pages_read: true,
    });
    noteHash(s, job.file.format, h.sha256, h.partial_md5, now);
  });
  // new items start their streams in one statement; the fold writes their rows together
  await ctx.emitNew(
    trx,
    fresh.map((s) => ({ streamId: `item-${s.row.id}`, events: [{ type: 'catalog.media-item-added.v1' as const, data: eventData(s) }] })),
  );
  for (const id of joined.keys()) {
    const s = states.get(id);
    if (s) await emitItem(ctx, trx, s, 'scan');
  }
}

export type UpdateCause = Extract<Catalog.CatalogEvent, { type: 'catalog.media-item-updated.v1' }>['data']['cause'];

/**
 * The item as it is now, in an `updated` event (its row locked first, so a concurrent change to
 * the same item commits either before this snapshot or after it with a later event). A missing
 * item is not in any reader's view (its `removed` event said so): nothing is emitted for it.
 */
export async function emitUpdated(ctx: Ctx, trx: CTrx, itemId: string, cause: UpdateCause): Promise<void> {
  const s = await loadItem(trx, itemId);
  if (s) await emitItem(ctx, trx, s, cause);
}

/** An item's state as a command changed it, in an `updated` event: the fold writes its rows. */
export async function emitItem(ctx: Ctx, trx: CTrx, s: ItemState, cause: UpdateCause): Promise<void> {
  const version = await ctx.version(trx, `item-${s.row.id}`);
  await ctx.emit(trx, `item-${s.row.id}`, [{ type: 'catalog.media-item-updated.v1', data: { ...eventData(s), cause } }], version);
}

/** A comic or EPUB catalogued before page lists were recorded: read once more for its pages. */
const needsPages = (k: Pick<FormatRow, 'pages_read' | 'format'>) => k.pages_read === false && PAGED_FORMATS.has(k.format);

const statChanged = (k: { size: number; mtime_ms: number }, f: FoundFile) => Number(k.size) !== f.size || Number(k.mtime_ms) !== f.mtimeMs;

/** An item whose file is back: active again, same id. True when it had been missing. */
function activate(s: ItemState, now: Date): boolean {
  if (s.row.state === 'active') return false;
  setFields(s, { state: 'active', missing_since: null }, now);
  return true;
}

/** A file no longer on disk: the format is marked absent; an item with no file left goes missing. */
async function markGone(ctx: Ctx, trx: CTrx, k: Known, now: Date): Promise<boolean> {
  const s = await loadItem(trx, k.item_id);
  if (!s) return false;
  changeFile(s, Number(k.id), { present: false }, now);
  if (s.files.some((f) => f.present)) {
    await emitItem(ctx, trx, s, 'file');
    return false;
  }
  const version = await ctx.version(trx, `item-${s.row.id}`);
  setFields(s, { state: 'missing', missing_since: now }, now);
  await ctx.emit(
    trx,
    `item-${s.row.id}`,
    [
      {
        type: 'catalog.media-item-removed.v1',
        data: { item_id: s.row.id, library_id: s.row.library_id, reason: 'missing', sha256: s.hashes.map((x) => x.sha256), record: eventData(s).record },
      },
    ],
    version,
  );
  return true;
}

/** The newest calibre change each library's items have taken in this process (a restart checks them all again). */
const calibreApplied = new Map<string, string>();

/**
 * calibre changed a book's record (an edit, a merge) with its files untouched: every active item of
 * the library with a file in a calibre library takes calibre's fields again where they differ from
 * what it holds as its file's values (fields a person set stay locked). Compared in memory from one
 * query; only the items that differ, or whose book calibre changed since the last pass (its cover
 * may be new), are read and emitted. Unchanged items emit nothing.
 */
async function followCalibre(
  ctx: Ctx,
  libraryId: string,
  calibre: CalibreFiles,
  fresh: ReadonlySet<string>,
  check: (trx: CTrx) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  const since = calibreApplied.get(libraryId) ?? null;
  const rows = await ctx.db
    .withSchema(SCHEMA)
    .selectFrom('media_items as i')
    .innerJoin('media_formats as f', 'f.item_id', 'i.id')
    .select(['i.id', 'i.file_fields', 'i.calibre', 'i.page_count', 'i.reading_direction', 'f.rel_path'])
    .where('i.library_id', '=', libraryId)
    .where('i.state', '=', 'active')
    .where('i.source', '=', 'scan')
    .where('f.present', '=', true)
    .orderBy('i.id')
    .orderBy('f.id')
    .execute();
  const seen = new Set<string>();
  const todo: { id: string; rel: string }[] = [];
  let newest = since;
  for (const r of rows) {
    if (seen.has(r.id)) continue;
    seen.add(r.id);
    const entry = calibre.get(r.rel_path);
    if (!entry) continue;
    const stamp = entry.book.last_modified;
    if (stamp && (newest === null || stamp > newest)) newest = stamp;
    if (fresh.has(r.rel_path)) continue;
    const changedInCalibre = since === null || (stamp !== null && stamp > since);
    const read = calibreRead(r.rel_path, entry.book, r.page_count, r.reading_direction, r.file_fields?.cover_key ?? null);
    if (changedInCalibre || !sameFileFields(read, r.file_fields, r.calibre)) todo.push({ id: r.id, rel: r.rel_path });
  }
  for (let i = 0; i < todo.length; i += 200) {
    checkAborted(signal);
    await ctx.tx(async (trx) => {
      await ctx.lockLibrary(trx, libraryId);
      await check(trx);
      const now = await ctx.now(trx);
      for (const { id, rel } of todo.slice(i, i + 200)) {
        const s = await loadItem(trx, id);
        if (!s) continue;
        const { book, root } = calibre.get(rel)!;
        const file = s.row.file_fields;
        const read = calibreRead(rel, book, s.row.page_count, s.row.reading_direction, (await calibreCoverKey(root, book)) ?? file?.cover_key ?? s.row.cover_key);
        if (sameFileFields(read, file, s.row.calibre)) continue;
        applyScan(s, read, now);
        await emitItem(ctx, trx, s, 'scan');
      }
    });
  }
  if (newest) calibreApplied.set(libraryId, newest);
}

/** What a scan reads for an unchanged file of a calibre library: calibre's record, the item's own pages and direction. */
function calibreRead(rel: string, book: CalibreBook, pageCount: number | null, direction: string | null, coverKey: string | null): ScannedFields {
  const metadata: BookMetadata = { ...emptyMetadata(), page_count: pageCount, reading_direction: direction === 'rtl' || direction === 'ltr' ? direction : null };
  return metadataFields({ rel }, { metadata }, coverKey, book);
}

const sameFileFields = (read: ScannedFields, file: Catalog.FileFields | null, calibre: Catalog.CalibreData | null) =>
  file !== null && JSON.stringify(fileFieldsOf(read)) === JSON.stringify(fileFieldsOf(file)) && sortedJson(read.calibre) === sortedJson(calibre);
