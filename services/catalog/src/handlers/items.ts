// Media item commands and queries.
import { createHash, randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { writeCovers } from '../formats/index';
import { readFile, stat } from 'node:fs/promises';
import { err, fail, Identity, Messages, ok, Catalog, type Result } from '@bindery/contracts';

import { authorsOf, groupTitle, normalizeContributors, normalizeList, sortTitle } from '../domain/normalize';
import { invalid, isSafeRelPath, isUuid, LIMITS, parseItemFields, type ItemFields } from '../domain/validate';
import { findLibrary } from '../store/libraries';
import { findItem, publicOf, toPublic, type ItemChanges } from '../store/items';
import { applyEdit, eventData, type ItemState, lockableList, loadItem, resetFields } from '../store/item-state';
import type { ItemRow } from '../store/schema';
import { emitItem } from '../scanner/scan-library';
import { coverFile, ensureCover } from '../scanner/covers';
import { removeItem } from './conflicts';
import { requireAdmin, type Ctx } from './context';
import type { CTrx } from '../store/schema';

type Caller = Catalog.Caller;

const notFound = () => err(fail('not_found', Messages.mediaItemNotFound));
const badId = () => err(fail('validation', Messages.invalidMediaItemId));
/** An editor may change items: an admin, or a user the admin allowed (issue 43; the rule is identity's). */
const requireEditor = (caller: Caller) => (Identity.mayEditMetadata(caller) ? null : fail('forbidden', Messages.editorRequired));

export async function getItem(ctx: Ctx, req: { caller: Caller; id: string }): Promise<Result<Catalog.MediaItem>> {
  if (!isUuid(req.id)) return badId();
  const row = await findItem(ctx.db, req.id.toLowerCase());
  if (!row) return notFound();
  return ok((await publicOf(ctx.db, [row]))[0]!);
}

/** Columns an edit sets, search columns included; a new title sorts by the book's language (the edit's, else `language`). */
function editColumns(f: ItemFields, language?: string | null): ItemChanges {
  const { title, contributors, tags, ...plain } = f;
  const out: ItemChanges = {};
  if (title !== undefined) Object.assign(out, { title, sort_title: sortTitle(title, f.language !== undefined ? f.language : language) });
  if (contributors !== undefined) Object.assign(out, { contributors, authors: authorsOf(contributors) });
  if (tags !== undefined) out.tags = tags;
  for (const [k, v] of Object.entries(plain)) if (v !== undefined) Object.assign(out, { [k]: v });
  return out;
}

/**
 * `authors` given without `contributors` replaces the author roles only: the item's other
 * contributors (translators, pencillers, editors …) stay, as they do within one request.
 */
function keepOtherRoles(input: Record<string, unknown>, cols: ItemChanges, row: ItemRow): ItemChanges {
  if (!('authors' in input) || 'contributors' in input || !cols.contributors) return cols;
  const contributors = normalizeContributors([...cols.contributors, ...row.contributors.filter((c) => c.role !== 'author' && c.role !== 'writer')]);
  return { ...cols, contributors, authors: authorsOf(contributors) };
}

const searchFields = (i: Catalog.MediaItem) => ({
  title: i.title,
  sort_title: i.sort_title,
  authors: i.authors,
  contributors: i.contributors,
  tags: i.tags,
  series: i.series,
  series_index: i.series_index,
  language: i.language,
  publisher: i.publisher,
  year: i.year,
});

export async function createItem(ctx: Ctx, req: { caller: Caller; input: Record<string, unknown> }): Promise<Result<Catalog.MediaItem>> {
  const denied = requireAdmin(req.caller);
  if (denied) return err(denied);
  const libId = req.input.library_id;
  if (libId === undefined || libId === null || libId === '') return err(invalid('library_id is required'));
  if (!isUuid(libId)) return err(fail('validation', Messages.invalidLibraryId));
  const lib = await findLibrary(ctx.db, libId.toLowerCase());
  if (!lib) return err(fail('not_found', Messages.libraryNotFound));
  if (lib.folders.length === 0) return err(fail('validation', Messages.libraryHasNoFolders));
  const fields = parseItemFields(req.input, true);
  if (!fields.ok) return fields;
  let filePath: string | null = null;
  if (req.input.file_path !== undefined && req.input.file_path !== null) {
    if (typeof req.input.file_path !== 'string' || !isSafeRelPath(req.input.file_path)) return err(invalid('file_path must be a relative path inside the library'));
    filePath = req.input.file_path;
  }
  const id = randomUUID();
  const cols = editColumns(fields.value);
  const item = await ctx.tx(async (trx) => {
    const now = await ctx.now(trx);
    const state: ItemState = {
      files: [],
      hashes: [],
      row: {
        id,
        library_id: lib.id,
        source: 'api',
        file_path: filePath,
        group_dir: null,
        group_title: groupTitle(cols.title!),
        title: cols.title!,
        sort_title: cols.sort_title!,
        contributors: cols.contributors ?? [],
        authors: cols.authors ?? [],
        series: cols.series ?? null,
        series_index: cols.series_index ?? null,
        language: cols.language ?? null,
        ...Catalog.textDetailsOf(cols),
        description: cols.description ?? null,
        identifiers: cols.identifiers ?? {},
        tags: cols.tags ?? [],
        year: cols.year ?? null,
        page_count: cols.page_count ?? null,
        reading_direction: cols.reading_direction ?? null,
        cover_key: null,
        cover_ready: false,
        added_by_admin: req.caller.user_id,
        // an item made through the API has no file values: a scan never changes its fields
        locked_fields: [],
        file_fields: null,
        calibre: null,
        state: 'active',
        version: 0,
        missing_since: null,
        created_at: now,
        updated_at: now,
      },
    };
    const data = eventData(state);
    await ctx.emit(trx, `item-${id}`, [{ type: 'catalog.media-item-added.v1', data }], -1);
    return toPublic(state.row, [], []);
  });
  return ok(item);
}

export async function updateItemCmd(ctx: Ctx, req: { caller: Caller; id: string; input: Record<string, unknown> }): Promise<Result<Catalog.CatalogResult<'item-update'>>> {
  // an admin, or a user allowed to edit metadata (issue 43; the gateway's auth.requireEditor)
  const denied = requireEditor(req.caller);
  if (denied) return err(denied);
  if (!isUuid(req.id)) return badId();
  const fields = parseItemFields(req.input, false);
  if (!fields.ok) return fields;
  const reset = 'reset_fields' in req.input ? lockableList(req.input.reset_fields) : [];
  if (!reset) return err(invalid(Messages.resetFieldsInvalid));
  const id = req.id.toLowerCase();
  return ctx.tx(async (trx): Promise<Result<Catalog.CatalogResult<'item-update'>>> => {
    const s = await loadItem(trx, id);
    if (!s) return notFound();
    const cols = keepOtherRoles(req.input, editColumns(fields.value, s.row.language), s.row);
    const now = await ctx.now(trx);
    if (Object.keys(cols).length > 0) {
      if (cols.title) cols.group_title = groupTitle(cols.title);
      applyEdit(s, cols, now);
    }
    // a field both set and reset: the reset wins (it is the later word of the form)
    if (reset.length > 0) resetFields(s, reset, now);
    if (Object.keys(cols).length > 0 || reset.length > 0) await emitItem(ctx, trx, s, 'edit');
    const item = toPublic(
      s.row,
      s.files,
      s.hashes.map((h) => h.sha256),
    );
    return ok({ ...item, search_fields: searchFields(item) });
  });
}

export async function deleteItem(ctx: Ctx, req: { caller: Caller; id: string }): Promise<Result<{ message: string }>> {
  const denied = requireAdmin(req.caller);
  if (denied) return err(denied);
  if (!isUuid(req.id)) return badId();
  const id = req.id.toLowerCase();
  return ctx.tx(async (trx): Promise<Result<{ message: string }>> => {
    const row = await findItem(trx, id, { lock: true });
    if (!row) return notFound();
    await ctx.lockLibrary(trx, row.library_id);
    await removeItem(ctx, trx, id, 'deleted');
    return ok({ message: 'media item deleted' });
  });
}

function parseIds(input: Record<string, unknown>): Result<string[]> {
  const ids = input.ids ?? input.media_item_ids;
  if (!Array.isArray(ids) || ids.length === 0) return err(invalid('ids must be a non-empty list of media item ids'));
  if (ids.length > LIMITS.bulkIds) return err(invalid(`at most ${LIMITS.bulkIds} ids per request`));
  return ok(ids.map((x) => (typeof x === 'string' ? x : String(x))));
}

interface BulkReport {
  message: string;
  succeeded: string[];
  failed: { id: string; error: string }[];
}

const report = (verb: string, succeeded: string[], failed: BulkReport['failed']): BulkReport => ({
  message: failed.length === 0 ? `${succeeded.length} media items ${verb}` : `${succeeded.length} media items ${verb}, ${failed.length} failed`,
  succeeded,
  failed,
});

export async function bulkDelete(ctx: Ctx, req: { caller: Caller; input: Record<string, unknown> }): Promise<Result<BulkReport>> {
  const denied = requireAdmin(req.caller);
  if (denied) return err(denied);
  const ids = parseIds(req.input);
  if (!ids.ok) return ids;
  const done: string[] = [];
  const failed: BulkReport['failed'] = [];
  for (const raw of [...new Set(ids.value)]) {
    const r = await deleteItem(ctx, { caller: req.caller, id: raw });
    if (r.ok) done.push(raw.toLowerCase());
    else failed.push({ id: raw, error: r.error.message });
  }
  return ok(report('deleted', done, failed));
}

/** Items edited in one transaction by a bulk update. */
const BULK_CHUNK = 100;

export async function bulkUpdate(ctx: Ctx, req: { caller: Caller; input: Record<string, unknown> }): Promise<Result<BulkReport>> {
  const denied = requireEditor(req.caller);
  if (denied) return err(denied);
  const ids = parseIds(req.input);
  if (!ids.ok) return ids;
  const changes = req.input.changes ?? req.input.updates;
  if (!changes || typeof changes !== 'object' || Array.isArray(changes)) return err(invalid('changes must be an object'));
  const c = changes as Record<string, unknown>;
  const fields = parseItemFields(c, false);
  if (!fields.ok) return fields;
  const addRemove: Record<'add_tags' | 'remove_tags', string[]> = { add_tags: [], remove_tags: [] };
  for (const k of ['add_tags', 'remove_tags'] as const) {
    if (!(k in c)) continue;
    const v = c[k];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x.length > LIMITS.listEntry) || v.length > LIMITS.listEntries)
      return err(invalid(`${k} must be a list of strings`));
    addRemove[k] = normalizeList(v as string[]);
  }
  const cols = editColumns(fields.value);
  if (Object.keys(cols).length === 0 && addRemove.add_tags.length === 0 && addRemove.remove_tags.length === 0) return err(invalid('changes has no field to update'));
  const done: string[] = [];
  const failed: BulkReport['failed'] = [];
  const unique = [...new Set(ids.value)];
  const wanted = unique.filter(isUuid);
  const found = new Set<string>();
  // BULK_CHUNK items a transaction: a commit per item made 1,000 items outlast the gateway's
  // request (10 s on Postgres); a chunk commits its items' events together or not at all
  for (let at = 0; at < wanted.length; at += BULK_CHUNK) {
    const chunk = wanted.slice(at, at + BULK_CHUNK);
    const seen = await ctx.tx(async (trx: CTrx) => {
      const now = await ctx.now(trx);
      const edited: string[] = [];
      for (const raw of chunk) {
        const s = await loadItem(trx, raw.toLowerCase());
        if (!s) continue;
        const row = s.row;
        const mine = keepOtherRoles(c, { ...cols }, row);
        if (addRemove.add_tags.length || addRemove.remove_tags.length) {
          const drop = new Set(addRemove.remove_tags.map((x) => x.toLocaleLowerCase('und')));
          mine.tags = normalizeList([...(mine.tags ?? row.tags), ...addRemove.add_tags]).filter((x) => !drop.has(x.toLocaleLowerCase('und')));
        }
        if (mine.title) mine.group_title = groupTitle(mine.title);
        applyEdit(s, mine, now);
        await emitItem(ctx, trx, s, 'edit');
        edited.push(raw);
      }
      return edited;
    });
    for (const raw of seen) found.add(raw);
  }
  // reported in the order asked
  for (const raw of unique) {
    if (!isUuid(raw)) failed.push({ id: raw, error: Messages.invalidMediaItemId });
    else if (found.has(raw)) done.push(raw.toLowerCase());
    else failed.push({ id: raw, error: Messages.mediaItemNotFound });
  }
  return ok(report('updated', done, failed));
}

