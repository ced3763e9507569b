// Request/reply messages the gateway sends to the catalog. Bodies and query strings travel raw:
// the catalog validates them and answers with the exact messages.
import Type from 'typebox';
import { Caller } from '../identity/rpc';
import { operations, type RequestOf, type ResultOf } from '../rpc';
import { CalibreReport, FileIssue, Library, MediaItem, ScanReason } from './events';
import { QueryString as Query } from './query';

const Input = Type.Record(Type.String(), Type.Unknown());

export const CatalogRequests = {
  'library-list': Type.Object({ caller: Caller }),
  'library-get': Type.Object({ caller: Caller, id: Type.String() }),
  'library-create': Type.Object({ caller: Caller, input: Input }),
  'library-update': Type.Object({ caller: Caller, id: Type.String(), input: Input }),
  'library-delete': Type.Object({ caller: Caller, id: Type.String() }),
  browse: Type.Object({ caller: Caller, path: Type.Optional(Type.String()) }),
  'scan-start': Type.Object({ caller: Caller, input: Input }),
  /** the scan that catalogues a file an editor has just uploaded into a library they may see (the gateway checked the library) */
  'upload-scan': Type.Object({ caller: Caller, library_id: Type.String() }),
  'scan-status': Type.Object({ caller: Caller }),
  'scan-issues': Type.Object({ caller: Caller, query: Query }),
  'item-get': Type.Object({ caller: Caller, id: Type.String() }),
  'item-create': Type.Object({ caller: Caller, input: Input }),
  'item-update': Type.Object({ caller: Caller, id: Type.String(), input: Input }),
  'item-delete': Type.Object({ caller: Caller, id: Type.String() }),
  'items-bulk-delete': Type.Object({ caller: Caller, input: Input }),
  'items-bulk-update': Type.Object({ caller: Caller, input: Input }),
  'item-cover': Type.Object({ caller: Caller, id: Type.String(), kind: Type.Union([Type.Literal('cover'), Type.Literal('thumbnail')]) }),
  /** an editor's picture for the item: a JPEG the gateway decoded and re-encoded (base64, within the bus's payload) → the item */
  'item-cover-set': Type.Object({ caller: Caller, id: Type.String(), jpeg_base64: Type.String({ maxLength: 900_000 }) }),
  /** the item's cover back to its file's own → the item */
  'item-cover-reset': Type.Object({ caller: Caller, id: Type.String() }),
  /** admin: the library's calibre migration report as the last scan recorded it → {report: CalibreReport | null} */
  'calibre-report': Type.Object({ caller: Caller, id: Type.String() }),
  'conflicts-list': Type.Object({ caller: Caller }),
  'conflict-resolve': Type.Object({ caller: Caller, id: Type.String(), input: Input }),
  /** service to service (reading): an EPUB's locator index by the file's SHA-256 → {sha256, index_gz: base64 of gzipped JSON} */
  'locator-index': Type.Object({ sha256: Type.String({ maxLength: 64 }) }),
  /** service to service (reading): where a context text occurs in an EPUB, nearest {spine, offset} → {found: {spine, offset, end} | null} */
  'locator-text': Type.Object({
    sha256: Type.String({ maxLength: 64 }),
    text: Type.String({ maxLength: 1000 }),
    spine: Type.Integer({ minimum: 0 }),
    offset: Type.Integer({ minimum: 0 }),
  }),
  /**
   * service to service (the gateway, for Kobos): an EPUB as a KEPUB, made on first request and kept by
   * the source's SHA-256, in parts of KEPUB_PART_BYTES → {sha256, size, parts, part, data: base64};
   * with `spans_only` → {sha256, size, parts, spans_gz: base64 of the gzipped span map}
   */
  kepub: Type.Object({ sha256: Type.String({ maxLength: 64 }), part: Type.Integer({ minimum: 0, maximum: 100_000 }), spans_only: Type.Optional(Type.Boolean()) }),
} as const;

/** A KEPUB travels in parts of this size (base64 in JSON stays under NATS's 1 MB payload). */
export const KEPUB_PART_BYTES = 512 * 1024;

const Nullable = <T extends Type.TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Message = Type.Object({ message: Type.String() });

/** An item's cover or thumbnail as the catalog sends it (a JPEG, base64, with its ETag). */
export const CoverFile = Type.Object({ content_type: Type.String(), etag: Type.String(), data_base64: Type.String() });
export type CoverFile = Type.Static<typeof CoverFile>;

/** One folder of the admin's folder browser. */
export const FolderEntry = Type.Object({ name: Type.String(), path: Type.String(), readable: Type.Boolean() });
export type FolderEntry = Type.Static<typeof FolderEntry>;

/** A folder of the server's file system as the browser lists it (the allowed roots when `path` is null). */
export const FolderListing = Type.Object({
  /** the folder listed, or null for the listing of the roots themselves */
  path: Nullable(Type.String()),
  /** one level up; null at a root and for the roots listing */
  parent: Nullable(Type.String()),
  entries: Type.Array(FolderEntry),
  /** more folders were there than are listed (the first ones by name are) */
  truncated: Type.Boolean(),
});
export type FolderListing = Type.Static<typeof FolderListing>;

