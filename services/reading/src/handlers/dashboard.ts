// The dashboard: the caller's collections shown on it (hidden ones removed, their order applied),
// each with its first books by media_item_id; and the preferences that hide and order them.
import { ok, type Result } from '@bindery/contracts';
import { collectionOut } from '../store/collections';
import { members, page } from './collections';
import { t, type Ctx } from './context';
import { bad, isUuid, no, type Req } from './util';

async function prefs(ctx: Ctx, user: string): Promise<{ hidden_collections: string[]; collection_order: string[] }> {
  const r = await t(ctx.rt.db).selectFrom('dashboard_prefs').selectAll().where('user_id', '=', user).executeTakeFirst();
  return { hidden_collections: (r?.hidden_collections as string[]) ?? [], collection_order: (r?.collection_order as string[]) ?? [] };
}

export async function getPrefs(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  return ok(await prefs(ctx, req.caller.user_id));
}

export async function putPrefs(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  const user = req.caller.user_id;
  const input = req.input ?? {};
  const cur = await prefs(ctx, user);
  const mine = new Set((await t(ctx.rt.db).selectFrom('collections').select('id').where('user_id', '=', user).execute()).map((r) => r.id as string));
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
    const values = { hidden_collections: JSON.stringify(next.hidden_collections), collection_order: JSON.stringify(next.collection_order) };
    await t(trx).insertInto('dashboard_prefs').values({ user_id: user, ...values }).onConflict((oc) => oc.column('user_id').doUpdateSet(values)).execute();
    await ctx.emit(trx, user, [{ type: 'reading.dashboard-preferences-changed.v1', data: { user_id: user, ...next } }]);
    return ok({ message: 'dashboard preferences updated', ...next });
  });
}

export async function sections(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  const user = req.caller.user_id;
  const p = page(req.query, 20);
  if (!p.ok) return p;
  const pr = await prefs(ctx, user);
  const hidden = new Set(pr.hidden_collections);
  const rows = (await t(ctx.rt.db).selectFrom('collections').selectAll().where('user_id', '=', user).where('show_on_dashboard', '=', true).orderBy('priority').orderBy('name').execute()).filter((r) => !hidden.has(r.id as string));
  const rank = new Map(pr.collection_order.map((id, i) => [id, i]));
  rows.sort((a, b) => (rank.get(a.id as string) ?? Infinity) - (rank.get(b.id as string) ?? Infinity));
  const out = [];
  for (const r of rows) {
    const m = await members(ctx, user, req.access, r, p.value);
    const c = collectionOut(r);
    out.push({ id: c.id, name: c.name, query_type: c.query_type, is_system: c.is_system, color: c.color, icon: c.icon, priority: c.priority, total: m.total, books: m.data });
  }
  return ok({ sections: out, hidden_collections: pr.hidden_collections, collection_order: pr.collection_order });
}
