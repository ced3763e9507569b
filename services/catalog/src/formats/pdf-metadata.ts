// PDF document information (the Info dictionary) and XMP, as pdf.js reports them, to metadata.
// The Info dictionary wins where both have a field, except the year: XMP's dc:date is the
// publication date, Info's CreationDate only when the file was made.
import { clean, normalizeIsbn, splitList, splitPersonNames, unique, yearOf } from './text';
import { emptyMetadata, type BookMetadata } from './types';

/** pdf.js's Metadata: lower-cased XMP names ('dc:title') to a string or a list of strings. */
export interface XmpLookup {
  get(name: string): unknown;
}

export function pdfMetadata(info: Record<string, unknown>, xmp: XmpLookup | null, pageCount: number): BookMetadata {
  const str = (v: unknown): string | null => (typeof v === 'string' ? clean(v) : null);
  const list = (v: unknown): string[] => (Array.isArray(v) ? v : [v]).map((x) => str(x)).filter((x): x is string => x !== null);
  const x = (name: string): unknown => {
    try {
      return xmp?.get(name) ?? null;
    } catch {
      return null;
    }
  };

  const m = emptyMetadata();
  m.title = str(info.Title) ?? list(x('dc:title'))[0] ?? null;
  const author = str(info.Author);
  const authors = author ? splitPersonNames(author) : list(x('dc:creator'));
  m.contributors = unique(authors).map((name) => ({ name, role: 'author' }));
  m.description = str(info.Subject) ?? list(x('dc:description'))[0] ?? null;
  const keywords = str(info.Keywords);
  m.subjects = unique(keywords ? splitList(keywords) : list(x('dc:subject')));
  m.year = yearOf(list(x('dc:date'))[0]) ?? pdfDateYear(str(info.CreationDate));
  m.language = list(x('dc:language'))[0] ?? str(info.Language);
  m.publisher = list(x('dc:publisher'))[0] ?? null;
  const isbn =
    [x('prism:isbn'), x('pdfx:isbn'), x('xmp:identifier')]
      .flatMap(list)
      .map(normalizeIsbn)
      .find((v) => v) ?? null;
  if (isbn) m.identifiers = { isbn };
  m.isbn = isbn;
  m.page_count = pageCount > 0 ? pageCount : null;
  return m;
}

/** PDF dates look like "D:19970902120000+01'00'" (the "D:" is optional). */
function pdfDateYear(s: string | null): number | null {
  const m = s ? /^(?:D:)?(\d{4})/u.exec(s) : null;
  const y = m?.[1] ? Number(m[1]) : null;
  return y !== null && y >= 1000 && y <= 2999 ? y : null;
}
