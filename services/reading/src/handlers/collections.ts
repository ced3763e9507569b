// Collections: the five system ones (rules of the spec's table; restorable), custom ones (add and
// remove items, optionally auto-assign rules for newly scanned items) and smart ones (rules), with a
// preview of rules before creating.
import { ok, type Result } from '@bindery/contracts';
import type { Selectable } from 'kysely';
import type { CollectionsTable, Trx } from '../store/db';
import { parseRules, type Rules } from '../domain/rules';
import { systemCollection, SYSTEM_COLLECTIONS, type SystemQuery } from '../domain/system-collections';
import { parseColor } from '../domain/annotation';
import { collectionOut, collectionRow, systemCollectionToMake } from '../store/collections';
import { customMembers, itemMatches, ruleMembers, systemMembers } from '../store/membership';
import { t, type Ctx } from './context';
import { bad, conflict, isUuid, M, newId, no, notFound, q1, text, type Access, type Answer, type Query, type Req } from './util';
import { isUniqueViolation } from '@bindery/platform';

type Row = Selectable<CollectionsTable>;

export async function find(q: Parameters<typeof t>[0], user: string, id: string | undefined): Promise<Result<Row>> {
  if (!isUuid(id)) return no(bad(M.invalidCollectionId));
  const r = await t(q).selectFrom('collections').selectAll().where('id', '=', id.toLowerCase()).where('user_id', '=', user).executeTakeFirst();
  return r ? ok(r) : no(notFound(M.collectionNotFound));
}

export function page(query: Query, dflt = 50): Result<{ limit: number; offset: number }> {
  const l = q1(query, 'limit');
  const o = q1(query, 'offset');
  const limit = l === undefined || l === '' ? dflt : Number(l);
  const offset = o === undefined || o === '' ? 0 : Number(o);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) return no(bad('limit must be a whole number from 1 to 1000'));
  if (!Number.isInteger(offset) || offset < 0) return no(bad('offset must be a whole number of at least 0'));
  return ok({ limit, offset });
}

export function members(ctx: Ctx, user: string, access: Access | undefined, c: Row, p: { limit: number; offset: number }) {
  if (c.is_system) return systemMembers(ctx.db, user, access, c.query_type as SystemQuery, p);
  if (c.rules) return ruleMembers(ctx.db, user, access, c.rules as Rules, p);
  return customMembers(ctx.db, user, access, c.id, p);
}

export async function getCollection(ctx: Ctx, req: Req<'collection-get'>): Answer<'collection-get'> {
  const c = await find(ctx.db, req.caller.user_id, req.id);
  if (!c.ok) return c;
  return ok({ ...collectionOut(c.value), item_count: (await members(ctx, req.caller.user_id, req.access, c.value, { limit: 1, offset: 0 })).total });
}

type Editable = Partial<Pick<Row, 'name' | 'description' | 'color' | 'icon' | 'priority' | 'show_on_dashboard' | 'rules' | 'auto_assign'>>;

/** The editable fields; `creating` requires a name. System collections keep their name. */
function fields(input: Record<string, unknown>, creating: true, system: false): Result<Editable & { name: string }>;
function fields(input: Record<string, unknown>, creating: false, system: boolean): Result<Editable>;
function fields(input: Record<string, unknown>, creating: boolean, system: boolean): Result<Editable> {
  const out: Editable = {};
  const name = text(input, 'name', 100);
  if (name === null) return no(bad('name must be text of at most 100 characters'));
  if (name !== undefined || creating) {
    if (!name?.trim()) return no(bad(M.collectionNameRequired));
    if (system) return no(bad('the name of a system collection cannot change'));
    out.name = name.trim();
  }
  const description = text(input, 'description', 2000);
  if (description === null) return no(bad('description must be text of at most 2000 characters'));
  if (description !== undefined) out.description = description;
  if (input.color !== undefined) {
    const c = parseColor(input.color);
    if (c === null) return no(bad(M.colorHex));
    out.color = c ?? null;
  }
  const icon = text(input, 'icon', 16);
  if (icon === null) return no(bad('icon must be text of at most 16 characters'));
  if (icon !== undefined) out.icon = icon || null;
  if (input.priority !== undefined) {
    const n = Number(input.priority);
    if (!Number.isInteger(n) || n < 0 || n > 10000 || typeof input.priority === 'boolean') return no(bad('priority must be a whole number from 0 to 10000'));
    out.priority = n;
  }
  if (input.show_on_dashboard !== undefined) {
    if (typeof input.show_on_dashboard !== 'boolean') return no(bad('show_on_dashboard must be true or false'));
    out.show_on_dashboard = input.show_on_dashboard;
  }
  for (const key of ['rules', 'auto_assign'] as const) {
    if (input[key] === undefined) continue;
    if (system) return no(bad(`a system collection has no ${key}`));
    if (input[key] === null) {
      out[key] = null;
      continue;
    }
    const r = parseRules(input[key]);
    if (!r.ok) return no(bad(key === 'auto_assign' ? r.message.replace(/^rules/, 'auto_assign') : r.message));
    out[key] = r.value;
  }
  if (out.rules && out.auto_assign) return no(bad('a smart collection follows its rules; auto_assign is for custom collections'));
  return ok(out);
}

