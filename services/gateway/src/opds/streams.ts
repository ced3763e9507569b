// Which items the feeds offer page by page, how many pages they have and where the caller is in
// them (pse:lastRead, OPDS 2.0 page lists), and the reading progress a page fetch records (PSE has
// no write call). Page counts are the catalog's (CBZ, CBR, PDF, image-only EPUB); no file is opened
// to render a feed.
import { sql } from 'kysely';
import type { Catalog } from '@bindery/contracts';
import { resolveInside } from '@bindery/platform';
import { LRUCache } from 'lru-cache';
import { SCHEMA } from '../projections/migrations';
import { readingTables } from '../read-model/reading-tables';
import type { Reads } from '../read-model/reads';
import { findPdftoppm, PageSources, STREAM_ORDER, type StreamFile, type StreamKind } from './page-sources';

const R = readingTables();

export interface StreamInfo {
  kind: StreamKind;
  count: number;
  /** 1-based, the caller's page (PSE's pse:lastRead) */
  lastRead?: number;
  lastReadDate?: string;
}

/** The caller's page (1-based) of a position stored as a fraction of `count` pages. */
export const pageOf = (percentage: number, count: number) => Math.min(count, Math.max(1, Math.round(percentage * (count - 1)) + 1));

export const PSE_CLIENT = 'opds-pse';
export const PSE_DEVICE = 'OPDS page streaming';

export class Streams {
  readonly sources = new PageSources();
  /** the furthest page this process submitted per user and item, so prefetches never step back */
  private submitted = new LRUCache<string, number>({ max: 10_000, ttl: 10 * 60_000 });

  constructor(private reads: Reads) {}

  private kinds(item: Catalog.MediaItem): { kind: StreamKind; format: Catalog.MediaFormat }[] {
    const out: { kind: StreamKind; format: Catalog.MediaFormat }[] = [];
    for (const kind of STREAM_ORDER) {
      const f = item.formats.find((x) => x.format.toLowerCase() === kind);
      if (f) out.push({ kind, format: f });
    }
    return out;
  }

  private async abs(item: Catalog.MediaItem, f: Catalog.MediaFormat): Promise<string | null> {
    return (await resolveInside((await this.reads.catalog.folders(item.library_id)) ?? [], f.file_path))?.abs ?? null;
  }

  /** What an item streams and how many pages, from its catalog record alone (feeds open no file). */
  async kindOf(item: Catalog.MediaItem): Promise<{ kind: StreamKind; format: Catalog.MediaFormat; count: number } | null> {
    // the catalog counts the pages of CBZ, CBR, PDF and image-only EPUB (none for an EPUB with text)
    if (item.page_count === null || item.page_count < 1) return null;
    // the count belongs to the first of these formats the item has
    const first = this.kinds(item)[0];
    if (!first || (first.kind === 'pdf' && !(await findPdftoppm()))) return null;
    return { ...first, count: item.page_count };
  }

  /** The file streamed for an item and its page count, or null when it has none to stream. */
  async streamOf(item: Catalog.MediaItem): Promise<(StreamFile & { count: number }) | null> {
    const k = await this.kindOf(item);
    const abs = k ? await this.abs(item, k.format) : null;
    return k && abs ? { kind: k.kind, abs, count: k.count } : null;
  }

  /** Stream info for the items of one feed page, with the user's place in each. */
  async infoFor(user: string, items: Catalog.MediaItem[]): Promise<Map<string, StreamInfo>> {
    const out = new Map<string, StreamInfo>();
    const found = await Promise.all(items.map(async (i) => [i.id, await this.kindOf(i)] as const));
    for (const [id, k] of found) if (k) out.set(id, { kind: k.kind, count: k.count });
    if (out.size === 0) return out;
    const rows = await sql<{ item_id: string; percentage: number; updated_at: Date | string }>`
      select item_id, percentage, updated_at from ${sql.table(`${SCHEMA}.${R.progress}`)}
      where user_id = ${user} and item_id in (${sql.join([...out.keys()])})`.execute(this.reads.db);
    for (const r of rows.rows) {
      const s = out.get(r.item_id);
      if (!s) continue;
      s.lastRead = pageOf(Number(r.percentage), s.count);
      s.lastReadDate = new Date(r.updated_at).toISOString();
    }
    return out;
  }

  /**
   * Whether a fetch of page `index` (0-based) moves the user forward: past the stored position and
   * past what this process already submitted. The first page says nothing and is never recorded.
   */
  async advances(user: string, item: string, index: number, count: number): Promise<boolean> {
    const page = index + 1;
    if (page <= 1) return false;
    const key = `${user}|${item}`;
    if ((this.submitted.get(key) ?? 0) >= page) return false;
    const row = await sql<{ percentage: number }>`
      select percentage from ${sql.table(`${SCHEMA}.${R.progress}`)} where user_id = ${user} and item_id = ${item}`.execute(this.reads.db);
    const at = row.rows[0] ? pageOf(Number(row.rows[0].percentage), count) : 0;
    if (at >= page) return false;
    this.submitted.set(key, page);
    return true;
  }
}
