// One scan of one library: walk the folders, skip what did not change (size + mtime), hash and
// read the rest, and write the outcome batch by batch, each batch one transaction.
// A book keeps its id when its file is rewritten in place (same path) or moved (same SHA-256).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pLimit from 'p-limit';
import { crashPoint } from '@bindery/platform';
import { realpath } from 'node:fs/promises';
import { readOffThread } from '../formats/book-thread';
import { readBook, type BookToRead } from '../formats/read-book';
import type { Extracted, FileHashes } from '../formats/index';
import { authorsOf, baseName, groupTitle, normalizeContributors, normalizeList, posixDirname, sortTitle, titleFromFileName, cleanText } from '../domain/normalize';
import { findLibrary } from '../store/libraries';
import type { Catalog } from '@bindery/contracts';
import {
  findItem,
  formatsOf,
  itemEventData,
  itemRecord,
  newItemColumns,
  PAGED_FORMATS,
  pageList,
  pagesJson,
  rememberHash,
  toPublic,
  updateItem,
  type ItemChanges,
} from '../store/items';
import type { FormatRow, ItemRow } from '../store/schema';
import { SCHEMA } from '../store/migrations';
import type { Ctx } from '../handlers/context';
import { detectConflicts } from '../handlers/conflicts';
import { forbiddenFolder } from '../handlers/libraries';
import { seriesFromPath } from '../domain/series-from-name';
import { crawl, type FoundFile } from './crawl';
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
}

export interface ScanTarget {
  id: string;
  library_id: string;
  full_rehash: boolean;
}

