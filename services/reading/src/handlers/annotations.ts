// Highlights, notes and bookmarks per user and item, with soft delete, restore and purge. Their place
// is kept in the canonical form of positions: read on write from what the client sent (the web's CFI,
// KOReader's pos0/pos1, a page), healed like a position, with every notation written back.
import { sql } from 'kysely';
import { ok, type Reading, type Result } from '@bindery/contracts';
import {
  anchorOf,
  byText,
  KINDS,
  needleOf,
  parseAnnotationPosition,
  parseColor,
  placeAnnotation,
  placePage,
  quotes,
  type AnnotationPosition,
  type Kind,
} from '../domain/annotation';
import type { Insertable, Selectable } from 'kysely';
import type { AnnotationsTable, Trx } from '../store/db';
import { t, type Ctx } from './context';
import { bad, conflict, iso, isUuid, M, newId, no, notFound, text, type Answer, type Req } from './util';
import * as L from '@bindery/locator';

type Row = Selectable<AnnotationsTable>;
const POSITION_KEYS = ['percentage', 'epubcfi', 'page', 'pos0', 'pos1', 'chapter'] as const;

/** The position as stored, with the canonical span (`spine_index`, `doc_offset`, and the end's) when it is known. */
function positionOut(r: Row): AnnotationPosition & { spine_index?: number; doc_offset?: number; end_spine_index?: number; end_doc_offset?: number } {
  if (r.start_spine === null || r.start_spine === undefined) return r.position;
  return {
    ...r.position,
    spine_index: Number(r.start_spine),
    doc_offset: Number(r.start_offset),
    ...(r.end_spine === null || r.end_spine === undefined ? {} : { end_spine_index: Number(r.end_spine), end_doc_offset: Number(r.end_offset) }),
  };
}

export function annotationOut(r: Row): Reading.AnnotationRecord {
  return {
    id: r.id,
    media_item_id: r.item_id,
    type: r.kind,
    position: positionOut(r),
    text: r.text,
    note: r.note,
    color: r.color ?? null,
    dedup_key: r.dedup_key ?? null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    deleted_at: iso(r.deleted_at),
  };
}

/** The event of a saved annotation: its record, and its canonical span as stored. */
export const annotationSaved = (user: string, r: Row): Reading.ReadingEvent => ({
  type: 'reading.annotation-saved.v1',
  data: {
    user_id: user,
    annotation: annotationOut(r),
    anchor: {
      start_spine: r.start_spine ?? null,
      start_offset: r.start_offset ?? null,
      end_spine: r.end_spine ?? null,
      end_offset: r.end_offset ?? null,
      sha256: r.anchor_sha256 ?? null,
    },
  },
});

/** Saves an annotation as `row` says (its event, which the projection folds): the row as stored. */
async function save(ctx: Ctx, trx: Trx, row: Row): Promise<Row> {
  await ctx.emit(trx, row.user_id, [annotationSaved(row.user_id, row)]);
  return t(trx).selectFrom('annotations').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
}

const kindOf = (req: { kind?: string }): Kind | null => (KINDS.includes(req.kind as Kind) ? (req.kind as Kind) : null);

/** The columns a create or an update sets from what the client sent (the position apart). */
type Values = Partial<Pick<Insertable<AnnotationsTable>, 'text' | 'note' | 'color' | 'dedup_key'>>;

interface Fields {
  values: Values;
  /** the position sent, checked for form; placed in the book by `anchor` */
  position?: AnnotationPosition;
}

