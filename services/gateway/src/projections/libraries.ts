// The gateway's view of library folders, for /uploads: rebuilt from the catalog's library
// events by a durable consumer, read through a short cache.
import type { Catalog, StoredEvent } from '@bindery/contracts';
import { applyOnce, consumerCheckpoint, type Bus, type Db, type Subscription } from '@bindery/platform';
import { SCHEMA } from './migrations';

export const CONSUMER = 'gateway-libraries';
const TYPES = ['catalog.library-created.v1', 'catalog.library-updated.v1', 'catalog.library-deleted.v1'] as const;
const CACHE_MS = 2000;

export class LibraryView {
  private cache = new Map<string, { at: number; folders: string[] | null }>();
  private sub: Subscription | null = null;

  constructor(private db: Db) {}

  async start(bus: Bus): Promise<void> {
    this.sub = await bus.consume({
      source: 'catalog',
      durable: CONSUMER,
      types: TYPES,
      checkpoint: () => consumerCheckpoint(this.db, SCHEMA, CONSUMER, 'catalog'),
      handler: (ev) => this.apply(ev),
    });
  }

  async stop(): Promise<void> {
    await this.sub?.stop();
  }

  private async apply(ev: StoredEvent): Promise<void> {
    const e = ev as unknown as Catalog.CatalogEvent;
    await applyOnce(this.db, SCHEMA, CONSUMER, ev, async (trx) => {
      const t = trx.withSchema(SCHEMA);
      if (e.type === 'catalog.library-created.v1' || e.type === 'catalog.library-updated.v1') {
        const folders = JSON.stringify(e.data.library.folders);
        await t.insertInto('libraries').values({ id: e.data.library.id, folders }).onConflict((oc) => oc.column('id').doUpdateSet({ folders })).execute();
        this.cache.delete(e.data.library.id);
      } else if (e.type === 'catalog.library-deleted.v1') {
        await t.deleteFrom('libraries').where('id', '=', e.data.library_id).execute();
        this.cache.delete(e.data.library_id);
      }
    });
  }

  /** The library's folders, or null for a library that does not exist. */
  async folders(id: string): Promise<string[] | null> {
    const hit = this.cache.get(id);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.folders;
    const row = await this.db.withSchema(SCHEMA).selectFrom('libraries').select('folders').where('id', '=', id).executeTakeFirst();
    const folders = row ? (row.folders as string[]) : null;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(id, { at: Date.now(), folders });
    return folders;
  }
}
