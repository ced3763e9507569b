// Which media item a KOReader document id names, from the catalog projection's `cv_documents` (every
// partial MD5 and file-name MD5 an item's files have had), seen through the caller's library access.
import { sql } from 'kysely';
import type { Db } from '@bindery/platform';
import { SCHEMA } from '../projections/migrations';
import type { Access } from './access';
import { catalogTables } from './tables';

const T = catalogTables();

export class KosyncView {
  constructor(private db: Db) {}

  /**
   * The item a document id names for this caller, or null. Of several (duplicates, a file name
   * shared by two books), a file's current partial MD5 first, then any partial MD5 it had, then a
   * file name; the most recently updated item last of all.
   */
  async itemOf(access: Access, document: string): Promise<string | null> {
    if (!access.all && access.ids.length === 0) return null;
    let q = this.db
      .withSchema(SCHEMA)
      .selectFrom(`${T.documents} as d`)
      .innerJoin(`${T.items} as i`, 'i.id', 'd.item_id')
      .select('d.item_id')
      .where('d.document', '=', document.toLowerCase());
    if (!access.all) q = q.where('i.library_id', 'in', access.ids);
    const row = await q.orderBy(sql`(d.kind = 'partial_md5')`, 'desc').orderBy('d.current', 'desc').orderBy('i.updated_at', 'desc').limit(1).executeTakeFirst();
    return row ? (row.item_id as string) : null;
  }

  /** Title and authors of visible items, for the documents list. */
  async titles(access: Access, ids: string[]): Promise<Map<string, { id: string; title: string; authors: string[] }>> {
    const out = new Map<string, { id: string; title: string; authors: string[] }>();
    if (ids.length === 0 || (!access.all && access.ids.length === 0)) return out;
    let q = this.db.withSchema(SCHEMA).selectFrom(T.items).select(['id', 'title', 'authors']).where('id', 'in', ids);
    if (!access.all) q = q.where('library_id', 'in', access.ids);
    for (const r of await q.execute()) {
      const authors = typeof r.authors === 'string' ? (JSON.parse(r.authors) as string[]) : (r.authors as string[]);
      out.set(r.id as string, { id: r.id as string, title: r.title as string, authors });
    }
    return out;
  }
}
