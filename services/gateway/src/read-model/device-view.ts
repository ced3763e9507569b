// Reads of the devices projection: a user's devices, their shelves, and the sidecar (the per-device
// JSON the reader plugin keeps: books on its shelves keyed by per-format SHA-256, or the item's UUID
// when no format has a hash, with the collections and the formats available).
import { sql } from 'kysely';
import type { Catalog, DeviceSync, Identity, Result } from '@bindery/contracts';
import { SCHEMA } from './migrations';
import { DashboardView } from './dashboard-view';
import { deviceTables } from './device-tables';
import { readingTables } from './reading-tables';
import type { Reads } from './reads';

const D = deviceTables();
const R = readingTables();

/** The plugin API (device-authenticated) the sidecar and the registration point at. */
export const SYNC_ENDPOINTS = {
  progress: '/api/sync/koreader/progress',
  metadata: '/api/sync/koreader/metadata/{uuid}',
  library: '/api/sync/koreader/library',
  bookmarks: '/api/sync/koreader/bookmarks',
  resolve: '/api/sync/koreader/resolve',
} as const;

export const SIDECAR_VERSION = 1;

/**
 * A sync queue as device-sync answers it, less the entries of books the caller may not see now (a
 * library hidden from them since the entry was queued): like every other read, filtered by access.
 * Removals stay (the device holds those books already).
 */
export async function visibleQueue<T extends { entries: DeviceSync.QueueEntry[] }>(reads: Reads, caller: Identity.Caller, r: Result<T>): Promise<Result<T>> {
  if (!r.ok) return r;
  const body = r.value;
  const { access } = await reads.context(caller);
  if (access.all) return r;
  // a removal stays: the device holds that book already, and taking it off is what a lost library means
  const keep = await Promise.all(
    body.entries.map(async (e) => e.media_item_id === null || e.action === 'remove' || (await reads.catalog.itemLibrary(access, e.media_item_id)) !== null),
  );
  return { ok: true, value: { ...body, entries: body.entries.filter((_, i) => keep[i]) } };
}
/** at most this many books per shelf in a sidecar */
const SHELF_BOOKS = 1000;

export class DeviceView {
  private dashboard: DashboardView;

  constructor(private reads: Reads) {
    this.dashboard = new DashboardView(reads.db);
  }

  private get s() {
    return this.reads.db.withSchema(SCHEMA);
  }

  private out(r: { doc: unknown; credential_hash: unknown; sync_key_issued_at: unknown; kobo_token_hash: unknown; kobo_books: unknown }) {
    const at = r.sync_key_issued_at ? new Date(r.sync_key_issued_at as string).toISOString() : null;
    const doc = r.doc as DeviceSync.Device;
    // a Kobo's credential is its store address: it has one from the moment its owner makes it
    const kobo = doc.client === 'kobo' || r.kobo_token_hash ? { kobo: { books: r.kobo_books === 'shelves' ? 'shelves' : 'all', address: !!r.kobo_token_hash } } : {};
    return { ...doc, status: r.credential_hash || r.kobo_token_hash ? 'active' : 'awaiting_device', sync_key_issued_at: at, ...kobo };
  }

  async list(user: string) {
    const rows = await this.s.selectFrom(D.devices).select(['doc', 'credential_hash', 'sync_key_issued_at', 'kobo_token_hash', 'kobo_books']).where('user_id', '=', user).execute();
    return rows.map((r) => this.out(r)).sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  }

  async one(user: string, id: string) {
    const r = await this.s
      .selectFrom(D.devices)
      .select(['doc', 'credential_hash', 'sync_key_issued_at', 'kobo_token_hash', 'kobo_books'])
      .where('id', '=', id.toLowerCase())
      .where('user_id', '=', user)
      .executeTakeFirst();
    return r ? this.out(r) : null;
  }

  /** Every user's number of devices. */
  async counts(): Promise<Map<string, number>> {
    const rows = await this.s
      .selectFrom(D.devices)
      .select(['user_id', sql<number>`count(*)`.as('n')])
      .groupBy('user_id')
      .execute();
    return new Map(rows.map((r) => [r.user_id, Number(r.n)]));
  }

  /** One of the user's collections (another user's is null). */
  async collection(user: string, id: string): Promise<{ id: string; name: string } | null> {
    const c = await this.dashboard.collection(user, id);
    return c ? { id: c.id, name: c.name } : null;
  }

  /** The device's shelves with their collections' names, or null when it is not the user's device. */
  async shelves(user: string, id: string) {
    if (!(await this.one(user, id))) return null;
    const rows = await this.s
      .selectFrom(`${D.shelves} as s`)
      .leftJoin(`${R.collections} as c`, 'c.id', 's.collection_id')
      .select(['s.collection_id', 's.added_at', 'c.name', 'c.is_system', 'c.query_type'])
      .where('s.device_id', '=', id.toLowerCase())
      .orderBy('s.added_at')
      .orderBy('s.collection_id')
      .execute();
    return rows.map((r) => ({
      collection_id: r.collection_id,
      name: r.name ?? null,
      is_system: Boolean(r.is_system),
      query_type: r.query_type ?? null,
      added_at: new Date(r.added_at).toISOString(),
    }));
  }

  /** The sidecar of one of `owner`'s devices, as `caller` (the owner or the device) may see it. */
  async sidecar(caller: Identity.Caller, owner: string, id: string) {
    const device = await this.one(owner, id);
    if (!device) return null;
    const access = (await this.reads.context(caller)).access;
    const shelves = await this.s.selectFrom(D.shelves).select('collection_id').where('device_id', '=', id).orderBy('added_at').orderBy('collection_id').execute();
    const books: Record<string, unknown> = {};
    const collections: { id: string; name: string; books: string[] }[] = [];
    const formats = new Set<string>();
    for (const sh of shelves) {
      const c = await this.dashboard.collection(owner, sh.collection_id);
      if (!c) continue;
      const keys: string[] = [];
      for (const b of (await this.dashboard.books(owner, access, c, SHELF_BOOKS)).books) {
        const item = b.item as Catalog.MediaItem;
        const hashed = item.formats.filter((f) => f.sha256);
        const entry = {
          uuid: item.id,
          title: item.title,
          authors: item.authors,
          series: item.series,
          series_index: item.series_index,
          percentage: b.percentage,
          formats: item.formats.map((f) => ({ format: f.format, sha256: f.sha256, size: f.size, file_url: f.file_url })),
        };
        for (const f of item.formats) formats.add(f.format.toLowerCase());
        const own = hashed.length ? hashed.map((f) => f.sha256!) : [item.id];
        for (const k of own) {
          books[k] = { ...entry, key_type: k === item.id ? 'uuid' : 'sha256', ...(k === item.id ? {} : { format: hashed.find((f) => f.sha256 === k)!.format }) };
          keys.push(k);
        }
      }
      collections.push({ id: c.id, name: c.name, books: keys });
    }
    return {
      version: SIDECAR_VERSION,
      server: 'Bindery',
      device: { id: device.id, name: device.name, client: device.client },
      sync_endpoints: SYNC_ENDPOINTS,
      collections,
      books,
      formats: [...formats].sort(),
    };
  }
}
