// Which items a collection holds for a user: system collections by their rule, smart ones by their
// conditions, custom ones by their members; always only items in libraries the caller may see.
import { sql, type RawBuilder } from 'kysely';
import type { Db, Trx } from '@bindery/platform';
import { RECENTLY_ADDED_DAYS, type SystemQuery } from '../domain/system-collections';
import { kindOf, type Condition, type Rules } from '../domain/rules';
import type { Access } from '../handlers/util';

export interface Member {
  media_item_id: string;
  percentage: number | null;
}

function libraries(access: Access | undefined): RawBuilder<boolean> {
  if (!access || access.all) return sql<boolean>`true`;
  if (access.ids.length === 0) return sql<boolean>`false`;
  return sql<boolean>`i.library_id in (${sql.join(access.ids)})`;
}

const FROM = (user: string) => sql`reading.items i
  left join reading.progress p on p.item_id = i.id and p.user_id = ${user}
  left join reading.ratings r on r.item_id = i.id and r.user_id = ${user}`;

const like = (s: string) => `%${s.toLowerCase().replace(/[\\%_]/g, (c) => '\\' + c)}%`;

function textCond(expr: RawBuilder<unknown>, array: boolean, op: string, v: string): RawBuilder<boolean> {
  const one = (x: RawBuilder<unknown>): RawBuilder<boolean> => {
    switch (op) {
      case 'contains':
      case 'not_contains':
        return sql<boolean>`lower(${x}) like ${like(v)}`;
      case 'equals':
      case 'not_equals':
        return sql<boolean>`lower(${x}) = ${v.toLowerCase()}`;
      default:
        return sql<boolean>`lower(${x}) like ${like(v).slice(1)}`;
    }
  };
  const any = array ? sql<boolean>`exists (select 1 from jsonb_array_elements_text(${expr}) as e(v) where ${one(sql`e.v`)})` : sql<boolean>`coalesce(${one(expr)}, false)`;
  return op.startsWith('not_') ? sql<boolean>`not (${any})` : any;
}

