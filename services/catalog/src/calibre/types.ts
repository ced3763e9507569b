// What the catalog learns from a calibre library: one record per calibre book, from metadata.db
// or from a book folder's metadata.opf (calibre's backup), in one shape.

/** A file of the book as calibre lists it (its `data` table), the path relative to the library root. */
export interface CalibreFormat {
  /** lower-case, as the file ends: epub, pdf, cbz, azw3, … */
  format: string;
  path: string;
  /** calibre's record of the file's size; null from an OPF */
  size: number | null;
}

export interface CalibreAuthor {
  name: string;
  /** calibre's sort form of this author ("Fournier, Amélie"); from an OPF, its file-as */
  sort: string | null;
}

export type CalibreColumnType = 'bool' | 'int' | 'float' | 'rating' | 'text' | 'comments' | 'series' | 'enumeration' | 'datetime';

/** A custom column's value for one book. Only columns with a value for the book are listed. */
export interface CalibreCustomValue {
  /** the lookup name without '#', as in calibre's search (`#read` → read) */
  label: string;
  /** the column's heading as calibre shows it */
  name: string;
  type: CalibreColumnType;
  /** bool: boolean; int, float, rating (0–10): number; text with several values: string[];
   * series: its name (the index is `series_index`); datetime: ISO 8601; comments: plain text */
  value: boolean | number | string | string[];
  series_index?: number | null;
  /** a boolean column named "read" (label or heading): what the owner marked as read */
  is_read: boolean;
}

export interface CalibreBook {
  /** calibre's book id; null from an OPF that carries none */
  id: number | null;
  uuid: string | null;
  /** the book's folder, relative to the library root, '/'-separated */
  path: string;
  formats: CalibreFormat[];
  title: string;
  title_sort: string | null;
  /** in calibre's order */
  authors: CalibreAuthor[];
  author_sort: string | null;
  series: string | null;
  series_index: number | null;
  tags: string[];
  publisher: string | null;
  /** BCP 47 tags as the catalog keeps them (calibre's ISO 639-2 `fra` → `fr`), calibre's order */
  languages: string[];
  /** lower-case scheme → value (isbn, goodreads, amazon, google, …); an ISBN is digits (and X) only */
  identifiers: Record<string, string>;
  /** the comments as plain text, cleaned the way an EPUB's description is (no markup, no script) */
  description: string | null;
  /** the publication year, null for calibre's "undefined" date */
  year: number | null;
  /** calibre's 0–10 (two per star); null when unrated */
  rating: number | null;
  has_cover: boolean;
  /** `cover.jpg` in the book's folder when calibre says there is a cover */
  cover_path: string | null;
  /** when calibre added the book, ISO 8601 */
  added_at: string | null;
  /** calibre's last change to the book, ISO 8601 with calibre's microseconds */
  last_modified: string | null;
  custom: CalibreCustomValue[];
}

/** Something in the library that could not be mapped, for the migration report. */
export interface CalibreNote {
  book_id: number | null;
  field: string;
  reason: string;
}

export interface CalibreLibrary {
  books: CalibreBook[];
  /** the newest last_modified of any book: the watermark to give `changedSince` next time */
  last_modified: string | null;
  notes: CalibreNote[];
}

export interface CalibreChanges {
  /** books added or changed after the watermark, whole */
  books: CalibreBook[];
  /** ids given as known that the library no longer has (deleted, or merged into another) */
  deleted: number[];
  /** every book id in the library now */
  ids: number[];
  last_modified: string | null;
  notes: CalibreNote[];
}

export type CalibreErrorCode = 'missing' | 'busy' | 'corrupt' | 'not-calibre' | 'unfinished-write';

export class CalibreError extends Error {
  override readonly name = 'CalibreError';
  constructor(
    readonly code: CalibreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Which books a read takes: `where(column)` is an SQL condition on a book id column. */
export interface BookFilter {
  where: (column: string) => string;
  params: unknown[];
}
