// GET /api/dashboard/sections from the gateway's tables: the user's collections shown on the
// dashboard (hidden ones removed, their order applied) and each one's first books, joined from the
// catalog projection (the item's JSON) and the reading projection (positions, ratings, members).
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '@bindery/platform';
import { CONTINUE_SERIES_ORDER, continueSeries, rulesSql, systemRule, type CollectionRules } from '@bindery/reading/rules';
import { SCHEMA } from './migrations';
import { visible, type Access } from './access';
import { readingTables } from './reading-tables';
import { itemsOf } from './reading-rules';
import type { GatewayDb } from './database';

const R = readingTables();
// biome-ignore lint/suspicious/noExplicitAny: a collection row as the database returns it
type CollectionRow = Record<string, any>;
const tbl = (n: string) => sql.table(`${SCHEMA}.${n}`);

interface Section {
  id: string;
  name: string;
  query_type: string | null;
  is_system: boolean;
  color: string | null;
  icon: string | null;
  priority: number;
  total: number;
  books: { media_item_id: string; percentage: number | null; item: unknown }[];
}

export class DashboardView {
  constructor(private db: Db<GatewayDb>) {}

  /**
   * A page of a collection's books for a user, by its rule, its conditions or its members. The count
   * and the page are two queries: a window count would carry every matching item's document through
   * the sort, where the page alone is a top-N sort of a few rows.
   */
  async books(user: string, access: Access, c: CollectionRow, limit: number, offset = 0): Promise<{ total: number; books: Section['books'] }> {
    const q = this.query(user, access, c);
    const total = Number(((await sql`${q.with} select count(*) as n from ${q.from}`.execute(this.db)).rows[0] as { n: number | string } | undefined)?.n ?? 0);
    if (limit === 0 || total <= offset) return { total, books: [] };
    const rows = (await sql`${q.with} select ${q.cols} from ${q.from} order by ${q.order} limit ${limit} offset ${offset}`.execute(this.db)).rows as {
      id: string;
      doc: string;
      pct: number | null;
    }[];
    return { total, books: rows.map((r) => ({ media_item_id: r.id, percentage: r.pct === null ? null : Number(r.pct), item: JSON.parse(r.doc) })) };
  }

  /** How many books a collection holds for this caller. */
  async count(user: string, access: Access, c: CollectionRow): Promise<number> {
    return (await this.books(user, access, c, 0)).total;
  }

  /** A collection's books as `with …`, `from … where …`, the columns of a page, and its order. */
  private query(user: string, access: Access, c: CollectionRow): { with: RawBuilder<unknown>; from: RawBuilder<unknown>; cols: RawBuilder<unknown>; order: RawBuilder<unknown> } {
    const none = sql``;
    const cols = sql`i.id, i.doc, p.percentage as pct`;
    const rule = c.is_system ? systemRule(c.query_type) : null;
    if (rule) return { with: none, from: sql`${itemsOf(user)} where ${visible(access, 'i.library_id')} and ${rule.where}`, cols, order: rule.order };
    if (c.is_system && c.query_type === 'continue-series') {
      return {
        with: continueSeries(itemsOf(user), visible(access, 'i.library_id'), sql`i.id, i.doc, p.percentage as pct`),
        from: sql`nextup`,
        cols: sql`id, doc, pct`,
        order: CONTINUE_SERIES_ORDER,
      };
    }
    if (c.rules)
      return { with: none, from: sql`${itemsOf(user)} where ${visible(access, 'i.library_id')} and ${rulesSql(c.rules as CollectionRules)}`, cols, order: sql`i.sort_title, i.id` };
    return {
      with: none,
      from: sql`${tbl(R.members)} m join ${itemsOf(user)} on i.id = m.item_id where m.collection_id = ${c.id} and ${visible(access, 'i.library_id')}`,
      cols,
      order: sql`m.added_at, i.id`,
    };
  }

  /** The user's open progress conflicts about one book, newest first. */
  async openConflicts(user: string, item: string): Promise<unknown[]> {
    const rows = await this.db.withSchema(SCHEMA).selectFrom(R.conflicts).select('doc').where('user_id', '=', user).where('item_id', '=', item).execute();
    return rows.map((r) => r.doc as { created_at: string }).sort((a, b) => b.created_at.localeCompare(a.created_at));
  }

  /** One of the user's collections, or null (another user's is null too). */
  async collection(user: string, id: string): Promise<CollectionRow | null> {
    const r = await this.db.withSchema(SCHEMA).selectFrom(R.collections).selectAll().where('id', '=', id).where('user_id', '=', user).executeTakeFirst();
    return r ?? null;
  }

  /** The user's collections as the reading service renders them, with how many books each holds for this caller. */
  async collections(user: string, access: Access, id?: string): Promise<unknown[]> {
    let q = this.db.withSchema(SCHEMA).selectFrom(R.collections).selectAll().where('user_id', '=', user);
    if (id) q = q.where('id', '=', id);
    const rows = await q.orderBy('priority').orderBy('name').execute();
    const out = [];
    for (const r of rows) out.push({ ...(r.doc as object), item_count: await this.count(user, access, r) });
    return out;
  }

  async sections(user: string, access: Access, limit: number): Promise<{ sections: Section[]; hidden_collections: string[]; collection_order: string[] }> {
    const s = this.db.withSchema(SCHEMA);
    const prefs = await s.selectFrom(R.prefs).selectAll().where('user_id', '=', user).executeTakeFirst();
    const hidden = prefs?.hidden_collections ?? [];
    const order = prefs?.collection_order ?? [];
    const rank = new Map(order.map((id, i) => [id, i]));
    const rows = (await s.selectFrom(R.collections).selectAll().where('user_id', '=', user).where('show_on_dashboard', '=', true).orderBy('priority').orderBy('name').execute())
      .filter((r) => !hidden.includes(r.id))
      .sort((a, b) => (rank.get(a.id) ?? Infinity) - (rank.get(b.id) ?? Infinity));
    const sections: Section[] = [];
    for (const c of rows) {
      const b = await this.books(user, access, c, limit);
      sections.push({
        id: c.id,
        name: c.name,
        query_type: c.query_type ?? null,
        is_system: Boolean(c.is_system),
        color: c.color ?? null,
        icon: c.icon ?? null,
        priority: Number(c.priority),
        ...b,
      });
    }
    return { sections, hidden_collections: hidden, collection_order: order };
  }
}
