// An item as a command decides from it: its row, its file rows and its hash history, read under the
// row's lock. A command (the scanner, an edit, a removal) changes this state in memory and emits it
// in an item event (added, updated, removed: eventData); the catalog's projection (projection.ts)
// writes the rows from the event, in the same transaction and again at replay. No command writes
// an item's rows itself: the fold is their only writer.
import { sql } from 'kysely';
import { Catalog } from '@bindery/contracts';
import { authorsOf, groupTitle } from '../domain/normalize';
import { SCHEMA } from './migrations';
import { type FormatRow, type HashRow, type ItemChanges, itemRecord, type ItemRow, toPublic } from './items';
import type { Q } from './schema';

export interface ItemState {
  row: ItemRow;
  /** its file rows, by id (the table's order) */
  files: FormatRow[];
  /** every hash its files have had, the latest seen first */
  hashes: HashRow[];
}

const t = (q: Q) => q.withSchema(SCHEMA);

/** Items' states, in the order of `rows` (rows already read, and locked by the caller where it changes them). */
export async function statesOf(q: Q, rows: ItemRow[]): Promise<ItemState[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [files, hashes] = await Promise.all([
    t(q).selectFrom('media_formats').selectAll().where('item_id', 'in', ids).orderBy('id').execute(),
    t(q).selectFrom('format_hashes').selectAll().where('item_id', 'in', ids).orderBy('last_seen', 'desc').execute(),
  ]);
  return rows.map((row) => ({ row, files: files.filter((f) => f.item_id === row.id), hashes: hashes.filter((h) => h.item_id === row.id) }));
}

/** One item's state, its row locked (the command's changes commit before or after another's, never between). */
export async function loadItem(q: Q, id: string, opts: { includeMissing?: boolean } = {}): Promise<ItemState | undefined> {
  let s = t(q).selectFrom('media_items').selectAll().where('id', '=', id);
  if (!opts.includeMissing) s = s.where('state', '=', 'active');
  const row = await s.forNoKeyUpdate().executeTakeFirst();
  return row ? (await statesOf(q, [row]))[0] : undefined;
}

/** What an item event carries of this state: the public record (with page lists) and the rows' record. */
export function eventData(s: ItemState): { item: Catalog.MediaItem; record: Catalog.ItemRecord } {
  return {
    item: toPublic(
      s.row,
      s.files,
      s.hashes.map((h) => h.sha256),
      { pages: true },
    ),
    record: itemRecord(s.row, s.files, s.hashes),
  };
}

/** Ids for new file rows, taken from the table's sequence (the event carries them, so a replay gives the same). */
export async function newFileIds(q: Q, n: number): Promise<number[]> {
  if (n <= 0) return [];
  const r = await sql<{ id: string }>`select nextval(pg_get_serial_sequence(${`${SCHEMA}.media_formats`}, 'id')) as id from generate_series(1, ${n})`.execute(q);
  return r.rows.map((x) => Number(x.id));
}

/** The item's fields changed: its version and time move on (what an edit, a rescan or a state change does). */
export function setFields(s: ItemState, changes: ItemChanges, now: Date): void {
  s.row = { ...s.row, ...changes, version: s.row.version + 1, updated_at: now };
}

/** A hash one of its files has (had): first seen now, or seen again now. */
export function noteHash(s: ItemState, format: string, sha256: string, partialMd5: string | null, now: Date): void {
  const known = s.hashes.find((h) => h.sha256 === sha256);
  const h: HashRow = known ? { ...known, last_seen: now } : { item_id: s.row.id, sha256, partial_md5: partialMd5, format, first_seen: now, last_seen: now };
  s.hashes = [h, ...s.hashes.filter((x) => x.sha256 !== sha256)];
}

/** Changes one of its file rows (by id). */
export function changeFile(s: ItemState, id: number, changes: Partial<FormatRow>, now: Date): FormatRow | undefined {
  const i = s.files.findIndex((f) => Number(f.id) === id);
  if (i < 0) return undefined;
  const f = { ...s.files[i]!, ...changes, updated_at: now };
  s.files = s.files.map((x, k) => (k === i ? f : x));
  return f;
}

/** Adds a file row (an id from newFileIds, or the id of a row at the same path it takes over). */
export function addFile(s: ItemState, f: FormatRow): void {
  s.files = [...s.files.filter((x) => Number(x.id) !== Number(f.id)), f].sort((a, z) => Number(a.id) - Number(z.id));
}

// Locked fields (issue 43): a field a person set wins over what a rescan reads from the file,
// until the person resets it; the file's values, as last read, are kept beside (file_fields).

