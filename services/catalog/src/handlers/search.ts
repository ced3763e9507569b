// Unified media item search: free text, fuzzy field filters (pg_trgm similarity ≥ 0.3, or an
// exact case-insensitive match when the value is in double quotes), exact year/boolean/format
// filters, field autocomplete and paging.
import { sql, type RawBuilder } from 'kysely';
import { err, ok, type Catalog, type Result } from '@bindery/contracts';
import { cleanText } from '../domain/normalize';
import { invalid, parseBool, parseLibraryIdParam, parseLimit, parseOffset, q1 } from '../domain/validate';
import { publicOf, type ItemRow } from '../store/items';
import { SCHEMA } from '../store/migrations';
import type { Ctx } from './context';

export const SIMILARITY = 0.3;
const MAX_VALUE = 200;

type Query = Record<string, string | string[]>;

/** A filter value: `"x"` means exactly x; anything else is fuzzy. */
export function filterValue(raw: string): { exact: boolean; value: string } {
  const t = raw.trim();
  if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) return { exact: true, value: cleanText(t.slice(1, -1)) };
  return { exact: false, value: cleanText(t) };
}

const fuzzy = (col: RawBuilder<unknown>, v: string) => sql<boolean>`greatest(similarity(lower(${col}), lower(${v})), word_similarity(lower(${v}), lower(${col}))) >= ${SIMILARITY}`;
const exactly = (col: RawBuilder<unknown>, v: string) => sql<boolean>`lower(${col}) = lower(${v})`;
const match = (col: RawBuilder<unknown>, f: { exact: boolean; value: string }) => (f.exact ? exactly(col, f.value) : fuzzy(col, f.value));
const anyOf = (jsonCol: string, f: { exact: boolean; value: string }) =>
  sql<boolean>`exists (select 1 from jsonb_array_elements_text(${sql.ref(jsonCol)}) as x(v) where ${match(sql`x.v`, f)})`;

