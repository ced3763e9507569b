// The catalog's tables as a fold of its own log: libraries, the scan queue and history, file
// issues, hash conflicts, excluded files, and the media items with their file rows and hash history
// (their events carry, beside the public record, a record of the rows: Catalog.ItemRecord). The
// fold is applied in the transaction that appends an event (Ctx.emit, emitNew, emitMany) and again
// when the tables are rebuilt from the log (replayCatalog): it is the only writer of these rows.
// Commands (the scanner, the item commands) read an item's state (store/item-state.ts), decide,
// and emit the state they decided; consecutive item events (a scan's batch) are written together
// in a few statements, whatever their number.
// A row's times are its events' times (`recorded_at`, the appending transaction's `now()`), or the
// times its record carries.
// Not rebuilt from this log: `media_items.cover_ready`, a cache of the cover files on disk (the
// cover worker sets it again when it finds the files, scanner/covers.ts); a running scan's `counts`
// (progress, told over the bus, never logged: scan-finished writes the final ones); leases (which
// replica runs the scanner), settings (identity's, kept by a reaction to its log), and the caches
// of file contents (locator indexes, KEPUBs; covers are files).
// An admin's deletion hands the active items they added to their successor (an `updated` event,
// cause owner); a missing item, in no reader's view, keeps its reference (handlers/identity-events.ts).
import { Catalog, type StoredEvent } from '@bindery/contracts';
import { eventSchemas } from '@bindery/platform';
import { sql } from 'kysely';
import { groupTitle, posixDirname } from '../domain/normalize';
import { pagesJson } from './items';
import type { CTrx } from './schema';

export const REPLAYED_TABLES = [
  'libraries',
  'scans',
  'file_issues',
  'hash_conflicts',
  'excluded_files',
  'media_items',
  'media_formats',
  'format_hashes',
  'calibre_reports',
] as const;

const catalogEvents = eventSchemas(Catalog.CatalogEvents);

const libraryColumns = (l: Catalog.Library) => ({
  name: l.name,
  folders: JSON.stringify(l.folders),
  watch: l.watch,
  created_by_admin: l.created_by_admin,
  created_at: l.created_at,
  updated_at: l.updated_at,
  last_scan_at: l.last_scan_at,
});

type Sch = ReturnType<CTrx['withSchema']>;
type FileFacts = Omit<Catalog.ItemRecord['files'][number], 'id'> & { id?: number };
type RowsRecord = Omit<Catalog.ItemRecord, 'files'> & { files: FileFacts[] };

/**
 * What an item event logged before item records were carried tells of its rows: its public record
 * and what the replayed rows already hold. Close to the live rows, not exact: the row's own counter
 * counts events, absent files are the ones the record no longer lists, hashes are first seen when
 * an event first names them.
 */
