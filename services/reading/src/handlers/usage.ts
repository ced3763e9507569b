// How much reading data hangs on each item, for the hash-conflict list.
import { sql } from 'kysely';
import { ok, type Reading, type Result } from '@bindery/contracts';
import { t, type Ctx } from './context';
import { isUuid } from './util';

export async function usageCounts(ctx: Ctx, req: Reading.ReadingRequest<'usage-counts'>): Promise<Result<Reading.ReadingResult<'usage-counts'>>> {
  const ids = [...new Set(req.item_ids.filter(isUuid).map((i) => i.toLowerCase()))];
  const counts: Record<string, Reading.Usage> = {};
  for (const id of ids) counts[id] = { progress: 0, highlights: 0, bookmarks: 0, notes: 0, collections: 0 };
  if (ids.length === 0) return ok({ counts });
  const db = ctx.db;
  const progress = await t(db)
    .selectFrom('progress')
    .select(['item_id', sql<number>`count(*)::int`.as('n')])
    .where('item_id', 'in', ids)
    .groupBy('item_id')
    .execute();
  for (const r of progress) counts[r.item_id]!.progress = Number(r.n);
  const notes = await t(db)
    .selectFrom('annotations')
    .select(['item_id', 'kind', sql<number>`count(*)::int`.as('n')])
    .where('item_id', 'in', ids)
    .where('deleted_at', 'is', null)
    .groupBy(['item_id', 'kind'])
    .execute();
  for (const r of notes) {
    const key = `${r.kind}s` as 'highlights' | 'bookmarks' | 'notes';
    counts[r.item_id]![key] = Number(r.n);
  }
  const members = await t(db)
    .selectFrom('collection_items')
    .select(['item_id', sql<number>`count(*)::int`.as('n')])
    .where('item_id', 'in', ids)
    .groupBy('item_id')
    .execute();
  for (const r of members) counts[r.item_id]!.collections = Number(r.n);
  return ok({ counts });
}
