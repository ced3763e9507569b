// Reads of the catalog from the gateway's own tables: the item list, one item, search with its
// filters and autocomplete, libraries. Every read takes the caller's library access and sees only
// what it allows. Items are stored as their rendered public JSON and pages are joined from it.
import { sql, type RawBuilder } from 'kysely';
import { LRUCache } from 'lru-cache';
import { type Catalog, err, fail, isUuid, Messages, ok, type Result } from '@bindery/contracts';
import {
  checkSearchLengths,
  cleanText,
  filterValue,
  parseBool,
  parseLibraryIdParam,
  parseLimit,
  parseOffset,
  parseSort,
  q1,
  SIMILARITY,
  YEAR_MESSAGE,
  type Query,
  type SortKey,
} from '@bindery/catalog/query';
import type { Db } from '@bindery/platform';
import { SCHEMA } from './migrations';
import { catalogTables } from './tables';
import { readingTables } from './reading-tables';
import { visible, type Access } from './access';
import type { GatewayDb } from './database';

const T = catalogTables();
const R = readingTables();
const table = (name: string) => sql.table(`${SCHEMA}.${name}`);

type Filter = { exact: boolean; value: string };

const fuzzy = (col: RawBuilder<unknown>, v: string) => sql<boolean>`greatest(similarity(lower(${col}), lower(${v})), word_similarity(lower(${v}), lower(${col}))) >= ${SIMILARITY}`;
const exactly = (col: RawBuilder<unknown>, v: string) => sql<boolean>`lower(${col}) = lower(${v})`;
/**
 * The known values of a field (lower-cased) that resemble v. Looked up on their own before the
 * search: as a sub-select inside the per-item EXISTS, Postgres planned it per item, and a fuzzy
 * author filter took 1.6 s at 34,000 items (8 ms at 10,000).
 */
const similarTerms = (field: string, v: string) => sql<{ v: string }>`select distinct lower(value) as v from ${table(T.terms)} where field = ${field} and ${fuzzy(sql`value`, v)}`;
/** `expr` is one of `terms`; no terms, no match */
const inTerms = (expr: RawBuilder<unknown>, terms: string[]) => (terms.length === 0 ? sql<boolean>`false` : sql<boolean>`${expr} in (${sql.join(terms.map((t) => sql`${t}`))})`);
/** A list column holds a value matching the filter (`terms`: the similar known values, for a fuzzy filter). */
const anyOf = (jsonCol: string, f: Filter, terms: string[]) =>
  f.exact
    ? sql<boolean>`exists (select 1 from jsonb_array_elements_text(${sql.ref(jsonCol)}) as x(v) where ${exactly(sql`x.v`, f.value)})`
    : sql<boolean>`exists (select 1 from jsonb_array_elements_text(${sql.ref(jsonCol)}) as x(v) where ${inTerms(sql`lower(x.v)`, terms)})`;
/** A text column matches the filter. */
const columnMatch = (col: string, f: Filter, terms: string[]) => (f.exact ? exactly(sql`coalesce(${sql.ref(col)}, '')`, f.value) : inTerms(sql`lower(${sql.ref(col)})`, terms));

/** The libraries condition of an access: nothing, or `library_id` in the granted set. */
/** The read states `read_status` takes: the same three a smart collection's `read_status` rule names. */
export const READ_STATES = ['unread', 'reading', 'finished'] as const;
export const READ_STATE_MESSAGE = `read_status must be one of ${READ_STATES.join(', ')}`;

/**
 * The `read_status` condition of a list or search for `user`: none when absent, or the items whose
 * position (from the reading projection) is that state; no position at all is unread, like a rule.
 */
function readState(q: Query, user: string | undefined): Result<RawBuilder<boolean> | null> {
  const v = q1(q, 'read_status');
  if (v === undefined || v === '') return ok(null);
  if (!(READ_STATES as readonly string[]).includes(v) || !user) return err(fail('validation', READ_STATE_MESSAGE));
  const at = (cond: RawBuilder<boolean>) =>
    sql<boolean>`exists (select 1 from ${table(R.progress)} p where p.user_id = ${user} and p.item_id = ${sql.ref(`${T.items}.id`)} and ${cond})`;
  if (v === 'finished') return ok(at(sql<boolean>`p.percentage >= 1`));
  if (v === 'reading') return ok(at(sql<boolean>`p.percentage > 0 and p.percentage < 1`));
  return ok(sql<boolean>`not ${at(sql<boolean>`p.percentage > 0`)}`);
}

