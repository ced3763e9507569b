// What the catalog tells the rest of Bindery: libraries, media items (as full snapshots, so any
// read model can be rebuilt from the log alone), duplicate-content conflicts, file issues and
// scans. Scan progress is transient and travels outside the log (see transient.ts).
import Type from 'typebox';

const Uuid = Type.String({ format: 'uuid' });
const Nullable = <T extends Type.TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const BookFormat = Type.Union([
  Type.Literal('epub'),
  Type.Literal('pdf'),
  Type.Literal('cbz'),
  Type.Literal('cbr'),
  Type.Literal('cb7'),
  Type.Literal('mobi'),
  Type.Literal('azw3'),
  Type.Literal('fb2'),
]);
export type BookFormatName = 'epub' | 'pdf' | 'cbz' | 'cbr' | 'cb7' | 'mobi' | 'azw3' | 'fb2';

export const Library = Type.Object({
  id: Uuid,
  name: Type.String(),
  folders: Type.Array(Type.String()),
  watch: Type.Boolean(),
  created_by_admin: Nullable(Uuid),
  created_at: Type.String(),
  updated_at: Type.String(),
  last_scan_at: Nullable(Type.String()),
  item_count: Type.Integer(),
});
export type Library = Type.Static<typeof Library>;

export const Contributor = Type.Object({ name: Type.String(), role: Type.String() });
export type Contributor = Type.Static<typeof Contributor>;

export const MediaFormat = Type.Object({
  format: Type.String(),
  file_path: Type.String(),
  size: Type.Integer(),
  sha256: Nullable(Type.String()),
  partial_md5: Nullable(Type.String()),
  modified_at: Nullable(Type.String()),
  file_url: Type.String(),
  /**
   * In events only, never in a public record: the archive entries that are this file's pages, in
   * reading order (CBZ, CBR, image-only EPUB), as the catalog read them at scan time. Absent when
   * the file has none, or was catalogued before page lists were recorded.
   */
  pages: Type.Optional(Type.Array(Type.String())),
});
export type MediaFormat = Type.Static<typeof MediaFormat>;

/**
 * The item's plain text details: one line of text a scan reads from the file (the format readers'
 * `BookMetadata` field of the same name), a person may set and reset, kept in a column of its own
 * name and shown as it is. One entry here is the whole of adding such a detail (issue 42): the
 * item's schema below, the catalog's column (its migration `catalog-text-<name>`), the edit's
 * check (at most `max` characters), the lock and reset, the edit form's input and the book page's
 * line (labelled by the web's `book.<name>` message) all follow from it. The order is the pages'.
 */
export const TEXT_FIELDS = {
  publisher: { max: 500 },
  isbn: { max: 20 },
} as const satisfies Record<string, { max: number }>;
export type TextField = keyof typeof TEXT_FIELDS;
export const TEXT_FIELD_NAMES = Object.keys(TEXT_FIELDS) as TextField[];
/** The text details of anything that has them (a row, a record, a file's metadata), absent ones as null. */
export const textDetailsOf = (x: Partial<Record<TextField, string | null | undefined>>): Record<TextField, string | null> =>
  Object.fromEntries(TEXT_FIELD_NAMES.map((k) => [k, x[k] ?? null])) as Record<TextField, string | null>;
// absent from an event logged before its detail was declared (the fold takes it as null); a public record always has each
const DetailText = Type.Optional(Nullable(Type.String()));
const TextDetails = Object.fromEntries(TEXT_FIELD_NAMES.map((k) => [k, DetailText])) as Record<TextField, typeof DetailText>;

/** The item's own values a person may set (and the cover, below), which then win over what a rescan reads from its file until reset (issue 43). */
const OWN_VALUE_FIELDS = ['title', 'sort_title', 'contributors', 'series', 'series_index', 'language', 'description', 'identifiers', 'tags', 'year', 'reading_direction'] as const;
/** In the pages' order: the text details after the language. */
const VALUE_FIELDS = [...OWN_VALUE_FIELDS.slice(0, 6), ...TEXT_FIELD_NAMES, ...OWN_VALUE_FIELDS.slice(6)] as readonly ((typeof OWN_VALUE_FIELDS)[number] | TextField)[];
export const LOCKABLE_FIELDS = [...VALUE_FIELDS, 'cover'] as const;
export type LockableField = (typeof LOCKABLE_FIELDS)[number];

