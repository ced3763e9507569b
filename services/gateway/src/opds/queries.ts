// The OPDS feeds' reads of the gateway's catalog tables: pages of items by library, author, series
// or newest first, and authors and series grouped in SQL, each with its total. Every query is
// filtered by the caller's library access the way read-model/catalog-view.ts filters.
import { sql, type RawBuilder } from 'kysely';
import type { Catalog } from '@bindery/contracts';
import type { Db } from '@bindery/platform';
import { SCHEMA } from '../read-model/migrations';
import { catalogTables } from '../read-model/tables';
import { visible, type Access } from '../read-model/access';
import type { GatewayDb } from '../read-model/database';

const T = catalogTables();
const items = sql.table(`${SCHEMA}.${T.items}`);

/** The same condition as catalog-view.ts's: every library, the granted ones, or none. */
export type ItemFilter = { by: 'library'; id: string } | { by: 'recent' } | { by: 'author'; name: string } | { by: 'series'; name: string };

export interface ItemPage {
  items: Catalog.MediaItem[];
  total: number;
}

export interface Group {
  name: string;
  count: number;
}

/**
 * The two name groupings both OPDS trees browse (<base>/authors, <base>/series and their v2 twins):
 * the feed's title (its key in the OPDS catalogs, words.ts), the item filter of one name, and the message for a name with nothing visible.
 */
export const NAME_GROUPS = {
  authors: { titleKey: 'root.authors', filter: (name: string): ItemFilter => ({ by: 'author', name }), notFound: 'author not found' },
  series: { titleKey: 'root.series', filter: (name: string): ItemFilter => ({ by: 'series', name }), notFound: 'series not found' },
} as const;
export type GroupKind = keyof typeof NAME_GROUPS;
export const GROUP_KINDS = Object.keys(NAME_GROUPS) as GroupKind[];

export class OpdsQueries {
  constructor(private db: Db<GatewayDb>) {}

  async items(access: Access, f: ItemFilter, limit: number, offset: number, newest = false): Promise<ItemPage> {
    const cond = sql<boolean>`${visible(access)} and ${this.condition(f)}`;
    const order = f.by === 'recent' || newest ? sql`created_at desc, id` : f.by === 'series' ? sql`series_index asc nulls last, sort_title, id` : sql`sort_title, id`;
    const [rows, total] = await Promise.all([
      sql<{ doc: string }>`select doc from ${items} where ${cond} order by ${order} limit ${limit} offset ${offset}`.execute(this.db),
      sql<{ n: number }>`select count(*)::int as n from ${items} where ${cond}`.execute(this.db),
    ]);
    return { items: rows.rows.map((r) => JSON.parse(r.doc) as Catalog.MediaItem), total: Number(total.rows[0]?.n ?? 0) };
  }

  private condition(f: ItemFilter): RawBuilder<boolean> {
    switch (f.by) {
      case 'library':
        return sql<boolean>`library_id = ${f.id}`;
      case 'recent':
        return sql<boolean>`true`;
      case 'author':
        return sql<boolean>`authors @> ${JSON.stringify([f.name])}::jsonb`;
      case 'series':
        return sql<boolean>`series = ${f.name}`;
    }
  }

  /** One page of authors or series with their item counts, and how many there are. */
  groups(kind: GroupKind, access: Access, limit: number, offset: number): Promise<{ groups: Group[]; total: number }> {
    return kind === 'authors' ? this.authors(access, limit, offset) : this.series(access, limit, offset);
  }

  /** One page of authors with their item counts, and how many authors there are. */
  async authors(access: Access, limit: number, offset: number): Promise<{ groups: Group[]; total: number }> {
    const from = sql`${items} cross join lateral jsonb_array_elements_text(authors) as a(v) where ${visible(access)} and a.v <> ''`;
    return this.grouped(sql`a.v`, from, limit, offset);
  }

  async series(access: Access, limit: number, offset: number): Promise<{ groups: Group[]; total: number }> {
    const from = sql`${items} where ${visible(access)} and series is not null and series <> ''`;
    return this.grouped(sql`series`, from, limit, offset);
  }

  private async grouped(col: RawBuilder<unknown>, from: RawBuilder<unknown>, limit: number, offset: number) {
    const [rows, total] = await Promise.all([
      sql<{
        name: string;
        n: number;
      }>`select ${col} as name, count(*)::int as n from ${from} group by ${col} order by lower(${col}), ${col} limit ${limit} offset ${offset}`.execute(this.db),
      sql<{ n: number }>`select count(distinct ${col})::int as n from ${from}`.execute(this.db),
    ]);
    return { groups: rows.rows.map((r) => ({ name: r.name, count: Number(r.n) })), total: Number(total.rows[0]?.n ?? 0) };
  }
}