/** A new file's row as a batch writes it (its hashes are known). */
type NewFormat = Omit<FormatRow, 'id' | 'created_at' | 'updated_at' | 'sha256' | 'partial_md5'> & { sha256: string; partial_md5: string };

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
  for await (const f of crawl(folders, (p) => problems.push(`${p.root}/${p.rel}: ${p.error}`), signal)) {
    checkAborted(signal);
    counts.files_seen++;
    if (seen.has(f.rel)) continue; // the same relative path in an earlier folder wins
    seen.add(f.rel);
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
    pending.push({ file: f, known: k });
  }
  if (problems.length > 0) ctx.rt.log.warn({ library: lib.id, problems: problems.slice(0, 20) }, 'scan could not read some folders');

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
        for (const job of batch) if (!isNew(job)) await apply(ctx, trx, lib.id, job, counts);
        await addNew(ctx, trx, lib.id, batch.filter(isNew), counts);
      });
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
        for (const k of back.slice(i, i + BATCH)) {
          await trx.withSchema(SCHEMA).updateTable('media_formats').set({ present: true, updated_at: new Date() }).where('id', '=', k.id).execute();
          if (await reactivate(ctx, trx, k.item_id)) counts.relinked++;
          else {
            // an active item with one more format present again
            if (!k.present) await emitUpdated(ctx, trx, k.item_id, 'file');
            counts.unchanged++;
          }
        }
        for (const k of gone.slice(i, i + BATCH)) {
          if (await markGone(ctx, trx, k)) counts.removed++;
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
  const book: BookToRead = { abs: f.abs, format: f.format, size: f.size, knownSha };
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
  // the cover files themselves are made after the scan (scanner/covers.ts)
  job.coverKey = read.hasCover ? sha : null;
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
  | 'publisher'
  | 'description'
  | 'isbn'
  | 'identifiers'
  | 'tags'
  | 'year'
  | 'page_count'
  | 'reading_direction'
  | 'cover_key'
  | 'cover_ready'
> & { group_dir: string; group_title: string };

function metadataFields(file: FoundFile, x: Extracted, coverKey: string | null): ScannedFields {
  const m = x.metadata;
  const contributors = normalizeContributors(m.contributors);
  // what the file says always wins; its folder and file names fill in a series it does not name
  const embeddedSeries = m.series ? cleanText(m.series) : '';
  const named = embeddedSeries ? null : seriesFromPath(file.rel, authorsOf(contributors));
  const title = (m.title && cleanText(m.title)) || (named?.title && cleanText(named.title)) || titleFromFileName(baseName(file.rel));
  return {
    title,
    sort_title: sortTitle(title),
    group_dir: posixDirname(file.rel),
    group_title: groupTitle(title),
    contributors,
    authors: authorsOf(contributors),
    series: embeddedSeries || (named ? cleanText(named.series) : null),
    series_index: embeddedSeries ? m.series_index : (named?.index ?? null),
    language: m.language,
    publisher: m.publisher,
    description: m.description,
    isbn: m.isbn,
    identifiers: m.identifiers,
    tags: normalizeList(m.subjects),
    year: m.year ?? named?.year ?? null,
    page_count: m.page_count,
    reading_direction: m.reading_direction,
    cover_key: coverKey,
    cover_ready: false,
  };
}

async function apply(ctx: Ctx, trx: CTrx, libraryId: string, job: Job, counts: ScanCounts): Promise<void> {
  const t = trx.withSchema(SCHEMA);
  const f = job.file;
  if (job.error) {
    counts.errors++;
    await recordIssue(ctx, trx, libraryId, f, job.error);
    // a known file that became unreadable keeps its item; only its stat is refreshed so it is not retried every scan
    if (job.known) {
      // pages_read: a file that cannot be read is not read again for its pages until it changes
      await t.updateTable('media_formats').set({ size: f.size, mtime_ms: f.mtimeMs, pages_read: true }).where('id', '=', job.known.id).execute();
      if (job.known.present && statChanged(job.known, f)) await emitUpdated(ctx, trx, job.known.item_id, 'file');
    }
    return;
  }
  await clearIssues(ctx, trx, libraryId, [f.rel]);
  const h = job.hashes!;
  switch (job.kind) {
    case 'excluded':
      await t.updateTable('excluded_files').set({ size: f.size, mtime_ms: f.mtimeMs }).where('library_id', '=', libraryId).where('rel_path', '=', f.rel).execute();
      await ctx.emit(trx, `excluded-${libraryId}`, [
        { type: 'catalog.excluded-file-touched.v1', data: { library_id: libraryId, file_path: f.rel, size: f.size, mtime_ms: f.mtimeMs } },
      ]);
      return;
    case 'touch': {
      const k = job.known!;
      // a file catalogued before page lists were recorded gets its list now (the bytes are the same)
      const paged = job.extracted ? { pages: pagesJson(pageList(job.extracted.pages)), pages_read: true } : {};
      // a full rescan that found the same bytes at the same size and time changes nothing
      const changed = statChanged(k, f) || !k.present || job.extracted !== undefined;
      if (changed) {
        await t
          .updateTable('media_formats')
          .set({ size: f.size, mtime_ms: f.mtimeMs, present: true, updated_at: new Date(), ...paged })
          .where('id', '=', k.id)
          .execute();
      }
      const list = job.extracted ? pageList(job.extracted.pages) : null;
      // an image-only EPUB catalogued before EPUB pages were counted gets its count with its list
      if (list && k.format === 'epub') await updateItem(trx, k.item_id, { page_count: list.length });
      if (!k.present || k.item_state !== 'active') {
        if (await reactivate(ctx, trx, k.item_id)) counts.relinked++;
        else await emitUpdated(ctx, trx, k.item_id, 'file');
      } else {
        // same bytes, new size or time on disk (a touch, a copy with a new time): the record shows
        // both; a page list read now is in the event too (and that it was read, when there is none)
        if (changed) await emitUpdated(ctx, trx, k.item_id, 'file');
        counts.unchanged++;
      }
      return;
    }
    case 'rewrite': {
      const k = job.known!;
      await t
        .updateTable('media_formats')
        .set({
          size: f.size,
          mtime_ms: f.mtimeMs,
          sha256: h.sha256,
          partial_md5: h.partial_md5,
          present: true,
          updated_at: new Date(),
          pages: pagesJson(pageList(job.extracted!.pages)),
          pages_read: true,
        })
        .where('id', '=', k.id)
        .execute();
      await rememberHash(trx, k.item_id, f.format, h.sha256, h.partial_md5);
      const item = await findItem(trx, k.item_id, { includeMissing: true, lock: true });
      if (!item) return;
      const primary = await t.selectFrom('media_formats').select('id').where('item_id', '=', item.id).where('present', '=', true).orderBy('id').limit(1).executeTakeFirst();
      const changes: ItemChanges = { state: 'active', missing_since: null };
      // API edits win over file metadata only for items made through the API
      if (primary?.id === k.id && item.source === 'scan') Object.assign(changes, metadataFields(f, job.extracted!, job.coverKey ?? null));
      await updateItem(trx, item.id, changes);
      await emitUpdated(ctx, trx, item.id, 'scan');
      counts.updated++;
      return;
    }
    case 'relink': {
      const k = job.relinkTo!;
      await t.updateTable('media_formats').set({ rel_path: f.rel, size: f.size, mtime_ms: f.mtimeMs, present: true, updated_at: new Date() }).where('id', '=', k.id).execute();
      await updateItem(trx, k.item_id, { state: 'active', missing_since: null, group_dir: posixDirname(f.rel) });
      await emitUpdated(ctx, trx, k.item_id, 'relink');
      counts.relinked++;
      return;
    }
    case 'restore': {
      await insertFormat(trx, job.restoreItem!, libraryId, f, h);
      await updateItem(trx, job.restoreItem!, { state: 'active', missing_since: null, group_dir: posixDirname(f.rel) });
      await emitUpdated(ctx, trx, job.restoreItem!, 'restored');
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
 * The batch's new files in a few statements: another format of a book already here (same folder,
 * same title, no file of this format yet, overlapping or absent authors) joins that item;
 * anything else is a new item. Decided in memory against one query for the folders involved.
 */
async function addNew(ctx: Ctx, trx: CTrx, libraryId: string, jobs: Job[], counts: ScanCounts): Promise<void> {
  if (jobs.length === 0) return;
  const t = trx.withSchema(SCHEMA);
  const fields = jobs.map((j) => metadataFields(j.file, j.extracted!, j.coverKey ?? null));
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
  const now = new Date();
  const items: ItemRow[] = [];
  const formats: NewFormat[] = [];
  const joined = new Set<string>();
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
      if (!match.fresh) joined.add(match.id);
      counts.updated++;
    } else {
      itemId = randomUUID();
      items.push({
        ...f,
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
      });
      byKey.set(k, [...(byKey.get(k) ?? []), { id: itemId, authors: f.authors, formats: new Set([job.file.format]), fresh: true }]);
      counts.added++;
    }
    const h = job.hashes!;
    formats.push({
      item_id: itemId,
      library_id: libraryId,
      rel_path: job.file.rel,
      format: job.file.format,
      size: job.file.size,
      mtime_ms: job.file.mtimeMs,
      sha256: h.sha256,
      partial_md5: h.partial_md5,
      present: true,
      pages: pageList(job.extracted!.pages),
      pages_read: true,
    });
  });
  if (items.length > 0) {
    await t
      .insertInto('media_items')
      .values(items.map(({ state: _s, version: _v, ...r }) => newItemColumns(r)))
      .execute();
  }
  const rows = await t
    .insertInto('media_formats')
    .values(formats.map(({ pages, ...r }) => ({ ...r, pages: pagesJson(pages) })))
    .onConflict((oc) =>
      oc.constraint('media_formats_path_key').doUpdateSet((eb) => ({
        item_id: eb.ref('excluded.item_id'),
        format: eb.ref('excluded.format'),
        size: eb.ref('excluded.size'),
        mtime_ms: eb.ref('excluded.mtime_ms'),
        sha256: eb.ref('excluded.sha256'),
        partial_md5: eb.ref('excluded.partial_md5'),
        pages: eb.ref('excluded.pages'),
        pages_read: eb.ref('excluded.pages_read'),
        present: true,
      })),
    )
    .returningAll()
    .execute();
  const hashes = new Map<string, { item_id: string; sha256: string; partial_md5: string | null; format: string }>();
  for (const f of formats) hashes.set(`${f.item_id}/${f.sha256}`, { item_id: f.item_id, sha256: f.sha256, partial_md5: f.partial_md5, format: f.format });
  const hashRows = await t
    .insertInto('format_hashes')
    .values([...hashes.values()])
    .onConflict((oc) => oc.columns(['item_id', 'sha256']).doUpdateSet({ last_seen: sql`now()` }))
    .returningAll()
    .execute();
  // new items' events carry the records as just written, without reading them back
  await ctx.emitNew(
    trx,
    items.map((row) => {
      const own = formats.filter((f) => f.item_id === row.id);
      // its rows as written (ids and times from the database), in the table's order
      const ownRows = rows.filter((f) => f.item_id === row.id).sort((a, z) => Number(a.id) - Number(z.id));
      return {
        streamId: `item-${row.id}`,
        events: [
          {
            type: 'catalog.media-item-added.v1' as const,
            data: {
              item: toPublic(
                row,
                own,
                own.map((f) => f.sha256),
                { pages: true },
              ),
              record: itemRecord(
                row,
                ownRows,
                hashRows.filter((h) => h.item_id === row.id),
              ),
            },
          },
        ],
      };
    }),
  );
  for (const id of joined) await emitUpdated(ctx, trx, id, 'scan');
}

