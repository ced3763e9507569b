// KOReader's stock Progress sync (the kosync protocol): a device names a book by a document id (its
// partial MD5, or the MD5 of the file name). The user's last push per id is kept here, linked to a
// media item when the gateway found one (or the user chose one, or the catalog announced it later);
// a linked push is also an ordinary position of the item (client `koreader`), under the guard and
// the conflict rules. A push signed in with a device's sync key names that Bindery device.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { ok, type Catalog, type Reading, type Result } from '@bindery/contracts';
import { notePosition } from '@bindery/platform';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { KosyncDocumentsTable, Trx } from '../store/db';
import type { Position } from '../domain/position';
import { t, type Ctx } from './context';
import { deliverQuietly, prepareProgress, writeProgress } from './progress';
import { itemVisible } from './visible';
import { bad, isUuid, no, notFound, q1, type Answer, type Req } from './util';
import * as Locator from '@bindery/locator';

type Row = Selectable<KosyncDocumentsTable>;

export const DOCUMENT_NOT_FOUND = 'document not found';
const DOC = /^[^:\s]{1,128}$/;

const seconds = (d: unknown) => Math.floor(new Date(d as string).getTime() / 1000);
const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex');

export function documentOut(r: Row): Reading.KosyncDocumentRecord {
  return {
    document: r.document,
    media_item_id: r.item_id ?? null,
    linked_by: r.linked_by ?? null,
    percentage: Number(r.percentage),
    progress: r.progress,
    device: r.device,
    device_id: r.device_id,
    /** the Bindery device whose sync key signed the push in (null: the user's password) */
    bindery_device_id: r.bindery_device_id ?? null,
    timestamp: seconds(r.pushed_at),
    pushed_at: r.pushed_at.toISOString(),
    created_at: r.created_at.toISOString(),
  };
}

/** The name a KOReader device has in positions and conflicts: its model and the start of its id. */
export const deviceLabel = (device: string, deviceId: string) => (deviceId ? `${device} ${deviceId.slice(0, 8)}` : device).slice(0, 100);

/** The name a stored push's positions carry: the Bindery device's (a sync key), else the KOReader one's. */
const labelOf = (r: Row): string => r.label ?? deviceLabel(r.device, r.device_id);

/**
 * The name a stock KOReader signed in by password is given positions under: its pull names no
 * device, so what it pulls is recorded for the document, and its next push of that document
 * follows it (docs/decisions.md, "Devices follow the position they were given").
 */
export const documentReceiver = (document: string) => `kosync:${document}`;

/** KOReader's progress as a position submission: an XPointer, a page number, or the fraction alone. */
function positionInput(progress: string, percentage: number, device: string): Record<string, unknown> {
  const input: Record<string, unknown> = { percentage, client: 'koreader', device };
  if (progress.startsWith('/body/')) input.epubcfi = progress;
  else if (/^\d{1,9}$/.test(progress) && Number(progress) > 0) input.page = Number(progress);
  return input;
}

/** What finding a document's item reads of a request: the caller's libraries and the gateway's lookup. */
type Seen = Pick<Req<'kosync-pull'>, 'access' | 'item_id'>;

async function itemUsable(trx: Trx | Ctx['db'], req: Seen, item: string | null | undefined): Promise<boolean> {
  if (!item) return false;
  const r = await t(trx).selectFrom('items').select('id').where('id', '=', item).where(itemVisible(req.access, 'id')).executeTakeFirst();
  return r !== undefined;
}

/** Which item a document means now: the user's own choice, else the catalog's (the gateway's lookup), else a link made before. */
async function itemFor(trx: Trx | Ctx['db'], req: Seen, row: Row | undefined): Promise<{ item: string | null; by: string | null }> {
  if (row?.linked_by === 'user' && (await itemUsable(trx, req, row.item_id))) return { item: row.item_id, by: 'user' };
  if (req.item_id && (await itemUsable(trx, req, req.item_id))) return { item: req.item_id, by: 'catalog' };
  if (row?.item_id && (await itemUsable(trx, req, row.item_id))) return { item: row.item_id, by: row.linked_by ?? 'catalog' };
  return { item: null, by: null };
}