const LOCKABLE: ReadonlySet<string> = new Set(Catalog.LOCKABLE_FIELDS);
const TEXT: ReadonlySet<string> = new Set(Catalog.TEXT_FIELD_NAMES);

/** The lockable fields' values of an item's row: what its file gave, when nobody has set any. */
function fieldsOf(r: ItemRow): Catalog.FileFields {
  return fileFieldsOf({ ...r, series_index: r.series_index === null ? null : Number(r.series_index) });
}

/** A field's value as columns (the contributors carry the authors; the title its group title). */
function columnsOf(field: string, f: Catalog.FileFields): ItemChanges {
  switch (field) {
    case 'title':
      return { title: f.title, group_title: groupTitle(f.title) };
    case 'contributors':
      return { contributors: f.contributors, authors: authorsOf(f.contributors) };
    case 'cover':
      return { cover_key: f.cover_key };
    default:
      return { [field]: f[field as keyof Catalog.FileFields] } as ItemChanges;
  }
}

/** What a scan read from the file: the item takes every field nobody set, and keeps the file's values beside. */
export function applyScan(s: ItemState, read: ItemChanges & Catalog.FileFields, now: Date): void {
  const locked = new Set(s.row.locked_fields);
  const {
    title: _t,
    sort_title: _s,
    contributors: _c,
    authors: _a,
    series: _se,
    series_index: _i,
    language: _l,
    description: _d,
    identifiers: _id,
    tags: _tg,
    year: _y,
    reading_direction: _r,
    cover_key: _k,
    group_title: _g,
    cover_ready: _cr,
    ...rest
  } = read;
  // what is read always, whoever set the fields: the text details are lockable, as the rest above
  const always: ItemChanges = Object.fromEntries(Object.entries(rest).filter(([k]) => !TEXT.has(k)));
  const changes: ItemChanges = { ...always };
  for (const field of Catalog.LOCKABLE_FIELDS) if (!locked.has(field)) Object.assign(changes, columnsOf(field, read));
  setFields(s, changes, now);
  s.row = { ...s.row, file_fields: fileFieldsOf(read) };
}

/** The file's values of the lockable fields from what a scan read. */
export function fileFieldsOf(read: Catalog.FileFields): Catalog.FileFields {
  const { title, sort_title, contributors, series, series_index, language, description, identifiers, tags, year, reading_direction, cover_key } = read;
  return { title, sort_title, contributors, series, series_index, language, ...Catalog.textDetailsOf(read), description, identifiers, tags, year, reading_direction, cover_key };
}

/** The lockable fields a change sets. */
export function fieldsSetBy(changes: ItemChanges): Catalog.LockableField[] {
  const out = new Set<Catalog.LockableField>();
  for (const k of Object.keys(changes)) {
    const field = k === 'authors' ? 'contributors' : k === 'cover_key' ? 'cover' : k;
    if (LOCKABLE.has(field)) out.add(field as Catalog.LockableField);
  }
  return [...out];
}

/** A person's change: the fields are set and locked (the file's values, when not recorded yet, are the item's own until now). */
export function applyEdit(s: ItemState, changes: ItemChanges, now: Date): void {
  const set = fieldsSetBy(changes);
  const fileFields = s.row.file_fields ?? (s.row.source === 'scan' ? fieldsOf(s.row) : null);
  setFields(s, changes, now);
  s.row = { ...s.row, file_fields: fileFields, locked_fields: [...new Set([...s.row.locked_fields, ...set])].sort() };
}

/** Fields back to the file's values, unlocked (an item with no file values keeps its own). */
export function resetFields(s: ItemState, asked: readonly Catalog.LockableField[], now: Date): void {
  // the sort title follows the title back
  const fields = asked.includes('title') && !asked.includes('sort_title') ? [...asked, 'sort_title' as const] : asked;
  const changes: ItemChanges = {};
  const file = s.row.file_fields;
  if (file) for (const f of fields) Object.assign(changes, columnsOf(f, file));
  setFields(s, changes, now);
  s.row = { ...s.row, locked_fields: s.row.locked_fields.filter((f) => !fields.includes(f as Catalog.LockableField)) };
}

/** The lockable field names of a list, or null when it is not one. */
export function lockableList(v: unknown): Catalog.LockableField[] | null {
  if (!Array.isArray(v) || v.length > Catalog.LOCKABLE_FIELDS.length * 2) return null;
  if (v.some((x) => typeof x !== 'string' || !LOCKABLE.has(x === 'authors' ? 'contributors' : x))) return null;
  return [...new Set(v.map((x: string) => (x === 'authors' ? 'contributors' : x) as Catalog.LockableField))];
}
