// calibre's custom columns: their definitions (custom_columns) and each book's values, kept with the
// heading calibre shows. Composite columns are computed by calibre from a template and not stored.
import type Database from 'better-sqlite3';
import { description, text, timestamp } from './fields';
import type { BookFilter, CalibreColumnType, CalibreCustomValue, CalibreNote } from './types';

interface Column {
  id: number;
  label: string;
  name: string;
  type: CalibreColumnType;
  multiple: boolean;
}

const TYPES = new Set<string>(['bool', 'int', 'float', 'rating', 'text', 'comments', 'series', 'enumeration', 'datetime']);

interface Definition {
  id: number;
  label: string;
  name: string;
  datatype: string;
  is_multiple: number;
}

/** The columns' definitions and their rows for the books `filter` takes, SQL only (in the read
 * transaction); a column whose table is missing has null rows. */
export interface FetchedColumns {
  columns: { def: Definition; rows: Row[] | null }[];
}

export function fetchCustomColumns(db: Database.Database, filter: BookFilter): FetchedColumns {
  if (!tableExists(db, 'custom_columns')) return { columns: [] };
  const defs = db.prepare('SELECT id, label, name, datatype, is_multiple FROM custom_columns WHERE mark_for_delete = 0 ORDER BY label').all() as Definition[];
  return { columns: defs.map((def) => ({ def, rows: Number.isInteger(def.id) && TYPES.has(def.datatype) ? valuesOf(db, def.id, filter) : null })) };
}

/** Every book's custom values, by book id, in the order of the columns' labels (as calibre's OPF lists them). */
export function buildCustomColumns(fetched: FetchedColumns, notes: CalibreNote[]): Map<number, CalibreCustomValue[]> {
  const out = new Map<number, CalibreCustomValue[]>();
  for (const { def: d, rows } of fetched.columns) {
    const label = text(d.label) ?? `column ${d.id}`;
    if (!Number.isInteger(d.id) || !TYPES.has(d.datatype)) {
      const why = d.datatype === 'composite' ? 'computed by calibre from a template, not stored in metadata.db' : `calibre column type "${d.datatype}" is not read`;
      notes.push({ book_id: null, field: `#${label}`, reason: why });
      continue;
    }
    if (rows === null) {
      notes.push({ book_id: null, field: `#${label}`, reason: `its table custom_column_${d.id} is missing` });
      continue;
    }
    const col: Column = { id: d.id, label, name: text(d.name) ?? label, type: d.datatype as CalibreColumnType, multiple: d.is_multiple === 1 };
    for (const r of rows) add(out, col, r);
  }
  return out;
}

interface Row {
  book: number;
  value: unknown;
  extra: unknown;
}

function valuesOf(db: Database.Database, id: number, filter: BookFilter): Row[] | null {
  const table = `custom_column_${id}`;
  const link = `books_custom_column_${id}_link`;
  if (!tableExists(db, table)) return null;
  if (tableExists(db, link)) {
    const extra = columnsOf(db, link).includes('extra') ? 'l.extra' : 'NULL';
    return db
      .prepare(`SELECT l.book AS book, v.value AS value, ${extra} AS extra FROM ${link} l JOIN ${table} v ON v.id = l.value WHERE ${filter.where('l.book')} ORDER BY l.id`)
      .all(...filter.params) as Row[];
  }
  return db.prepare(`SELECT book, value, NULL AS extra FROM ${table} WHERE ${filter.where('book')} ORDER BY id`).all(...filter.params) as Row[];
}

function add(out: Map<number, CalibreCustomValue[]>, col: Column, r: Row): void {
  const value = castValue(col, r.value);
  if (value === null) return;
  const list = out.get(r.book) ?? [];
  out.set(r.book, list);
  const is_read = col.type === 'bool' && (col.label.toLowerCase() === 'read' || col.name.toLowerCase() === 'read');
  const existing = list.find((v) => v.label === col.label);
  if (col.multiple && col.type !== 'bool') {
    if (existing && Array.isArray(existing.value)) existing.value.push(String(value));
    else list.push({ label: col.label, name: col.name, type: col.type, value: [String(value)], is_read });
    return;
  }
  if (existing) return;
  const v: CalibreCustomValue = { label: col.label, name: col.name, type: col.type, value, is_read };
  if (col.type === 'series') v.series_index = typeof r.extra === 'number' && Number.isFinite(r.extra) ? r.extra : null;
  list.push(v);
}

function castValue(col: Column, v: unknown): boolean | number | string | null {
  if (v === null || v === undefined) return null;
  switch (col.type) {
    case 'bool':
      return v === 1 || v === true || v === '1' || v === 'true';
    case 'int':
    case 'float':
    case 'rating': {
      const n = typeof v === 'number' ? v : Number(v);
      return Number.isFinite(n) ? n : null;
    }
    case 'datetime':
      return timestamp(v);
    case 'comments':
      return description(v);
    default:
      return text(v);
  }
}

const existing = new WeakMap<Database.Database, Set<string>>();

export function tableExists(db: Database.Database, name: string): boolean {
  let tables = existing.get(db);
  if (!tables) {
    tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name));
    existing.set(db, tables);
  }
  return tables.has(name);
}

function columnsOf(db: Database.Database, table: string): string[] {
  return (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((r) => r.name);
}