async function recordFromItem(t: Sch, item: Catalog.MediaItem, at: string): Promise<RowsRecord> {
  const prev = await t.selectFrom('media_items').selectAll().where('id', '=', item.id).executeTakeFirst();
  const files = await t.selectFrom('media_formats').selectAll().where('item_id', '=', item.id).orderBy('id').execute();
  const hashes = await t.selectFrom('format_hashes').selectAll().where('item_id', '=', item.id).execute();
  const listed = new Map(item.formats.map((f) => [f.file_path, f]));
  const out: FileFacts[] = files.map((f) => {
    const now = listed.get(f.rel_path);
    listed.delete(f.rel_path);
    const base = { id: Number(f.id), file_path: f.rel_path, created_at: f.created_at.toISOString(), pages_read: f.pages_read };
    if (!now)
      return {
        ...base,
        format: f.format,
        size: Number(f.size),
        mtime_ms: Number(f.mtime_ms),
        sha256: f.sha256,
        partial_md5: f.partial_md5,
        present: false,
        updated_at: f.present ? at : f.updated_at.toISOString(),
        ...(f.pages ? { pages: f.pages } : {}),
      };
    return { ...base, ...fileOf(now), pages_read: f.pages_read || now.pages !== undefined, updated_at: at };
  });
  for (const f of listed.values()) out.push({ file_path: f.file_path, ...fileOf(f), pages_read: f.pages !== undefined, created_at: at, updated_at: at });
  const seen = new Map(hashes.map((h) => [h.sha256, h]));
  return {
    state: 'active',
    file_path: prev?.file_path ?? item.file_path,
    group_dir: item.source === 'scan' && item.file_path ? posixDirname(item.file_path) : (prev?.group_dir ?? null),
    group_title: groupTitle(item.title),
    // the key stays while it is one of the item's files; a file read again shows its own cover
    cover_key: item.cover_url ? (prev?.cover_key && item.formats.some((f) => f.sha256 === prev.cover_key) ? prev.cover_key : item.sha256) : null,
    version: prev ? prev.version + 1 : 0,
    missing_since: null,
    updated_at: item.updated_at,
    files: out,
    hashes: item.known_sha256.map((sha) => {
      const h = seen.get(sha);
      const f = item.formats.find((x) => x.sha256 === sha);
      return {
        sha256: sha,
        partial_md5: h?.partial_md5 ?? f?.partial_md5 ?? null,
        format: h?.format ?? f?.format ?? 'unknown',
        first_seen: h ? h.first_seen.toISOString() : at,
        last_seen: f ? at : (h?.last_seen.toISOString() ?? at),
      };
    }),
  };
}

const fileOf = (f: Catalog.MediaFormat) => ({
  format: f.format,
  size: f.size,
  mtime_ms: f.modified_at ? Date.parse(f.modified_at) : 0,
  sha256: f.sha256,
  partial_md5: f.partial_md5,
  present: true,
});

/** An item event's rows: its public record and the record of its rows. */
interface ItemRows {
  item: Catalog.MediaItem;
  rec: RowsRecord;
}

const itemCols = ({ item, rec }: ItemRows) => ({
  library_id: item.library_id,
  state: rec.state,
  source: item.source,
  file_path: rec.file_path,
  group_dir: rec.group_dir,
  group_title: rec.group_title,
  title: item.title,
  sort_title: item.sort_title,
  contributors: JSON.stringify(item.contributors),
  authors: JSON.stringify(item.authors),
  series: item.series,
  series_index: item.series_index,
  language: item.language,
  // a detail declared after the event was logged is null
  ...Catalog.textDetailsOf(item),
  description: item.description,
  identifiers: JSON.stringify(item.identifiers),
  tags: JSON.stringify(item.tags),
  year: item.year,
  page_count: item.page_count,
  reading_direction: item.reading_direction,
  cover_key: rec.cover_key,
  added_by_admin: item.added_by_admin,
  locked_fields: JSON.stringify(rec.locked_fields ?? []),
  file_fields: rec.file_fields ? JSON.stringify(rec.file_fields) : null,
  calibre: item.calibre ? JSON.stringify(item.calibre) : null,
  version: rec.version,
  missing_since: rec.missing_since,
  created_at: item.created_at,
  updated_at: rec.updated_at,
});

/** Replaces the rows of several items (none twice) by their events' records, in a few statements whatever their number. */
async function putItems(t: Sch, list: readonly ItemRows[]): Promise<void> {
  if (list.length === 0) return;
  const rows = list.map((x) => ({ id: x.item.id, ...itemCols(x) }));
  const columns = Object.keys(itemCols(list[0]!)) as (keyof ReturnType<typeof itemCols>)[];
  await t
    .insertInto('media_items')
    .values(rows)
    .onConflict((oc) =>
      oc.column('id').doUpdateSet((eb) => ({
        ...Object.fromEntries(columns.map((c) => [c, eb.ref(`excluded.${c}`)])),
        // the cover files on disk are another file's once the key changes: made again (scanner/covers.ts)
        cover_ready: sql<boolean>`case when media_items.cover_key is distinct from excluded.cover_key then false else media_items.cover_ready end`,
      })),
    )
    .execute();
  await putRows(
    t,
    list.map(({ item, rec }) => {
      const pages = new Map(item.formats.map((f) => [f.file_path, f.pages]));
      return { itemId: item.id, libraryId: item.library_id, rec, pagesOf: (f: FileFacts) => (f.present ? pages.get(f.file_path) : f.pages) };
    }),
  );
}

