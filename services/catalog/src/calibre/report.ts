// The migration report of a library's calibre records (issue 44): books, formats, how many books
// have each field from calibre, the custom columns, and what could not be mapped and why. Made by
// the scan from what it read and recorded as an event when it changed; the admin's page reads it.
import type { Catalog } from '@bindery/contracts';
import type { CalibreBook, CalibreNote } from './types';

/** What a scan read of one calibre library folder (or the metadata.opf folders of a library folder). */
export interface CalibreRead {
  folder: string;
  source: 'metadata.db' | 'metadata.opf';
  books: CalibreBook[];
  notes: CalibreNote[];
  error: string | null;
}

const MAX_UNMAPPED = 200;
const FIELDS: [string, (b: CalibreBook) => boolean][] = [
  ['title', (b) => b.title !== ''],
  ['title_sort', (b) => b.title_sort !== null],
  ['authors', (b) => b.authors.length > 0],
  ['series', (b) => b.series !== null],
  ['tags', (b) => b.tags.length > 0],
  ['publisher', (b) => b.publisher !== null],
  ['languages', (b) => b.languages.length > 0],
  ['identifiers', (b) => Object.keys(b.identifiers).length > 0],
  ['description', (b) => b.description !== null],
  ['year', (b) => b.year !== null],
  ['rating', (b) => b.rating !== null],
  ['cover', (b) => b.has_cover],
  ['custom_columns', (b) => b.custom.length > 0],
];

export function calibreReport(reads: readonly CalibreRead[]): Catalog.CalibreReport {
  const fields: Record<string, number> = Object.fromEntries(FIELDS.map(([f]) => [f, 0]));
  const columns = new Map<string, { label: string; name: string; type: string; books: number }>();
  const unmapped: Catalog.CalibreReport['unmapped'] = [];
  let total = 0;
  let books = 0;
  let formats = 0;
  for (const r of reads) {
    const titles = new Map<number, string>();
    for (const b of r.books) {
      books++;
      formats += b.formats.length;
      if (b.id !== null) titles.set(b.id, b.title);
      for (const [f, has] of FIELDS) if (has(b)) fields[f]!++;
      for (const c of b.custom) {
        const col = columns.get(c.label) ?? { label: c.label, name: c.name, type: c.type, books: 0 };
        col.books++;
        columns.set(c.label, col);
      }
    }
    for (const n of r.notes) {
      total++;
      if (unmapped.length < MAX_UNMAPPED)
        unmapped.push({ book_id: n.book_id, title: n.book_id === null ? null : (titles.get(n.book_id) ?? null), field: n.field, reason: n.reason });
    }
  }
  return {
    folders: reads.map((r) => ({
      folder: r.folder,
      source: r.source,
      books: r.books.length,
      formats: r.books.reduce((n, b) => n + b.formats.length, 0),
      error: r.error,
    })),
    books,
    formats,
    fields,
    columns: [...columns.values()].sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0)),
    unmapped,
    unmapped_total: total,
  };
}