function cond(c: Condition): RawBuilder<boolean> {
  const cols: Record<string, [RawBuilder<unknown>, boolean]> = {
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
  if (c.op === 'is_empty' || c.op === 'is_not_empty') {
    const [e, arr] = cols[c.field]!;
    const empty = arr ? sql<boolean>`jsonb_array_length(${e}) = 0` : sql<boolean>`(${e})::text is null or (${e})::text = ''`;
    return c.op === 'is_empty' ? empty : sql<boolean>`not (${empty})`;
  }
  switch (c.field) {
    case 'format': {
      const has = sql<boolean>`i.formats ? ${String(c.value).toLowerCase()}`;
      return c.op === 'equals' ? has : sql<boolean>`not (${has})`;
    }
    case 'library':
      return c.op === 'equals' ? sql<boolean>`i.library_id = ${c.value}` : sql<boolean>`i.library_id <> ${c.value}`;
    case 'read_status': {
      const s =
        c.value === 'unread'
          ? sql<boolean>`coalesce(p.percentage, 0) = 0`
          : c.value === 'finished'
            ? sql<boolean>`coalesce(p.percentage, 0) >= 1`
            : sql<boolean>`coalesce(p.percentage, 0) > 0 and p.percentage < 1`;
      return c.op === 'equals' ? s : sql<boolean>`not (${s})`;
    }
  }
  const [e, arr] = cols[c.field]!;
  switch (kindOf(c.field)) {
    case 'text':
      return textCond(e, arr, c.op, String(c.value));
    case 'number': {
      const ops: Record<string, string> = { equals: '=', not_equals: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };
      return sql<boolean>`coalesce(${e} ${sql.raw(ops[c.op]!)} ${c.value}, false)`;
    }
    default:
      if (c.op === 'within_days') return sql<boolean>`coalesce(${e} >= now() - make_interval(days => ${Math.max(0, Math.floor(Number(c.value)))}), false)`;
      return sql<boolean>`coalesce(${e} ${sql.raw(c.op === 'before' ? '<' : '>')} ${c.value}::timestamptz, false)`;
  }
}

export function rulesSql(r: Rules): RawBuilder<boolean> {
  return sql<boolean>`(${sql.join(r.conditions.map(cond), r.match === 'all' ? sql` and ` : sql` or `)})`;
}

interface Page {
  limit: number;
  offset: number;
}

async function run(q: Db | Trx, query: RawBuilder<unknown>): Promise<{ data: Member[]; total: number }> {
  const rows = (await query.execute(q)).rows as { id: string; pct: number | null; total: number }[];
  return { data: rows.map((r) => ({ media_item_id: r.id, percentage: r.pct === null ? null : Number(r.pct) })), total: Number(rows[0]?.total ?? 0) };
}

export function systemMembers(q: Db | Trx, user: string, access: Access | undefined, type: SystemQuery, page: Page) {
  const base = sql<boolean>`i.removed_at is null and ${libraries(access)}`;
  const sel = sql`select i.id, p.percentage as pct, count(*) over () as total`;
  const tail = sql`limit ${page.limit} offset ${page.offset}`;
  switch (type) {
    case 'continue-reading':
      return run(q, sql`${sel} from ${FROM(user)} where ${base} and p.percentage > 0 and p.percentage < 1 order by p.updated_at desc, i.id ${tail}`);
    case 'recently-added':
      return run(
        q,
        sql`${sel} from ${FROM(user)} where ${base} and i.created_at >= now() - make_interval(days => ${RECENTLY_ADDED_DAYS}) order by i.created_at desc, i.id ${tail}`,
      );
    case 'recently-read':
      return run(q, sql`${sel} from ${FROM(user)} where ${base} and p.percentage >= 1 order by p.updated_at desc, i.id ${tail}`);
    case 'not-started':
      return run(q, sql`${sel} from ${FROM(user)} where ${base} and coalesce(p.percentage, 0) = 0 order by i.sort_title, i.id ${tail}`);
    case 'continue-series':
      // per series the user has started: the first unstarted book after the furthest one started
      return run(
        q,
        sql`
        with started as (
          select i.series, max(coalesce(i.series_index, 0)) as upto, max(p.updated_at) as last_read
          from ${FROM(user)} where ${base} and i.series is not null and p.percentage > 0 group by i.series
        ), nextup as (
          select distinct on (i.series) i.id, p.percentage as pct, s.last_read
          from ${FROM(user)} join started s on s.series = i.series
          where ${base} and coalesce(p.percentage, 0) = 0 and coalesce(i.series_index, 0) > s.upto
          order by i.series, i.series_index, i.sort_title
        )
        select id, pct, count(*) over () as total from nextup order by last_read desc, id ${tail}`,
      );
  }
}

export function ruleMembers(q: Db | Trx, user: string, access: Access | undefined, rules: Rules, page: Page) {
  return run(
    q,
    sql`select i.id, p.percentage as pct, count(*) over () as total from ${FROM(user)}
    where i.removed_at is null and ${libraries(access)} and ${rulesSql(rules)} order by i.sort_title, i.id limit ${page.limit} offset ${page.offset}`,
  );
}

export function customMembers(q: Db | Trx, user: string, access: Access | undefined, collectionId: string, page: Page) {
  return run(
    q,
    sql`select i.id, p.percentage as pct, count(*) over () as total from reading.collection_items ci
    join ${FROM(user)} on i.id = ci.item_id
    where ci.collection_id = ${collectionId} and i.removed_at is null and ${libraries(access)}
    order by ci.added_at, i.id limit ${page.limit} offset ${page.offset}`,
  );
}

/** Whether one item matches rules for a user (auto-assign of a newly scanned item). */
export async function itemMatches(q: Db | Trx, user: string, itemId: string, rules: Rules): Promise<boolean> {
  const r = await sql<{ ok: boolean }>`select ${rulesSql(rules)} as ok from ${FROM(user)} where i.id = ${itemId}`.execute(q);
  return Boolean(r.rows[0]?.ok);
}
