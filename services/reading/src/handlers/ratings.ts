// A user's rating of a book: 0.5 to 5 stars in halves, with an optional review.
import { ok, type Reading, type Result } from '@bindery/contracts';
import type { Selectable } from 'kysely';
import type { RatingsTable } from '../store/db';
import { t, type Ctx } from './context';
import { bad, conflict, M, no, notFound, text, type Answer, type Req } from './util';

type Row = Selectable<RatingsTable>;
const out = (r: Row): Reading.RatingRecord => ({
  media_item_id: r.item_id,
  rating: r.rating,
  review: r.review,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

function parse(input: Record<string, unknown>): Result<{ rating: number; review?: string }> {
  const n = typeof input.rating === 'number' ? input.rating : typeof input.rating === 'string' && input.rating.trim() !== '' ? Number(input.rating) : NaN;
  if (!Number.isFinite(n) || n < 0.5 || n > 5 || !Number.isInteger(n * 2)) return no(bad(M.ratingRange));
  const review = text(input, 'review', 20_000);
  if (review === null) return no(bad('review must be text of at most 20000 characters'));
  return ok({ rating: n, ...(review !== undefined ? { review } : {}) });
}

export async function getRating(ctx: Ctx, req: Req<'rating-get'>): Answer<'rating-get'> {
  const r = await t(ctx.db).selectFrom('ratings').selectAll().where('user_id', '=', req.caller.user_id).where('item_id', '=', req.item_id).executeTakeFirst();
  return r ? ok(out(r)) : no(notFound(M.ratingNotFound));
}

async function write(ctx: Ctx, req: Req<'rating-put'>, mode: 'create' | 'put'): Answer<'rating-put'> {
  const p = parse(req.input ?? {});
  if (!p.ok) return p;
  const user = req.caller.user_id;
  const item = req.item_id;
  return ctx.tx(async (trx) => {
    await ctx.lock(trx, `rating.${user}.${item}`);
    const cur = await t(trx).selectFrom('ratings').selectAll().where('user_id', '=', user).where('item_id', '=', item).executeTakeFirst();
    if (cur && mode === 'create') return no(conflict(M.ratingExists));
    const now = ctx.now();
    const next: Row = cur
      ? { ...cur, rating: p.value.rating, ...(p.value.review !== undefined ? { review: p.value.review } : {}), updated_at: now }
      : { user_id: user, item_id: item, rating: p.value.rating, review: p.value.review ?? '', created_at: now, updated_at: now };
    // the projection writes the row
    await ctx.emit(trx, user, [{ type: 'reading.rating-set.v1', data: { user_id: user, media_item_id: item, rating: out(next) } }]);
    const row = await t(trx).selectFrom('ratings').selectAll().where('user_id', '=', user).where('item_id', '=', item).executeTakeFirstOrThrow();
    return ok({ ...out(row), created: !cur });
  });
}

export const createRating = (ctx: Ctx, req: Req<'rating-create'>): Answer<'rating-create'> => write(ctx, req, 'create');
export const putRating = (ctx: Ctx, req: Req<'rating-put'>): Answer<'rating-put'> => write(ctx, req, 'put');

export async function deleteRating(ctx: Ctx, req: Req<'rating-delete'>): Answer<'rating-delete'> {
  return ctx.tx(async (trx) => {
    const gone = await t(trx).selectFrom('ratings').select('item_id').where('user_id', '=', req.caller.user_id).where('item_id', '=', req.item_id).forUpdate().executeTakeFirst();
    if (!gone) return no(notFound(M.ratingNotFound));
    await ctx.emit(trx, req.caller.user_id, [{ type: 'reading.rating-deleted.v1', data: { user_id: req.caller.user_id, media_item_id: req.item_id } }]);
    return ok({ message: 'rating deleted' });
  });
}