type Push = { document: string; progress: string; percentage: number; device: string; device_id: string; via: { device_id: string; name: string } | null };

/** The Bindery device whose sync key signed the request in (null: none), or the message. */
function readVia(bindery_device: unknown): Push['via'] | string {
  if (bindery_device === undefined) return null;
  const b = bindery_device as Record<string, unknown> | null;
  if (typeof b !== 'object' || b === null || !isUuid(b.device_id) || typeof b.name !== 'string' || b.name === '' || b.name.length > 100) return 'bindery_device must be a device';
  return { device_id: (b.device_id as string).toLowerCase(), name: b.name };
}

function readPush(input: Record<string, unknown>): Push | string {
  const { document, progress, percentage, device, device_id, bindery_device } = input;
  if (typeof document !== 'string' || !DOC.test(document)) return 'document must be a document id';
  if (typeof progress !== 'string' || progress.length > 4096) return 'progress must be text';
  if (typeof percentage !== 'number' || !Number.isFinite(percentage) || percentage < 0 || percentage > 1) return 'percentage must be a number between 0 and 1';
  if (typeof device !== 'string' || device.length > 100) return 'device must be text';
  if (device_id !== undefined && (typeof device_id !== 'string' || device_id.length > 128)) return 'device_id must be text';
  const via = readVia(bindery_device);
  if (typeof via === 'string') return via;
  return { document, progress, percentage, device, device_id: (device_id as string | undefined) ?? '', via };
}

/** What a push writes (every column), or a link (a few). */
type DocumentPush = Omit<Insertable<KosyncDocumentsTable>, 'user_id' | 'created_at'>;
type DocumentChange = Omit<Updateable<KosyncDocumentsTable>, 'user_id' | 'created_at'> & { document: string };
const isPush = (v: DocumentPush | DocumentChange): v is DocumentPush => v.pushed_at !== undefined;

/**
 * Changes the user's row of `values.document` (a link changes a few columns), or makes a whole push
 * its row: told in a `kosync-document-saved` event, which the projection folds. The row as stored.
 */
async function saveRow(ctx: Ctx, trx: Trx, user: string, values: DocumentPush | DocumentChange): Promise<Row> {
  const cur = await t(trx).selectFrom('kosync_documents').selectAll().where('user_id', '=', user).where('document', '=', values.document).executeTakeFirst();
  if (!cur && !isPush(values)) throw new Error(`kosync document ${values.document} of ${user} is gone`);
  // a column left undefined is one the write does not change
  const given = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<DocumentPush>;
  const merged = { ...(cur ?? { user_id: user, item_id: null, linked_by: null, bindery_device_id: null, progress_version: null, label: null, created_at: ctx.now() }), ...given };
  const next = { ...merged, pushed_at: new Date(merged.pushed_at as Date | string) } as Row;
  await ctx.emit(trx, user, [
    { type: 'reading.kosync-document-saved.v1', data: { user_id: user, document: documentOut(next), progress_version: next.progress_version ?? null, label: next.label ?? null } },
  ]);
  return t(trx).selectFrom('kosync_documents').selectAll().where('user_id', '=', user).where('document', '=', values.document).executeTakeFirstOrThrow();
}

/**
 * The one write of a document: its position checked against the item (outside the transaction: the
 * locator index may be fetched), then under the document's lock the item's position written (guard
 * and conflicts apply) and the row saved with the position's version. `idle` is the status when no
 * item is written.
 */
