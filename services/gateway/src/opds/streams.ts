// Which items the feeds offer page by page, how many pages they have and where the caller is in
// them (pse:lastRead, OPDS 2.0 page lists), and the reading progress a page fetch records (PSE has
// no write call). Counts are the catalog's for CBZ, CBR and PDF; image-only EPUBs are counted here.
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

  /** The file streamed for an item and its page count, or null when it has none to stream. */
  async streamOf(item: Catalog.MediaItem): Promise<(StreamFile & { count: number }) | null> {
    for (const { kind, format } of this.kinds(item)) {
      if (kind === 'epub') {
        const abs = await this.abs(item, format);
        const pages = abs ? await this.sources.epubPageList(abs) : null;
        if (abs && pages && pages.length > 0) return { kind, abs, count: pages.length };
        continue;
      }
      if (item.page_count === null || item.page_count < 1) continue;
      if (kind === 'pdf' && !(await findPdftoppm())) continue;
      const abs = await this.abs(item, format);
      if (abs) return { kind, abs, count: item.page_count };
    }
    return null;
  }

  /** Stream info for the items of one feed page, with the user's place in each. */
  async infoFor(user: string, items: Catalog.MediaItem[]): Promise<Map<string, StreamInfo>> {
    const out = new Map<string, StreamInfo>();
    const found = await Promise.all(
      items.map(async (i) => {
        // only items that have a streamable format cost a look at the file (EPUBs)
        if (!i.formats.some((f) => (STREAM_ORDER as readonly string[]).includes(f.format.toLowerCase()))) return null;
        const s = await this.streamOf(i).catch(() => null);
        return s ? ([i.id, s] as const) : null;
      }),
    );
    for (const f of found) if (f) out.set(f[0], { kind: f[1].kind, count: f[1].count });
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