/** Saves a collection as `row` says (its event, which the projection folds): the row as stored, or the name taken. */
async function save(ctx: Ctx, trx: Trx, user: string, row: Row): Promise<Result<Row>> {
  try {
    await ctx.emit(trx, user, [{ type: 'reading.collection-saved.v1', data: { user_id: user, collection: collectionOut(row) } }]);
    return ok(await collectionRow(trx, row.id));
  } catch (e) {
    if (isUniqueViolation(e)) return no(conflict(M.collectionNameTaken));
    throw e;
  }
}

/** `saved_filter_id`: a dashboard section from a saved filter whose `filter` holds rules. */
async function fromSavedFilter(ctx: Ctx, req: Pick<Req<'collection-create'>, 'caller' | 'input'>): Promise<Result<Record<string, unknown>>> {
  const input = { ...(req.input ?? {}) };
  const fid = input.saved_filter_id;
  if (fid === undefined) return ok(input);
  if (!isUuid(fid)) return no(bad(M.invalidSavedFilterId));
  const f = await t(ctx.db).selectFrom('saved_filters').select('filter').where('id', '=', fid.toLowerCase()).where('user_id', '=', req.caller.user_id).executeTakeFirst();
  if (!f) return no(notFound(M.savedFilterNotFound));
  if (!parseRules(f.filter).ok) return no(bad('the saved filter holds no collection rules ({match, conditions})'));
  delete input.saved_filter_id;
  return ok({ ...input, rules: f.filter });
}

export async function createCollection(ctx: Ctx, req: Req<'collection-create'>): Answer<'collection-create'> {
  const input = await fromSavedFilter(ctx, req);
  if (!input.ok) return input;
  const f = fields(input.value, true, false);
  if (!f.ok) return f;
  const user = req.caller.user_id;
  const now = ctx.now();
  try {
    return await ctx.tx(async (trx) => {
      const r = await save(ctx, trx, user, {
        id: newId(),
        user_id: user,
        description: '',
        query_type: null,
        is_system: false,
        priority: 100,
        color: null,
        icon: null,
        show_on_dashboard: false,
        rules: null,
        auto_assign: null,
        ...f.value,
        created_at: now,
        updated_at: now,
      });
      if (!r.ok) throw new NameTaken();
      return ok(collectionOut(r.value));
    });
  } catch (e) {
    if (e instanceof NameTaken || isUniqueViolation(e)) return no(conflict(M.collectionNameTaken));
    throw e;
  }
}

class NameTaken extends Error {}

export async function updateCollection(ctx: Ctx, req: Req<'collection-update'>): Answer<'collection-update'> {
  const user = req.caller.user_id;
  try {
    return await ctx.tx(async (trx) => {
      // the user's stream lock (the append takes it anyway) before the read this write is decided on
      await ctx.lockUser(trx, user);
      const c = await find(trx, user, req.id);
      if (!c.ok) return c;
      const f = fields(req.input ?? {}, false, Boolean(c.value.is_system));
      if (!f.ok) return f;
      const r = await save(ctx, trx, user, { ...c.value, ...f.value, updated_at: ctx.now() });
      if (!r.ok) throw new NameTaken();
      return ok(collectionOut(r.value));
    });
  } catch (e) {
    if (e instanceof NameTaken || isUniqueViolation(e)) return no(conflict(M.collectionNameTaken));
    throw e;
  }
}

export async function deleteCollection(ctx: Ctx, req: Req<'collection-delete'>): Answer<'collection-delete'> {
  const user = req.caller.user_id;
  return ctx.tx(async (trx) => {
    await ctx.lockUser(trx, user);
    const c = await find(trx, user, req.id);
    if (!c.ok) return c;
    await ctx.emit(trx, user, [{ type: 'reading.collection-deleted.v1', data: { user_id: user, collection_id: c.value.id } }]);
    return ok({ message: 'collection deleted' });
  });
}

