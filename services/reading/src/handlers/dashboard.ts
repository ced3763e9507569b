// Dashboard preferences: which of the caller's collections the dashboard hides, and their order.
// The sections themselves are served by the gateway from its projections.
import { ok } from '@bindery/contracts';
import { t, type Ctx } from './context';
import { bad, isUuid, no, type Answer, type Req } from './util';

async function prefs(ctx: Ctx, user: string): Promise<{ hidden_collections: string[]; collection_order: string[] }> {
  const r = await t(ctx.db).selectFrom('dashboard_prefs').selectAll().where('user_id', '=', user).executeTakeFirst();
  return { hidden_collections: r?.hidden_collections ?? [], collection_order: r?.collection_order ?? [] };
}

export async function getPrefs(ctx: Ctx, req: Req<'dashboard-prefs-get'>): Answer<'dashboard-prefs-get'> {
  return ok(await prefs(ctx, req.caller.user_id));
}

export async function putPrefs(ctx: Ctx, req: Req<'dashboard-prefs-put'>): Answer<'dashboard-prefs-put'> {
  const user = req.caller.user_id;
  const input = req.input ?? {};
  const cur = await prefs(ctx, user);
  const mine = new Set((await t(ctx.db).selectFrom('collections').select('id').where('user_id', '=', user).execute()).map((r) => r.id));
  const next = { ...cur };
  for (const key of ['hidden_collections', 'collection_order'] as const) {
    const v = input[key];
    if (v === undefined) continue;
    if (!Array.isArray(v) || v.length > 1000 || !v.every(isUuid)) return no(bad(`${key} must be a list of collection ids`));
    const ids = [...new Set(v.map((x) => x.toLowerCase()))];
    const unknown = ids.find((i) => !mine.has(i));
    if (unknown) return no(bad(`collection not found: ${unknown}`));
    next[key] = ids;
  }
  if (input.hidden_collections === undefined && input.collection_order === undefined) return no(bad('hidden_collections or collection_order is required'));
  return ctx.tx(async (trx) => {
    // the projection writes the row
    await ctx.emit(trx, user, [{ type: 'reading.dashboard-preferences-changed.v1', data: { user_id: user, ...next } }]);
    return ok({ message: 'dashboard preferences updated', ...next });
  });
}
