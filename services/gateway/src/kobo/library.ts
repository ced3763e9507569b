// What the Kobo routes read about books: the visible EPUB items, their reading states (with the
// canonical place the reading projection keeps), the states' places as spans of our KEPUB, and the
// collections that are a Kobo's tags — all from the gateway's read models and the span-map cache.
import pLimit from 'p-limit';
import type { Catalog } from '@bindery/contracts';
import { SCHEMA } from '../read-model/migrations';
import type { Access } from '../read-model/access';
import { readingTables } from '../read-model/reading-tables';
import type { Reads } from '../read-model/reads';
import { catalogTables } from '../read-model/tables';
import { fractionToPlace, type KepubSource, placeToLocation, type SpanMap } from './kepubs';
import type { StateFacts } from './shapes';
import type { Difference } from './sync-state';

/** how long a sync page waits for its books' span maps (a KEPUB not yet made is made meanwhile) */
const SPAN_BUDGET_MS = 1500;
const R = readingTables();
const C = catalogTables();
export type Item = Catalog.MediaItem;
export interface ProgressRow {
  percentage: number;
  updated_at: string;
  spot: { spine_index?: number; doc_offset?: number } | null;
}
export type Progress = Map<string, ProgressRow>;
export type TagRows = Map<string, { name: string; created: string; modified: string; items: string[] }>;

export const epubOf = (item: Item) => item.formats.find((f) => f.format.toLowerCase() === 'epub' && f.sha256) ?? null;

export function koboLibrary(reads: Reads, kepubs: KepubSource) {
  /** The items among `ids` the access sees, by id. */
  async function itemsOf(a: Access, ids: string[]): Promise<Map<string, Item>> {
    const out = new Map<string, Item>();
    if (ids.length === 0) return out;
    if (!a.all && a.ids.length === 0) return out;
    let q = reads.db.withSchema(SCHEMA).selectFrom(C.items).select(['id', 'doc']).where('id', 'in', ids);
    if (!a.all) q = q.where('library_id', 'in', a.ids);
    for (const r of await q.execute()) out.set(r.id, JSON.parse(r.doc) as Item);
    return out;
  }

  async function progressOf(user: string, ids: string[]): Promise<Progress> {
    const out: Progress = new Map();
    if (ids.length === 0) return out;
    const rows = await reads.db
      .withSchema(SCHEMA)
      .selectFrom(R.progress)
      .select(['item_id', 'percentage', (eb) => eb.cast<string>('updated_at', 'text').as('at'), 'spot'])
      .where('user_id', '=', user)
      .where('item_id', 'in', ids)
      .execute();
    for (const r of rows) out.set(r.item_id, { percentage: Number(r.percentage), updated_at: r.at, spot: (typeof r.spot === 'string' ? JSON.parse(r.spot) : r.spot) ?? null });
    return out;
  }

  /** A book's reading state as the Kobo reads it, its place as a span of our KEPUB when known. */
  async function stateFacts(item: Item, p: ProgressRow | undefined, maps?: Map<string, SpanMap | null>): Promise<StateFacts> {
    if (!p) return { percentage: null, updated_at: null, location: null };
    let location: StateFacts['location'] = null;
    const epub = epubOf(item);
    if (epub && p.percentage < 1) {
      // in a sync page only the maps that arrived within the page's budget (see `mapsFor`)
      const map = maps ? (maps.get(epub.sha256!) ?? null) : await kepubs.spans(epub.sha256!).catch(() => null);
      if (map) {
        const at =
          p.spot?.spine_index !== undefined && p.spot.doc_offset !== undefined ? { spine: p.spot.spine_index, offset: p.spot.doc_offset } : fractionToPlace(map, p.percentage);
        location = placeToLocation(map, at.spine, at.offset);
      }
    }
    return { percentage: p.percentage, updated_at: new Date(p.updated_at).toISOString(), location };
  }

  /**
   * The span maps of the page's books whose state is sent, fetched together within SPAN_BUDGET_MS: a
   * book never downloaded has its KEPUB made on the first fetch, which must not hold the page up; a
   * map that is late is used at the next sync (the conversion goes on and is kept).
   */
  async function mapsFor(diff: Difference[], items: Map<string, Item>, progress: Progress): Promise<Map<string, SpanMap | null>> {
    const out = new Map<string, SpanMap | null>();
    const want = new Set<string>();
    for (const d of diff) {
      const item = items.get(d.key.slice(2));
      const p = progress.get(d.key.slice(2));
      const epub = item && epubOf(item);
      if (epub && p && p.percentage < 1 && d.sver !== null && d.sver !== d.hsver) want.add(epub.sha256!);
    }
    if (want.size === 0) return out;
    const limit = pLimit(4);
    const all = Promise.all(
      [...want].map((sha) =>
        limit(async () => {
          out.set(sha, await kepubs.spans(sha).catch(() => null));
        }),
      ),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((r) => (timer = setTimeout(r, SPAN_BUDGET_MS)))]);
    clearTimeout(timer);
    limit.clearQueue();
    return new Map(out);
  }

  async function tagsOf(user: string, ids: string[]): Promise<TagRows> {
    const out: TagRows = new Map();
    if (ids.length === 0) return out;
    const rows = await reads.db.withSchema(SCHEMA).selectFrom(R.collections).select(['id', 'name', 'doc']).where('user_id', '=', user).where('id', 'in', ids).execute();
    const members = await reads.db.withSchema(SCHEMA).selectFrom(R.members).select(['collection_id', 'item_id']).where('collection_id', 'in', ids).orderBy('item_id').execute();
    for (const r of rows) {
      const doc = (typeof r.doc === 'string' ? JSON.parse(r.doc) : r.doc) as { created_at?: string; updated_at?: string };
      out.set(r.id, { name: r.name, created: doc.created_at ?? new Date(0).toISOString(), modified: doc.updated_at ?? new Date().toISOString(), items: [] });
    }
    for (const m of members) out.get(m.collection_id)?.items.push(m.item_id);
    return out;
  }

  return { itemsOf, progressOf, stateFacts, mapsFor, tagsOf };
}

export type KoboLibrary = ReturnType<typeof koboLibrary>;
