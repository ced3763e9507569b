// The catalog's tables as Kysely sees them, one interface per table, as store/migrations.ts makes
// them. jsonb columns are written as JSON text and read back parsed; int8 columns come back as
// numbers on both backends (platform/src/db.ts); timestamps come back as Dates.
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';
import type { Catalog } from '@bindery/contracts';
import type { Db, DbOrTrx, Trx } from '@bindery/platform';

/** a column with a default that an insert may leave out */
type Defaulted<T> = ColumnType<T, T | undefined, T>;
/** a nullable column (null when an insert leaves it out) */
type Maybe<T> = ColumnType<T | null, T | null | undefined, T | null>;
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type MaybeTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** jsonb with a default: written as JSON text, read parsed */
type Json<T> = ColumnType<T, string | undefined, string>;

export type ScanReason = Catalog.ScanReason;
export type ScanStatus = 'queued' | 'running' | 'completed' | 'failed';

export interface LibrariesTable {
  id: string;
  name: string;
  folders: Json<string[]>;
  watch: Defaulted<boolean>;
  created_by_admin: Maybe<string>;
  created_at: Timestamp;
  updated_at: Timestamp;
  last_scan_at: MaybeTimestamp;
  /** the version of the library's stream's last event */
  version: Defaulted<number>;
}

/** The item's text details, a column each (Catalog.TEXT_FIELDS; their migrations `catalog-text-<name>`). */
type TextColumns = { [K in Catalog.TextField]: Maybe<string> };

export interface MediaItemsTable extends TextColumns {
  id: string;
  library_id: string;
  state: Defaulted<'active' | 'missing'>;
  source: 'scan' | 'api';
  file_path: Maybe<string>;
  /** the folder and normalised title new files of the same book are matched by */
  group_dir: Maybe<string>;
  group_title: Maybe<string>;
  title: string;
  sort_title: string;
  contributors: Json<Catalog.Contributor[]>;
  authors: Json<string[]>;
  series: Maybe<string>;
  series_index: Maybe<number>;
  language: Maybe<string>;
  description: Maybe<string>;
  identifiers: Json<Record<string, string>>;
  tags: Json<string[]>;
  year: Maybe<number>;
  page_count: Maybe<number>;
  reading_direction: Maybe<string>;
  /** the SHA-256 of the file whose cover the item shows; null: no cover */
  cover_key: Maybe<string>;
  /** the cover files are on disk (a cache of the book's picture: scanner/covers.ts) */
  cover_ready: Defaulted<boolean>;
  added_by_admin: Maybe<string>;
  /** the fields a person set (Catalog.LOCKABLE_FIELDS): a rescan leaves them */
  locked_fields: ColumnType<string[], string | undefined, string>;
  /** the file's values of those fields as last read (null: not recorded) */
  file_fields: ColumnType<Catalog.FileFields | null, string | null | undefined, string | null>;
  /** what calibre keeps of the book beyond the fields above (null: not a calibre book) */
  calibre: ColumnType<Catalog.CalibreData | null, string | null | undefined, string | null>;
  version: Defaulted<number>;
  missing_since: MaybeTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MediaFormatsTable {
  id: Generated<number>;
  item_id: string;
  library_id: string;
  rel_path: string;
  format: string;
  size: number;
  mtime_ms: number;
  sha256: Maybe<string>;
  partial_md5: Maybe<string>;
  present: Defaulted<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** CBZ, CBR, image-only EPUB: page entries in reading order (written with pagesJson) */
  pages: ColumnType<string[] | null, string | null | undefined, string | null>;
  /** false for a file catalogued before page lists were recorded: the next scan reads it again */
  pages_read: Defaulted<boolean>;
}

export interface FormatHashesTable {
  item_id: string;
  sha256: string;
  partial_md5: Maybe<string>;
  format: string;
  first_seen: Timestamp;
  last_seen: Timestamp;
}

export interface ExcludedFilesTable {
  library_id: string;
  rel_path: string;
  sha256: Maybe<string>;
  size: number;
  mtime_ms: number;
  excluded_at: Timestamp;
}

export interface FileIssuesTable {
  library_id: string;
  rel_path: string;
  format: Maybe<string>;
  size: number;
  mtime_ms: number;
  error: string;
  seen_at: Timestamp;
}

export interface CalibreReportsTable {
  library_id: string;
  report: ColumnType<Catalog.CalibreReport, string, string>;
  recorded_at: Timestamp;
}

export interface HashConflictsTable {
  id: string;
  sha256: string;
  status: 'pending' | 'resolved' | 'dismissed';
  item_ids: ColumnType<string[], string, string>;
  kept_item_id: Maybe<string>;
  resolved_by: Maybe<string>;
  created_at: Timestamp;
  resolved_at: MaybeTimestamp;
}

export interface ScansTable {
  id: string;
  library_id: string;
  reason: ScanReason;
  status: ScanStatus;
  full_rehash: Defaulted<boolean>;
  requested_by: Maybe<string>;
  requested_at: Timestamp;
  started_at: MaybeTimestamp;
  finished_at: MaybeTimestamp;
  counts: Json<Record<string, number>>;
  error: Maybe<string>;
}

export interface LeasesTable {
  name: string;
  owner: string;
  expires_at: Date;
}

export interface SettingsTable {
  key: string;
  /** identity's system settings as its events carried them (jsonb) */
  value: ColumnType<unknown, string, string>;
}

export interface LocatorIndexesTable {
  sha256: string;
  data: Uint8Array;
  bytes: number;
  created_at: Timestamp;
  v: Defaulted<number>;
}

export interface KepubsTable {
  sha256: string;
  data: Uint8Array;
  spans: Uint8Array;
  bytes: number;
  v: number;
  created_at: Timestamp;
}

/** The catalog's own tables (its event store's tables are the event store's business). */
export interface CatalogDb {
  libraries: LibrariesTable;
  media_items: MediaItemsTable;
  media_formats: MediaFormatsTable;
  format_hashes: FormatHashesTable;
  excluded_files: ExcludedFilesTable;
  file_issues: FileIssuesTable;
  calibre_reports: CalibreReportsTable;
  hash_conflicts: HashConflictsTable;
  scans: ScansTable;
  leases: LeasesTable;
  settings: SettingsTable;
  locator_indexes: LocatorIndexesTable;
  kepubs: KepubsTable;
}

export type CDb = Db<CatalogDb>;
export type CTrx = Trx<CatalogDb>;
export type Q = DbOrTrx<CatalogDb>;

export type LibraryRow = Selectable<LibrariesTable>;
export type ItemRow = Selectable<MediaItemsTable>;
export type NewItemRow = Insertable<MediaItemsTable>;
export type FormatRow = Selectable<MediaFormatsTable>;
export type ScanRow = Selectable<ScansTable>;
export type ConflictRow = Selectable<HashConflictsTable>;
