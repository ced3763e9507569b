// Series and authors from the gateway's tables, for the caller's libraries only: every series with
// its book count and the caller's read progress (the reading projection's positions), one series'
// books in index order with what to read next and the numbers missing, and every author with counts.
// A series or an author is a name, compared without case (as the search's exact filters compare);
// lists go by the name without case or accents (`Ötzi` among the O's).
import { sql, type RawBuilder } from 'kysely';
import { Catalog, err, fail, ok, type Result } from '@bindery/contracts';
import { cleanText, parseLibraryIdParam, parseLimit, parseOffset, q1, type Query } from '@bindery/catalog/query';
import type { Db } from '@bindery/platform';
import { SCHEMA } from './migrations';
import { visible, type Access } from './access';
import { READ_STATE_MESSAGE, READ_STATES } from './catalog-view';
import { catalogTables } from './tables';
import { readingTables } from './reading-tables';
import type { GatewayDb } from './database';

const T = catalogTables();
const R = readingTables();
const table = (name: string) => sql.table(`${SCHEMA}.${name}`);
const M = Catalog.BrowseMessages;

/** How many missing numbers a series lists at most (a series numbered by year would list thousands). */
export const MOST_MISSING = 100;

interface ListParams {
  library: string | undefined;
  text: string;
  letter: RawBuilder<boolean> | null;
  sort: { key: string; desc: boolean };
  limit: number;
  offset: number;
}

/** `letter`: A to Z (either case) by the name's first letter without its accent, or `#` for any other start. */
function letterOf(raw: string | undefined, name: RawBuilder<unknown>): Result<RawBuilder<boolean> | null> {
  if (raw === undefined || raw === '') return ok(null);
  const first = sql`left(normalize(lower(${name}), NFD), 1)`;
  if (raw === '#') return ok(sql<boolean>`coalesce(ascii(${first}) not between 97 and 122, true)`);
  if (!/^[A-Za-z]$/.test(raw)) return err(fail('validation', M.letter));
  return ok(sql<boolean>`${first} = ${raw.toLowerCase()}`);
}

/** limit, offset, library, `q`, `letter` and `sort` of a list, each judged (400 with its message). */
function listParams(q: Query, name: RawBuilder<unknown>, sorts: readonly string[]): Result<ListParams> {
  const library = parseLibraryIdParam(q1(q, 'library_id'));
  if (!library.ok) return library;
  const limit = parseLimit(q1(q, 'limit'));
  if (!limit.ok) return limit;
  const offset = parseOffset(q1(q, 'offset'));
  if (!offset.ok) return offset;
  const raw = q1(q, 'q') ?? '';
  if (raw.length > Catalog.MAX_NAME) return err(fail('validation', Catalog.QueryMessages.tooLong('q', Catalog.MAX_NAME)));
  const letter = letterOf(q1(q, 'letter'), name);
  if (!letter.ok) return letter;
  const s = (q1(q, 'sort') ?? '').trim().toLowerCase();
  const key = s.replace(/^-/, '') || 'name';
  if (!sorts.includes(key)) return err(fail('validation', M.sort(sorts)));
  return ok({
    library: library.value,
    text: cleanText(raw).toLowerCase(),
    letter: letter.value,
    sort: { key, desc: s.startsWith('-') },
    limit: limit.value,
    offset: offset.value,
  });
}

const likeOf = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The conditions every list shares: visible, of the library, containing the text, of the letter. */
function conditions(access: Access, p: ListParams, name: RawBuilder<unknown>): RawBuilder<boolean>[] {
  const out = [visible(access, 'i.library_id')];
  if (p.library) out.push(sql<boolean>`i.library_id = ${p.library}`);
  if (p.text) out.push(sql<boolean>`lower(${name}) like ${likeOf(p.text)}`);
  if (p.letter) out.push(p.letter);
  return out;
}

/** A series' read state for one user, as a HAVING clause over its books' positions `p`. */
function seriesState(raw: string | undefined): Result<RawBuilder<boolean> | null> {
  if (raw === undefined || raw === '') return ok(null);
  if (!(READ_STATES as readonly string[]).includes(raw)) return err(fail('validation', READ_STATE_MESSAGE));
  const started = sql`count(*) filter (where p.percentage > 0)`;
  const done = sql`count(*) filter (where p.percentage >= 1)`;
  if (raw === 'unread') return ok(sql<boolean>`${started} = 0`);
  if (raw === 'finished') return ok(sql<boolean>`${done} = count(*)`);
  return ok(sql<boolean>`${started} > 0 and ${done} < count(*)`);
}

const direction = (desc: boolean) => (desc ? sql`desc` : sql`asc`);

export interface SeriesBookRow {
  id: string;
  series_index: number | null;
  pct: number | null;
}