async function writeDocument(
  ctx: Ctx,
  user: string,
  document: string,
  item: string | null,
  position: Record<string, unknown>,
  idle: string,
  values: Omit<DocumentPush, 'document'> | Omit<DocumentChange, 'document'>,
  /**
   * `onlyUnlinked`: write only while the document has no item; `deviceId`: the Bindery device that
   * sent the position; `receivedAs`: another name the device was given positions under
   */
  { onlyUnlinked = false, deviceId = null, receivedAs = null }: { onlyUnlinked?: boolean; deviceId?: string | null; receivedAs?: string | null } = {},
): Promise<Result<{ status: string; row: Row; healed: string[] }>> {
  // KOReader shows any refusal as a sync error: a page past the book's last is stored as the last
  const prepared = item ? await prepareProgress(ctx, item, position, deviceId, { clampPage: true }) : null;
  if (prepared && !prepared.ok) return prepared;
  if (prepared && receivedAs) prepared.value.inc.receivedAs = receivedAs;
  // a clamped page is what the document keeps too, so a pull answers the page the book has
  const kept = prepared?.value.inc.position;
  const clamped =
    kept && typeof position.page === 'number' && kept.page !== undefined && kept.page !== position.page ? { progress: String(kept.page), percentage: kept.percentage } : {};
  return ctx.tx(async (trx) => {
    await ctx.lock(trx, `kosync.${user}.${document}`);
    if (onlyUnlinked) {
      // a link made meanwhile (a push, a pull, the user's) stands
      const cur = await t(trx).selectFrom('kosync_documents').selectAll().where('user_id', '=', user).where('document', '=', document).executeTakeFirst();
      if (!cur) return no(notFound(DOCUMENT_NOT_FOUND));
      if (cur.item_id !== null) return ok({ status: 'unchanged', row: cur, healed: [] });
    }
    let status = idle;
    let version: number | null = null;
    let healed: string[] = [];
    if (item && prepared) {
      const w = await writeProgress(ctx, trx, user, item, prepared.value);
      status = w.status;
      healed = w.healed;
      version = w.status === 'saved' ? w.progress.version : null;
    }
    const row = await saveRow(ctx, trx, user, { ...values, ...clamped, document, progress_version: version });
    return ok({ status, row, healed });
  });
}

/** `PUT /syncs/progress`: keeps the push, and moves the linked item's position (guard and conflicts apply). */
export async function kosyncPush(ctx: Ctx, req: Req<'kosync-push'>): Answer<'kosync-push'> {
  const p = readPush(req.input ?? {});
  if (typeof p === 'string') return no(bad(p));
  const user = req.caller.user_id;
  const label = p.via ? p.via.name : deviceLabel(p.device, p.device_id);
  const pre = await t(ctx.db).selectFrom('kosync_documents').selectAll().where('user_id', '=', user).where('document', '=', p.document).executeTakeFirst();
  const target = await itemFor(ctx.db, req, pre);
  const w = await writeDocument(
    ctx,
    user,
    p.document,
    target.item,
    positionInput(p.progress, p.percentage, label),
    'stored',
    {
      item_id: target.item,
      linked_by: target.by,
      percentage: p.percentage,
      progress: p.progress,
      device: p.device,
      device_id: p.device_id,
      label: p.via ? label : null,
      bindery_device_id: p.via?.device_id ?? null,
      pushed_at: ctx.now(),
    },
    // signed in by password, the device is known only as the one that pulled this document
    { deviceId: p.via?.device_id ?? null, receivedAs: p.via ? null : documentReceiver(p.document) },
  );
  if (!w.ok) return w;
  return ok({ document: p.document, timestamp: seconds(w.value.row.pushed_at), status: w.value.status, media_item_id: target.item, healed: w.value.healed });
}

/**
 * What KOReader can go to for a stored item position it did not write itself: the XPointer (derived
 * from the web's CFI by the locator index at write time), a page, else one made now from the
 * percentage through the book's locator index, else the start of the chapter.
 */