export const ScanStatusName = Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')]);
export type ScanStatusName = Type.Static<typeof ScanStatusName>;

/** A scan as `GET /api/scanner/status` lists it. */
export const ScanRecord = Type.Object({
  id: Type.String(),
  library_id: Type.String(),
  reason: ScanReason,
  status: ScanStatusName,
  full_rehash: Type.Boolean(),
  requested_at: Type.String(),
  started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
  /** files seen, added, updated, … so far */
  counts: Type.Record(Type.String(), Type.Integer()),
  error: Nullable(Type.String()),
});
export type ScanRecord = Type.Static<typeof ScanRecord>;

/** What a bulk delete or update did: the ids it changed and those it could not, with why. */
export const BulkReport = Type.Object({
  message: Type.String(),
  succeeded: Type.Array(Type.String()),
  failed: Type.Array(Type.Object({ id: Type.String(), error: Type.String() })),
});
export type BulkReport = Type.Static<typeof BulkReport>;

export const ConflictStatus = Type.Union([Type.Literal('pending'), Type.Literal('resolved'), Type.Literal('dismissed')]);

/** A pending duplicate-content group: its items that are still active (two or more). */
export const ConflictView = Type.Object({
  id: Type.String(),
  sha256: Type.String(),
  status: ConflictStatus,
  created_at: Type.String(),
  items: Type.Array(MediaItem),
});
export type ConflictView = Type.Static<typeof ConflictView>;

/** The fields search matches on, as an edit stored them (beside the item `item-update` answers). */
export const SearchFields = Type.Pick(MediaItem, ['title', 'sort_title', 'authors', 'contributors', 'tags', 'series', 'series_index', 'language', 'publisher', 'year']);

const KepubHead = { sha256: Type.String(), size: Type.Integer(), parts: Type.Integer() };
/** One part of a KEPUB (base64), or, for `spans_only`, its span map (base64 of gzipped JSON). */
export const KepubPart = Type.Union([Type.Object({ ...KepubHead, part: Type.Integer(), data: Type.String() }), Type.Object({ ...KepubHead, spans_gz: Type.String() })]);
export type KepubPart = Type.Static<typeof KepubPart>;

/** What each operation answers on success (a failure is always a Failure: code and message). */
export const CatalogResults = {
  'library-list': Type.Array(Library),
  'library-get': Library,
  'library-create': Library,
  'library-update': Library,
  'library-delete': Message,
  browse: FolderListing,
  'scan-start': Type.Object({ message: Type.String(), scans: Type.Array(Type.Object({ id: Type.String(), library_id: Type.String() })) }),
  'upload-scan': Type.Object({ scan_id: Type.String() }),
  'scan-status': Type.Object({ scanning: Type.Boolean(), queued: Type.Integer(), scans: Type.Array(ScanRecord) }),
  'scan-issues': Type.Object({ data: Type.Array(FileIssue) }),
  'item-get': MediaItem,
  'item-create': MediaItem,
  'item-update': Type.Intersect([MediaItem, Type.Object({ search_fields: SearchFields })]),
  'item-delete': Message,
  'items-bulk-delete': BulkReport,
  'items-bulk-update': BulkReport,
  'item-cover': CoverFile,
  'item-cover-set': MediaItem,
  'item-cover-reset': MediaItem,
  'calibre-report': Type.Object({ report: Nullable(CalibreReport), recorded_at: Nullable(Type.String()) }),
  'conflicts-list': Type.Object({ data: Type.Array(ConflictView) }),
  'conflict-resolve': Type.Object({
    message: Type.String(),
    conflict: Type.Object({
      id: Type.String(),
      status: Type.Union([Type.Literal('resolved'), Type.Literal('dismissed')]),
      kept_item_id: Nullable(Type.String()),
      removed_item_ids: Type.Array(Type.String()),
    }),
  }),
  'locator-index': Type.Object({ sha256: Type.String(), index_gz: Type.String() }),
  'locator-text': Type.Object({ found: Nullable(Type.Object({ spine: Type.Integer(), offset: Type.Integer(), end: Type.Integer() })) }),
  kepub: KepubPart,
} as const;

/**
 * The catalog's operations: each name with its request schema (checked once, at the service) and
 * its result schema (what the handler is typed to answer and the gateway's client returns).
 */
export const CatalogOperations = operations(CatalogRequests, CatalogResults);
export type CatalogOperations = typeof CatalogOperations;
export type CatalogOp = keyof CatalogOperations & string;
export type CatalogRequest<K extends CatalogOp> = RequestOf<CatalogOperations, K>;
export type CatalogResult<K extends CatalogOp> = ResultOf<CatalogOperations, K>;
export type { Caller } from '../identity/rpc';