/** Replaces the items' file and hash rows by their records'. */
async function putRows(t: Sch, list: readonly { itemId: string; libraryId: string; rec: RowsRecord; pagesOf: (f: FileFacts) => string[] | undefined }[]): Promise<void> {
  const itemIds = list.map((x) => x.itemId);
  const ids = list.flatMap((x) => x.rec.files.flatMap((f) => (f.id === undefined ? [] : [f.id])));
  let gone = t.deleteFrom('media_formats').where('item_id', 'in', itemIds);
  if (ids.length > 0) gone = gone.where('id', 'not in', ids);
  await gone.execute();
  const cols = (x: (typeof list)[number], f: FileFacts) => ({
    item_id: x.itemId,
    library_id: x.libraryId,
    rel_path: f.file_path,
    format: f.format,
    size: f.size,
    mtime_ms: f.mtime_ms,
    sha256: f.sha256,
    partial_md5: f.partial_md5,
    present: f.present,
    created_at: f.created_at,
    updated_at: f.updated_at,
    pages: pagesJson(x.pagesOf(f)),
    pages_read: f.pages_read,
  });
  // a row keeps its id from one event to the next, even when a file of another item takes it over
  const withId = list.flatMap((x) => x.rec.files.flatMap((f) => (f.id === undefined ? [] : [{ id: f.id, ...cols(x, f) }])));
  if (withId.length > 0) {
    const columns = Object.keys(withId[0]!).filter((c) => c !== 'id') as (keyof ReturnType<typeof cols>)[];
    await t
      .insertInto('media_formats')
      .values(withId)
      .onConflict((oc) => oc.column('id').doUpdateSet((eb) => Object.fromEntries(columns.map((c) => [c, eb.ref(`excluded.${c}`)]))))
      .execute();
  }
  // files of events logged before records carried their rows' ids
  const without = list.flatMap((x) => x.rec.files.flatMap((f) => (f.id === undefined ? [cols(x, f)] : [])));
  if (without.length > 0) await t.insertInto('media_formats').values(without).execute();
  await t.deleteFrom('format_hashes').where('item_id', 'in', itemIds).execute();
  const hashes = list.flatMap((x) => x.rec.hashes.map((h) => ({ item_id: x.itemId, ...h })));
  if (hashes.length > 0) await t.insertInto('format_hashes').values(hashes).execute();
}

/** The event types whose rows this fold writes in the appending transaction: every type that has rows. */
export const FOLDED_INLINE: ReadonlySet<string> = new Set<Catalog.CatalogEvent['type']>([
  'catalog.library-created.v1',
  'catalog.library-updated.v1',
  'catalog.library-deleted.v1',
  'catalog.scan-queued.v1',
  'catalog.scan-upgraded.v1',
  'catalog.scan-started.v1',
  'catalog.scan-requeued.v1',
  'catalog.scan-finished.v1',
  'catalog.scan-pruned.v1',
  'catalog.file-issue-recorded.v1',
  'catalog.file-issues-cleared.v1',
  'catalog.files-excluded.v1',
  'catalog.excluded-file-touched.v1',
  'catalog.hash-conflict-opened.v1',
  'catalog.hash-conflict-resolved.v1',
  'catalog.hash-conflict-dismissed.v1',
  'catalog.media-item-added.v1',
  'catalog.media-item-updated.v1',
  'catalog.media-item-removed.v1',
  'catalog.calibre-report-recorded.v1',
]);

/** Applies the catalog's events, in log order, to the tables of `schema` (made by the catalog's migrations, empty). */
export async function replayCatalog(trx: CTrx, schema: string, events: readonly StoredEvent[]): Promise<void> {
  await projectCatalog(trx, schema, events);
  // file rows keep their ids: the next new row's id follows the highest
  await sql`select setval(pg_get_serial_sequence(${`${schema}.media_formats`}, 'id'), coalesce((select max(id) from ${sql.table(`${schema}.media_formats`)}), 0) + 1, false)`.execute(
    trx,
  );
}

