// The SQL of collection membership over the gateway's tables (catalog items joined with the reading
// projection): the five system rules here, the conditions of smart collections from the platform
// (the reading service compiles the same ones over its own tables).
import { sql, type RawBuilder } from 'kysely';
import { SCHEMA } from '../projections/migrations';
import { readingTables } from './reading-tables';
import { catalogTables } from './tables';

const C = catalogTables();
const R = readingTables();
const tbl = (n: string) => sql.table(`${SCHEMA}.${n}`);

/** Items joined with one user's position and rating, as `i`, `p`, `r`. */
export const itemsOf = (user: string) => sql`${tbl(C.items)} i
  left join ${tbl(R.progress)} p on p.item_id = i.id and p.user_id = ${user}
  left join ${tbl(R.ratings)} r on r.item_id = i.id and r.user_id = ${user}`;

/** Items "newly added": within this many days (the reading service uses the same). */
export const RECENTLY_ADDED_DAYS = 30;

/** `where` and `order by` of a system collection's members; `continue-series` has its own query. */
export function systemRule(type: string): { where: RawBuilder<boolean>; order: RawBuilder<unknown> } | null {
  switch (type) {
    case 'continue-reading':
      return { where: sql<boolean>`p.percentage > 0 and p.percentage < 1`, order: sql`p.updated_at desc, i.id` };
    case 'recently-added':
      return { where: sql<boolean>`i.created_at >= now() - make_interval(days => ${RECENTLY_ADDED_DAYS})`, order: sql`i.created_at desc, i.id` };
    case 'recently-read':
      return { where: sql<boolean>`p.percentage >= 1`, order: sql`p.updated_at desc, i.id` };
    case 'not-started':
      return { where: sql<boolean>`coalesce(p.percentage, 0) = 0`, order: sql`i.sort_title, i.id` };
    default:
      return null;
  }
}
