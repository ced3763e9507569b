// Locator indexes on the write path: asked of the catalog once per book content (by the EPUB's
// SHA-256, which the catalog's item events carry) and kept in a bounded cache, so a position write
// costs a bus round trip only the first time its book is seen. Of the reads, only a KOReader pull of a
// position with no XPointer or page uses one (kosync.ts).
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import { rpcSubject } from '@bindery/contracts';
import type { Runtime } from '@bindery/platform';
import type * as Locator from '@bindery/locator';

type Index = Locator.LocatorIndex;
const unzip = promisify(gunzip);

/** about 32 MiB of indexes (a novel's is some tens of KiB: ~600 novels) */
const MAX_BYTES = 32 * 1024 * 1024;
/** a book the catalog has no index for is asked again after this */
const MISS_MS = 60_000;

export class LocatorIndexes {
  private readonly cache = new LRUCache<string, { index: Index; bytes: number }>({ maxSize: MAX_BYTES, sizeCalculation: (v) => Math.max(1, v.bytes) });
  private readonly misses = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<Index | null>>();

  constructor(private readonly rt: Runtime) {}

  /** The index of the EPUB with this SHA-256, or null when the catalog has none (or cannot answer now). */
  async get(sha256: string): Promise<Index | null> {
    const hit = this.cache.get(sha256);
    if (hit) return hit.index;
    const missed = this.misses.get(sha256);
    if (missed !== undefined && missed > Date.now()) return null;
    let p = this.inFlight.get(sha256);
    if (!p) {
      p = this.fetch(sha256).finally(() => this.inFlight.delete(sha256));
      this.inFlight.set(sha256, p);
    }
    return p;
  }

  private async fetch(sha256: string): Promise<Index | null> {
    try {
      const r = (await this.rt.bus.request(rpcSubject('catalog', 'locator-index'), { sha256 }, this.rt.rpcTimeoutMs)) as {
        ok: boolean;
        value?: { index_gz?: string };
      } | null;
      if (!r?.ok || typeof r.value?.index_gz !== 'string') {
        this.miss(sha256);
        return null;
      }
      const json = (await unzip(Buffer.from(r.value.index_gz, 'base64'))).toString('utf8');
      const index = JSON.parse(json) as Index;
      if ((index?.v !== 1 && index?.v !== 2) || !Array.isArray(index.spine) || !Array.isArray(index.docs)) {
        this.miss(sha256);
        return null;
      }
      // the shapes as typed arrays: 4 bytes a number, where a JS array of numbers takes 8 or more
      for (const d of index.docs) if (d) d.t = Int32Array.from(d.t);
      this.cache.set(sha256, { index, bytes: json.length });
      return index;
    } catch (e) {
      // the catalog is away: the position is checked for form only this time
      this.rt.log.warn({ sha256, err: e instanceof Error ? e.message : String(e) }, 'reading: no locator index; position not verified');
      return null;
    }
  }

  /** Where the text occurs in the book, nearest the hint, and where that match ends; null when nowhere (or the catalog cannot say now). */
  async findText(sha256: string, text: string, near: Locator.Canonical): Promise<(Locator.Canonical & { end: number }) | null> {
    try {
      const r = (await this.rt.bus.request(rpcSubject('catalog', 'locator-text'), { sha256, text, spine: near.spine, offset: near.offset }, this.rt.rpcTimeoutMs)) as {
        ok: boolean;
        value?: { found?: (Locator.Canonical & { end?: number }) | null };
      } | null;
      const f = r?.ok ? r.value?.found : null;
      if (!f || !Number.isInteger(f.spine) || !Number.isInteger(f.offset)) return null;
      return { spine: f.spine, offset: f.offset, end: Number.isInteger(f.end) && f.end! >= f.offset ? f.end! : f.offset };
    } catch (e) {
      this.rt.log.warn({ sha256, err: e instanceof Error ? e.message : String(e) }, 'reading: context text not looked up');
      return null;
    }
  }

  private miss(sha256: string): void {
    if (this.misses.size > 10_000) this.misses.clear();
    this.misses.set(sha256, Date.now() + MISS_MS);
  }
}