/** A calibre custom column's value for a book, named as calibre shows it (issue 44). */
export const CalibreColumn = Type.Object({
  /** the lookup name without '#' (`#read` → read) */
  label: Type.String({ maxLength: 200 }),
  /** the column's heading in calibre */
  name: Type.String({ maxLength: 200 }),
  /** calibre's type: bool, int, float, rating, text, comments, series, enumeration, datetime */
  type: Type.String({ maxLength: 20 }),
  value: Type.Union([Type.Boolean(), Type.Number(), Type.String({ maxLength: 4000 }), Type.Array(Type.String({ maxLength: 4000 }), { maxItems: 100 })]),
  /** a series column's index */
  series_index: Type.Optional(Nullable(Type.Number())),
});
export type CalibreColumn = Type.Static<typeof CalibreColumn>;

/** What calibre keeps of a book beyond the fields the item takes: its id, rating, read mark and custom columns. */
export const CalibreData = Type.Object({
  /** calibre's book id (null: an OPF that names none) */
  book_id: Nullable(Type.Integer()),
  /** calibre's rating, 0–10 (two per star, odd for half stars); null: not rated */
  rating: Nullable(Type.Integer({ minimum: 1, maximum: 10 })),
  /** a boolean custom column named "read"; null: none, or no value for this book */
  read: Nullable(Type.Boolean()),
  /** every custom column with a value for the book, in the order of their labels */
  columns: Type.Array(CalibreColumn, { maxItems: 100 }),
});
export type CalibreData = Type.Static<typeof CalibreData>;