async function insertFormat(trx: CTrx, itemId: string, libraryId: string, f: FoundFile, h: FileHashes): Promise<void> {
  // the same bytes at another path: the page list read when they were catalogued still holds
  const known = await trx
    .withSchema(SCHEMA)
    .selectFrom('media_formats')
    .select(['pages', 'pages_read'])
    .where('item_id', '=', itemId)
    .where('sha256', '=', h.sha256)
    .where('pages_read', '=', true)
    .limit(1)
    .executeTakeFirst();
  const paged = { pages: pagesJson(known?.pages ?? null), pages_read: known?.pages_read === true };
  await trx
    .withSchema(SCHEMA)
    .insertInto('media_formats')
    .values({
      ...paged,
      item_id: itemId,
      library_id: libraryId,
      rel_path: f.rel,
      format: f.format,
      size: f.size,
      mtime_ms: f.mtimeMs,
      sha256: h.sha256,
      partial_md5: h.partial_md5,
      present: true,
    })
    .onConflict((oc) =>
      oc
        .constraint('media_formats_path_key')
        .doUpdateSet({ item_id: itemId, format: f.format, size: f.size, mtime_ms: f.mtimeMs, sha256: h.sha256, partial_md5: h.partial_md5, present: true, ...paged }),
    )
    .execute();
  await rememberHash(trx, itemId, f.format, h.sha256, h.partial_md5);
}

