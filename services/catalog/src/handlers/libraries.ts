// Library commands and queries: create, read, list, update, delete, and the folder browser.
import { resolve as resolvePath } from 'node:path';
import { randomUUID } from 'node:crypto';
import { err, fail, Messages, ok, type Catalog, type Result } from '@bindery/contracts';
import { checkFolder, inSystemTree, isInside, isSystemFolder, overlaps, realOrResolved } from '@bindery/platform';
import { realpath } from 'node:fs/promises';
import { cleanText } from '../domain/normalize';
import { invalid, isUuid, LIMITS } from '../domain/validate';
import { allLibraries, findLibrary, nameTaken, publicLibraries, toPublicLibrary, type LibraryRow } from '../store/libraries';
import { countActive } from '../store/items';
import { SCHEMA } from '../store/migrations';
import { browse as browseFolders } from './browse';
import { requireAdmin, type Ctx } from './context';
import { requestScan } from './scans';
import type { CTrx } from '../store/schema';

type Caller = Catalog.CatalogRequest<'library-list'>['caller'];

export async function listLibraries(ctx: Ctx, _req: { caller: Caller }): Promise<Result<Catalog.Library[]>> {
  return ok(await publicLibraries(ctx.db, await allLibraries(ctx.db)));
}

export async function getLibrary(ctx: Ctx, req: { caller: Caller; id: string }): Promise<Result<Catalog.Library>> {
  if (!isUuid(req.id)) return err(fail('validation', Messages.invalidLibraryId));
  const row = await findLibrary(ctx.db, req.id.toLowerCase());
  if (!row) return err(fail('not_found', Messages.libraryNotFound));
  return ok((await publicLibraries(ctx.db, [row]))[0]!);
}

/**
 * Why a folder (its real path) may not hold a library, or null: a system folder, or one that is,
 * holds or lies inside the data directory (the token secret, the database, covers).
 */
export async function forbiddenFolder(ctx: Ctx, real: string): Promise<string | null> {
  if (isSystemFolder(real)) return Messages.folderIsSystem;
  if (overlaps(await realOrResolved(ctx.rt.dataDir), real)) return Messages.folderOverlapsDataDir;
  return null;
}

/** Folders: absolute, existing, readable directories inside the allowed roots, none inside another. */
async function parseFolders(ctx: Ctx, v: unknown): Promise<Result<string[]>> {
  if (!Array.isArray(v) || v.some((f) => typeof f !== 'string')) return err(invalid('folders must be a list of absolute paths'));
  if (v.length > LIMITS.folders) return err(invalid(`a library can have at most ${LIMITS.folders} folders`));
  const out: { given: string; real: string }[] = [];
  const realRoots = await Promise.all(ctx.opts.roots.map((r) => realpath(r).catch(() => r)));
  for (const raw of v as string[]) {
    if (raw.length > LIMITS.folderPath || raw.includes('\0')) return err(invalid(`folder path is not valid: ${raw.slice(0, 200)}`));
    const c = await checkFolder(raw);
    if (!c.ok) return err(invalid(c.reason));
    if (!realRoots.some((r) => isInside(r, c.real))) return err(invalid(`${Messages.pathOutsideAllowed}: ${raw}`));
    const forbidden = await forbiddenFolder(ctx, c.real);
    if (forbidden) return err(invalid(`${forbidden}: ${raw}`));
    const given = resolvePath(raw);
    if (out.some((o) => o.real === c.real)) continue;
    const nested = out.find((o) => isInside(o.real, c.real) || isInside(c.real, o.real));
    if (nested) return err(invalid(`folders must not be nested: ${given} and ${nested.given}`));
    out.push({ given, real: c.real });
  }
  return ok(out.map((o) => o.given));
}

function parseName(v: unknown): Result<string> {
  if (typeof v !== 'string' || cleanText(v) === '') return err(invalid('name is required'));
  const name = cleanText(v);
  if (name.length > LIMITS.name) return err(invalid(`name must be at most ${LIMITS.name} characters`));
  return ok(name);
}

function parseWatch(v: unknown): Result<boolean> {
  if (typeof v === 'boolean') return ok(v);
  if (v === 'true' || v === 'false') return ok(v === 'true');
  return err(invalid('watch must be true or false'));
}

export async function createLibrary(ctx: Ctx, req: { caller: Caller; input: Record<string, unknown> }): Promise<Result<Catalog.Library>> {
  const denied = requireAdmin(req.caller);
  if (denied) return err(denied);
  const name = parseName(req.input.name);
  if (!name.ok) return name;
  const folders = await parseFolders(ctx, req.input.folders ?? []);
  if (!folders.ok) return folders;
  const watch = 'watch' in req.input ? parseWatch(req.input.watch) : ok(true);
  if (!watch.ok) return watch;
  const id = randomUUID();
  const created = await ctx
    .tx(async (trx) => {
      if (await nameTaken(trx, name.value)) return null;
      const at = await ctx.now(trx);
      const row: LibraryRow = {
        id,
        name: name.value,
        folders: folders.value,
        watch: watch.value,
        created_by_admin: req.caller.user_id,
        created_at: at,
        updated_at: at,
        last_scan_at: null,
        version: 0,
      };
      const lib = toPublicLibrary(row, 0);
      // the projection writes the row (a name taken meanwhile fails its unique index: 23505 below)
      await ctx.emit(trx, `library-${id}`, [{ type: 'catalog.library-created.v1', data: { library: lib, by: req.caller.user_id } }], -1);
      if (lib.folders.length > 0) await requestScan(ctx, trx, id, 'library-changed', req.caller.user_id);
      return lib;
    })
    .catch((e) => {
      if ((e as { code?: string }).code === '23505') return null;
      throw e;
    });
  if (!created) return err(fail('conflict', 'library name already exists'));
  ctx.kick();
  return ok(created);
}

