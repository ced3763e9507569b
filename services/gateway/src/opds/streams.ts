// Which items the feeds offer page by page, how many pages they have and where the caller is in
// them (pse:lastRead, OPDS 2.0 page lists), and the reading progress a page fetch records (PSE has
// no write call). Pages are the catalog's: the page lists it recorded for CBZ, CBR and image-only
// EPUB (cv_files.pages; the count a feed announces is the length of the list the stream serves)
// and a PDF's page_count; no file is opened to render a feed.
import { sql } from 'kysely';
import type { Catalog } from '@bindery/contracts';
import { resolveInside } from '@bindery/platform';
import { LRUCache } from 'lru-cache';
import { SCHEMA } from '../read-model/migrations';
import { readingTables } from '../read-model/reading-tables';
import { catalogTables } from '../read-model/tables';
import type { Reads } from '../read-model/reads';
import { findPdftoppm, type PageRenderOptions, PageSources, STREAM_ORDER, type StreamFile, type StreamKind } from './page-sources';
import { PdfTexts } from './pdf-text';

const R = readingTables();
const F = catalogTables();

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
  readonly sources: PageSources;
  /** the text of PDF pages, for the web reader's text layer and search */
  readonly texts = new PdfTexts();
  /** the furthest page this process submitted per user and item, so prefetches never step back */
  private submitted = new LRUCache<string, number>({ max: 10_000, ttl: 10 * 60_000 });
  /** the catalog's page lists of the files last streamed, keyed by file version */
  private pageLists = new LRUCache<string, readonly string[]>({ max: 5_000 });

  constructor(
    private reads: Reads,
    render?: PageRenderOptions,
    warn?: (msg: string) => void,
  ) {
    this.sources = new PageSources(render, warn);
  }

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

  /**
   * What each item streams and how many pages: the first of CBZ, CBR, PDF, EPUB it has that the
   * catalog gave pages. Archives and EPUBs count their recorded page list (one query for the
   * whole feed page, no file opened); a PDF its page_count, when pdftoppm is here.
   */
  async kindsOf(items: Catalog.MediaItem[]): Promise<Map<string, { kind: StreamKind; format: Catalog.MediaFormat; count: number }>> {
    const out = new Map<string, { kind: StreamKind; format: Catalog.MediaFormat; count: number }>();
    const candidates = items.map((item) => ({ item, kinds: this.kinds(item) })).filter((c) => c.kinds.length > 0);
    if (candidates.length === 0) return out;
    const counts = new Map<string, number>();
    if (candidates.some((c) => c.kinds.some((k) => k.kind !== 'pdf'))) {
      const rows = await sql<{ item_id: string; rel_path: string; count: number }>`
        select item_id, rel_path, jsonb_array_length(pages) as count from ${sql.table(`${SCHEMA}.${F.files}`)}
        where item_id in (${sql.join(candidates.map((c) => c.item.id))}) and pages is not null`.execute(this.reads.db);
      for (const r of rows.rows) counts.set(`${r.item_id}|${r.rel_path}`, Number(r.count));
    }
    const pdf = await findPdftoppm();
    for (const { item, kinds } of candidates) {
      for (const k of kinds) {
        const count = k.kind === 'pdf' ? (pdf ? (item.page_count ?? 0) : 0) : (counts.get(`${item.id}|${k.format.file_path}`) ?? 0);
        if (count > 0) {
          out.set(item.id, { ...k, count });
          break;
        }
      }
    }
    return out;
  }

  /** The catalog's page list of one file (null: none recorded), per file version. */
  private async pagesOf(item: Catalog.MediaItem, f: Catalog.MediaFormat): Promise<readonly string[] | null> {
    const key = `${item.id}|${f.file_path}|${f.sha256}|${f.size}|${f.modified_at}`;
    const hit = this.pageLists.get(key);
    if (hit) return hit;
    const row = await sql<{ pages: string[] | string | null }>`
      select pages from ${sql.table(`${SCHEMA}.${F.files}`)} where library_id = ${item.library_id} and rel_path = ${f.file_path} and item_id = ${item.id}`.execute(this.reads.db);
    const raw = row.rows[0]?.pages ?? null;
    const pages = typeof raw === 'string' ? (JSON.parse(raw) as string[]) : raw;
    if (pages?.length) this.pageLists.set(key, pages);
    return pages?.length ? pages : null;
  }

  /**
   * The file streamed for an item, its page list and count, or null when it has none to stream:
   * the same choice as kindsOf, from the cached page lists (a page fetch costs no count query).
   */
  async streamOf(item: Catalog.MediaItem): Promise<(StreamFile & { count: number }) | null> {
    const pdf = await findPdftoppm();
    for (const k of this.kinds(item)) {
      const pages = k.kind === 'pdf' ? null : await this.pagesOf(item, k.format);
      const count = k.kind === 'pdf' ? (pdf ? (item.page_count ?? 0) : 0) : (pages?.length ?? 0);
      if (count < 1) continue;
      const abs = await this.abs(item, k.format);
      return abs ? { kind: k.kind, abs, pages, count } : null;
    }
    return null;
  }

  /** Stream info for the items of one feed page, with the user's place in each. */
  async infoFor(user: string, items: Catalog.MediaItem[]): Promise<Map<string, StreamInfo>> {
    const out = new Map<string, StreamInfo>();
    for (const [id, k] of await this.kindsOf(items)) out.set(id, { kind: k.kind, count: k.count });
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
