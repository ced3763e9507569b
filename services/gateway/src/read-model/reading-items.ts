// Books of reading answers (collections, the dashboard) by media_item_id, joined with the item's
// public JSON from the catalog projection; only items the caller may see.
import type { Db } from '@bindery/platform';
import { SCHEMA } from './migrations';
import type { Access } from './access';
import { catalogTables } from './tables';
import type { GatewayDb } from './database';

const T = catalogTables();

export interface Book {
  media_item_id: string;
  percentage: number | null;
}

export async function withItems(db: Db<GatewayDb>, access: Access, books: Book[]): Promise<(Book & { item: unknown })[]> {
  if (books.length === 0) return [];
  let q = db
    .withSchema(SCHEMA)
    .selectFrom(T.items)
    .select(['id', 'doc'])
    .where(
      'id',
      'in',
      books.map((b) => b.media_item_id),
    );
  if (!access.all) {
    if (access.ids.length === 0) return [];
    q = q.where('library_id', 'in', access.ids);
  }
  const docs = new Map((await q.execute()).map((r) => [r.id, r.doc]));
  return books.filter((b) => docs.has(b.media_item_id)).map((b) => ({ ...b, item: JSON.parse(docs.get(b.media_item_id)!) }));
}
