// The rules of the five system collections (spec: "System collection"), in one place for the reading
// service (its store answers collection pages) and the gateway (its read model answers the dashboard
// and OPDS, through `@bindery/reading/rules`): both select items as `i` and the user's position as
// `p`, with the same column names, and bring their own condition for the items the caller may see.
import { sql, type RawBuilder } from 'kysely';

export type SystemQuery = 'continue-reading' | 'recently-added' | 'recently-read' | 'not-started' | 'continue-series';

/** Items "newly added": within this many days. */
export const RECENTLY_ADDED_DAYS = 30;

/**
 * `where` and `order by` of a system collection's members: Continue Reading 0 < progress < 1 (last
 * read first), Recently Added the last 30 days (newest first), Recently Read progress ≥ 1 (last read
 * first), Not Started no progress or 0 (by title). `continue-series` is `continueSeries`; anything
 * else is null.
 */
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

/**
 * Continue Series: per series the user has started, the first unstarted book after the furthest one
 * started. A `with` clause that defines `nextup`, holding `cols` (over `i` and `p`) and `last_read`,
 * to be read `from nextup order by last_read desc, id`. `items` is the items joined with the user's
 * position (and rating) as `i`, `p` (`r`); `visible` the caller's condition on `i`.
 */
export function continueSeries(items: RawBuilder<unknown>, visible: RawBuilder<boolean>, cols: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`
    with started as (
      select i.series, max(coalesce(i.series_index, 0)) as upto, max(p.updated_at) as last_read
      from ${items} where ${visible} and i.series is not null and p.percentage > 0 group by i.series
    ), nextup as (
      select n.*, s.last_read from started s cross join lateral (
        select ${cols}
        from ${items}
        where i.series = s.series and ${visible} and coalesce(p.percentage, 0) = 0 and coalesce(i.series_index, 0) > s.upto
        order by i.series_index, i.sort_title
        limit 1
      ) n
    )`;
}

/** The order of `nextup`. */
export const CONTINUE_SERIES_ORDER = sql`last_read desc, id`;
