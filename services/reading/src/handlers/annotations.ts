// Highlights, notes and bookmarks per user and item, with soft delete, restore and purge.
import { sql } from 'kysely';
import { ok, type Result } from '@bindery/contracts';
import { KINDS, parseAnnotationPosition, parseColor, type Kind } from '../domain/annotation';
import { t, type Ctx } from './context';
import { bad, conflict, iso, isUuid, M, newId, no, notFound, text, type Req } from './util';

// biome-ignore lint/suspicious/noExplicitAny: database rows, typed where they are read
type Row = Record<string, any>;
const POSITION_KEYS = ['percentage', 'epubcfi', 'page', 'pos0', 'pos1', 'chapter'] as const;

export function annotationOut(r: Row) {
  return {
    id: r.id,
    media_item_id: r.item_id,
    type: r.kind,
    position: r.position,
    text: r.text,
    note: r.note,
    color: r.color ?? null,
    dedup_key: r.dedup_key ?? null,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    deleted_at: iso(r.deleted_at),
  };
}

const kindOf = (req: Req): Kind | null => (KINDS.includes(req.kind as Kind) ? (req.kind as Kind) : null);

/** Validates the fields of a create (all) or an update (only those given). */
function fields(kind: Kind, input: Record<string, unknown>, creating: boolean): Result<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  // the position as an object, or flat as KOReader sends it (pos0, pos1, page, percentage)
  const flat = Object.fromEntries(POSITION_KEYS.filter((k) => input[k] !== undefined).map((k) => [k, input[k]]));
  const raw = input.position !== undefined ? input.position : Object.keys(flat).length ? flat : undefined;
  if (creating || raw !== undefined) {
    const p = parseAnnotationPosition(raw);
    if (!p.ok) return no(bad(p.message));
    out.position = JSON.stringify(p.value);
  }
  const body = text(input, 'text', 100_000);
  if (body === null) return no(bad('text must be text of at most 100000 characters'));
  if (body !== undefined) out.text = body;
  if (creating && kind !== 'bookmark' && !body?.trim()) return no(bad(`text is required for a ${kind}`));
  if (!creating && kind !== 'bookmark' && body !== undefined && !body.trim()) return no(bad(`text is required for a ${kind}`));
  const note = text(input, 'note', 100_000);
  if (note === null) return no(bad('note must be text of at most 100000 characters'));
  if (note !== undefined) out.note = note;
  if (input.color !== undefined) {
    const c = parseColor(input.color);
    if (c === null) return no(bad(M.colorHex));
    out.color = c ?? null;
  }
  if (creating) {
    const key = text(input, 'dedup_key', 512);
    if (key === null) return no(bad('dedup_key must be text of at most 512 characters'));
    out.dedup_key = key || null;
  }
  return { ok: true, value: out };
}

export async function listAnnotations(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  const kind = kindOf(req);
  if (!kind) return no(bad('unknown annotation type'));
  const rows = await t(ctx.rt.db)
    .selectFrom('annotations')
    .selectAll()
    .where('user_id', '=', req.caller.user_id)
    .where('item_id', '=', req.item_id!)
    .where('kind', '=', kind)
    .where('deleted_at', 'is', null)
    .orderBy(sql`(position->>'percentage')::float nulls last`)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return ok({ data: rows.map(annotationOut) });
}