export async function itemCover(ctx: Ctx, req: { caller: Caller; id: string; kind: 'cover' | 'thumbnail' }): Promise<Result<Catalog.CoverFile>> {
  if (!isUuid(req.id)) return badId();
  const row = await findItem(ctx.db, req.id.toLowerCase());
  if (!row) return notFound();
  if (!row.cover_key) return err(fail('not_found', Messages.coverNotFound));
  const file = coverFile(ctx, row.cover_key, req.kind);
  // not rendered yet (covers are made after a scan): make it now
  if (!row.cover_ready && !(await ensureCover(ctx, row.id))) return err(fail('not_found', Messages.coverNotFound));
  try {
    const [data, st] = await Promise.all([readFile(file), stat(file)]);
    return ok({ content_type: 'image/jpeg', etag: `"${row.cover_key.slice(0, 16)}-${req.kind[0]}-${st.size}"`, data_base64: data.toString('base64') });
  } catch {
    return err(fail('not_found', Messages.coverNotFound));
  }
}

/**
 * An editor's picture as the item's cover: rendered into the cover directory like a book's (the
 * same sizes, named by the picture's SHA-256, so the address and ETag change), and the cover field
 * locked, so a rescan keeps it. The files are a cache of the picture; the event names its key.
 */
export async function setCover(ctx: Ctx, req: { caller: Caller; id: string; jpeg_base64: string }): Promise<Result<Catalog.MediaItem>> {
  const denied = requireEditor(req.caller);
  if (denied) return err(denied);
  if (!isUuid(req.id)) return badId();
  const image = Buffer.from(req.jpeg_base64, 'base64');
  if (image.length === 0) return err(invalid(Messages.coverImageInvalid));
  // no cover files rendered for an item that is not there
  if (!(await findItem(ctx.db, req.id.toLowerCase()))) return notFound();
  const key = createHash('sha256').update(image).digest('hex');
  try {
    await writeCovers(image, dirname(coverFile(ctx, key, 'cover')), key);
  } catch {
    return err(invalid(Messages.coverImageInvalid));
  }
  return changeItem(ctx, req.id.toLowerCase(), (s, now) => applyEdit(s, { cover_key: key }, now));
}

/** The item's cover back to its file's own (unlocked: a rescan sets it again). */
export async function resetCover(ctx: Ctx, req: { caller: Caller; id: string }): Promise<Result<Catalog.MediaItem>> {
  const denied = requireEditor(req.caller);
  if (denied) return err(denied);
  if (!isUuid(req.id)) return badId();
  return changeItem(ctx, req.id.toLowerCase(), (s, now) => resetFields(s, ['cover'], now));
}

async function changeItem(ctx: Ctx, id: string, change: (s: ItemState, now: Date) => void): Promise<Result<Catalog.MediaItem>> {
  return ctx.tx(async (trx): Promise<Result<Catalog.MediaItem>> => {
    const s = await loadItem(trx, id);
    if (!s) return notFound();
    change(s, await ctx.now(trx));
    await emitItem(ctx, trx, s, 'edit');
    return ok(
      toPublic(
        s.row,
        s.files,
        s.hashes.map((h) => h.sha256),
      ),
    );
  });
}