/** Applies events to the tables of `schema`, in order: at replay every event, in an append those of FOLDED_INLINE (`checked`: by the command that appends them). */
export async function projectCatalog(trx: CTrx, schema: string, events: readonly StoredEvent[], opts: { checked?: boolean } = {}): Promise<void> {
  const t = trx.withSchema(schema);
  // consecutive item records (a scan's batch) are written together
  let run: ItemRows[] = [];
  const flush = async () => {
    const list = run;
    run = [];
    await putItems(t, list);
  };
  for (const ev of events) {
    // events its command has just checked against their schemas (Ctx.emit) are not checked twice
    const e = opts.checked ? ({ type: ev.type, data: ev.data } as Catalog.CatalogEvent) : catalogEvents.decode(ev);
    if (!e) continue;
    const at = ev.recordedAt;
    if ((e.type === 'catalog.media-item-added.v1' || e.type === 'catalog.media-item-updated.v1') && e.data.record) {
      if (run.some((x) => x.item.id === e.data.item.id)) await flush();
      run.push({ item: e.data.item, rec: e.data.record });
      continue;
    }
    await flush();
    switch (e.type) {
      case 'catalog.library-created.v1':
        await t
          .insertInto('libraries')
          .values({ id: e.data.library.id, ...libraryColumns(e.data.library), version: ev.version })
          .execute();
        break;
      case 'catalog.library-updated.v1':
        await t
          .updateTable('libraries')
          .set({ ...libraryColumns(e.data.library), version: ev.version })
          .where('id', '=', e.data.library.id)
          .execute();
        break;
      case 'catalog.library-deleted.v1':
        // its scans and file issues go with it, as in the live tables
        await t.deleteFrom('libraries').where('id', '=', e.data.library_id).execute();
        break;
      case 'catalog.scan-queued.v1': {
        const d = e.data;
        await t
          .insertInto('scans')
          .values({ id: d.scan_id, library_id: d.library_id, reason: d.reason, status: 'queued', full_rehash: d.full_rehash, requested_by: d.requested_by, requested_at: at })
          .execute();
        break;
      }
      case 'catalog.scan-upgraded.v1':
        await t.updateTable('scans').set({ full_rehash: true }).where('id', '=', e.data.scan_id).execute();
        break;
      case 'catalog.scan-started.v1':
        await t.updateTable('scans').set({ status: 'running', started_at: at }).where('id', '=', e.data.scan_id).execute();
        break;
      case 'catalog.scan-requeued.v1':
        await t.updateTable('scans').set({ status: 'queued', started_at: null }).where('id', '=', e.data.scan_id).execute();
        break;
      case 'catalog.scan-finished.v1': {
        const { scan_id, library_id: _l, status, error, duration_ms: _d, ...counts } = e.data;
        // cancelled: the scan's library, and its row with it, are gone
        if (status === 'cancelled') break;
        await t
          .updateTable('scans')
          .set({ status, finished_at: at, counts: JSON.stringify(counts), error })
          .where('id', '=', scan_id)
          .execute();
        break;
      }
      case 'catalog.scan-pruned.v1':
        await t.deleteFrom('scans').where('id', '=', e.data.scan_id).execute();
        break;
      case 'catalog.file-issue-recorded.v1': {
        const i = e.data.issue;
        // the file's modification time: 0 in events logged before it was carried (the next scan reads the file again)
        const mtime = e.data.mtime_ms ?? 0;
        const cols = { format: i.format, size: i.size, mtime_ms: mtime, error: i.error, seen_at: i.seen_at };
        await t
          .insertInto('file_issues')
          .values({ library_id: i.library_id, rel_path: i.file_path, ...cols })
          .onConflict((oc) => oc.columns(['library_id', 'rel_path']).doUpdateSet(cols))
          .execute();
        // a catalogued file that became unreadable keeps its row, with the file's size and time (and
        // is not read again for its pages until it changes)
        if (e.data.mtime_ms !== undefined) {
          await t
            .updateTable('media_formats')
            .set({ size: i.size, mtime_ms: mtime, pages_read: true })
            .where('library_id', '=', i.library_id)
            .where('rel_path', '=', i.file_path)
            .execute();
        }
        break;
      }
      case 'catalog.media-item-added.v1':
      case 'catalog.media-item-updated.v1':
        // logged before item events carried their rows' record
        await putItems(t, [{ item: e.data.item, rec: await recordFromItem(t, e.data.item, at) }]);
        break;
      case 'catalog.media-item-removed.v1': {
        const d = e.data;
        if (d.reason !== 'missing') {
          // its file and hash rows go with it; an admin's removal also logs its files as excluded
          await t.deleteFrom('media_items').where('id', '=', d.item_id).execute();
          break;
        }
        const r = d.record;
        if (r) {
          await t
            .updateTable('media_items')
            .set({
              state: r.state,
              file_path: r.file_path,
              group_dir: r.group_dir,
              group_title: r.group_title,
              cover_key: r.cover_key,
              version: r.version,
              missing_since: r.missing_since,
              updated_at: r.updated_at,
            })
            .where('id', '=', d.item_id)
            .execute();
          await putRows(t, [{ itemId: d.item_id, libraryId: d.library_id, rec: r, pagesOf: (f) => f.pages }]);
        } else {
          await t.updateTable('media_items').set({ state: 'missing', missing_since: at, updated_at: at, version: sql`version + 1` }).where('id', '=', d.item_id).execute();
          await t.updateTable('media_formats').set({ present: false, updated_at: at }).where('item_id', '=', d.item_id).where('present', '=', true).execute();
        }
        break;
      }
      case 'catalog.file-issues-cleared.v1':
        if (e.data.file_paths.length > 0) await t.deleteFrom('file_issues').where('library_id', '=', e.data.library_id).where('rel_path', 'in', e.data.file_paths).execute();
        break;
      case 'catalog.files-excluded.v1':
        for (const f of e.data.files) {
          const cols = { sha256: f.sha256, size: f.size, mtime_ms: f.mtime_ms, excluded_at: at };
          await t
            .insertInto('excluded_files')
            .values({ library_id: e.data.library_id, rel_path: f.file_path, ...cols })
            .onConflict((oc) => oc.columns(['library_id', 'rel_path']).doUpdateSet(cols))
            .execute();
        }
        break;
      case 'catalog.excluded-file-touched.v1':
        await t
          .updateTable('excluded_files')
          .set({ size: e.data.size, mtime_ms: e.data.mtime_ms })
          .where('library_id', '=', e.data.library_id)
          .where('rel_path', '=', e.data.file_path)
          .execute();
        break;
      case 'catalog.hash-conflict-opened.v1': {
        const d = e.data;
        await t
          .insertInto('hash_conflicts')
          .values({ id: d.conflict_id, sha256: d.sha256, status: 'pending', item_ids: JSON.stringify(d.item_ids), created_at: at })
          .onConflict((oc) => oc.column('id').doUpdateSet({ item_ids: JSON.stringify(d.item_ids) }))
          .execute();
        break;
      }
      case 'catalog.hash-conflict-resolved.v1':
        await t
          .updateTable('hash_conflicts')
          .set({ status: 'resolved', kept_item_id: e.data.kept_item_id, resolved_by: e.data.resolved_by, resolved_at: at })
          .where('id', '=', e.data.conflict_id)
          .execute();
        break;
      case 'catalog.calibre-report-recorded.v1': {
        const report = JSON.stringify(e.data.report);
        await t
          .insertInto('calibre_reports')
          .values({ library_id: e.data.library_id, report, recorded_at: at })
          .onConflict((oc) => oc.column('library_id').doUpdateSet({ report, recorded_at: at }))
          .execute();
        break;
      }
      case 'catalog.hash-conflict-dismissed.v1':
        await t.updateTable('hash_conflicts').set({ status: 'dismissed', resolved_by: e.data.resolved_by, resolved_at: at }).where('id', '=', e.data.conflict_id).execute();
        break;
      default:
        break;
    }
  }
  await flush();
}
