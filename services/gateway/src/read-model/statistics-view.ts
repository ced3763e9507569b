// The reading statistics (decision 120), computed when asked from `rv_reads` (every saved position,
// statistics-tables.ts) and the catalog projection's items, with the days counted in the person's
// time zone (`iv_users.timezone`). The time-spent rule is TIME_SQL's; the test computes it again.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '@bindery/platform';
import { SCHEMA } from './migrations';
import { visible, type Access } from './access';
import { statisticsTables } from './statistics-tables';
import { catalogTables, identityTables } from './tables';

const CATALOG_ITEMS = catalogTables().items;
import type { GatewayDb } from './database';

/** a gap between two saves of a book on one device counts up to this many seconds (decision 120) */
export const GAP_CAP_SECONDS = 600;

export type { BookFigure, DayFigure, Figure, LibraryStatistics, MonthFigure, PersonStatistics } from '@bindery/contracts/api/statistics';
import type { Figure, LibraryStatistics, MonthFigure, PersonStatistics } from '@bindery/contracts/api/statistics';

const R = () => sql.raw(`${SCHEMA}.${statisticsTables().reads}`);
const U = () => sql.raw(`${SCHEMA}.${identityTables().users}`);

/**
 * Each saved position of the chosen users with what it adds (decision 120): `seconds`, its share
 * of the time spent, and `gained`, the part of the book read since the book's previous save.
 * Time: where the device counted it for the book (`spent_seconds`, a Kobo), the rise of that count
 * over the highest it stated before; else where it stated its active time (`active_seconds`, the
 * web reader), that; else the gap since the previous save of the book on the device, up to
 * GAP_CAP_SECONDS (the first save counts nothing). `day` is the save's day in `tz`.
 */
function readsWithTime(users: RawBuilder<boolean>, tz: RawBuilder<string>) {
  return sql`
    select r.user_id, r.item_id, r.device, r.at, r.percentage,
      (r.at at time zone ${tz})::date as day,
      case
        when bool_or(r.spent_seconds is not null) over d then
          case when r.spent_seconds is null then 0 else greatest(0, r.spent_seconds - coalesce(max(r.spent_seconds) over dp, 0)) end
        when bool_or(r.active_seconds is not null) over d then coalesce(r.active_seconds, 0)
        -- (least() passes over a null: the first save's missing gap must stay null, then 0)
        else coalesce(extract(epoch from r.at - lag(r.at) over dp) * 0 + least(extract(epoch from r.at - lag(r.at) over dp), ${GAP_CAP_SECONDS}), 0)
      end::double precision as seconds,
      greatest(0, r.percentage - coalesce(lag(r.percentage) over b, 0))::double precision as gained
    from ${R()} r
    where ${users}
    window d as (partition by r.user_id, r.item_id, r.device),
      dp as (partition by r.user_id, r.item_id, r.device order by r.at, r.position rows between unbounded preceding and 1 preceding),
      b as (partition by r.user_id, r.item_id order by r.at, r.position)`;
}

/** The time zone the person's days are counted in: theirs when Postgres knows it, else UTC. */
async function zoneOf(db: Db<GatewayDb>, user: string): Promise<string> {
  const { rows } = await sql<{ timezone: string; known: boolean }>`
    select u.timezone, exists (select 1 from pg_timezone_names z where z.name = u.timezone) as known
    from ${U()} u where u.id = ${user}`.execute(db);
  const r = rows[0];
  return r?.known ? r.timezone : 'UTC';
}

const dateText = (d: unknown): string => (d instanceof Date ? d.toISOString().slice(0, 10) : String(d).slice(0, 10));

/** The longest run of consecutive dates, and the run that ends at `today` or the day before (0 if none). */
export function streaks(dates: string[], today: string): { longest: number; current: number } {
  const days = [...new Set(dates)].sort().map((d) => Date.parse(`${d}T00:00:00Z`) / 86_400_000);
  let longest = 0;
  let run = 0;
  for (let i = 0; i < days.length; i++) {
    run = i > 0 && days[i] === days[i - 1]! + 1 ? run + 1 : 1;
    longest = Math.max(longest, run);
  }
  const end = Date.parse(`${today}T00:00:00Z`) / 86_400_000;
  const last = days.at(-1);
  const current = last !== undefined && end - last <= 1 ? run : 0;
  return { longest, current };
}

/** Adds `seconds` and a book to the figure named `name`. */
function add(map: Map<string, { seconds: number; books: Set<string> }>, name: string, seconds: number, book: string): void {
  const f = map.get(name) ?? { seconds: 0, books: new Set<string>() };
  f.seconds += seconds;
  f.books.add(book);
  map.set(name, f);
}

