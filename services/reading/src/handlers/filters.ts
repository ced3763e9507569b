// Saved filters per user: a name, the resource they filter (`resource_type`) and the filter itself.
import { ok, type Reading, type Result } from '@bindery/contracts';
import type { Selectable } from 'kysely';
import type { SavedFiltersTable, Trx } from '../store/db';
import { t, type Ctx } from './context';
import { bad, isUuid, M, newId, no, notFound, q1, text, type Answer, type Req } from './util';

type Row = Selectable<SavedFiltersTable>;
const out = (r: Row): Reading.SavedFilterRecord => ({
  id: r.id,
  name: r.name,
  resource_type: r.resource_type,
  filter: r.filter,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});
const RESOURCE = /^[a-z][a-z0-9_-]{0,49}$/;

type FilterFields = Pick<Row, 'name' | 'resource_type' | 'filter'>;

/** Validates the fields of a create (all of them) or an update (those given). */
function fields(input: Record<string, unknown>, creating: true): Result<FilterFields>;
function fields(input: Record<string, unknown>, creating: false): Result<Partial<FilterFields>>;
function fields(input: Record<string, unknown>, creating: boolean): Result<Partial<FilterFields>> {
  const o: Partial<FilterFields> = {};
  const name = text(input, 'name', 100);
  if (name === null) return no(bad('name must be text of at most 100 characters'));
  if (creating || name !== undefined) {
    if (!name?.trim()) return no(bad('name is required'));
    o.name = name.trim();
  }
  const rt = input.resource_type;
  if (creating || rt !== undefined) {
    if (rt === undefined || rt === null || rt === '') return no(bad(M.resourceTypeRequired));
    if (typeof rt !== 'string' || !RESOURCE.test(rt)) return no(bad('resource_type must be a lower-case name like media_items'));
    o.resource_type = rt;
  }
  const f = input.filter;
  if (creating || f !== undefined) {
    if (f === null || typeof f !== 'object') return no(bad('filter must be an object or a list'));
    const s = JSON.stringify(f);
    if (s.length > 65_536) return no(bad('filter must be at most 65536 characters of JSON'));
    o.filter = f;
  }
  return ok(o);
}

/** Saves a filter as `row` says (its event, which the projection folds): the row as stored. */
async function save(ctx: Ctx, trx: Trx, row: Row): Promise<Row> {
  await ctx.emit(trx, row.user_id, [{ type: 'reading.saved-filter-saved.v1', data: { user_id: row.user_id, filter: out(row) } }]);
  return t(trx).selectFrom('saved_filters').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
}

async function find(q: Parameters<typeof t>[0], req: Pick<Req<'filter-get'>, 'caller' | 'id'>): Promise<Result<Row>> {
  if (!isUuid(req.id)) return no(bad(M.invalidSavedFilterId));
  const r = await t(q).selectFrom('saved_filters').selectAll().where('id', '=', req.id.toLowerCase()).where('user_id', '=', req.caller.user_id).executeTakeFirst();
  return r ? ok(r) : no(notFound(M.savedFilterNotFound));
}

export async function listFilters(ctx: Ctx, req: Req<'filters-list'>): Answer<'filters-list'> {
  let q = t(ctx.db).selectFrom('saved_filters').selectAll().where('user_id', '=', req.caller.user_id);
  const rt = q1(req.query, 'resource_type');
  if (rt !== undefined && rt !== '') {
    if (!RESOURCE.test(rt)) return no(bad('resource_type must be a lower-case name like media_items'));
    q = q.where('resource_type', '=', rt);
  }
  return ok({ data: (await q.orderBy('name').orderBy('id').execute()).map(out) });
}

export async function getFilter(ctx: Ctx, req: Req<'filter-get'>): Answer<'filter-get'> {
  const r = await find(ctx.db, req);
  return r.ok ? ok(out(r.value)) : r;
}

export async function createFilter(ctx: Ctx, req: Req<'filter-create'>): Answer<'filter-create'> {
  const f = fields(req.input ?? {}, true);
  if (!f.ok) return f;
  const user = req.caller.user_id;
  return ctx.tx(async (trx) => {
    const now = ctx.now();
    return ok(out(await save(ctx, trx, { id: newId(), user_id: user, ...f.value, created_at: now, updated_at: now })));
  });
}

export async function updateFilter(ctx: Ctx, req: Req<'filter-update'>): Answer<'filter-update'> {
  return ctx.tx(async (trx) => {
    await ctx.lockUser(trx, req.caller.user_id);
    const cur = await find(trx, req);
    if (!cur.ok) return cur;
    const f = fields(req.input ?? {}, false);
    if (!f.ok) return f;
    return ok(out(await save(ctx, trx, { ...cur.value, ...f.value, updated_at: ctx.now() })));
  });
}

export async function deleteFilter(ctx: Ctx, req: Req<'filter-delete'>): Answer<'filter-delete'> {
  return ctx.tx(async (trx) => {
    await ctx.lockUser(trx, req.caller.user_id);
    const cur = await find(trx, req);
    if (!cur.ok) return cur;
    await ctx.emit(trx, req.caller.user_id, [{ type: 'reading.saved-filter-deleted.v1', data: { user_id: req.caller.user_id, filter_id: cur.value.id } }]);
    return ok({ message: 'saved filter deleted' });
  });
}