/** Adds items to a custom collection; the gateway passes only items the caller may see. */
export async function addItems(ctx: Ctx, req: Req<'collection-add'>): Answer<'collection-add'> {
  const ids = req.input?.media_item_ids;
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > 1000 || !ids.every(isUuid)) return no(bad('media_item_ids must be a non-empty list of media item ids'));
  const user = req.caller.user_id;
  return ctx.tx(async (trx) => {
    await ctx.lockUser(trx, user);
    const c = await find(trx, user, req.id);
    if (!c.ok) return c;
    if (c.value.is_system) return no(bad(M.systemCollectionItems));
    if (c.value.rules) return no(bad(M.smartCollectionItems));
    const wanted = [...new Set(ids.map((i) => i.toLowerCase()))];
    const held = new Set(
      (await t(trx).selectFrom('collection_items').select('item_id').where('collection_id', '=', c.value.id).where('item_id', 'in', wanted).execute()).map((m) => m.item_id),
    );
    // in the order given: a millisecond apart, so the collection lists them as they were added
    const now = ctx.now().getTime();
    const added = wanted.map((item_id, i) => ({ item_id, added_at: new Date(now + i) })).filter((a) => !held.has(a.item_id));
    if (added.length)
      await ctx.emit(trx, user, [
        {
          type: 'reading.collection-items-changed.v1',
          data: { user_id: user, collection_id: c.value.id, added: added.map((a) => a.item_id), removed: [], added_at: added.map((a) => a.added_at.toISOString()) },
        },
      ]);
    return ok({ message: 'items added', added: added.map((a) => a.item_id) });
  });
}

export async function removeItem(ctx: Ctx, req: Req<'collection-remove'>): Answer<'collection-remove'> {
  const user = req.caller.user_id;
  return ctx.tx(async (trx) => {
    await ctx.lockUser(trx, user);
    const c = await find(trx, user, req.id);
    if (!c.ok) return c;
    if (c.value.is_system) return no(bad(M.systemCollectionItems));
    if (c.value.rules) return no(bad(M.smartCollectionItems));
    const gone = await t(trx).selectFrom('collection_items').select('item_id').where('collection_id', '=', c.value.id).where('item_id', '=', req.item_id).executeTakeFirst();
    if (!gone) return no(notFound('media item not in this collection'));
    await ctx.emit(trx, user, [{ type: 'reading.collection-items-changed.v1', data: { user_id: user, collection_id: c.value.id, added: [], removed: [req.item_id] } }]);
    return ok({ message: 'item removed' });
  });
}

/** Brings a system collection back as it was made (after a delete or edits). */
export async function restoreSystem(ctx: Ctx, req: Req<'collection-restore-system'>): Answer<'collection-restore-system'> {
  const def = systemCollection(req.input?.query_type);
  if (!def) return no(bad(`${M.unknownSystemCollection}: ${SYSTEM_COLLECTIONS.map((c) => c.query_type).join(', ')}`));
  const user = req.caller.user_id;
  return ctx.tx(async (trx) => {
    // taken first: what is read here decides what is written
    await ctx.lockUser(trx, user);
    const now = ctx.now();
    const have = await t(trx).selectFrom('collections').select('id').where('user_id', '=', user).where('query_type', '=', def.query_type).executeTakeFirst();
    const made = have
      ? {
          row: { ...(await collectionRow(trx, have.id)), priority: def.priority, color: def.color, icon: def.icon, show_on_dashboard: true, description: '', updated_at: now },
          renamed: [],
        }
      : await systemCollectionToMake(trx, user, def, now);
    // none of that type existed (read above under the user's lock): one is made
    const row = made.row!;
    await ctx.emit(
      trx,
      user,
      [...made.renamed, row].map((c) => ({ type: 'reading.collection-saved.v1', data: { user_id: user, collection: collectionOut(c) } })),
    );
    return ok({ ...collectionOut(await collectionRow(trx, row.id)), restored: !have });
  });
}

export async function preview(ctx: Ctx, req: Req<'collection-preview'>): Answer<'collection-preview'> {
  const r = parseRules(req.input?.rules);
  if (!r.ok) return no(bad(r.message));
  const p = page(req.query);
  if (!p.ok) return p;
  return ok({ ...(await ruleMembers(ctx.db, req.caller.user_id, req.access, r.value, p.value)), limit: p.value.limit, offset: p.value.offset });
}

/** A newly catalogued item joins every custom collection whose auto-assign rules it matches. */
export async function autoAssign(ctx: Ctx, trx: Trx, itemId: string): Promise<void> {
  const rows = await t(trx).selectFrom('collections').selectAll().where('auto_assign', 'is not', null).where('rules', 'is', null).execute();
  for (const c of rows) {
    if (!(await itemMatches(trx, c.user_id, itemId, c.auto_assign as Rules))) continue;
    const now = ctx.now();
    const held = await t(trx).selectFrom('collection_items').select('item_id').where('collection_id', '=', c.id).where('item_id', '=', itemId).executeTakeFirst();
    if (!held)
      await ctx.emit(trx, c.user_id, [
        { type: 'reading.collection-items-changed.v1', data: { user_id: c.user_id, collection_id: c.id, added: [itemId], removed: [], added_at: [now.toISOString()] } },
      ]);
  }
}
