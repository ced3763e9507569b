// The catalog tables that are projections of the catalog's log, rebuilt from it: libraries, the
// scan queue and history, file issues, hash conflicts and excluded files. A row's times are its
// events' times (the commands write `now()`, the transaction's time, which is also the event's
// `recorded_at`). Not rebuilt (yet): media items, their formats and hash history, whose rows hold
// scanner facts the item events do not carry (see the replay test). Never rebuilt from this log:
// leases (which replica runs the scanner), settings (identity's, kept by a reaction to its log),
// and the caches of file contents (locator indexes, KEPUBs; covers are files).
import { Catalog, type StoredEvent } from '@bindery/contracts';
import { eventSchemas } from '@bindery/platform';
import type { CTrx } from './schema';

export const REPLAYED_TABLES = ['libraries', 'scans', 'file_issues', 'hash_conflicts', 'excluded_files'] as const;

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

/** Applies the catalog's events, in log order, to the tables of `schema` (made by the catalog's migrations, empty). */
export async function replayCatalog(trx: CTrx, schema: string, events: readonly StoredEvent[]): Promise<void> {
  const t = trx.withSchema(schema);
  for (const ev of events) {
    const e = catalogEvents.decode(ev);
    if (!e) continue;
    const at = ev.recordedAt;
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
        // the file's modification time is not in the event: the scanner's own note, see the replay test
        const cols = { format: i.format, size: i.size, mtime_ms: 0, error: i.error, seen_at: i.seen_at };
        await t
          .insertInto('file_issues')
          .values({ library_id: i.library_id, rel_path: i.file_path, ...cols })
          .onConflict((oc) => oc.columns(['library_id', 'rel_path']).doUpdateSet(cols))
          .execute();
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
      case 'catalog.hash-conflict-dismissed.v1':
        await t.updateTable('hash_conflicts').set({ status: 'dismissed', resolved_by: e.data.resolved_by, resolved_at: at }).where('id', '=', e.data.conflict_id).execute();
        break;
      default:
        break;
    }
  }
}