export type UpdateCause = Extract<Catalog.CatalogEvent, { type: 'catalog.media-item-updated.v1' }>['data']['cause'];

/**
 * The item as it is now, in an `updated` event. Its row is locked first, so a concurrent change
 * to the same item commits either before this snapshot or after it with a later event. A missing
 * item is not in any reader's view (its `removed` event said so): nothing is emitted for it.
 */
export async function emitUpdated(ctx: Ctx, trx: CTrx, itemId: string, cause: UpdateCause): Promise<void> {
  const row = await findItem(trx, itemId, { lock: true });
  if (!row) return;
  const version = await ctx.version(trx, `item-${itemId}`);
  await ctx.emit(trx, `item-${itemId}`, [{ type: 'catalog.media-item-updated.v1', data: { ...(await itemEventData(trx, row)), cause } }], version);
}

/** A comic or EPUB catalogued before page lists were recorded: read once more for its pages. */
const needsPages = (k: Pick<FormatRow, 'pages_read' | 'format'>) => k.pages_read === false && PAGED_FORMATS.has(k.format);

const statChanged = (k: { size: number; mtime_ms: number }, f: FoundFile) => Number(k.size) !== f.size || Number(k.mtime_ms) !== f.mtimeMs;

/** An item whose file is back: active again, same id. True when it had been missing. */
async function reactivate(ctx: Ctx, trx: CTrx, itemId: string): Promise<boolean> {
  const item = await findItem(trx, itemId, { includeMissing: true, lock: true });
  if (!item || item.state === 'active') return false;
  await updateItem(trx, itemId, { state: 'active', missing_since: null });
  await emitUpdated(ctx, trx, itemId, 'restored');
  return true;
}

/** A file no longer on disk: the format is marked absent; an item with no file left goes missing. */
async function markGone(ctx: Ctx, trx: CTrx, k: Known): Promise<boolean> {
  const t = trx.withSchema(SCHEMA);
  await t.updateTable('media_formats').set({ present: false, updated_at: new Date() }).where('id', '=', k.id).execute();
  const item = await findItem(trx, k.item_id, { lock: true });
  if (!item) return false;
  const version = await ctx.version(trx, `item-${item.id}`);
  const left = await t.selectFrom('media_formats').select(sql<number>`count(*)::int`.as('n')).where('item_id', '=', item.id).where('present', '=', true).executeTakeFirst();
  if (Number(left?.n ?? 0) > 0) {
    await emitUpdated(ctx, trx, item.id, 'file');
    return false;
  }
  await updateItem(trx, item.id, { state: 'missing', missing_since: new Date() });
  const hashes = await t.selectFrom('format_hashes').selectAll().where('item_id', '=', item.id).orderBy('last_seen', 'desc').execute();
  const now = (await findItem(trx, item.id, { includeMissing: true }))!;
  const record = itemRecord(now, await formatsOf(trx, [item.id]), hashes);
  await ctx.emit(
    trx,
    `item-${item.id}`,
    [
      {
        type: 'catalog.media-item-removed.v1',
        data: { item_id: item.id, library_id: item.library_id, reason: 'missing', sha256: hashes.map((x) => x.sha256), record },
      },
    ],
    version,
  );
  return true;
}
