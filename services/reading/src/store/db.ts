// The reading service's tables, as its migrations make them (store/migrations.ts): the one place
// their columns are named for the compiler. jsonb columns are written as JSON text.
import type { ColumnType, Generated } from 'kysely';
import type { Db as AnyDb, Trx as AnyTrx } from '@bindery/platform';
import type { Reading } from '@bindery/contracts';
import type { AnnotationPosition, Kind } from '../domain/annotation';
import type { Position } from '../domain/position';

/** A position as stored beside its `percentage` column (history rows of a deletion keep `{percentage: 0}`). */
export type StoredPosition = Omit<Position, 'percentage'> & { percentage?: number };

/** A side of a progress conflict: the position with who wrote it (and, for the current side, its version). */
export type ConflictSide = Reading.ConflictSide;

/** A jsonb column: read as the value, written as its JSON text. */
type Json<T> = ColumnType<T, string, string>;
/** A jsonb column with a default. */
type JsonDefault<T> = ColumnType<T, string | undefined, string>;
/** A timestamptz column: read as a Date, written as a Date or an ISO string. */
type Time = ColumnType<Date, Date | string, Date | string>;
type TimeDefault = ColumnType<Date, Date | string | undefined, Date | string>;
type TextDefault = ColumnType<string, string | undefined, string>;

export interface UsersTable {
  id: string;
  created_at: TimeDefault;
}

/** The catalog facts reading keeps from the catalog's events. */
export interface ItemsTable {
  id: string;
  library_id: string;
  title: string;
  sort_title: string;
  authors: JsonDefault<string[]>;
  tags: JsonDefault<string[]>;
  series: string | null;
  series_index: number | null;
  language: string | null;
  publisher: string | null;
  year: number | null;
  page_count: number | null;
  formats: JsonDefault<string[]>;
  sha256: JsonDefault<string[]>;
  epub_sha256: string | null;
  created_at: Time;
  removed_at: Time | null;
}

export interface ProgressTable {
  id: string;
  user_id: string;
  item_id: string;
  percentage: number;
  position: Json<StoredPosition>;
  client: string;
  device: string;
  version: number;
  sha256: JsonDefault<string[]>;
  created_at: Time;
  updated_at: Time;
}

export interface ProgressHistoryTable {
  seq: Generated<number>;
  user_id: string;
  item_id: string;
  percentage: number;
  position: Json<StoredPosition>;
  client: string;
  device: string;
  reason: string;
  recorded_at: Time;
}

export interface ProgressDevicesTable {
  user_id: string;
  item_id: string;
  device: string;
}

/** What a device was last given of a book's position (decision "Devices follow the position they were given"). */
export interface ProgressReceiptsTable {
  user_id: string;
  item_id: string;
  /** the name its pushes carry, or `kosync:<document>` for a stock KOReader signed in by password */
  device: string;
  progress_id: string;
  version: number;
  percentage: number;
  received_at: Time;
}

export interface ConflictsTable {
  id: string;
  user_id: string;
  item_id: string;
  status: Reading.ConflictRecord['status'];
  reason: string;
  current: Json<ConflictSide>;
  incoming: Json<ConflictSide>;
  resolution: string | null;
  created_at: Time;
  closed_at: Time | null;
}

export interface AnnotationsTable {
  id: string;
  user_id: string;
  item_id: string;
  kind: Kind;
  position: Json<AnnotationPosition>;
  text: TextDefault;
  note: TextDefault;
  color: string | null;
  dedup_key: string | null;
  created_at: Time;
  updated_at: Time;
  deleted_at: Time | null;
  start_spine: number | null;
  start_offset: number | null;
  end_spine: number | null;
  end_offset: number | null;
  anchor_sha256: string | null;
}

export interface RatingsTable {
  user_id: string;
  item_id: string;
  rating: number;
  review: TextDefault;
  created_at: Time;
  updated_at: Time;
}

export interface CollectionsTable {
  id: string;
  user_id: string;
  name: string;
  description: TextDefault;
  query_type: string | null;
  is_system: boolean;
  priority: number;
  color: string | null;
  icon: string | null;
  show_on_dashboard: boolean;
  rules: Json<unknown> | null;
  auto_assign: Json<unknown> | null;
  created_at: Time;
  updated_at: Time;
}

export interface CollectionItemsTable {
  collection_id: string;
  item_id: string;
  added_at: Time;
}

export interface SavedFiltersTable {
  id: string;
  user_id: string;
  name: string;
  resource_type: string;
  filter: Json<unknown>;
  created_at: Time;
  updated_at: Time;
}

export interface DashboardPrefsTable {
  user_id: string;
  hidden_collections: JsonDefault<string[]>;
  collection_order: JsonDefault<string[]>;
}

export interface KosyncDocumentsTable {
  user_id: string;
  document: string;
  item_id: string | null;
  linked_by: string | null;
  percentage: number;
  progress: string;
  device: string;
  device_id: string;
  progress_version: number | null;
  pushed_at: Time;
  created_at: Time;
  bindery_device_id: string | null;
  label: string | null;
}

/** Which libraries each user may see (identity's events). */
export interface UserAccessTable {
  user_id: string;
  role: string;
  all_libraries: boolean;
  library_ids: JsonDefault<string[]>;
}

export interface IdentitySettingsTable {
  key: string;
  value: Json<unknown>;
}

export interface ReadingDb {
  users: UsersTable;
  items: ItemsTable;
  progress: ProgressTable;
  progress_history: ProgressHistoryTable;
  progress_devices: ProgressDevicesTable;
  progress_receipts: ProgressReceiptsTable;
  conflicts: ConflictsTable;
  annotations: AnnotationsTable;
  ratings: RatingsTable;
  collections: CollectionsTable;
  collection_items: CollectionItemsTable;
  saved_filters: SavedFiltersTable;
  dashboard_prefs: DashboardPrefsTable;
  kosync_documents: KosyncDocumentsTable;
  user_access: UserAccessTable;
  identity_settings: IdentitySettingsTable;
}

/** Reading's own tables that hold one user's data by `user_id` (a collection's members go with it). */
export const USER_TABLES = [
  'progress',
  'progress_history',
  'progress_devices',
  'progress_receipts',
  'conflicts',
  'annotations',
  'ratings',
  'collections',
  'saved_filters',
  'dashboard_prefs',
  'kosync_documents',
] as const;

export type Db = AnyDb<ReadingDb>;
export type Trx = AnyTrx<ReadingDb>;
