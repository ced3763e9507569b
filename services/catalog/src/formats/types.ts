// The shapes the format layer hands to the catalog: what a book says about itself.
import type * as Locator from '@bindery/locator';

export type BookFormat = 'epub' | 'pdf' | 'cbz' | 'cbr' | 'cb7' | 'mobi' | 'azw3' | 'fb2';

/** Roles are lower-case: author, editor, translator, illustrator, writer, penciller, inker,
 * colorist, letterer, cover_artist, narrator, contributor. */
export interface Contributor {
  name: string;
  role: string;
}

export interface BookMetadata {
  title: string | null;
  contributors: Contributor[];
  series: string | null;
  series_index: number | null;
  language: string | null;
  publisher: string | null;
  description: string | null;
  /** Scheme (lower-case) to value, e.g. { isbn: '9781234567897', uuid: '…', calibre: '…' }. */
  identifiers: Record<string, string>;
  isbn: string | null;
  subjects: string[];
  year: number | null;
  page_count: number | null;
  reading_direction: 'ltr' | 'rtl' | null;
}

export interface Extracted {
  metadata: BookMetadata;
  cover: Buffer | null;
  /** no cover bytes now, but one can be made later (a PDF page, rendered when asked to) */
  coverLater?: boolean;
  /** EPUB: the locator index (spine and document shapes) positions are mapped with */
  locator?: Locator.LocatorIndex | null;
  /**
   * CBZ, CBR and image-only EPUB: the archive entries that are the book's pages, in reading order
   * (what the gateway streams page by page); null or absent for every other book
   */
  pages?: string[] | null;
}

export function emptyMetadata(): BookMetadata {
  return {
    title: null,
    contributors: [],
    series: null,
    series_index: null,
    language: null,
    publisher: null,
    description: null,
    identifiers: {},
    isbn: null,
    subjects: [],
    year: null,
    page_count: null,
    reading_direction: null,
  };
}
