// Covers and thumbnails are made after a scan, not during it: a scan records that a book has a
// cover (its key is the file's SHA-256), and this worker renders the files, a few at a time,
// or at once when a client asks for a cover that is not on disk yet.
import { createHash } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { resolveInside } from '@bindery/platform';
import { extract, writeCovers, type BookFormat } from '../formats/index';
import { findLibrary } from '../store/libraries';
import { hasLocatorIndex, saveLocatorIndexes } from '../store/locator';
import { SCHEMA } from '../store/migrations';
import type { Ctx } from '../handlers/context';
import { loadItem } from '../store/item-state';
import { emitItem } from './scan-library';

export const coverFile = (ctx: Ctx, key: string, kind: 'cover' | 'thumbnail') => join(ctx.opts.coverDir, key.slice(0, 2), `${key}${kind === 'thumbnail' ? '-thumb' : ''}.jpg`);

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

/**
 * Makes the cover files of one item when they are missing. True when they exist afterwards; an
 * item whose book turns out to have no usable cover loses its cover key (and says so in an event,
 * cause `cover`). A cover becoming ready changes nothing a reader sees (`cover_url` is set from
 * the scan on), so that emits nothing: the files are a cache of the book's picture. `withIndex`
 * (the background pass, not a request) also stores the EPUB's locator index when it is missing.
 */
export async function ensureCover(ctx: Ctx, itemId: string, withIndex = false): Promise<boolean> {
  const db = ctx.db.withSchema(SCHEMA);
  const item = await db.selectFrom('media_items').select(['id', 'library_id', 'cover_key', 'cover_ready']).where('id', '=', itemId).executeTakeFirst();
  if (!item?.cover_key) return false;
  const key = item.cover_key;
  if (await exists(coverFile(ctx, key, 'thumbnail'))) {
    if (!item.cover_ready) await db.updateTable('media_items').set({ cover_ready: true }).where('id', '=', itemId).execute();
    return true;
  }
  const lib = await findLibrary(ctx.db, item.library_id);
  const fmt = await db
    .selectFrom('media_formats')
    .select(['rel_path', 'format', 'sha256'])
    .where('item_id', '=', itemId)
    .where('present', '=', true)
    .where('sha256', '=', key)
    .limit(1)
    .executeTakeFirst();
  let made = false;
  // a book of a calibre library shows calibre's cover.jpg beside its files (scanner/calibre-overlay.ts)
  if (lib && !fmt) made = await fromCoverJpg(ctx, itemId, lib.folders, key);
  if (lib && fmt) {
    const file = await resolveInside(lib.folders, fmt.rel_path);
    if (file) {
      try {
        // the background pass reading an EPUB for its cover takes its locator index too, when still missing
        const wantIndex = withIndex && fmt.format === 'epub' && !(await hasLocatorIndex(ctx.db, key));
        const x = await extract(file.abs, fmt.format as BookFormat, { renderPdfCover: true, locator: wantIndex });
        if (x.locator) await saveLocatorIndexes(ctx.db, [{ sha256: key, index: x.locator }]);
        if (x.cover) {
          await writeCovers(x.cover, join(ctx.opts.coverDir, key.slice(0, 2)), key);
          made = true;
        }
      } catch (e) {
        ctx.rt.log.debug({ item: itemId, err: e instanceof Error ? e.message : String(e) }, 'no usable cover');
      }
    }
  }
  if (made) {
    await db.updateTable('media_items').set({ cover_ready: true }).where('id', '=', itemId).execute();
    return true;
  }
  // a picture a person set is not made from the book: it is either on disk or gone
  if ((await db.selectFrom('media_items').select('locked_fields').where('id', '=', itemId).executeTakeFirst())?.locked_fields.includes('cover')) return false;
  await ctx.tx(async (trx) => {
    // a book that went missing meanwhile keeps its cover until its file is back (nor would its
    // change be in any event: no reader sees a missing item)
    const s = await loadItem(trx, itemId);
    if (!s || s.row.cover_key !== key) return;
    s.row = { ...s.row, cover_key: null };
    if (s.row.file_fields) s.row.file_fields = { ...s.row.file_fields, cover_key: null };
    await emitItem(ctx, trx, s, 'cover');
  });
  return false;
}

/** Renders the cover from a `cover.jpg` in one of the item's folders whose bytes have the key's hash. */
async function fromCoverJpg(ctx: Ctx, itemId: string, folders: string[], key: string): Promise<boolean> {
  const dirs = await ctx.db.withSchema(SCHEMA).selectFrom('media_formats').select('rel_path').where('item_id', '=', itemId).where('present', '=', true).execute();
  for (const dir of new Set(dirs.map((d) => posix.dirname(d.rel_path)))) {
    const file = await resolveInside(folders, dir === '.' ? 'cover.jpg' : `${dir}/cover.jpg`);
    if (!file) continue;
    try {
      const bytes = await readFile(file.abs);
      if (createHash('sha256').update(bytes).digest('hex') !== key) continue;
      await writeCovers(bytes, join(ctx.opts.coverDir, key.slice(0, 2)), key);
      return true;
    } catch (e) {
      ctx.rt.log.debug({ item: itemId, err: e instanceof Error ? e.message : String(e) }, 'no usable cover.jpg');
    }
  }
  return false;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * After a piece of background work begun at `before`: a pause as long (at most 50 ms), then until the
 * process answers no request (at most a second; `rt.foreground`: this process's RPCs, and in embedded
 * mode the gateway's HTTP requests too): on a small machine a download or a page that arrives during
 * the passes after a scan does not share the cores with them.
 */
export async function breathe(ctx: Ctx, before: number): Promise<void> {
  await sleep(Math.min(50, Date.now() - before));
  for (const until = Date.now() + 1000; ctx.rt.foreground.active > 0 && Date.now() < until; ) await sleep(10);
}

/** Renders every missing cover, oldest first, until none is left or `stopping()` says so. */
export async function renderMissingCovers(ctx: Ctx, stopping: () => boolean): Promise<number> {
  let done = 0;
  for (;;) {
    const todo = await ctx.db
      .withSchema(SCHEMA)
      .selectFrom('media_items')
      .select('id')
      .where('cover_key', 'is not', null)
      .where('cover_ready', '=', false)
      .where('state', '=', 'active')
      .orderBy('updated_at')
      .limit(32)
      .execute();
    if (todo.length === 0) return done;
    let progressed = false;
    for (const t of todo) {
      if (stopping()) return done;
      const before = Date.now();
      if (await ensureCover(ctx, t.id, true)) done++;
      progressed = true;
      await breathe(ctx, before);
    }
    if (!progressed) return done;
  }
}