const figures = (map: Map<string, { seconds: number; books: Set<string> }>): Figure[] =>
  [...map.entries()]
    .map(([name, f]) => ({ name, seconds: Math.round(f.seconds), books: f.books.size }))
    .sort((a, b) => b.seconds - a.seconds || b.books - a.books || a.name.localeCompare(b.name));

export class StatisticsView {
  constructor(private db: Db<GatewayDb>) {}

  /** One person's figures for `year`: only theirs (the query names them), titles only of books they see. */
  async person(user: string, access: Access, year: number, now = new Date()): Promise<PersonStatistics> {
    const tz = await zoneOf(this.db, user);
    const zone = sql.lit(tz) as RawBuilder<string>;
    const from = `${year}-01-01`;
    const to = `${year}-12-31`;
    const { rows } = await sql<{ day: unknown; item_id: string; device: string; seconds: number; gained: number }>`
      with t as (${readsWithTime(sql<boolean>`r.user_id = ${user}`, zone)})
      select t.day, t.item_id, t.device, sum(t.seconds)::double precision as seconds, sum(t.gained)::double precision as gained
      from t where t.day between ${from}::date and ${to}::date
      group by t.day, t.item_id, t.device
      order by t.day`.execute(this.db);
    const { rows: books } = await sql<{ item_id: string; started: unknown; finished: unknown }>`
      select r.item_id,
        (min(r.at) at time zone ${zone})::date as started,
        (min(r.at) filter (where r.percentage >= 1) at time zone ${zone})::date as finished
      from ${R()} r where r.user_id = ${user}
      group by r.item_id`.execute(this.db);
    const ids = [...new Set([...rows.map((r) => r.item_id), ...books.map((b) => b.item_id)])];
    const items = ids.length
      ? await this.db
          .withSchema(SCHEMA)
          .selectFrom(CATALOG_ITEMS)
          .select(['id', 'title', 'authors', 'tags', 'series', 'formats'])
          .where('id', 'in', ids)
          .where(visible(access))
          .execute()
      : [];
    const item = new Map(items.map((i) => [i.id, i]));

    const days = new Map<string, { seconds: number; books: Set<string>; progress: number }>();
    const months = new Map<string, MonthFigure>();
    for (let m = 1; m <= 12; m++) {
      const key = `${year}-${String(m).padStart(2, '0')}`;
      months.set(key, { month: key, seconds: 0, started: 0, finished: 0 });
    }
    const byDevice = new Map<string, { seconds: number; books: Set<string> }>();
    const byFormat = new Map<string, { seconds: number; books: Set<string> }>();
    const byAuthor = new Map<string, { seconds: number; books: Set<string> }>();
    const bySeries = new Map<string, { seconds: number; books: Set<string> }>();
    const byTag = new Map<string, { seconds: number; books: Set<string> }>();
    const perBook = new Map<string, { seconds: number; progress: number }>();
    for (const r of rows) {
      const date = dateText(r.day);
      const seconds = Number(r.seconds);
      const gained = Number(r.gained);
      const d = days.get(date) ?? { seconds: 0, books: new Set<string>(), progress: 0 };
      d.seconds += seconds;
      d.books.add(r.item_id);
      d.progress += gained;
      days.set(date, d);
      months.get(date.slice(0, 7))!.seconds += seconds;
      add(byDevice, r.device, seconds, r.item_id);
      const b = perBook.get(r.item_id) ?? { seconds: 0, progress: 0 };
      b.seconds += seconds;
      b.progress += gained;
      perBook.set(r.item_id, b);
      const it = item.get(r.item_id);
      if (!it) continue;
      add(byFormat, it.formats[0] ?? 'unknown', seconds, r.item_id);
      for (const a of it.authors) add(byAuthor, a, seconds, r.item_id);
      if (it.series) add(bySeries, it.series, seconds, r.item_id);
      for (const tag of it.tags) add(byTag, tag, seconds, r.item_id);
    }
    const firsts = new Map(books.map((b) => [b.item_id, { started: b.started ? dateText(b.started) : null, finished: b.finished ? dateText(b.finished) : null }]));
    let started = 0;
    let finished = 0;
    for (const f of firsts.values()) {
      if (f.started?.startsWith(`${year}-`)) {
        started++;
        months.get(f.started.slice(0, 7))!.started++;
      }
      if (f.finished?.startsWith(`${year}-`)) {
        finished++;
        months.get(f.finished.slice(0, 7))!.finished++;
      }
    }
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
    const s = streaks([...days.keys()], today);
    const dayList = [...days.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([date, d]) => ({ date, seconds: Math.round(d.seconds), books: d.books.size, progress: round4(d.progress) }));
    const total = [...perBook.values()].reduce((n, b) => n + b.seconds, 0);
    return {
      year,
      timezone: tz,
      totals: {
        seconds: Math.round(total),
        days_read: dayList.length,
        books_read: perBook.size,
        books_started: started,
        books_finished: finished,
        progress: round4([...perBook.values()].reduce((n, b) => n + b.progress, 0)),
        current_streak: s.current,
        longest_streak: s.longest,
      },
      days: dayList,
      months: [...months.values()].map((m) => ({ ...m, seconds: Math.round(m.seconds) })),
      by_device: figures(byDevice),
      by_format: figures(byFormat),
      by_author: figures(byAuthor),
      by_series: figures(bySeries),
      by_tag: figures(byTag),
      books: [...perBook.entries()]
        .map(([id, b]) => ({
          id,
          title: item.get(id)?.title ?? null,
          seconds: Math.round(b.seconds),
          progress: round4(b.progress),
          started: firsts.get(id)?.started ?? null,
          finished: firsts.get(id)?.finished ?? null,
        }))
        .sort((a, b) => b.seconds - a.seconds || b.progress - a.progress || a.id.localeCompare(b.id)),
    };
  }