export const MediaItem = Type.Object({
  id: Uuid,
  library_id: Uuid,
  file_path: Nullable(Type.String()),
  title: Type.String(),
  sort_title: Type.String(),
  authors: Type.Array(Type.String()),
  contributors: Type.Array(Contributor),
  series: Nullable(Type.String()),
  series_index: Nullable(Type.Number()),
  language: Nullable(Type.String()),
  ...TextDetails,
  description: Nullable(Type.String()),
  identifiers: Type.Record(Type.String(), Type.String()),
  tags: Type.Array(Type.String()),
  year: Nullable(Type.Integer()),
  page_count: Nullable(Type.Integer()),
  reading_direction: Nullable(Type.String()),
  /** the primary format's SHA-256 (the first format found), null for an item without a file */
  sha256: Nullable(Type.String()),
  partial_md5: Nullable(Type.String()),
  /** every SHA-256 this item's files have had, current ones first: devices may still know an old one */
  known_sha256: Type.Array(Type.String()),
  formats: Type.Array(MediaFormat),
  file_url: Nullable(Type.String()),
  cover_url: Nullable(Type.String()),
  thumbnail_url: Nullable(Type.String()),
  added_by_admin: Nullable(Uuid),
  source: Type.Union([Type.Literal('scan'), Type.Literal('api')]),
  /** the SHA-256 of a picture a person set as the cover (absent: the book's own, named by its file's `sha256`) */
  cover_key: Type.Optional(Type.String()),
  /** the fields a person set (LOCKABLE_FIELDS), which a rescan leaves as they are; absent in events logged before */
  locked_fields: Type.Optional(Type.Array(Type.String())),
  /** a book of a calibre library (metadata.db, or a book folder's metadata.opf): what calibre keeps beyond the fields above */
  calibre: Type.Optional(CalibreData),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type MediaItem = Type.Static<typeof MediaItem>;

/** What the item's file gives for the lockable fields, as last read (a reset takes a field's value back from it). */
export const FileFields = Type.Intersect([
  Type.Pick(MediaItem, OWN_VALUE_FIELDS),
  Type.Object(TextDetails),
  /** the file's own cover (its SHA-256), null: none */
  Type.Object({ cover_key: Nullable(Type.String()) }),
]);
export type FileFields = Type.Static<typeof FileFields>;

/**
 * In events only, never in a public record: what the catalog's own tables hold of an item beyond
 * its public record, as they are after the event's change, so that those tables can be rebuilt
 * from the log alone (store/replay.ts). Absent from events logged before it was recorded.
 */
export const ItemRecord = Type.Object({
  state: Type.Union([Type.Literal('active'), Type.Literal('missing')]),
  /** the path the item was first catalogued at (the public `file_path` is its first present file's) */
  file_path: Nullable(Type.String()),
  /** the folder and normalised title new files of the same book are matched by */
  group_dir: Nullable(Type.String()),
  group_title: Nullable(Type.String()),
  /** the SHA-256 of the file whose cover the item shows */
  cover_key: Nullable(Type.String()),
  /** the row's own count of changes */
  version: Type.Integer(),
  missing_since: Nullable(Type.String()),
  updated_at: Type.String(),
  /** every file row of the item, absent ones too, in the table's order (`id`) */
  files: Type.Array(
    Type.Object({
      id: Type.Integer(),
      file_path: Type.String(),
      format: Type.String(),
      size: Type.Integer(),
      mtime_ms: Type.Integer(),
      sha256: Nullable(Type.String()),
      partial_md5: Nullable(Type.String()),
      present: Type.Boolean(),
      /** false: catalogued before page lists were recorded */
      pages_read: Type.Boolean(),
      created_at: Type.String(),
      updated_at: Type.String(),
      /** an absent file's page list (a present file's is in the item's formats) */
      pages: Type.Optional(Type.Array(Type.String())),
    }),
  ),
  /** the fields a person set (the public record has them too) */
  locked_fields: Type.Optional(Type.Array(Type.String())),
  /** the file's values of the lockable fields as last read; null: not recorded (catalogued before, or made through the API) */
  file_fields: Type.Optional(Nullable(FileFields)),
  /** every SHA-256 the item's files have had */
  hashes: Type.Array(Type.Object({ sha256: Type.String(), partial_md5: Nullable(Type.String()), format: Type.String(), first_seen: Type.String(), last_seen: Type.String() })),
});
export type ItemRecord = Type.Static<typeof ItemRecord>;

/** a file the scanner could not read, as `GET /api/scanner/issues` lists it */
export const FileIssue = Type.Object({
  library_id: Uuid,
  file_path: Type.String(),
  format: Nullable(Type.String()),
  size: Type.Integer(),
  error: Type.String(),
  seen_at: Type.String(),
});
export type FileIssue = Type.Static<typeof FileIssue>;

/** What a scan took from the calibre libraries (and metadata.opf folders) of a library, for the admin's migration report (issue 44). */
export const CalibreReport = Type.Object({
  folders: Type.Array(
    Type.Object({
      folder: Type.String(),
      source: Type.Union([Type.Literal('metadata.db'), Type.Literal('metadata.opf')]),
      books: Type.Integer(),
      formats: Type.Integer(),
      /** why the folder's calibre records could not be read (its files then speak for themselves) */
      error: Nullable(Type.String()),
    }),
  ),
  books: Type.Integer(),
  formats: Type.Integer(),
  /** field → how many books have a value for it from calibre */
  fields: Type.Record(Type.String(), Type.Integer()),
  /** the custom columns and how many books have a value in each */
  columns: Type.Array(Type.Object({ label: Type.String(), name: Type.String(), type: Type.String(), books: Type.Integer() })),
  /** values that could not be mapped, and why (the first 200) */
  unmapped: Type.Array(Type.Object({ book_id: Nullable(Type.Integer()), title: Nullable(Type.String()), field: Type.String(), reason: Type.String() }), { maxItems: 200 }),
  unmapped_total: Type.Integer(),
});
export type CalibreReport = Type.Static<typeof CalibreReport>;

export const ScanCounts = {
  files_seen: Type.Integer(),
  added: Type.Integer(),
  updated: Type.Integer(),
  relinked: Type.Integer(),
  removed: Type.Integer(),
  unchanged: Type.Integer(),
  errors: Type.Integer(),
};

export const ScanReason = Type.Union([
  Type.Literal('manual'),
  Type.Literal('startup'),
  Type.Literal('watch'),
  Type.Literal('reconcile'),
  Type.Literal('library-changed'),
  Type.Literal('upload'),
]);
export type ScanReason = Type.Static<typeof ScanReason>;

export const CatalogEvents = {
  'catalog.library-created.v1': Type.Object({ library: Library, by: Nullable(Uuid) }),
  'catalog.library-updated.v1': Type.Object({ library: Library, by: Nullable(Uuid) }),
  'catalog.library-deleted.v1': Type.Object({ library_id: Uuid, by: Nullable(Uuid) }),
  'catalog.media-item-added.v1': Type.Object({ item: MediaItem, record: Type.Optional(ItemRecord) }),
  'catalog.media-item-updated.v1': Type.Object({
    item: MediaItem,
    record: Type.Optional(ItemRecord),
    /**
     * scan: metadata read again from a file; edit: an admin's change; relink: a file moved;
     * restored: a missing book is back; owner: its admin was reassigned; file: file facts only
     * (size, time, a format present or absent); cover: its cover turned out unusable
     */
    cause: Type.Union([
      Type.Literal('scan'),
      Type.Literal('edit'),
      Type.Literal('relink'),
      Type.Literal('restored'),
      Type.Literal('owner'),
      Type.Literal('file'),
      Type.Literal('cover'),
    ]),
  }),
  'catalog.media-item-removed.v1': Type.Object({
    item_id: Uuid,
    library_id: Uuid,
    reason: Type.Union([Type.Literal('deleted'), Type.Literal('missing'), Type.Literal('duplicate'), Type.Literal('library-deleted')]),
    sha256: Type.Array(Type.String()),
    /** reason `missing`: the item's rows as they are now (in events only) */
    record: Type.Optional(ItemRecord),
  }),
  /**
   * The files of an item an admin removed (deleted, or a duplicate let go): scans leave each alone
   * while its bytes are unchanged. In events only; the scanner's own memory, no public record.
   */
  'catalog.files-excluded.v1': Type.Object({
    item_id: Uuid,
    library_id: Uuid,
    files: Type.Array(Type.Object({ file_path: Type.String(), sha256: Nullable(Type.String()), size: Type.Integer(), mtime_ms: Type.Integer() })),
  }),
  /** an excluded file has the same bytes with another size or time on disk: it stays excluded */
  'catalog.excluded-file-touched.v1': Type.Object({ library_id: Uuid, file_path: Type.String(), size: Type.Integer(), mtime_ms: Type.Integer() }),
  'catalog.hash-conflict-opened.v1': Type.Object({ conflict_id: Uuid, sha256: Type.String(), item_ids: Type.Array(Uuid) }),
  /** reading data of the removed items is to be merged into the kept one */
  'catalog.hash-conflict-resolved.v1': Type.Object({
    conflict_id: Uuid,
    kept_item_id: Uuid,
    removed_item_ids: Type.Array(Uuid),
    resolved_by: Uuid,
  }),
  'catalog.hash-conflict-dismissed.v1': Type.Object({ conflict_id: Uuid, item_ids: Type.Array(Uuid), resolved_by: Uuid }),
  /** a file the scanner could not read (a new problem, or the same path again with another size, time or error) */
  'catalog.file-issue-recorded.v1': Type.Object({
    issue: FileIssue,
    /**
     * In events only: the file's modification time, by which the scanner knows not to read it again
     * until it changes (a catalogued file's row takes this size and time too). Absent from events
     * logged before it was recorded.
     */
    mtime_ms: Type.Optional(Type.Integer()),
  }),
  /** these paths have no problem any more (read fine, or gone); a library's deletion drops its issues without this */
  'catalog.file-issues-cleared.v1': Type.Object({ library_id: Uuid, file_paths: Type.Array(Type.String()) }),
  /** a scan waits in the queue (a library has at most one waiting; asking again names that one) */
  'catalog.scan-queued.v1': Type.Object({ scan_id: Uuid, library_id: Uuid, reason: ScanReason, full_rehash: Type.Boolean(), requested_by: Nullable(Uuid) }),
  /** a waiting scan is to read every file again, as a later request asked */
  'catalog.scan-upgraded.v1': Type.Object({ scan_id: Uuid, library_id: Uuid, full_rehash: Type.Literal(true) }),
  'catalog.scan-started.v1': Type.Object({ scan_id: Uuid, library_id: Uuid, reason: ScanReason }),
  /** a scan cut short by a stop, a crash or a lost lease waits again; what it committed stays */
  'catalog.scan-requeued.v1': Type.Object({ scan_id: Uuid, library_id: Uuid }),
  /** a finished scan old enough to leave the scan history */
  'catalog.scan-pruned.v1': Type.Object({ scan_id: Uuid, library_id: Uuid }),
  /** a scan read a library's calibre records differently from the last report (issue 44); stream `calibre-<library id>` */
  'catalog.calibre-report-recorded.v1': Type.Object({ library_id: Uuid, report: CalibreReport }),
  'catalog.scan-finished.v1': Type.Object({
    scan_id: Uuid,
    library_id: Uuid,
    /** cancelled: its library was deleted while it ran */
    status: Type.Union([Type.Literal('completed'), Type.Literal('failed'), Type.Literal('cancelled')]),
    error: Nullable(Type.String()),
    duration_ms: Type.Integer(),
    ...ScanCounts,
  }),
} as const;

export type CatalogEventType = keyof typeof CatalogEvents;
export type CatalogEvent = {
  [K in CatalogEventType]: { type: K; data: Type.Static<(typeof CatalogEvents)[K]> };
}[CatalogEventType];
