// Which media item a KOReader document id names, from the catalog projection's `cv_documents` (every
// partial MD5 and file-name MD5 an item's files have had), seen through the caller's library access.
import { sql } from 'kysely';
import type { Db } from '@bindery/platform';
import { SCHEMA } from './migrations';
import type { Access } from './access';
import { catalogTables } from './tables';
import type { GatewayDb } from './database';

const T = catalogTables();

export class KosyncView {
  constructor(private db: Db<GatewayDb>) {}

  /**
   * The item a document id names for this caller, or null. Of several (duplicates, a file name
   * shared by two books), a file's current partial MD5 first, then any partial MD5 it had, then a
   * file name; the most recently updated item last of all.
   */
  async itemOf(access: Access, document: string): Promise<string | null> {
    return (await this.itemsOf(access, [document])).get(document.toLowerCase()) ?? null;
  }

  /** `itemOf` for many document ids in one query: document id (lower case) → item, for those that name one. */
  async itemsOf(access: Access, documents: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const docs = [...new Set(documents.map((d) => d.toLowerCase()))];
    if (docs.length === 0 || (!access.all && access.ids.length === 0)) return out;
    let q = this.db
      .withSchema(SCHEMA)
      .selectFrom(`${T.documents} as d`)
      .innerJoin(`${T.items} as i`, 'i.id', 'd.item_id')
      .distinctOn('d.document')
      .select(['d.document', 'd.item_id'])
      .where('d.document', 'in', docs)
      .where('d.kind', 'in', ['partial_md5', 'filename']);
    if (!access.all) q = q.where('i.library_id', 'in', access.ids);
    const rows = await q.orderBy('d.document').orderBy(sql`(d.kind = 'partial_md5')`, 'desc').orderBy('d.current', 'desc').orderBy('i.updated_at', 'desc').execute();
    for (const r of rows) out.set(r.document, r.item_id);
    return out;
  }

  /**
   * The item a SHA-256 names for this caller (the KOReader plugin): the item's own hash first, then a
   * format's (a converted download), then one its files had before; `by` says which.
   */
  async itemBySha256(access: Access, sha256: string): Promise<{ item: string; by: string } | null> {
    if (!access.all && access.ids.length === 0) return null;
    let q = this.db
      .withSchema(SCHEMA)
      .selectFrom(`${T.documents} as d`)
      .innerJoin(`${T.items} as i`, 'i.id', 'd.item_id')
      .select(['d.item_id', 'd.kind'])
      .where('d.document', '=', sha256.toLowerCase())
      .where('d.kind', 'in', ['sha256', 'format_sha256', 'known_sha256']);
    if (!access.all) q = q.where('i.library_id', 'in', access.ids);
    const row = await q.orderBy(sql`case d.kind when 'sha256' then 0 when 'format_sha256' then 1 else 2 end`).orderBy('i.updated_at', 'desc').limit(1).executeTakeFirst();
    return row ? { item: row.item_id, by: row.kind } : null;
  }

  /** The visible item with this title (any case) and, when given, this author among its authors. */
  async itemByTitle(access: Access, title: string, author: string | undefined): Promise<string | null> {
    if (!access.all && access.ids.length === 0) return null;
    let q = this.db.withSchema(SCHEMA).selectFrom(T.items).select('id').where(sql<boolean>`lower(title) = lower(${title.trim()})`);
    if (author?.trim()) q = q.where(sql<boolean>`exists (select 1 from jsonb_array_elements_text(authors) as a(v) where lower(a.v) = lower(${author.trim()}))`);
    if (!access.all) q = q.where('library_id', 'in', access.ids);
    const row = await q.orderBy('updated_at', 'desc').limit(1).executeTakeFirst();
    return row ? row.id : null;
  }

  /** A page of the visible items' public records, by title. */
  async page(access: Access, limit: number, offset: number): Promise<{ docs: Record<string, unknown>[]; total: number }> {
    if (!access.all && access.ids.length === 0) return { docs: [], total: 0 };
    let q = this.db.withSchema(SCHEMA).selectFrom(T.items);
    if (!access.all) q = q.where('library_id', 'in', access.ids);
    const [rows, total] = await Promise.all([
      q.select('doc').orderBy('sort_title').orderBy('id').limit(limit).offset(offset).execute(),
      q.select(sql<number>`count(*)::int`.as('n')).executeTakeFirst(),
    ]);
    return { docs: rows.map((r) => JSON.parse(r.doc) as Record<string, unknown>), total: Number(total?.n ?? 0) };
  }

  /** Title and authors of visible items, for the documents list. */
  async titles(access: Access, ids: string[]): Promise<Map<string, { id: string; title: string; authors: string[] }>> {
    const out = new Map<string, { id: string; title: string; authors: string[] }>();
    if (ids.length === 0 || (!access.all && access.ids.length === 0)) return out;
    let q = this.db.withSchema(SCHEMA).selectFrom(T.items).select(['id', 'title', 'authors']).where('id', 'in', ids);
    if (!access.all) q = q.where('library_id', 'in', access.ids);
    for (const r of await q.execute()) {
      const authors = typeof r.authors === 'string' ? (JSON.parse(r.authors) as string[]) : (r.authors as string[]);
      out.set(r.id, { id: r.id, title: r.title, authors });
    }
    return out;
  }
}
