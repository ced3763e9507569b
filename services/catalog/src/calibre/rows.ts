// The calibre tables a book's record is made of. `fetchBooks` runs inside the read transaction and
// only runs SQL (each table scanned once, for all books or a few), so calibre's next commit waits
// for our shared lock as briefly as possible; `buildBooks` maps the rows afterwards.
import type Database from 'better-sqlite3';
import { buildCustomColumns, type FetchedColumns, fetchCustomColumns } from './custom-columns';
import { addIdentifier, description, language, libraryPath, rating, seriesIndex, text, timestamp, yearOf } from './fields';
import type { BookFilter, CalibreBook, CalibreNote } from './types';

export const ALL_BOOKS: BookFilter = { where: () => '1', params: [] };

export function someBooks(ids: readonly number[]): BookFilter {
  return { where: (c) => `${c} IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(ids)] };
}

interface BookRow {
  id: number;
  title: unknown;
  sort: unknown;
  timestamp: unknown;
  pubdate: unknown;
  series_index: unknown;
  author_sort: unknown;
  path: unknown;
  uuid: unknown;
  has_cover: unknown;
  last_modified: unknown;
}

/** A book's link to a value: `v` the value, `w` a second one (an author's sort, a file's name). */
interface Link {
  book: number;
  v: unknown;
  w?: unknown;
}

// calibre's order of authors and tags is the order of their links
const LINKS = {
  authors: (f: BookFilter) =>
    `SELECT l.book AS book, a.name AS v, a.sort AS w FROM books_authors_link l JOIN authors a ON a.id = l.author WHERE ${f.where('l.book')} ORDER BY l.id`,
  series: (f: BookFilter) => `SELECT l.book AS book, s.name AS v FROM books_series_link l JOIN series s ON s.id = l.series WHERE ${f.where('l.book')} ORDER BY l.id`,
  tags: (f: BookFilter) => `SELECT l.book AS book, t.name AS v FROM books_tags_link l JOIN tags t ON t.id = l.tag WHERE ${f.where('l.book')} ORDER BY l.id`,
  publishers: (f: BookFilter) => `SELECT l.book AS book, p.name AS v FROM books_publishers_link l JOIN publishers p ON p.id = l.publisher WHERE ${f.where('l.book')} ORDER BY l.id`,
  languages: (f: BookFilter) =>
    `SELECT l.book AS book, g.lang_code AS v FROM books_languages_link l JOIN languages g ON g.id = l.lang_code WHERE ${f.where('l.book')} ORDER BY l.item_order, l.id`,
  identifiers: (f: BookFilter) => `SELECT book, type AS v, val AS w FROM identifiers WHERE ${f.where('book')} ORDER BY id`,
  comments: (f: BookFilter) => `SELECT book, text AS v FROM comments WHERE ${f.where('book')}`,
  ratings: (f: BookFilter) => `SELECT l.book AS book, r.rating AS v FROM books_ratings_link l JOIN ratings r ON r.id = l.rating WHERE ${f.where('l.book')}`,
  data: (f: BookFilter) => `SELECT book, format AS v, name || '.' || lower(format) AS w, uncompressed_size AS size FROM data WHERE ${f.where('book')} ORDER BY id`,
} as const;

export interface FetchedBooks {
  books: BookRow[];
  links: Record<keyof typeof LINKS, Link[]>;
  custom: FetchedColumns;
}

export function fetchBooks(db: Database.Database, filter: BookFilter): FetchedBooks {
  const all = <T>(sql: string): T[] => db.prepare(sql).all(...filter.params) as T[];
  const books = all<BookRow>(
    `SELECT id, title, sort, timestamp, pubdate, series_index, author_sort, path, uuid, has_cover, last_modified FROM books WHERE ${filter.where('id')} ORDER BY id`,
  );
  const links = Object.fromEntries(Object.entries(LINKS).map(([k, sql]) => [k, all<Link>(sql(filter))])) as FetchedBooks['links'];
  return { books, links, custom: fetchCustomColumns(db, filter) };
}

export function buildBooks(fetched: FetchedBooks, notes: CalibreNote[]): CalibreBook[] {
  const books = new Map<number, CalibreBook>();
  for (const r of fetched.books) {
    const path = typeof r.path === 'string' ? libraryPath(r.path) : null;
    if (path === null) {
      notes.push({ book_id: r.id, field: 'path', reason: `its folder ${JSON.stringify(r.path)} is not inside the library` });
      continue;
    }
    const hasCover = r.has_cover === 1 || r.has_cover === true;
    books.set(r.id, {
      id: r.id,
      uuid: text(r.uuid),
      path,
      formats: [],
      title: text(r.title) ?? 'Unknown',
      title_sort: text(r.sort),
      authors: [],
      author_sort: text(r.author_sort),
      series: null,
      series_index: seriesIndex(r.series_index),
      tags: [],
      publisher: null,
      languages: [],
      identifiers: {},
      description: null,
      year: yearOf(r.pubdate),
      rating: null,
      has_cover: hasCover,
      cover_path: hasCover ? `${path}/cover.jpg` : null,
      added_at: timestamp(r.timestamp),
      last_modified: timestamp(r.last_modified),
      custom: [],
    });
  }
  const each = (rows: Link[], apply: (b: CalibreBook, row: Link) => void): void => {
    for (const row of rows) {
      const b = books.get(row.book);
      if (b) apply(b, row);
    }
  };
  const { links } = fetched;
  each(links.authors, (b, r) => {
    const name = text(r.v);
    if (name && !b.authors.some((a) => a.name === name)) b.authors.push({ name, sort: text(r.w) });
  });
  each(links.series, (b, r) => {
    b.series ??= text(r.v);
  });
  // calibre keeps an index (1.0) for every book; it means something only with a series
  for (const b of books.values()) if (b.series === null) b.series_index = null;
  each(links.tags, (b, r) => {
    const tag = text(r.v);
    if (tag && !b.tags.includes(tag)) b.tags.push(tag);
  });
  each(links.publishers, (b, r) => {
    b.publisher ??= text(r.v);
  });
  each(links.languages, (b, r) => {
    const tag = language(r.v);
    if (tag === null) notes.push({ book_id: b.id, field: 'languages', reason: `${JSON.stringify(r.v)} is not a language code` });
    else if (!b.languages.includes(tag)) b.languages.push(tag);
  });
  each(links.identifiers, (b, r) => {
    if (!addIdentifier(b.identifiers, r.v, r.w)) notes.push({ book_id: b.id, field: 'identifiers', reason: `isbn ${JSON.stringify(r.w)} is not an ISBN; kept as calibre has it` });
  });
  each(links.comments, (b, r) => {
    b.description = description(r.v);
  });
  each(links.ratings, (b, r) => {
    b.rating = rating(r.v);
  });
  each(links.data, (b, r) => {
    const format = text(r.v)?.toLowerCase();
    const path = format && /^[a-z0-9_]{1,16}$/u.test(format) && typeof r.w === 'string' ? libraryPath(b.path, r.w) : null;
    if (path === null || path.split('/').length !== b.path.split('/').length + 1) {
      notes.push({ book_id: b.id, field: 'formats', reason: `the ${JSON.stringify(r.v)} file ${JSON.stringify(r.w)} is not a file of the book's folder` });
      return;
    }
    const size = (r as Link & { size?: unknown }).size;
    b.formats.push({ format: format!, path, size: typeof size === 'number' && Number.isFinite(size) ? size : null });
  });
  for (const [id, values] of buildCustomColumns(fetched.custom, notes)) {
    const b = books.get(id);
    if (b) b.custom = values;
  }
  return [...books.values()];
}

/** Every book id and its last_modified, to see what changed without reading the books. */
export function readStamps(db: Database.Database): { id: number; last_modified: string | null }[] {
  return (db.prepare('SELECT id, last_modified FROM books ORDER BY id').all() as { id: number; last_modified: unknown }[]).map((r) => ({
    id: r.id,
    last_modified: timestamp(r.last_modified),
  }));
}