export async function createAnnotation(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  const kind = kindOf(req);
  if (!kind) return no(bad('unknown annotation type'));
  const f = fields(kind, req.input ?? {}, true);
  if (!f.ok) return f;
  const user = req.caller.user_id;
  const item = req.item_id!;
  return ctx.tx(async (trx) => {
    const key = f.value.dedup_key as string | null;
    if (key) {
      await ctx.lock(trx, `annotation.${user}.${item}.${key}`);
      const same = await t(trx)
        .selectFrom('annotations')
        .selectAll()
        .where('user_id', '=', user)
        .where('item_id', '=', item)
        .where('kind', '=', kind)
        .where('dedup_key', '=', key)
        .orderBy('deleted_at', 'desc')
        .executeTakeFirst();
      // a replay of what is already here changes nothing; a replay of what was deleted does not bring it back
      if (same && same.deleted_at === null) return ok({ ...annotationOut(same), existing: true });
      if (same) return no(conflict(M.annotationDeletedKey));
    }
    const now = ctx.now();
    const row = await t(trx)
      .insertInto('annotations')
      .values({ id: newId(), user_id: user, item_id: item, kind, text: '', note: '', color: null, ...f.value, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    await ctx.emit(trx, user, [{ type: 'reading.annotation-saved.v1', data: { user_id: user, annotation: annotationOut(row) } }]);
    return ok({ ...annotationOut(row), existing: false });
  });
}

async function find(q: Parameters<typeof t>[0], req: Req, opts: { deleted?: boolean } = {}): Promise<Result<Row>> {
  if (!isUuid(req.id)) return no(bad(M.invalidAnnotationId));
  let s = t(q).selectFrom('annotations').selectAll().where('id', '=', req.id.toLowerCase()).where('user_id', '=', req.caller.user_id);
  const kind = kindOf(req);
  if (kind) s = s.where('kind', '=', kind);
  if (opts.deleted === true) s = s.where('deleted_at', 'is not', null);
  if (opts.deleted === false) s = s.where('deleted_at', 'is', null);
  const r = await s.executeTakeFirst();
  return r ? ok(r) : no(notFound(M.annotationNotFound));
}

/** One annotation (live; with kind unset, also a deleted one: the gateway's access check uses it). */
export async function getAnnotation(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  const r = await find(ctx.rt.db, req, req.kind ? { deleted: false } : {});
  return r.ok ? ok(annotationOut(r.value)) : r;
}

export async function updateAnnotation(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  return ctx.tx(async (trx) => {
    const cur = await find(trx, req, { deleted: false });
    if (!cur.ok) return cur;
    const f = fields(cur.value.kind as Kind, req.input ?? {}, false);
    if (!f.ok) return f;
    const row = await t(trx)
      .updateTable('annotations')
      .set({ ...f.value, updated_at: ctx.now() })
      .where('id', '=', cur.value.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await ctx.emit(trx, req.caller.user_id, [{ type: 'reading.annotation-saved.v1', data: { user_id: req.caller.user_id, annotation: annotationOut(row) } }]);
    return ok(annotationOut(row));
  });
}

async function setDeleted(ctx: Ctx, req: Req, deleted: boolean): Promise<Result<unknown>> {
  return ctx.tx(async (trx) => {
    const cur = await find(trx, req, { deleted: !deleted });
    if (!cur.ok) return cur;
    const now = ctx.now();
    const row = await t(trx)
      .updateTable('annotations')
      .set({ deleted_at: deleted ? now : null, updated_at: now })
      .where('id', '=', cur.value.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await ctx.emit(trx, req.caller.user_id, [{ type: 'reading.annotation-saved.v1', data: { user_id: req.caller.user_id, annotation: annotationOut(row) } }]);
    return ok(deleted ? { message: `${row.kind} deleted` } : annotationOut(row));
  });
}

export const deleteAnnotation = (ctx: Ctx, req: Req) => setDeleted(ctx, req, true);
export const restoreAnnotation = (ctx: Ctx, req: Req) => setDeleted(ctx, req, false);

export async function listDeleted(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  const rows = await t(ctx.rt.db)
    .selectFrom('annotations')
    .selectAll()
    .where('user_id', '=', req.caller.user_id)
    .where('item_id', '=', req.item_id!)
    .where('deleted_at', 'is not', null)
    .orderBy('deleted_at', 'desc')
    .orderBy('id')
    .execute();
  return ok({ data: rows.map(annotationOut) });
}

/** Removes a deleted annotation for good. */
export async function purgeAnnotation(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  return ctx.tx(async (trx) => {
    const cur = await find(trx, req, { deleted: true });
    if (!cur.ok) return cur;
    await t(trx).deleteFrom('annotations').where('id', '=', cur.value.id).execute();
    await ctx.emit(trx, req.caller.user_id, [
      { type: 'reading.annotation-purged.v1', data: { user_id: req.caller.user_id, annotation_id: cur.value.id, media_item_id: cur.value.item_id } },
    ]);
    return ok({ message: 'annotation purged' });
  });
}

export async function purgeAll(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  return ctx.tx(async (trx) => {
    const gone = await t(trx)
      .deleteFrom('annotations')
      .where('user_id', '=', req.caller.user_id)
      .where('item_id', '=', req.item_id!)
      .where('deleted_at', 'is not', null)
      .returning(['id', 'item_id'])
      .execute();
    for (const g of gone)
      await ctx.emit(trx, req.caller.user_id, [{ type: 'reading.annotation-purged.v1', data: { user_id: req.caller.user_id, annotation_id: g.id, media_item_id: g.item_id } }]);
    return ok({ message: 'deleted annotations purged', purged: gone.length });
  });
}
