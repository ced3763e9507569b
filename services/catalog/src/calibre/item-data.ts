// What an item keeps of its calibre book beyond the fields it takes (title, authors, …): calibre's
// book id, its rating, a "read" column's mark and every custom column as calibre names it. Carried
// in the item's events (Catalog.CalibreData), so it survives a rebuild; bounded, so a hostile
// metadata.db cannot make every event of a book huge.
import type { Catalog } from '@bindery/contracts';
import type { CalibreBook, CalibreCustomValue } from './types';

const MAX_COLUMNS = 100;
const MAX_VALUES = 100;
const MAX_NAME = 200;
const MAX_TEXT = 4000;

const cut = (s: string, n: number): string => {
  if (s.length <= n) return s;
  const head = s.slice(0, n - 1);
  // never end on half of a surrogate pair
  return `${/[\uD800-\uDBFF]$/u.test(head) ? head.slice(0, -1) : head}…`;
};

function columnValue(c: CalibreCustomValue): Catalog.CalibreColumn['value'] | null {
  const v = c.value;
  if (Array.isArray(v)) return v.slice(0, MAX_VALUES).map((x) => cut(x, MAX_TEXT));
  if (typeof v === 'string') return cut(v, MAX_TEXT);
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  return v;
}

export function calibreData(b: CalibreBook): Catalog.CalibreData {
  const read = b.custom.find((c) => c.is_read && typeof c.value === 'boolean');
  const columns: Catalog.CalibreColumn[] = [];
  for (const c of b.custom) {
    if (columns.length >= MAX_COLUMNS) break;
    const value = columnValue(c);
    if (value === null) continue;
    const col: Catalog.CalibreColumn = { label: cut(c.label, MAX_NAME), name: cut(c.name, MAX_NAME), type: c.type, value };
    if (c.type === 'series') col.series_index = c.series_index ?? null;
    columns.push(col);
  }
  return {
    book_id: b.id !== null && Number.isInteger(b.id) ? b.id : null,
    rating: b.rating !== null && Number.isInteger(b.rating) && b.rating >= 1 && b.rating <= 10 ? b.rating : null,
    read: read ? read.value === true : null,
    columns,
  };
}