async function progressNotation(ctx: Ctx, item: string, pos: Position, percentage: number): Promise<string> {
  if (pos.xpointer) return pos.xpointer;
  if (pos.page !== undefined) return String(pos.page);
  const meta = await t(ctx.db).selectFrom('items').select(['epub_sha256', 'page_count']).where('id', '=', item).executeTakeFirst();
  const index = meta?.epub_sha256 ? await ctx.locators.get(meta.epub_sha256) : null;
  if (index) return Locator.canonicalToXPointer(index, Locator.percentageToCanonical(index, percentage));
  if (!meta?.epub_sha256 && meta?.page_count) return String(Locator.fractionToPage(percentage, Number(meta.page_count)));
  // KOReader's DocFragment counts the spine from 1
  if (pos.spine_index !== undefined) return `/body/DocFragment[${pos.spine_index + 1}].0`;
  return '';
}

/** `GET /syncs/progress/<document>`: the item's current position, or the last push; `{}` when there is none. */
export async function kosyncPull(ctx: Ctx, req: Req<'kosync-pull'>): Answer<'kosync-pull'> {
  const document = q1(req.query, 'document') ?? '';
  if (!DOC.test(document)) return no(bad('document must be a document id'));
  const via = readVia(req.input?.bindery_device);
  if (typeof via === 'string') return no(bad(via));
  const user = req.caller.user_id;
  let row: Row | undefined = await t(ctx.db).selectFrom('kosync_documents').selectAll().where('user_id', '=', user).where('document', '=', document).executeTakeFirst();
  const target = await itemFor(ctx.db, req, row);
  // a document pushed before its book was catalogued is linked once the catalog knows it, and its
  // last position reaches the book
  if (row && target.item && row.item_id !== target.item) {
    const linked = await linkRow(ctx, user, row, target.item, target.by ?? 'catalog');
    if (!linked.ok) return linked;
    row = linked.value.row;
  }
  const cur = target.item ? await t(ctx.db).selectFrom('progress').selectAll().where('user_id', '=', user).where('item_id', '=', target.item).executeTakeFirst() : undefined;
  // the link may have been made meanwhile by the catalog's announcement (not by this pull, which
  // then appends nothing): the gateway answers once its read models show the book's position too
  if (cur) notePosition(await ctx.store.headPosition());
  // the device is given the book's position (as derived below, or the last push verbatim while it is
  // the current one): its next push of the document follows it
  if (cur) await deliverQuietly(ctx, user, via ? via.name : documentReceiver(document), 'kosync', [{ item: cur.item_id, version: Number(cur.version) }]);
  if (cur && !(row && row.progress_version !== null && Number(row.progress_version) === Number(cur.version))) {
    const pos = cur.position as Position;
    const fromRowDevice = row && labelOf(row) === cur.device;
    return ok({
      document,
      percentage: Number(cur.percentage),
      progress: (await progressNotation(ctx, target.item!, pos, Number(cur.percentage))) || (fromRowDevice ? row!.progress : ''),
      device: fromRowDevice ? row!.device : cur.device,
      device_id: fromRowDevice ? row!.device_id : md5(`bindery:${cur.device}`),
      timestamp: seconds(cur.updated_at),
    });
  }
  if (!row) return ok({});
  return ok({ document, percentage: Number(row.percentage), progress: row.progress, device: row.device, device_id: row.device_id, timestamp: seconds(row.pushed_at) });
}

/** The caller's documents: `status` all (default), linked or unlinked. */
export async function kosyncDocuments(ctx: Ctx, req: Req<'kosync-documents'>): Answer<'kosync-documents'> {
  const status = q1(req.query, 'status') ?? 'all';
  if (!['all', 'linked', 'unlinked'].includes(status)) return no(bad("status must be 'all', 'linked' or 'unlinked'"));
  let q = t(ctx.db).selectFrom('kosync_documents').selectAll().where('user_id', '=', req.caller.user_id);
  if (status === 'linked') q = q.where('item_id', 'is not', null).where(itemVisible(req.access));
  if (status === 'unlinked') q = q.where((eb) => eb.or([eb('item_id', 'is', null), eb.not(itemVisible(req.access))]));
  const rows = await q.orderBy('pushed_at', 'desc').limit(1000).execute();
  return ok({ data: rows.map(documentOut) });
}