/** The order of a sort key (before the title and id every list ends with): the list's and the search's. */
function orderOf(sort: { key: SortKey; desc: boolean }): RawBuilder<unknown>[] {
  const dir = sort.desc ? sql`desc` : sql`asc`;
  const nulls = sql`nulls last`;
  switch (sort.key) {
    case 'title':
      return [sql`sort_title ${dir}`];
    case 'created_at':
    case 'updated_at':
      return [sql`${sql.ref(sort.key)} ${dir}`];
    case 'series':
      return [sql`lower(series) ${dir} ${nulls}`, sql`series_index ${dir} ${nulls}`];
    case 'year':
      return [sql`year ${dir} ${nulls}`];
    case 'author':
      return [sql`first_author ${dir} ${nulls}`];
  }
}

const dataPage = (docs: string[]) => `{"data":[${docs.join(',')}]}`;

/** The library, limit and offset of a list or search, as the query gives them. */
function pageOf(q: Query): Result<{ library: string | undefined; limit: number; offset: number }> {
  const library = parseLibraryIdParam(q1(q, 'library_id'));
  if (!library.ok) return library;
  const limit = parseLimit(q1(q, 'limit'));
  if (!limit.ok) return limit;
  const offset = parseOffset(q1(q, 'offset'));
  if (!offset.ok) return offset;
  return ok({ library: library.value, limit: limit.value, offset: offset.value });
}

export class CatalogView {
  /**
   * Items' libraries by `<catalog position>|<id>`: every write a client sends about an item checks it
   * first. Only items that exist are kept: an item just made elsewhere is read again, never refused
   * from memory; any catalog change is a new position, so a move or a removal is seen at once.
   */
  private itemLibraries = new LRUCache<string, string>({ max: 20_000 });
  private itemCovers = new LRUCache<string, { library: string; has_cover: boolean; key: string | null }>({ max: 20_000 });

  constructor(
    private db: Db<GatewayDb>,
    /** how far this process's catalog projection has got */
    private catalogPosition: () => number = () => 0,
    /** false: free-text search reads every item, as it did before its index (a test's reference) */
    private readonly textIndex = true,
  ) {}

  /** `{data:[...]}` of items, sorted, optionally of one library and of one read state of `user`'s. */
  async list(access: Access, q: Query, user?: string): Promise<Result<string>> {
    const paging = pageOf(q);
    if (!paging.ok) return paging;
    const { library, limit, offset } = paging.value;
    const sort = parseSort(q1(q, 'sort'));
    if (!sort.ok) return sort;
    const state = readState(q, user);
    if (!state.ok) return state;
    let s = this.db.withSchema(SCHEMA).selectFrom(T.items).select('doc').where(visible(access));
    if (library) s = s.where('library_id', '=', library);
    if (state.value) s = s.where(state.value);
    for (const o of orderOf(sort.value)) s = s.orderBy(o);
    const rows = await s.orderBy('sort_title').orderBy('id').limit(limit).offset(offset).execute();
    return ok(dataPage(rows.map((r) => r.doc)));
  }

  async item(access: Access, id: string): Promise<Result<string>> {
    if (!isUuid(id)) return err(fail('validation', Messages.invalidMediaItemId));
    const row = await this.db.withSchema(SCHEMA).selectFrom(T.items).select('doc').where('id', '=', id.toLowerCase()).where(visible(access)).executeTakeFirst();
    // an item in a library the caller can't see does not exist for them
    return row ? ok(row.doc) : err(fail('not_found', Messages.mediaItemNotFound));
  }

  /** The item's library, for writes the gateway forwards (null: not there or not visible). */
  async itemLibrary(access: Access, id: string): Promise<string | null> {
    if (!isUuid(id)) return null;
    const key = `${this.catalogPosition()}|${id.toLowerCase()}`;
    let library = this.itemLibraries.get(key);
    if (library === undefined) {
      const row = await this.db.withSchema(SCHEMA).selectFrom(T.items).select('library_id').where('id', '=', id.toLowerCase()).executeTakeFirst();
      if (!row) return null;
      library = row.library_id;
      this.itemLibraries.set(key, library);
    }
    return access.all || access.ids.includes(library) ? library : null;
  }

  /**
   * For an item the caller may see: whether it has a cover and the content hash the catalog keeps it
   * under (its primary file's SHA-256); null for an item that is absent or hidden from them.
   */
  async coverOf(access: Access, id: string): Promise<{ has_cover: boolean; key: string | null } | null> {
    if (!isUuid(id)) return null;
    const key = `${this.catalogPosition()}|${id.toLowerCase()}`;
    let hit = this.itemCovers.get(key);
    if (!hit) {
      const row = await this.db
        .withSchema(SCHEMA)
        .selectFrom(T.items)
        .select(['library_id', 'has_cover', sql<string | null>`coalesce(doc::jsonb->>'cover_key', doc::jsonb->>'sha256')`.as('sha256')])
        .where('id', '=', id.toLowerCase())
        .executeTakeFirst();
      if (!row) return null;
      hit = { library: row.library_id, has_cover: Boolean(row.has_cover), key: (row.sha256 as string | null) ?? null };
      this.itemCovers.set(key, hit);
    }
    return access.all || access.ids.includes(hit.library) ? { has_cover: hit.has_cover, key: hit.key } : null;
  }

