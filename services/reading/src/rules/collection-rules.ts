// The SQL of a smart collection's conditions, compiled for the reading service's store and for the
// gateway's read model (through `@bindery/reading/rules`): both select items as `i`, the user's
// position as `p` and rating as `r`, with the same column names. Rules are checked when they are
// written (domain/rules.ts); here they are only compiled.
import { sql, type RawBuilder } from 'kysely';

export interface RuleCondition {
  field: string;
  op: string;
  value: string | number | null;
}
export interface CollectionRules {
  match: 'all' | 'any';
  conditions: RuleCondition[];
}

const TEXT = new Set(['title', 'author', 'series', 'tags', 'language', 'publisher']);
const NUMBER = new Set(['year', 'rating', 'progress']);
const like = (s: string) => `%${s.toLowerCase().replace(/[\\%_]/g, (c) => '\\' + c)}%`;

/** each field's expression, and whether it is a JSON array of texts */
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

function cond(c: RuleCondition): RawBuilder<boolean> {
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

/** The rules as one SQL condition over `i`, `p` and `r`. */
export const rulesSql = (r: CollectionRules): RawBuilder<boolean> => sql<boolean>`(${sql.join(r.conditions.map(cond), r.match === 'all' ? sql` and ` : sql` or `)})`;