/** Validates the fields of a create (all) or an update (only those given). */
function fields(kind: Kind, input: Record<string, unknown>, creating: boolean): Result<Fields> {
  const out: Values = {};
  let position: AnnotationPosition | undefined;
  // the position as an object, or flat as KOReader sends it (pos0, pos1, page, percentage)
  const flat = Object.fromEntries(POSITION_KEYS.filter((k) => input[k] !== undefined).map((k) => [k, input[k]]));
  const raw = input.position !== undefined ? input.position : Object.keys(flat).length ? flat : undefined;
  if (creating || raw !== undefined) {
    const p = parseAnnotationPosition(raw);
    if (!p.ok) return no(bad(p.message));
    position = p.value;
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
  return { ok: true, value: position ? { values: out, position } : { values: out } };
}

const NO_ANCHOR = { start_spine: null, start_offset: null, end_spine: null, end_offset: null, anchor_sha256: null };
type Columns = Pick<Row, keyof typeof NO_ANCHOR>;

const columnsOf = (sha: string, a: { start: L.Canonical; end: L.Canonical | null }): Columns => ({
  start_spine: a.start.spine,
  start_offset: a.start.offset,
  end_spine: a.end?.spine ?? null,
  end_offset: a.end?.offset ?? null,
  anchor_sha256: sha,
});

/**
 * Places a submitted position in the book (no transaction needed): an EPUB's through its locator
 * index (healed, moved by the highlighted text when that is elsewhere, every notation derived), a
 * fixed-layout book's by its page. Without an index (the catalog away) it is kept as sent.
 */
async function anchor(ctx: Ctx, item: string, kind: Kind, pos: AnnotationPosition, text: string | undefined): Promise<{ columns: Columns; healed: string[] }> {
  const meta = await t(ctx.db).selectFrom('items').select(['page_count', 'epub_sha256']).where('id', '=', item).executeTakeFirst();
  if (!meta?.epub_sha256) return { columns: NO_ANCHOR, healed: L.healMessages(meta?.page_count == null ? [] : placePage(pos, Number(meta.page_count))) };
  const sha = meta.epub_sha256;
  const index = await ctx.locators.get(sha);
  if (!index) return { columns: NO_ANCHOR, healed: [] };
  const r = anchorOf(index, pos);
  let at = r.anchor;
  const healed = r.healed;
  const needle = quotes(kind) ? needleOf(text) : null;
  const hint = at?.start ?? (pos.percentage === undefined ? null : L.percentageToCanonical(index, pos.percentage));
  const found = needle && hint && (await ctx.locators.findText(sha, needle.needle, hint));
  if (found) {
    const moved = byText(index, at, found, needle.cut, text!);
    at = moved.anchor;
    healed.push(...moved.healed);
  }
  if (!at) return { columns: NO_ANCHOR, healed: L.healMessages(healed) };
  healed.push(...placeAnnotation(index, pos, at));
  return { columns: columnsOf(sha, at), healed: L.healMessages(healed) };
}

/**
 * Rows whose span was not read against their book's current EPUB (written before annotations had
 * one, while the catalog did not answer, or moved to another item by a merge) are placed from their
 * stored notations now, for this answer.
 */
async function placed(ctx: Ctx, rows: Row[]): Promise<Row[]> {
  const ids = [...new Set(rows.map((r) => r.item_id))];
  if (ids.length === 0) return rows;
  const items = await t(ctx.db).selectFrom('items').select(['id', 'epub_sha256']).where('id', 'in', ids).where('epub_sha256', 'is not', null).execute();
  const shaOf = new Map(items.map((i) => [i.id, i.epub_sha256]));
  const out: Row[] = [];
  for (const r of rows) {
    const sha = shaOf.get(r.item_id);
    const index = sha && r.anchor_sha256 !== sha ? await ctx.locators.get(sha) : null;
    const a = index ? anchorOf(index, { ...(r.position as AnnotationPosition) }) : null;
    if (!index || !sha || !a?.anchor) {
      out.push(r);
      continue;
    }
    const pos = { ...(r.position as AnnotationPosition) };
    placeAnnotation(index, pos, a.anchor);
    out.push({ ...r, position: pos, ...columnsOf(sha, a.anchor) });
  }
  return out;
}

export async function listAnnotations(ctx: Ctx, req: Req<'annotations-list'>): Answer<'annotations-list'> {
  const kind = kindOf(req);
  if (!kind) return no(bad('unknown annotation type'));
  const rows = await t(ctx.db)
    .selectFrom('annotations')
    .selectAll()
    .where('user_id', '=', req.caller.user_id)
    .where('item_id', '=', req.item_id)
    .where('kind', '=', kind)
    .where('deleted_at', 'is', null)
    .orderBy(sql`(position->>'percentage')::float nulls last`)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return ok({ data: (await placed(ctx, rows)).map(annotationOut) });
}

export async function createAnnotation(ctx: Ctx, req: Req<'annotation-create'>): Answer<'annotation-create'> {
  const kind = kindOf(req);
  if (!kind) return no(bad('unknown annotation type'));
  const f = fields(kind, req.input ?? {}, true);
  if (!f.ok) return f;
  const user = req.caller.user_id;
  const item = req.item_id;
  const pos = f.value.position!;
  const { columns, healed } = await anchor(ctx, item, kind, pos, f.value.values.text);
  const values = { ...f.value.values, position: JSON.stringify(pos), ...columns };
  const r = await ctx.tx(async (trx): Promise<Result<{ row: Row; existing: boolean }>> => {
    const key = values.dedup_key;
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
      if (same && same.deleted_at === null) return ok({ row: same, existing: true });
      if (same) return no(conflict(M.annotationDeletedKey));
    }
    const now = ctx.now();
    const made: Row = {
      id: newId(),
      user_id: user,
      item_id: item,
      kind,
      text: '',
      note: '',
      color: null,
      dedup_key: null,
      deleted_at: null,
      ...f.value.values,
      position: pos,
      ...columns,
      created_at: now,
      updated_at: now,
    };
    return ok({ row: await save(ctx, trx, made), existing: false });
  });
  if (!r.ok) return r;
  // a replay answers what is stored: nothing of this submission was taken, so nothing was healed
  if (r.value.existing) return ok({ ...annotationOut((await placed(ctx, [r.value.row]))[0]!), existing: true, healed: [] });
  return ok({ ...annotationOut(r.value.row), existing: false, healed });
}

