// The SQL of collection membership over the gateway's tables (catalog items joined with the reading
// projection). The five system rules and the conditions of smart collections are the reading
// service's (`@bindery/reading/rules`, which it compiles over its own tables too).
import { sql } from 'kysely';
import { SCHEMA } from './migrations';
import { readingTables } from './reading-tables';
import { catalogTables } from './tables';

const C = catalogTables();
const R = readingTables();
const tbl = (n: string) => sql.table(`${SCHEMA}.${n}`);

/** Items joined with one user's position and rating, as `i`, `p`, `r`. */
export const itemsOf = (user: string) => sql`${tbl(C.items)} i
  left join ${tbl(R.progress)} p on p.item_id = i.id and p.user_id = ${user}
  left join ${tbl(R.ratings)} r on r.item_id = i.id and r.user_id = ${user}`;
