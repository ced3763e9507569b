// Which items a collection holds for a user: system collections by their rule, smart ones by their
// conditions (compiled by rules/, which the gateway's read model uses too), custom
// ones by their members; always only items in libraries the caller may see.
import { sql, type RawBuilder } from 'kysely';
import { CONTINUE_SERIES_ORDER, continueSeries, rulesSql, systemRule } from '../rules';
import type { Db, Trx } from './db';
import type { SystemQuery } from '../domain/system-collections';
import type { Rules } from '../domain/rules';
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
  const rule = systemRule(type);
  if (rule) return run(q, sql`${sel} from ${FROM(user)} where ${base} and ${rule.where} order by ${rule.order} ${tail}`);
  // continue-series: per series the user has started, the first unstarted book after the furthest one started
  return run(
    q,
    sql`${continueSeries(FROM(user), base, sql`i.id, p.percentage as pct`)}
    select id, pct, count(*) over () as total from nextup order by ${CONTINUE_SERIES_ORDER} ${tail}`,
  );
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