/**
 * Whole numbers from 1 to the highest whole index that no book carries (a fractional index fills
 * none): at most MOST_MISSING of them, and how many there are in all.
 */
export function missingNumbers(indexes: (number | null)[]): { numbers: number[]; count: number } {
  const whole = new Set(indexes.filter((n): n is number => n !== null && Number.isInteger(n) && n >= 1));
  const top = Math.max(0, ...whole);
  const numbers: number[] = [];
  let count = 0;
  for (let n = 1; n < top; n++) {
    if (whole.has(n)) continue;
    count++;
    if (numbers.length < MOST_MISSING) numbers.push(n);
  }
  return { numbers, count };
}

/** The first book in index order the user has not finished (no position, or below the end). */
export const nextToRead = (books: SeriesBookRow[]): string | null => books.find((b) => b.pct === null || b.pct < 1)?.id ?? null;

export class BrowseView {
  constructor(private db: Db<GatewayDb>) {}

  /** `{data, total, limit, offset}` of the series the caller may see, with their read progress for `user`. */
  async series(access: Access, q: Query, user: string): Promise<Result<string>> {
    const name = sql`i.series`;
    const params = listParams(q, name, Catalog.SERIES_SORT_KEYS);
    if (!params.ok) return params;
    const p = params.value;
    const state = seriesState(q1(q, 'read_status'));
    if (!state.ok) return state;
    const conds = [...conditions(access, p, name), sql<boolean>`i.series is not null`, sql<boolean>`i.series <> ''`];
    const grouped = sql`
      select normalize(min(lower(i.series)), NFD) as key, min(i.series) as name, count(*)::int as book_count,
        count(*) filter (where p.percentage >= 1)::int as read_count,
        count(*) filter (where p.percentage > 0 and p.percentage < 1)::int as in_progress_count,
        (coalesce(sum(least(greatest(p.percentage, 0), 1)), 0) / count(*))::float8 as progress,
        max(i.created_at) as created_at,
        (array_agg(i.id order by i.series_index asc nulls last, i.sort_title, i.id) filter (where i.has_cover))[1] as cover_item_id
      from ${table(T.items)} i
      left join ${table(R.progress)} p on p.item_id = i.id and p.user_id = ${user}
      where ${sql.join(conds, sql` and `)}
      group by lower(i.series)
      ${state.value ? sql`having ${state.value}` : sql``}`;
    const dir = direction(p.sort.desc);
    const order = p.sort.key === 'created_at' ? sql`created_at ${dir}, key, name` : p.sort.key === 'book_count' ? sql`book_count ${dir}, key, name` : sql`key ${dir}, name ${dir}`;
    const [rows, total] = await Promise.all([
      sql<SeriesRow>`with s as (${grouped}) select * from s order by ${order} limit ${p.limit} offset ${p.offset}`.execute(this.db),
      sql<{ n: number }>`with s as (${grouped}) select count(*)::int as n from s`.execute(this.db),
    ]);
    const data = rows.rows.map((r) => ({
      name: r.name,
      book_count: Number(r.book_count),
      read_count: Number(r.read_count),
      in_progress_count: Number(r.in_progress_count),
      unread_count: Number(r.book_count) - Number(r.read_count) - Number(r.in_progress_count),
      progress: Math.round(Number(r.progress) * 10_000) / 10_000,
      cover_item_id: r.cover_item_id ?? null,
    }));
    return ok(JSON.stringify({ data, total: Number(total.rows[0]?.n ?? 0), limit: p.limit, offset: p.offset }));
  }

