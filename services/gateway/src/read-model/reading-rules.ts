// The SQL of collection membership over the gateway's tables (catalog items joined with the reading
// projection): the five system rules and the conditions of smart collections. The reading service
// checks rules when they are written; here they are only compiled.
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

export interface Condition {
  field: string;
  op: string;
  value: string | number | null;
}
export interface Rules {
  match: 'all' | 'any';
  conditions: Condition[];
}

const TEXT = new Set(['title', 'author', 'series', 'tags', 'language', 'publisher']);
const NUMBER = new Set(['year', 'rating', 'progress']);
const like = (s: string) => `%${s.toLowerCase().replace(/[\\%_]/g, (c) => '\\' + c)}%`;

const COLS: Record<string, [RawBuilder<unknown>, boolean]> = {
  title: [sql`i.title`, false],
  author: [sql`i.authors`, true],
  series: [sql`i.series`, false],
  tags: [sql`i.tags`, true],
  language: [sql`i.language`, false],
  publisher: [sql`i.publisher`, false],
  year: [sql`i.year`, false],
  rating: [sql`r.rating`, false],
  progress: [sql`coalesce(p.percentage, 0)`, false],
  added_date: [sql`i.created_at`, false],
  last_read_date: [sql`p.updated_at`, false],
};

function text(expr: RawBuilder<unknown>, array: boolean, op: string, v: string): RawBuilder<boolean> {
  const one = (x: RawBuilder<unknown>): RawBuilder<boolean> =>
    op === 'contains' || op === 'not_contains'
      ? sql<boolean>`lower(${x}) like ${like(v)}`
      : op === 'equals' || op === 'not_equals'
        ? sql<boolean>`lower(${x}) = ${v.toLowerCase()}`
        : sql<boolean>`lower(${x}) like ${like(v).slice(1)}`;
  const any = array ? sql<boolean>`exists (select 1 from jsonb_array_elements_text(${expr}) as e(v) where ${one(sql`e.v`)})` : sql<boolean>`coalesce(${one(expr)}, false)`;
  return op.startsWith('not_') ? sql<boolean>`not (${any})` : any;
}

function cond(c: Condition): RawBuilder<boolean> {
  if (c.op === 'is_empty' || c.op === 'is_not_empty') {
    const [e, arr] = COLS[c.field] ?? [sql`null`, false];
    const empty = arr ? sql<boolean>`jsonb_array_length(${e}) = 0` : sql<boolean>`(${e})::text is null or (${e})::text = ''`;
    return c.op === 'is_empty' ? empty : sql<boolean>`not (${empty})`;
  }
  if (c.field === 'format') {
    const has = sql<boolean>`i.formats ? ${String(c.value).toLowerCase()}`;
    return c.op === 'equals' ? has : sql<boolean>`not (${has})`;
  }
  if (c.field === 'library') return c.op === 'equals' ? sql<boolean>`i.library_id = ${c.value}` : sql<boolean>`i.library_id <> ${c.value}`;
  if (c.field === 'read_status') {
    const s =
      c.value === 'unread'
        ? sql<boolean>`coalesce(p.percentage, 0) = 0`
        : c.value === 'finished'
          ? sql<boolean>`coalesce(p.percentage, 0) >= 1`
          : sql<boolean>`coalesce(p.percentage, 0) > 0 and p.percentage < 1`;
    return c.op === 'equals' ? s : sql<boolean>`not (${s})`;
  }
  const [e, arr] = COLS[c.field] ?? [sql`null`, false];
  if (TEXT.has(c.field)) return text(e, arr, c.op, String(c.value));
  if (NUMBER.has(c.field)) {
    const ops: Record<string, string> = { equals: '=', not_equals: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };
    return sql<boolean>`coalesce(${e} ${sql.raw(ops[c.op] ?? '=')} ${c.value}, false)`;
  }
  if (c.op === 'within_days') return sql<boolean>`coalesce(${e} >= now() - make_interval(days => ${Math.max(0, Math.floor(Number(c.value)))}), false)`;
  return sql<boolean>`coalesce(${e} ${sql.raw(c.op === 'before' ? '<' : '>')} ${c.value}::timestamptz, false)`;
}

export const rulesSql = (r: Rules): RawBuilder<boolean> => sql<boolean>`(${sql.join(r.conditions.map(cond), r.match === 'all' ? sql` and ` : sql` or `)})`;

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
