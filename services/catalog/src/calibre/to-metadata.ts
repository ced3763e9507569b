// A calibre record as the metadata the format readers give, so a scan can put calibre's fields
// where the files' would go (calibre's win: they are what the owner curated).
import { emptyMetadata, type BookMetadata } from '../formats/types';
import type { CalibreBook } from './types';

export function toBookMetadata(b: CalibreBook): BookMetadata {
  const m = emptyMetadata();
  m.title = b.title;
  m.contributors = b.authors.map((a) => ({ name: a.name, role: 'author' }));
  m.series = b.series;
  m.series_index = b.series_index;
  m.language = b.languages[0] ?? null;
  m.publisher = b.publisher;
  m.description = b.description;
  m.identifiers = { ...b.identifiers, ...(b.uuid ? { uuid: b.uuid } : {}), ...(b.id !== null ? { calibre: String(b.id) } : {}) };
  m.isbn = b.identifiers.isbn ?? null;
  m.subjects = [...b.tags];
  m.year = b.year;
  return m;
}