/** Links a document to a media item (`item_id`; the gateway checked the caller sees it), or unlinks it (no item). */
export async function kosyncLink(ctx: Ctx, req: Req<'kosync-link'>): Answer<'kosync-link'> {
  const document = q1(req.query, 'document') ?? '';
  if (!DOC.test(document)) return no(bad('document must be a document id'));
  const item = req.item_id ?? null;
  if (item !== null && !isUuid(item)) return no(bad('media_item_id must be a media item id'));
  const by = req.kind === 'catalog' ? 'catalog' : 'user';
  const user = req.caller.user_id;
  const row = await t(ctx.db).selectFrom('kosync_documents').selectAll().where('user_id', '=', user).where('document', '=', document).executeTakeFirst();
  if (!row) return no(notFound(DOCUMENT_NOT_FOUND));
  const linked = await linkRow(ctx, user, row, item, by);
  if (!linked.ok) return linked;
  return ok({ status: linked.value.status, document: documentOut(linked.value.row) });
}

/** Links a stored document to an item (or unlinks it); a link moves the document's last position to the item. */
export function linkRow(ctx: Ctx, user: string, row: Row, item: string | null, by: string, onlyUnlinked = false): Promise<Result<{ status: string; row: Row }>> {
  // the device's last position reaches the book, under the guard and the conflict rules
  return writeDocument(
    ctx,
    user,
    row.document,
    item,
    positionInput(row.progress, Number(row.percentage), labelOf(row)),
    'unlinked',
    { item_id: item, linked_by: item ? by : null },
    { onlyUnlinked, deviceId: row.bindery_device_id },
  );
}

/** The ids a device may know an item's files by: partial MD5s, MD5s of the file names, SHA-256s (lower case). */
export function documentsOf(item: Catalog.MediaItem): string[] {
  const out = new Set<string>();
  for (const h of [item.partial_md5, item.sha256, ...item.known_sha256, ...item.formats.flatMap((f) => [f.partial_md5, f.sha256])]) if (h) out.add(h.toLowerCase());
  for (const path of [item.file_path, ...item.formats.map((f) => f.file_path)]) {
    const name = path?.split('/').pop();
    if (name) out.add(md5(name));
  }
  return [...out];
}

/**
 * The catalog announced an item (added, or its files changed): documents pushed before the book was
 * known, whose id is one of its files', are linked to it, for each user who may see its library.
 * Their last position becomes the book's (guard and conflicts apply), with no further device call.
 */
export async function linkAnnounced(ctx: Ctx, item: Catalog.MediaItem): Promise<void> {
  const ids = documentsOf(item);
  if (ids.length === 0) return;
  const rows = await t(ctx.db)
    .selectFrom('kosync_documents as k')
    .innerJoin('user_access as a', 'a.user_id', 'k.user_id')
    .selectAll('k')
    .where('k.document', 'in', ids)
    .where('k.item_id', 'is', null)
    .where((eb) => eb.or([eb('a.role', '=', 'admin'), eb('a.all_libraries', '=', true), sql<boolean>`a.library_ids @> ${JSON.stringify([item.library_id])}::jsonb`]))
    .where(sql<boolean>`exists (select 1 from reading.items i where i.id = ${item.id} and i.removed_at is null)`)
    .orderBy('k.pushed_at')
    .execute();
  for (const row of rows) {
    const r = await linkRow(ctx, row.user_id, row, item.id, 'catalog', true);
    if (!r.ok)
      ctx.rt.log.warn({ user_id: row.user_id, document: row.document, item_id: item.id, error: r.error.message }, 'kosync: a document of an announced item was not linked');
  }
}

export const handlers = {
  'kosync-push': kosyncPush,
  'kosync-pull': kosyncPull,
  'kosync-documents': kosyncDocuments,
  'kosync-link': kosyncLink,
};
