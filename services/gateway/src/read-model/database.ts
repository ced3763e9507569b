// The gateway's tables as Kysely sees them, as its migrations (read-model/migrations.ts) and its
// projections (tables.ts, reading-tables.ts, device-tables.ts) make them: the types every gateway
// query is checked against. A projection's tables exist twice while it is rebuilt (the `_next` set,
// read-model.ts), so each appears under both names. jsonb columns are written as JSON text and read
// back parsed; timestamps come back as Dates.
import type { ColumnType } from 'kysely';
import type { Catalog, DeviceSync, Identity, Reading } from '@bindery/contracts';
import type { EventStoreTables } from '@bindery/platform';

/** a column with a default that an insert may leave out */
type Defaulted<T> = ColumnType<T, T | undefined, T>;
/** jsonb: written as JSON text, read parsed */
type Json<T> = ColumnType<T, string, string>;
type MaybeJson<T> = ColumnType<T | null, string | null | undefined, string | null>;
type Time = ColumnType<Date, Date | string, Date | string>;
type MaybeTime = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

/** Where in the book a saved position is (reading-projector.ts, spotOf). */
export interface Spot {
  spine_index?: number;
  doc_offset?: number;
  page?: number;
  client?: string;
}

/** The suffix of a projection's table set: the live one, or the one a rebuild fills. */
export type Suffix = '' | '_next';

export interface CatalogTables {
  cv_libraries: { id: string; name: string; doc: Json<Catalog.Library> };
  cv_items: {
    id: string;
    library_id: string;
    sort_title: string;
    title: string;
    series: string | null;
    series_index: number | null;
    year: number | null;
    /** the first author, lower case */
    first_author: string | null;
    authors: Json<string[]>;
    tags: Json<string[]>;
    language: string | null;
    publisher: string | null;
    isbn: string | null;
    /** the item's formats, lower case */
    formats: Json<string[]>;
    has_cover: boolean;
    created_at: Time;
    updated_at: Time;
    /** the item's public JSON, as text (served as it is) */
    doc: string;
  };
  cv_files: { library_id: string; rel_path: string; item_id: string; pages: MaybeJson<string[]> };
  cv_terms: { field: string; value: string };
  cv_documents: { document: string; item_id: string; kind: string; current: boolean };
}

export interface IdentityTables {
  iv_users: {
    id: string;
    role: Identity.Role;
    profile: Json<Identity.UserProfile>;
    all_libraries: boolean;
    library_ids: ColumnType<string[], string | undefined, string>;
    /** the IANA time zone the person's days are counted in (the statistics) */
    timezone: Defaulted<string>;
    /** the person lets admins see their reading statistics among the library's (decision 120) */
    share_statistics: Defaulted<boolean>;
  };
  iv_settings: { key: string; value: Json<unknown> };
  iv_sessions: {
    id: string;
    user_id: string;
    client: string;
    started_at: Time;
    last_used_at: Time;
    expires_at: Time;
    jti: string;
    ended: Defaulted<boolean>;
  };
}

export interface ReadingTables {
  rv_progress: { user_id: string; item_id: string; percentage: number; updated_at: Time; spot: MaybeJson<Spot> };
  rv_ratings: { user_id: string; item_id: string; rating: number };
  /** every saved position, for the reading statistics (statistics-tables.ts) */
  rv_reads: {
    position: ColumnType<string, number | string, number | string>;
    user_id: string;
    item_id: string;
    device: string;
    client: string;
    at: Time;
    percentage: number;
    spent_seconds: number | null;
    active_seconds: number | null;
  };
  rv_collections: {
    id: string;
    user_id: string;
    name: string;
    query_type: string | null;
    is_system: boolean;
    priority: number;
    color: string | null;
    icon: string | null;
    show_on_dashboard: boolean;
    rules: MaybeJson<unknown>;
    doc: Json<Reading.CollectionRecord>;
  };
  rv_members: { collection_id: string; item_id: string; added_at: Time };
  rv_prefs: { user_id: string; hidden_collections: Json<string[]>; collection_order: Json<string[]> };
  rv_conflicts: { id: string; user_id: string; item_id: string; doc: Json<Reading.ConflictRecord> };
  /** item_id '' holds the settings for all books */
  rv_reader_settings: { user_id: string; item_id: string; settings: Json<Reading.ReaderSettings>; updated_at: Time };
}

export interface DeviceTables {
  dv_devices: {
    id: string;
    user_id: string;
    credential_hash: string | null;
    sync_key_verifier: string | null;
    sync_key_issued_at: MaybeTime;
    kobo_token_hash: string | null;
    /** which books the Kobo gets ('all', or a collection's id) */
    kobo_books: Defaulted<string>;
    doc: Json<DeviceSync.Device>;
  };
  dv_shelves: { device_id: string; collection_id: string; user_id: string; added_at: Time };
  dv_kobo_removed: { device_id: string; item_id: string; removed_at: Time };
  dv_kobo_sent: { device_id: string; key: string; ever: string; sver: string | null };
  dv_kobo_pending: { device_id: string; gen: number; key: string; ever: string | null; sver: string | null };
  dv_kobo_gen: { device_id: string; gen: number };
}

/** Each table of a projection under its live name and its rebuild's name. */
type BothSets<T> = T & { [K in keyof T & string as `${K}_next`]: T[K] };

/** The gateway's own tables (read-model/migrations.ts) and read-model.ts's bookkeeping. */
export interface GatewayTables {
  auth_users: {
    user_id: string;
    role: Identity.Role;
    deleted: Defaulted<boolean>;
    sessions_valid_after: MaybeTime;
    /** the access token (jti) exempt from sessions_valid_after */
    session_kept: string | null;
    /** gateway-004: the admin allowed this user to edit metadata and covers (issue 43) */
    can_edit_metadata: Defaulted<boolean>;
  };
  revoked_tokens: { jti: string; expires_at: MaybeTime };
  /** library folders, for serving files without asking the catalog */
  libraries: { id: string; folders: Json<string[]> };
  /** which version of each projection's tables is live */
  projection_state: { name: string; version: number; rebuilt_at: Defaulted<Date> };
}

export type GatewayDb = EventStoreTables & GatewayTables & BothSets<CatalogTables> & BothSets<IdentityTables> & BothSets<ReadingTables> & BothSets<DeviceTables>;