  async search(access: Access, q: Query, user?: string): Promise<Result<string>> {
    const paging = pageOf(q);
    if (!paging.ok) return paging;
    const { library, limit, offset } = paging.value;
    const lengths = checkSearchLengths(q);
    if (!lengths.ok) return lengths;
    const state = readState(q, user);
    if (!state.ok) return state;
    // a sort asked for orders the matches whatever the filters; without one, relevance (free text) then title
    const sortRaw = q1(q, 'sort');
    const sort = sortRaw === undefined || sortRaw === '' ? null : parseSort(sortRaw);
    if (sort && !sort.ok) return sort;
    const conds: RawBuilder<boolean>[] = [visible(access)];
    if (state.value) conds.push(state.value);
    if (library) conds.push(sql<boolean>`library_id = ${library}`);
    const text = cleanText(q1(q, 'q') ?? '');
    let rank: RawBuilder<unknown> | null = null;
    let byIndex = false;
    if (text !== '') {
      const like = `%${text.toLowerCase().replace(/[\\%_]/g, (c) => '\\' + c)}%`;
      const isbn = text.replace(/[^0-9Xx]/g, '').toUpperCase();
      // candidates from the trigram index first (without it every search read every item). A
      // character JSON escapes in search_text could hide a plain match there: such a search reads all.
      if (this.textIndex && !/["\\\p{Cc}]/u.test(text)) {
        byIndex = true;
        conds.push(sql<boolean>`(search_text like ${like} or lower(${text}) <% search_text${isbn ? sql` or isbn = ${isbn}` : sql``})`);
      }
      conds.push(sql<boolean>`(
        lower(title) like ${like} or ${fuzzy(sql`title`, text)}
        or exists (select 1 from jsonb_array_elements_text(authors) as a(v) where lower(a.v) like ${like} or ${fuzzy(sql`a.v`, text)})
        or lower(coalesce(series, '')) like ${like}
        or exists (select 1 from jsonb_array_elements_text(tags) as g(v) where lower(g.v) like ${like})
        or isbn = ${isbn}
      )`);
      rank = sql`greatest(similarity(lower(title), lower(${text})), word_similarity(lower(${text}), lower(title)))`;
    }
    const terms = async (field: string, f: Filter) => (f.exact ? [] : (await similarTerms(field, f.value).execute(this.db)).rows.map((r) => r.v));
    const author = q1(q, 'author_filter');
    if (author) {
      const f = filterValue(author);
      conds.push(anyOf('authors', f, await terms('author', f)));
    }
    for (const k of ['genre_filter', 'tags_filter']) {
      const v = q1(q, k);
      if (!v) continue;
      const f = filterValue(v);
      conds.push(anyOf('tags', f, await terms('tag', f)));
    }
    for (const [key, col] of [
      ['series_filter', 'series'],
      ['language_filter', 'language'],
      ['publisher_filter', 'publisher'],
    ] as const) {
      const v = q1(q, key);
      if (!v) continue;
      const f = filterValue(v);
      conds.push(columnMatch(col, f, await terms(col, f)));
    }
    const year = q1(q, 'year');
    if (year !== undefined && year !== '') {
      if (!/^\d{1,4}$/.test(year)) return err(fail('validation', YEAR_MESSAGE));
      conds.push(sql<boolean>`year = ${Number(year)}`);
    }
    const format = q1(q, 'format');
    if (format) conds.push(sql<boolean>`formats ? ${format.toLowerCase()}`);
    const bools: [string, RawBuilder<boolean>][] = [
      ['has_cover', sql<boolean>`has_cover`],
      ['has_series', sql<boolean>`series is not null`],
      ['has_isbn', sql<boolean>`isbn is not null`],
      ['has_file', sql<boolean>`jsonb_array_length(formats) > 0`],
    ];
    for (const [k, cond] of bools) {
      const b = parseBool(q1(q, k), k);
      if (!b.ok) return b;
      if (b.value !== undefined) conds.push(b.value ? cond : sql<boolean>`not (${cond})`);
    }
    const where = sql<boolean>`${sql.join(conds, sql` and `)}`;
    const page = async (db: Db<GatewayDb>) => {
      const base = db.withSchema(SCHEMA).selectFrom(T.items);
      let rowsQ = base.select('doc').where(where);
      if (sort) for (const o of orderOf(sort.value)) rowsQ = rowsQ.orderBy(o);
      else if (rank) rowsQ = rowsQ.orderBy(sql`${rank} desc`);
      return Promise.all([
        rowsQ.orderBy('sort_title').orderBy('id').limit(limit).offset(offset).execute(),
        base.select(sql<number>`count(*)::int`.as('n')).where(where).executeTakeFirst(),
      ]);
    };
    const [rows, total] = byIndex
      ? // `<%` compares with this setting: the fuzzy rule's own threshold, for this transaction's statements
        await this.db.transaction().execute(async (trx) => {
          await sql`select set_config('pg_trgm.word_similarity_threshold', ${String(SIMILARITY)}, true)`.execute(trx);
          return page(trx);
        })
      : await page(this.db);
    let out = `{"data":[${rows.map((r) => r.doc).join(',')}],"total":${Number(total?.n ?? 0)},"limit":${limit},"offset":${offset}`;
    const suggestions = await this.autocomplete(access, q, library);
    if (suggestions) out += `,"suggestions":${JSON.stringify(suggestions)}`;
    return ok(out + '}');
  }

  /** Values of one field that start with, contain or resemble what was typed, most used first. */
  private async autocomplete(access: Access, q: Query, libraryId: string | undefined): Promise<Record<string, string[]> | null> {
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
          select ${expr} as value from ${table(T.items)} where ${visible(access)} ${lib}
        ) s
        where value is not null and value <> '' and (${v} = '' or lower(value) like ${prefix} or lower(value) like ${'% ' + prefix} or ${fuzzy(sql`value`, v)})
        group by value
        order by (lower(value) like ${prefix}) desc, count(*) desc, value
        limit 10`.execute(this.db);
      out ??= {};
      out[key] = r.rows.map((x) => x.value);
    }
    return out;
  }

  /** Library records the caller may see; folders (server paths) only for admins. */
  async libraries(access: Access, admin: boolean): Promise<Catalog.Library[]> {
    const rows = await this.db.withSchema(SCHEMA).selectFrom(T.libraries).select(['id', 'doc']).where(visible(access, 'id')).orderBy('name').orderBy('id').execute();
    const counts = await this.counts(rows.map((r) => r.id));
    return rows.map((r) => this.libraryOut(r.doc, counts.get(r.id) ?? 0, admin));
  }

  async library(access: Access, admin: boolean, id: string): Promise<Result<Catalog.Library>> {
    if (!isUuid(id)) return err(fail('validation', Messages.invalidLibraryId));
    const lid = id.toLowerCase();
    const row = await this.db.withSchema(SCHEMA).selectFrom(T.libraries).select('doc').where('id', '=', lid).where(visible(access, 'id')).executeTakeFirst();
    if (!row) return err(fail('not_found', Messages.libraryNotFound));
    const counts = await this.counts([lid]);
    return ok(this.libraryOut(row.doc, counts.get(lid) ?? 0, admin));
  }

  /** Whether a library exists at all (for grants). */
  async libraryIds(): Promise<Set<string>> {
    const rows = await this.db.withSchema(SCHEMA).selectFrom(T.libraries).select('id').execute();
    return new Set(rows.map((r) => r.id));
  }

  private libraryOut(doc: Catalog.Library, itemCount: number, admin: boolean): Catalog.Library {
    const lib = { ...doc, item_count: itemCount };
    if (admin) return lib;
    const { folders: _f, ...rest } = lib;
    return rest as Catalog.Library;
  }

  private async counts(ids: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (ids.length === 0) return out;
    const rows = await this.db
      .withSchema(SCHEMA)
      .selectFrom(T.items)
      .select(['library_id', sql<number>`count(*)::int`.as('n')])
      .where('library_id', 'in', ids)
      .groupBy('library_id')
      .execute();
    for (const r of rows) out.set(r.library_id, Number(r.n));
    return out;
  }

  /** The item a library file belongs to, if the caller may see it: only catalogued files are served. */
  async fileItem(access: Access, libraryId: string, relPath: string): Promise<string | null> {
    const row = await this.db
      .withSchema(SCHEMA)
      .selectFrom(T.files)
      .select('item_id')
      .where('library_id', '=', libraryId)
      .where('rel_path', '=', relPath)
      .where(visible(access))
      .executeTakeFirst();
    return row ? row.item_id : null;
  }

  /** A library's folders (admin-only data), or null when the library does not exist. */
  /** An item whoever may see it (the work a person asked for earlier, like a send to their e-reader), or null. */
  async anyItem(id: string): Promise<Catalog.MediaItem | null> {
    const r = await this.item({ all: true }, id);
    return r.ok ? (JSON.parse(r.value) as Catalog.MediaItem) : null;
  }

  async folders(libraryId: string): Promise<string[] | null> {
    const row = await this.db.withSchema(SCHEMA).selectFrom(T.libraries).select('doc').where('id', '=', libraryId).executeTakeFirst();
    return row ? row.doc.folders : null;
  }
}