/** What finding one of the caller's annotations reads of a request. */
type Named = Pick<Req<'annotation-get'>, 'caller' | 'id' | 'kind'>;

async function find(q: Parameters<typeof t>[0], req: Named, opts: { deleted?: boolean } = {}): Promise<Result<Row>> {
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
export async function getAnnotation(ctx: Ctx, req: Req<'annotation-get'>): Answer<'annotation-get'> {
  const r = await find(ctx.db, req, req.kind ? { deleted: false } : {});
  return r.ok ? ok(annotationOut((await placed(ctx, [r.value]))[0]!)) : r;
}

export async function updateAnnotation(ctx: Ctx, req: Req<'annotation-update'>): Answer<'annotation-update'> {
  // a new position is placed in the book before the transaction (it may ask the catalog)
  const before = await find(ctx.db, req, { deleted: false });
  if (!before.ok) return before;
  const f = fields(before.value.kind as Kind, req.input ?? {}, false);
  if (!f.ok) return f;
  let changes: Partial<Row> = { ...f.value.values };
  let healed: string[] = [];
  if (f.value.position) {
    const pos = f.value.position;
    const a = await anchor(ctx, before.value.item_id, before.value.kind as Kind, pos, changes.text ?? before.value.text);
    healed = a.healed;
    changes = { ...changes, position: pos, ...a.columns };
  }
  const r = await ctx.tx(async (trx): Promise<Result<Row>> => {
    // the user's stream lock (the append takes it anyway) before the read this write is decided on
    await ctx.lockUser(trx, req.caller.user_id);
    const cur = await find(trx, req, { deleted: false });
    if (!cur.ok) return cur;
    return ok(await save(ctx, trx, { ...cur.value, ...changes, updated_at: ctx.now() }));
  });
  return r.ok ? ok({ ...annotationOut((await placed(ctx, [r.value]))[0]!), healed }) : r;
}

async function setDeleted(ctx: Ctx, req: Named, deleted: boolean): Promise<Result<Row>> {
  const r = await ctx.tx(async (trx): Promise<Result<Row>> => {
    // the user's stream lock (the append takes it anyway) before the read this write is decided on
    await ctx.lockUser(trx, req.caller.user_id);
    const cur = await find(trx, req, { deleted: !deleted });
    if (!cur.ok) return cur;
    const now = ctx.now();
    return ok(await save(ctx, trx, { ...cur.value, deleted_at: deleted ? now : null, updated_at: now }));
  });
  return r;
}

export async function deleteAnnotation(ctx: Ctx, req: Req<'annotation-delete'>): Answer<'annotation-delete'> {
  const r = await setDeleted(ctx, req, true);
  return r.ok ? ok({ message: `${r.value.kind} deleted` }) : r;
}

export async function restoreAnnotation(ctx: Ctx, req: Req<'annotation-restore'>): Answer<'annotation-restore'> {
  const r = await setDeleted(ctx, req, false);
  return r.ok ? ok(annotationOut((await placed(ctx, [r.value]))[0]!)) : r;
}

export async function listDeleted(ctx: Ctx, req: Req<'annotations-deleted'>): Answer<'annotations-deleted'> {
  const rows = await t(ctx.db)
    .selectFrom('annotations')
    .selectAll()
    .where('user_id', '=', req.caller.user_id)
    .where('item_id', '=', req.item_id)
    .where('deleted_at', 'is not', null)
    .orderBy('deleted_at', 'desc')
    .orderBy('id')
    .execute();
  return ok({ data: (await placed(ctx, rows)).map(annotationOut) });
}

/** Removes a deleted annotation for good. */
export async function purgeAnnotation(ctx: Ctx, req: Req<'annotation-purge'>): Answer<'annotation-purge'> {
  return ctx.tx(async (trx) => {
    // the user's stream lock (the append takes it anyway) before the read this write is decided on
    await ctx.lockUser(trx, req.caller.user_id);
    const cur = await find(trx, req, { deleted: true });
    if (!cur.ok) return cur;
    await ctx.emit(trx, req.caller.user_id, [
      { type: 'reading.annotation-purged.v1', data: { user_id: req.caller.user_id, annotation_id: cur.value.id, media_item_id: cur.value.item_id } },
    ]);
    return ok({ message: 'annotation purged' });
  });
}

export async function purgeAll(ctx: Ctx, req: Req<'annotations-purge-all'>): Answer<'annotations-purge-all'> {
  return ctx.tx(async (trx) => {
    const gone = await t(trx)
      .selectFrom('annotations')
      .select(['id', 'item_id'])
      .where('user_id', '=', req.caller.user_id)
      .where('item_id', '=', req.item_id)
      .where('deleted_at', 'is not', null)
      .forUpdate()
      .execute();
    for (const g of gone)
      await ctx.emit(trx, req.caller.user_id, [{ type: 'reading.annotation-purged.v1', data: { user_id: req.caller.user_id, annotation_id: g.id, media_item_id: g.item_id } }]);
    return ok({ message: 'deleted annotations purged', purged: gone.length });
  });
}
