// The web reader's settings kept in the profile: for all books, or for one book (which then wins for
// it). The reading service checks them strictly and tells them as events; it keeps no table of its
// own (nothing it decides depends on them): the gateway's read model folds the events and serves them.
import { ok, Reading, type Result } from '@bindery/contracts';
import type { Ctx } from './context';
import { bad, no, type Answer, type Req } from './util';

const { ReaderSettingsValues: VALUES, READER_FONT_SIZE: SIZE } = Reading;
const KEYS = ['font_size', ...Object.keys(VALUES)] as readonly string[];

/** The settings of a body, each value checked; a failure names the first field that is wrong. */
export function parseSettings(input: Record<string, unknown>): Result<Reading.ReaderSettings> {
  const unknown = Object.keys(input).find((k) => !KEYS.includes(k));
  if (unknown !== undefined) return no(bad(`unknown reader setting: ${unknown.length > 40 ? `${unknown.slice(0, 40)}…` : unknown}; known: ${KEYS.join(', ')}`));
  const out: Record<string, unknown> = {};
  const size = input.font_size;
  if (size !== undefined && size !== null) {
    if (typeof size !== 'number' || !Number.isInteger(size) || size < SIZE.min || size > SIZE.max) {
      return no(bad(`font_size must be a whole number from ${SIZE.min} to ${SIZE.max} (per cent)`));
    }
    out.font_size = size;
  }
  for (const [k, allowed] of Object.entries(VALUES) as [string, readonly string[]][]) {
    const v = input[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' || !allowed.includes(v)) return no(bad(`${k} must be one of ${allowed.join(', ')}`));
    out[k] = v;
  }
  if (Object.keys(out).length === 0) return no(bad(`at least one reader setting is required: ${KEYS.join(', ')}`));
  return ok(out as Reading.ReaderSettings);
}

/** Replaces the caller's settings for all books (no item) or for the item (its own settings). */
export async function putReaderSettings(ctx: Ctx, req: Req<'reader-settings-put'>): Answer<'reader-settings-put'> {
  const p = parseSettings(req.input ?? {});
  if (!p.ok) return p;
  const user = req.caller.user_id;
  const item = req.item_id ?? null;
  const updated_at = ctx.now().toISOString();
  return ctx.tx(async (trx) => {
    await ctx.emit(trx, user, [{ type: 'reading.reader-settings-set.v1', data: { user_id: user, media_item_id: item, settings: p.value, updated_at } }]);
    return ok({ message: 'reader settings saved', media_item_id: item, settings: p.value, updated_at });
  });
}

/** The item's own settings are dropped: it follows the settings for all books again (no error when it had none). */
export async function deleteReaderSettings(ctx: Ctx, req: Req<'reader-settings-delete'>): Answer<'reader-settings-delete'> {
  const user = req.caller.user_id;
  const item = req.item_id;
  if (!item) return no(bad('a book is required'));
  return ctx.tx(async (trx) => {
    await ctx.emit(trx, user, [{ type: 'reading.reader-settings-cleared.v1', data: { user_id: user, media_item_id: item } }]);
    return ok({ message: 'reader settings removed', media_item_id: item });
  });
}
