// The catalog's read side rebuilt from nothing but its event log: what any projection (the
// gateway's read models) can know. Last snapshot wins; a removal or a library's deletion is gone.
import { Catalog, type StoredEvent } from '@bindery/contracts';
import { eventSchemas } from '@bindery/platform';

export interface FoldedConflict {
  id: string;
  sha256: string;
  item_ids: string[];
  created_at: string;
  open: boolean;
}

/** a scan as `GET /api/scanner/status` lists it, without its times */
export interface FoldedScan {
  id: string;
  library_id: string;
  reason: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  full_rehash: boolean;
  counts: Record<string, number>;
  error: string | null;
}

export interface Folded {
  scans: Map<string, FoldedScan>;
  libraries: Map<string, Catalog.Library>;
  items: Map<string, Catalog.MediaItem>;
  /** key: `<library_id>/<file_path>` */
  issues: Map<string, Catalog.FileIssue>;
  conflicts: Map<string, FoldedConflict>;
  /** item id → file path → its page list: events carry these, public records never do */
  pages: Map<string, Record<string, string[]>>;
  /** events whose type or data the contract does not know */
  invalid: { position: number; type: string }[];
}

const catalogEvents = eventSchemas(Catalog.CatalogEvents);

function decoded(ev: StoredEvent) {
  try {
    return catalogEvents.decode(ev);
  } catch {
    return null;
  }
}

export function foldCatalog(log: StoredEvent[]): Folded {
  const out: Folded = { scans: new Map(), libraries: new Map(), items: new Map(), issues: new Map(), conflicts: new Map(), pages: new Map(), invalid: [] };
  for (const ev of log) {
    const e = decoded(ev);
    if (!e) {
      out.invalid.push({ position: ev.position, type: ev.type });
      continue;
    }
    switch (e.type) {
      case 'catalog.library-created.v1':
      case 'catalog.library-updated.v1':
        out.libraries.set(e.data.library.id, e.data.library);
        break;
      case 'catalog.library-deleted.v1':
        out.libraries.delete(e.data.library_id);
        for (const [k, i] of out.issues) if (i.library_id === e.data.library_id) out.issues.delete(k);
        for (const [k, s] of out.scans) if (s.library_id === e.data.library_id) out.scans.delete(k);
        break;
      case 'catalog.media-item-added.v1':
      case 'catalog.media-item-updated.v1': {
        const { item } = e.data;
        out.items.set(item.id, { ...item, formats: item.formats.map(({ pages: _pages, ...f }) => f) });
        out.pages.set(item.id, Object.fromEntries(item.formats.flatMap((f) => (f.pages ? [[f.file_path, f.pages]] : []))));
        break;
      }
      case 'catalog.media-item-removed.v1':
        out.items.delete(e.data.item_id);
        out.pages.delete(e.data.item_id);
        break;
      case 'catalog.file-issue-recorded.v1':
        out.issues.set(`${e.data.issue.library_id}/${e.data.issue.file_path}`, e.data.issue);
        break;
      case 'catalog.file-issues-cleared.v1':
        for (const p of e.data.file_paths) out.issues.delete(`${e.data.library_id}/${p}`);
        break;
      case 'catalog.hash-conflict-opened.v1': {
        const was = out.conflicts.get(e.data.conflict_id);
        out.conflicts.set(e.data.conflict_id, {
          id: e.data.conflict_id,
          sha256: e.data.sha256,
          item_ids: e.data.item_ids,
          created_at: was?.created_at ?? ev.recordedAt,
          open: true,
        });
        break;
      }
      case 'catalog.hash-conflict-resolved.v1':
      case 'catalog.hash-conflict-dismissed.v1': {
        const c = out.conflicts.get(e.data.conflict_id);
        if (c) c.open = false;
        break;
      }
      case 'catalog.scan-queued.v1': {
        const { scan_id, library_id, reason, full_rehash } = e.data;
        out.scans.set(scan_id, { id: scan_id, library_id, reason, status: 'queued', full_rehash, counts: {}, error: null });
        break;
      }
      case 'catalog.scan-upgraded.v1':
      case 'catalog.scan-started.v1':
      case 'catalog.scan-requeued.v1': {
        const s = out.scans.get(e.data.scan_id);
        if (!s) break;
        if (e.type === 'catalog.scan-upgraded.v1') s.full_rehash = true;
        else s.status = e.type === 'catalog.scan-started.v1' ? 'running' : 'queued';
        break;
      }
      case 'catalog.scan-finished.v1': {
        const { scan_id, library_id: _l, status, error, duration_ms: _d, ...counts } = e.data;
        const s = out.scans.get(scan_id);
        // cancelled: its library was deleted, and its scans with it
        if (!s || status === 'cancelled') break;
        Object.assign(s, { status, error, counts });
        break;
      }
      case 'catalog.scan-pruned.v1':
        out.scans.delete(e.data.scan_id);
        break;
    }
  }
  return out;
}

/** Libraries as `GET /api/libraries` shows them: `item_count` counted from the folded items. */
export function librariesOf(f: Folded): Catalog.Library[] {
  const counts = new Map<string, number>();
  for (const i of f.items.values()) counts.set(i.library_id, (counts.get(i.library_id) ?? 0) + 1);
  return [...f.libraries.values()].map((l) => ({ ...l, item_count: counts.get(l.id) ?? 0 }));
}

/** Pending conflicts as `GET /api/admin/hash-conflicts` shows them: only groups with two or more items left. */
export function conflictsOf(f: Folded): { id: string; sha256: string; status: string; created_at: string; items: Catalog.MediaItem[] }[] {
  return [...f.conflicts.values()]
    .filter((c) => c.open)
    .map((c) => ({
      id: c.id,
      sha256: c.sha256,
      status: 'pending',
      created_at: c.created_at,
      items: c.item_ids.map((i) => f.items.get(i)).filter((i): i is Catalog.MediaItem => !!i),
    }))
    .filter((c) => c.items.length > 1);
}