export async function updateLibrary(ctx: Ctx, req: { caller: Caller; id: string; input: Record<string, unknown> }): Promise<Result<Catalog.Library>> {
  const denied = requireAdmin(req.caller);
  if (denied) return err(denied);
  if (!isUuid(req.id)) return err(fail('validation', Messages.invalidLibraryId));
  const id = req.id.toLowerCase();
  const changes: Partial<Pick<LibraryRow, 'name' | 'folders' | 'watch'>> = {};
  if ('name' in req.input) {
    const n = parseName(req.input.name);
    if (!n.ok) return n;
    changes.name = n.value;
  }
  if ('folders' in req.input) {
    const f = await parseFolders(ctx, req.input.folders);
    if (!f.ok) return f;
    changes.folders = f.value;
  }
  if ('watch' in req.input) {
    const w = parseWatch(req.input.watch);
    if (!w.ok) return w;
    changes.watch = w.value;
  }
  const out = await ctx.tx(async (trx): Promise<Result<Catalog.Library>> => {
    const cur = await findLibrary(trx, id, true);
    if (!cur) return err(fail('not_found', Messages.libraryNotFound));
    if (changes.name && (await nameTaken(trx, changes.name, id))) return err(fail('conflict', 'library name already exists'));
    const foldersChanged = changes.folders !== undefined && JSON.stringify(changes.folders) !== JSON.stringify(cur.folders);
    const lib = (await changeLibrary(ctx, trx, id, req.caller.user_id, { ...changes, updated_at: await ctx.now(trx) }))!;
    if (foldersChanged) await requestScan(ctx, trx, id, 'library-changed', req.caller.user_id);
    return ok(lib);
  });
  ctx.kick();
  return out;
}

export async function deleteLibrary(ctx: Ctx, req: { caller: Caller; id: string }): Promise<Result<{ message: string }>> {
  const denied = requireAdmin(req.caller);
  if (denied) return err(denied);
  if (!isUuid(req.id)) return err(fail('validation', Messages.invalidLibraryId));
  const id = req.id.toLowerCase();
  const out = await ctx.tx(async (trx): Promise<Result<{ message: string }>> => {
    await ctx.lockLibrary(trx, id);
    const cur = await findLibrary(trx, id, true);
    if (!cur) return err(fail('not_found', Messages.libraryNotFound));
    // Items, formats, file issues and scan history go with it (cascade, when the projection deletes
    // its row); files on disk are never touched. Each item leaves by its own event first, so item
    // read models need no library logic.
    await emitLibraryItemsRemoved(ctx, trx, id);
    await ctx.emit(trx, `library-${id}`, [{ type: 'catalog.library-deleted.v1', data: { library_id: id, by: req.caller.user_id } }], cur.version);
    return ok({ message: 'library deleted' });
  });
  ctx.kick();
  return out;
}

/** What a command may change of a library. */
export type LibraryChanges = Partial<Pick<LibraryRow, 'name' | 'folders' | 'watch' | 'created_by_admin' | 'updated_at' | 'last_scan_at'>>;

/**
 * The library with `changes`, in a `library-updated` event (the projection writes the row); null
 * when it is gone. A library row's `version` is the version of its stream's last event: the append
 * expects it, and the event moves it on.
 */
export async function changeLibrary(ctx: Ctx, trx: CTrx, id: string, by: string | null, changes: LibraryChanges): Promise<Catalog.Library | null> {
  const row = await findLibrary(trx, id, true);
  if (!row) return null;
  const lib = toPublicLibrary({ ...row, ...changes }, (await countActive(trx, [id])).get(id) ?? 0);
  await ctx.emit(trx, `library-${id}`, [{ type: 'catalog.library-updated.v1', data: { library: lib, by } }], row.version);
  return lib;
}

/** One `media-item-removed` (reason `library-deleted`) per item of the library, missing ones too. */
async function emitLibraryItemsRemoved(ctx: Ctx, trx: CTrx, libraryId: string): Promise<void> {
  const t = trx.withSchema(SCHEMA);
  const items = await t.selectFrom('media_items').select('id').where('library_id', '=', libraryId).orderBy('id').execute();
  if (items.length === 0) return;
  const hashes = new Map<string, string[]>();
  for (const h of await t
    .selectFrom('format_hashes as h')
    .innerJoin('media_items as i', 'i.id', 'h.item_id')
    .select(['h.item_id', 'h.sha256'])
    .where('i.library_id', '=', libraryId)
    .orderBy('h.last_seen', 'desc')
    .execute()) {
    hashes.set(h.item_id, [...(hashes.get(h.item_id) ?? []), h.sha256]);
  }
  await ctx.emitMany(
    trx,
    items.map((i) => ({
      streamId: `item-${i.id}`,
      events: [
        {
          type: 'catalog.media-item-removed.v1' as const,
          data: { item_id: i.id, library_id: libraryId, reason: 'library-deleted' as const, sha256: hashes.get(i.id) ?? [] },
        },
      ],
    })),
  );
}

export async function browse(ctx: Ctx, req: { caller: Caller; path?: string }): Promise<Result<Catalog.CatalogResult<'browse'>>> {
  const denied = requireAdmin(req.caller);
  if (denied) return err(denied);
  const dataDir = await realOrResolved(ctx.rt.dataDir);
  // what could never hold a library, nor lead to one, is not offered: system trees and the data directory
  const r = await browseFolders(ctx.opts.roots, req.path, (real) => inSystemTree(real) || isInside(dataDir, real));
  if ('error' in r) return err(invalid(r.error));
  return ok(r);
}