export async function search(ctx: Ctx, req: { caller: Catalog.Caller; query: Query }): Promise<Result<unknown>> {
  const q = req.query;
  const lib = parseLibraryIdParam(q1(q, 'library_id'));
  if (!lib.ok) return lib;
  const limit = parseLimit(q1(q, 'limit'));
  if (!limit.ok) return limit;
  const offset = parseOffset(q1(q, 'offset'));
  if (!offset.ok) return offset;
  for (const k of ['q', 'author_filter', 'series_filter', 'genre_filter', 'tags_filter', 'language_filter', 'publisher_filter', 'authors', 'genres', 'series', 'languages']) {
    const v = q1(q, k);
    if (v !== undefined && v.length > MAX_VALUE) return err(invalid(`${k} must be at most ${MAX_VALUE} characters`));
  }
  const conds: RawBuilder<boolean>[] = [sql<boolean>`state = 'active'`];
  if (lib.value) conds.push(sql<boolean>`library_id = ${lib.value}`);
  const text = cleanText(q1(q, 'q') ?? '');
  // only with free text: a bare `0` in ORDER BY would be read as a column position
  let rank: RawBuilder<unknown> | null = null;
  if (text !== '') {
    const like = `%${text.toLowerCase().replace(/[\\%_]/g, (c) => '\\' + c)}%`;
    conds.push(sql<boolean>`(
      lower(title) like ${like} or ${fuzzy(sql`title`, text)}
      or exists (select 1 from jsonb_array_elements_text(authors) as a(v) where lower(a.v) like ${like} or ${fuzzy(sql`a.v`, text)})
      or lower(coalesce(series, '')) like ${like}
      or exists (select 1 from jsonb_array_elements_text(tags) as g(v) where lower(g.v) like ${like})
      or isbn = ${text.replace(/[^0-9Xx]/g, '').toUpperCase()}
    )`);
    rank = sql`greatest(similarity(lower(title), lower(${text})), word_similarity(lower(${text}), lower(title)))`;
  }
  const author = q1(q, 'author_filter');
  if (author) conds.push(anyOf('authors', filterValue(author)));
  const series = q1(q, 'series_filter');
  if (series) conds.push(match(sql`coalesce(series, '')`, filterValue(series)));
  for (const k of ['genre_filter', 'tags_filter']) {
    const v = q1(q, k);
    if (v) conds.push(anyOf('tags', filterValue(v)));
  }
  const language = q1(q, 'language_filter');
  if (language) conds.push(match(sql`coalesce(language, '')`, filterValue(language)));
  const publisher = q1(q, 'publisher_filter');
  if (publisher) conds.push(match(sql`coalesce(publisher, '')`, filterValue(publisher)));
  const year = q1(q, 'year');
  if (year !== undefined && year !== '') {
    if (!/^\d{1,4}$/.test(year)) return err(invalid('year must be an integer between 0 and 9999'));
    conds.push(sql<boolean>`year = ${Number(year)}`);
  }
  const format = q1(q, 'format');
  if (format)
    conds.push(
      sql<boolean>`exists (select 1 from ${sql.table(`${SCHEMA}.media_formats`)} f where f.item_id = media_items.id and f.present and f.format = ${format.toLowerCase()})`,
    );
  const bools: [string, RawBuilder<boolean>][] = [
    ['has_cover', sql<boolean>`cover_key is not null`],
    ['has_series', sql<boolean>`series is not null`],
    ['has_isbn', sql<boolean>`isbn is not null`],
    ['has_file', sql<boolean>`exists (select 1 from ${sql.table(`${SCHEMA}.media_formats`)} f where f.item_id = media_items.id and f.present)`],
  ];
  for (const [k, cond] of bools) {
    const b = parseBool(q1(q, k), k);
    if (!b.ok) return b;
    if (b.value !== undefined) conds.push(b.value ? cond : sql<boolean>`not (${cond})`);
  }
  const where = sql<boolean>`${sql.join(conds, sql` and `)}`;
  const db = ctx.rt.db;
  const base = db.withSchema(SCHEMA).selectFrom('media_items');
  let page = base.selectAll().where(where);
  if (rank) page = page.orderBy(sql`${rank} desc`);
  const [rows, total] = await Promise.all([
    page.orderBy('sort_title').orderBy('id').limit(limit.value).offset(offset.value).execute(),
    base.select(sql<number>`count(*)::int`.as('n')).where(where).executeTakeFirst(),
  ]);
  const out: Record<string, unknown> = { data: await publicOf(db, rows as ItemRow[]), total: Number(total?.n ?? 0), limit: limit.value, offset: offset.value };
  const suggestions = await autocomplete(ctx, q, lib.value);
  if (suggestions) out.suggestions = suggestions;
  return ok(out);
}

/** Values of one field that start with, contain or resemble what was typed, most used first. */
async function autocomplete(ctx: Ctx, q: Query, libraryId: string | undefined): Promise<Record<string, string[]> | null> {
  const fields: [string, RawBuilder<unknown>][] = [
    ['authors', sql`jsonb_array_elements_text(authors)`],
    ['genres', sql`jsonb_array_elements_text(tags)`],
    ['series', sql`series`],
    ['languages', sql`language`],
  ];
  let out: Record<string, string[]> | null = null;
  for (const [key, expr] of fields) {
    const raw = q1(q, key);
    if (raw === undefined) continue;
    const v = cleanText(raw).toLowerCase();
    const prefix = `${v.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
    const lib = libraryId ? sql`and library_id = ${libraryId}` : sql``;
    const r = await sql<{ value: string }>`
      select value from (
        select ${expr} as value from ${sql.table(`${SCHEMA}.media_items`)} where state = 'active' ${lib}
      ) s
      where value is not null and value <> '' and (${v} = '' or lower(value) like ${prefix} or lower(value) like ${'% ' + prefix} or ${fuzzy(sql`value`, v)})
      group by value
      order by (lower(value) like ${prefix}) desc, count(*) desc, value
      limit 10`.execute(ctx.rt.db);
    out ??= {};
    out[key] = r.rows.map((x) => x.value);
  }
  return out;
}