  /**
   * One series as the caller may see it: its counts and progress for `user`, the cover, a description
   * (the first book's in index order that has one), the book to read next, the whole numbers missing,
   * and a page of its books in index order (books without a number last, by title) with their positions.
   */
  async seriesBooks(access: Access, rawName: string, q: Query, user: string): Promise<Result<string>> {
    if (rawName.length > Catalog.MAX_NAME) return err(fail('validation', M.nameTooLong));
    const name = cleanText(rawName);
    if (name === '') return err(fail('not_found', M.seriesNotFound));
    const library = parseLibraryIdParam(q1(q, 'library_id'));
    if (!library.ok) return library;
    const limit = parseLimit(q1(q, 'limit'), 200);
    if (!limit.ok) return limit;
    const offset = parseOffset(q1(q, 'offset'));
    if (!offset.ok) return offset;
    const rows = (
      await sql<SeriesBookRow & { series: string; description: string | null; has_cover: boolean }>`
      select i.id, i.series_index, p.percentage as pct, min(i.series) over () as series, i.has_cover,
        nullif(btrim(i.doc::jsonb->>'description'), '') as description
      from ${table(T.items)} i
      left join ${table(R.progress)} p on p.item_id = i.id and p.user_id = ${user}
      where ${visible(access, 'i.library_id')} and lower(coalesce(i.series, '')) = lower(${name})
        ${library.value ? sql`and i.library_id = ${library.value}` : sql``}
      order by i.series_index asc nulls last, i.sort_title, i.id`.execute(this.db)
    ).rows.map((r) => ({ ...r, series_index: r.series_index === null ? null : Number(r.series_index), pct: r.pct === null ? null : Number(r.pct) }));
    // a series of no book the caller may see does not exist for them
    if (rows.length === 0) return err(fail('not_found', M.seriesNotFound));
    const page = rows.slice(offset.value, offset.value + limit.value);
    const next = nextToRead(rows);
    // the page's books, and the book to read next wherever its page is (its title is part of the answer)
    const wanted = next === null || page.some((b) => b.id === next) ? page.map((b) => b.id) : [...page.map((b) => b.id), next];
    const docs = new Map(
      wanted.length === 0 ? [] : (await this.db.withSchema(SCHEMA).selectFrom(T.items).select(['id', 'doc']).where('id', 'in', wanted).execute()).map((r) => [r.id, r.doc]),
    );
    const nextDoc = next === null ? undefined : docs.get(next);
    const nextTitle = nextDoc === undefined ? null : ((JSON.parse(nextDoc) as { title?: unknown }).title ?? null);
    const read = rows.filter((b) => (b.pct ?? 0) >= 1).length;
    const started = rows.filter((b) => (b.pct ?? 0) > 0 && (b.pct ?? 0) < 1).length;
    const missing = missingNumbers(rows.map((b) => b.series_index));
    const summary = {
      name: rows[0]!.series,
      book_count: rows.length,
      read_count: read,
      in_progress_count: started,
      unread_count: rows.length - read - started,
      progress: Math.round((rows.reduce((s, b) => s + Math.min(Math.max(b.pct ?? 0, 0), 1), 0) / rows.length) * 10_000) / 10_000,
      cover_item_id: rows.find((b) => b.has_cover)?.id ?? null,
      description: rows.find((b) => b.description !== null)?.description ?? null,
      next_item_id: next,
      next_title: typeof nextTitle === 'string' ? nextTitle : null,
      next_percentage: next === null ? null : (rows.find((b) => b.id === next)?.pct ?? null),
      missing_numbers: missing.numbers,
      missing_count: missing.count,
      total: rows.length,
      limit: limit.value,
      offset: offset.value,
    };
    // the items' stored JSON goes out as it is
    const data = page
      .filter((b) => docs.has(b.id))
      .map((b) => `{"media_item_id":${JSON.stringify(b.id)},"percentage":${b.pct === null ? 'null' : b.pct},"item":${docs.get(b.id)}}`);
    return ok(`${JSON.stringify(summary).slice(0, -1)},"data":[${data.join(',')}]}`);
  }

  /** `{data, total, limit, offset}` of the authors of the books the caller may see, with how many books and series each has. */
  async authors(access: Access, q: Query): Promise<Result<string>> {
    const name = sql`a.v`;
    const params = listParams(q, name, Catalog.AUTHOR_SORT_KEYS);
    if (!params.ok) return params;
    const p = params.value;
    const conds = [...conditions(access, p, name), sql<boolean>`btrim(a.v) <> ''`];
    const grouped = sql`
      select normalize(min(lower(a.v)), NFD) as key, min(a.v) as name, count(distinct i.id)::int as book_count, count(distinct lower(i.series))::int as series_count
      from ${table(T.items)} i cross join lateral jsonb_array_elements_text(i.authors) as a(v)
      where ${sql.join(conds, sql` and `)}
      group by lower(a.v)`;
    const dir = direction(p.sort.desc);
    const order = p.sort.key === 'book_count' ? sql`book_count ${dir}, key, name` : sql`key ${dir}, name ${dir}`;
    const [rows, total] = await Promise.all([
      sql<{ name: string; book_count: number; series_count: number }>`with s as (${grouped}) select * from s order by ${order} limit ${p.limit} offset ${p.offset}`.execute(
        this.db,
      ),
      sql<{ n: number }>`with s as (${grouped}) select count(*)::int as n from s`.execute(this.db),
    ]);
    const data = rows.rows.map((r) => ({ name: r.name, book_count: Number(r.book_count), series_count: Number(r.series_count) }));
    return ok(JSON.stringify({ data, total: Number(total.rows[0]?.n ?? 0), limit: p.limit, offset: p.offset }));
  }
}

interface SeriesRow {
  key: string;
  name: string;
  book_count: number;
  read_count: number;
  in_progress_count: number;
  progress: number;
  cover_item_id: string | null;
}