  /**
   * The library's figures for `year`: the totals (time, active readers, time per month, the most
   * read books) count everyone's reading, unnamed; a person is named, with their own figures, only
   * while they let admins see theirs (`share_statistics`). Days in UTC (they are many people's).
   */
  async library(year: number): Promise<LibraryStatistics> {
    const from = `${year}-01-01`;
    const to = `${year}-12-31`;
    const utc = sql.lit('UTC') as RawBuilder<string>;
    const { rows } = await sql<{ user_id: string; item_id: string; day: unknown; seconds: number }>`
      with t as (${readsWithTime(sql<boolean>`true`, utc)})
      select t.user_id, t.item_id, t.day, sum(t.seconds)::double precision as seconds
      from t where t.day between ${from}::date and ${to}::date
      group by t.user_id, t.item_id, t.day`.execute(this.db);
    const { rows: people } = await sql<{ id: string; username: string }>`
      select u.id, u.profile->>'username' as username from ${U()} u where u.share_statistics`.execute(this.db);
    const name = new Map(people.map((p) => [p.id, p.username]));
    const months = new Map<string, { seconds: number; readers: Set<string> }>();
    for (let m = 1; m <= 12; m++) months.set(`${year}-${String(m).padStart(2, '0')}`, { seconds: 0, readers: new Set<string>() });
    const perBook = new Map<string, { readers: Set<string>; seconds: number }>();
    const perUser = new Map<string, { seconds: number; days: Set<string>; books: Set<string> }>();
    for (const r of rows) {
      const seconds = Number(r.seconds);
      const date = dateText(r.day);
      const month = months.get(date.slice(0, 7))!;
      month.seconds += seconds;
      month.readers.add(r.user_id);
      const b = perBook.get(r.item_id) ?? { readers: new Set<string>(), seconds: 0 };
      b.readers.add(r.user_id);
      b.seconds += seconds;
      perBook.set(r.item_id, b);
      const u = perUser.get(r.user_id) ?? { seconds: 0, days: new Set<string>(), books: new Set<string>() };
      u.seconds += seconds;
      u.days.add(date);
      u.books.add(r.item_id);
      perUser.set(r.user_id, u);
    }
    const top = [...perBook.entries()].sort(([ia, a], [ib, b]) => b.readers.size - a.readers.size || b.seconds - a.seconds || ia.localeCompare(ib)).slice(0, 20);
    const titles = await this.titles(top.map(([id]) => id));
    return {
      year,
      sharing: people.length,
      active_readers: perUser.size,
      seconds: Math.round([...perUser.values()].reduce((n, u) => n + u.seconds, 0)),
      months: [...months.entries()].map(([month, m]) => ({ month, seconds: Math.round(m.seconds), readers: m.readers.size })),
      books: top.map(([id, b]) => ({ id, title: titles.get(id) ?? null, readers: b.readers.size, seconds: Math.round(b.seconds) })),
      readers: [...perUser.entries()]
        .flatMap(([id, u]) => {
          const username = name.get(id);
          return username === undefined ? [] : [{ username, seconds: Math.round(u.seconds), days_read: u.days.size, books: u.books.size }];
        })
        .sort((a, b) => b.seconds - a.seconds || a.username.localeCompare(b.username)),
    };
  }

  /** The titles of the books of `ids` still in the catalog (an admin sees every library). */
  private async titles(ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.withSchema(SCHEMA).selectFrom(CATALOG_ITEMS).select(['id', 'title']).where('id', 'in', ids).execute();
    return new Map(rows.map((i) => [i.id, i.title]));
  }
}

const round4 = (n: number): number => Math.round(n * 10_000) / 10_000;
