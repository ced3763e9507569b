// Request/reply messages the gateway sends to the reading service (`bindery.rpc.reading.<op>`): each
// operation's request and result (decision 118). The gateway has already checked that the caller
// may see the item (library access); bodies and query strings travel raw (`input`, `query`) and the
// reading service validates them with its own messages.
import Type from 'typebox';
import { Caller } from '../identity/rpc';
import { operations, type RequestOf, type ResultOf } from '../rpc';
import {
  AnnotationRecord,
  CollectionRecord,
  ConflictRecord,
  KosyncDocumentRecord,
  PositionFields,
  ProgressRecord,
  RatingRecord,
  ReaderSettings,
  SavedFilterRecord,
} from './events';

const Input = Type.Record(Type.String(), Type.Unknown());
const Query = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]));
/** the caller's libraries: every one, or the listed ones */
export const AccessSchema = Type.Union([Type.Object({ all: Type.Literal(true) }), Type.Object({ all: Type.Literal(false), ids: Type.Array(Type.String()) })]);
export type Access = Type.Static<typeof AccessSchema>;
/** the Bindery device the gateway authenticated the request as (a device credential), if any */
export const ReadingDevice = Type.Object({ device_id: Type.String({ format: 'uuid' }), name: Type.String({ maxLength: 100 }) });

/** What every operation but `usage-counts` carries: the caller, and the device it came through. */
const Base = { caller: Caller, device: Type.Optional(ReadingDevice) };
const req = <P extends Type.TProperties>(props: P) => Type.Object({ ...Base, ...props });
const ItemId = Type.String();
const Id = Type.String();
const OptInput = Type.Optional(Input);
const OptQuery = Type.Optional(Query);
const OptAccess = Type.Optional(AccessSchema);
/** an annotation kind as the route names it (`highlight`, `note`, `bookmark`): the handler checks it */
const OptKind = Type.Optional(Type.String());

/** The hash-conflict list asks how much reading data hangs on each item (no caller: the gateway's own question). */
export const UsageCountsRequest = Type.Object({ item_ids: Type.Array(Type.String(), { maxItems: 10000 }) });

export const ReadingRequests = {
  'progress-get': req({ item_id: ItemId }),
  'progress-put': req({ item_id: ItemId, input: OptInput }),
  'progress-delete': req({ item_id: ItemId }),
  'progress-history': req({ item_id: ItemId }),
  /** `id`: a media item id or a progress record id */
  'progress-item': req({ id: Id }),
  /** the Kobo routes: the reading states a Kobo was sent (its next push follows them) */
  'progress-delivered': req({ input: OptInput }),
  'kosync-push': req({ access: OptAccess, item_id: Type.Optional(ItemId), input: OptInput }),
  'kosync-pull': req({ access: OptAccess, item_id: Type.Optional(ItemId), query: OptQuery, input: OptInput }),
  'kosync-documents': req({ access: OptAccess, query: OptQuery }),
  /** `kind`: `catalog` when the catalog's hashes made the link, else the user's */
  'kosync-link': req({ access: OptAccess, item_id: Type.Optional(ItemId), kind: OptKind, query: OptQuery }),
  'conflicts-list': req({ access: OptAccess, query: OptQuery }),
  'conflict-get': req({ id: Id }),
  'conflict-resolve': req({ id: Id, input: OptInput }),
  'conflict-delete': req({ id: Id }),
  'conflicts-bulk-resolve': req({ access: OptAccess, input: OptInput }),
  'conflicts-bulk-dismiss': req({ access: OptAccess, input: OptInput }),
  'conflicts-dismiss-all': req({ access: OptAccess }),
  'annotations-list': req({ item_id: ItemId, kind: OptKind }),
  'annotation-create': req({ item_id: ItemId, kind: OptKind, input: OptInput }),
  'annotation-get': req({ id: Id, kind: OptKind }),
  'annotation-update': req({ id: Id, kind: OptKind, input: OptInput }),
  'annotation-delete': req({ id: Id, kind: OptKind }),
  'annotations-deleted': req({ item_id: ItemId }),
  'annotation-restore': req({ id: Id }),
  'annotation-purge': req({ id: Id }),
  'annotations-purge-all': req({ item_id: ItemId }),
  /** KOReader's plugin: a book's annotations as the device holds them, merged with the stored ones */
  'annotations-merge': req({ item_id: ItemId, input: OptInput }),
  /** KOReader's plugin: annotations the device deleted, by the keys it knows them by */
  'annotations-delete-keys': req({ item_id: ItemId, input: OptInput }),
  'rating-get': req({ item_id: ItemId }),
  'rating-create': req({ item_id: ItemId, input: OptInput }),
  'rating-put': req({ item_id: ItemId, input: OptInput }),
  'rating-delete': req({ item_id: ItemId }),
  'collection-get': req({ id: Id, access: OptAccess }),
  'collection-create': req({ access: OptAccess, input: OptInput, query: OptQuery }),
  'collection-update': req({ id: Id, access: OptAccess, input: OptInput, query: OptQuery }),
  'collection-delete': req({ id: Id }),
  'collection-add': req({ id: Id, input: OptInput }),
  'collection-remove': req({ id: Id, item_id: ItemId }),
  'collection-restore-system': req({ input: OptInput }),
  'collection-preview': req({ access: OptAccess, input: OptInput, query: OptQuery }),
  'filters-list': req({ query: OptQuery }),
  'filter-get': req({ id: Id }),
  'filter-create': req({ input: OptInput, access: OptAccess, query: OptQuery }),
  'filter-update': req({ id: Id, input: OptInput, access: OptAccess, query: OptQuery }),
  'filter-delete': req({ id: Id }),
  'dashboard-prefs-get': req({}),
  'dashboard-prefs-put': req({ input: OptInput }),
  /** the web reader's settings, for all books (no item_id) or one book */
  'reader-settings-put': req({ item_id: Type.Optional(ItemId), input: OptInput }),
  'reader-settings-delete': req({ item_id: Type.Optional(ItemId) }),
  'usage-counts': UsageCountsRequest,
} as const;

const Nullable = <T extends Type.TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Message = Type.Object({ message: Type.String() });
const Healed = Type.Array(Type.String());

/** How much reading data hangs on an item. */
export const Usage = Type.Object({
  progress: Type.Integer(),
  highlights: Type.Integer(),
  bookmarks: Type.Integer(),
  notes: Type.Integer(),
  collections: Type.Integer(),
});
export type Usage = Type.Static<typeof Usage>;

/** A position write's outcome: saved, kept by the guard (the current one answered), or a conflict opened or offered. */
export const ProgressWritten = Type.Object({
  status: Type.Union([Type.Literal('saved'), Type.Literal('kept'), Type.Literal('conflict')]),
  /** what had to change in the position to fit the book (a page past the last one, …) */
  healed: Healed,
  progress: ProgressRecord,
  conflict: Type.Optional(ConflictRecord),
});
export type ProgressWritten = Type.Static<typeof ProgressWritten>;

/** A line of the position history as answered: the position's fields beside who wrote it and why. */
export const ProgressHistoryLine = Type.Object({
  ...PositionFields,
  percentage: Type.Number(),
  client: Type.String(),
  device: Type.String(),
  reason: Type.String(),
  recorded_at: Nullable(Type.String()),
});

/** A book in a collection's page: its id and the caller's percentage in it. */
export const CollectionMember = Type.Object({ media_item_id: Type.String(), percentage: Nullable(Type.Number()) });

/** What KOReader's stock sync gets for a document: `{}` when there is nothing. */
export const KosyncPosition = Type.Union([
  Type.Object({
    document: Type.String(),
    percentage: Type.Number(),
    progress: Type.String(),
    device: Type.String(),
    device_id: Type.String(),
    timestamp: Type.Integer(),
  }),
  Type.Object({}),
]);

const BulkOutcome = Type.Object({
  message: Type.String(),
  succeeded: Type.Array(Type.String()),
  failed: Type.Array(Type.Object({ id: Type.String(), error: Type.String() })),
});
const Annotations = Type.Object({ data: Type.Array(AnnotationRecord) });
const AnnotationWritten = Type.Object({ ...AnnotationRecord.properties, healed: Healed });
const Collection = CollectionRecord;
const DashboardPrefs = { hidden_collections: Type.Array(Type.String()), collection_order: Type.Array(Type.String()) };

/** What each operation answers on success (a failure is always a Failure: code and message). */
export const ReadingResults = {
  'progress-get': ProgressRecord,
  'progress-put': ProgressWritten,
  'progress-delete': Message,
  'progress-history': Type.Object({ media_item_id: Type.String(), data: Type.Array(ProgressHistoryLine) }),
  'progress-item': Type.Object({ media_item_id: Type.String() }),
  'progress-delivered': Type.Object({ recorded: Type.Integer() }),
  'kosync-push': Type.Object({ document: Type.String(), timestamp: Type.Integer(), status: Type.String(), media_item_id: Nullable(Type.String()), healed: Healed }),
  'kosync-pull': KosyncPosition,
  'kosync-documents': Type.Object({ data: Type.Array(KosyncDocumentRecord) }),
  'kosync-link': Type.Object({ status: Type.String(), document: KosyncDocumentRecord }),
  'conflicts-list': Type.Object({ data: Type.Array(ConflictRecord) }),
  'conflict-get': ConflictRecord,
  'conflict-resolve': ConflictRecord,
  'conflict-delete': Message,
  'conflicts-bulk-resolve': BulkOutcome,
  'conflicts-bulk-dismiss': BulkOutcome,
  'conflicts-dismiss-all': BulkOutcome,
  'annotations-list': Annotations,
  /** `existing`: the same annotation was there already (nothing made) */
  'annotation-create': Type.Object({ ...AnnotationWritten.properties, existing: Type.Boolean() }),
  'annotation-get': AnnotationRecord,
  'annotation-update': AnnotationWritten,
  'annotation-delete': Message,
  'annotations-deleted': Annotations,
  'annotation-restore': AnnotationRecord,
  'annotation-purge': Message,
  'annotations-purge-all': Type.Object({ message: Type.String(), purged: Type.Integer() }),
  'annotations-merge': Type.Object({
    created: Type.Integer(),
    unchanged: Type.Integer(),
    updated: Type.Integer(),
    ignored: Type.Array(Type.Object({ dedup_key: Nullable(Type.String()), reason: Type.String() })),
    healed: Type.Array(Type.Object({ dedup_key: Nullable(Type.String()), healed: Healed })),
  }),
  'annotations-delete-keys': Type.Object({
    deleted: Type.Object({ highlights: Type.Integer(), bookmarks: Type.Integer() }),
    ignored: Type.Array(Type.Object({ key: Type.String(), reason: Type.String() })),
  }),
  'rating-get': RatingRecord,
  /** `created`: there was no rating before */
  'rating-create': Type.Object({ ...RatingRecord.properties, created: Type.Boolean() }),
  'rating-put': Type.Object({ ...RatingRecord.properties, created: Type.Boolean() }),
  'rating-delete': Message,
  'collection-get': Type.Object({ ...Collection.properties, item_count: Type.Integer() }),
  'collection-create': Collection,
  'collection-update': Collection,
  'collection-delete': Message,
  'collection-add': Type.Object({ message: Type.String(), added: Type.Array(Type.String()) }),
  'collection-remove': Message,
  /** `restored`: it had been deleted and is made again */
  'collection-restore-system': Type.Object({ ...Collection.properties, restored: Type.Boolean() }),
  'collection-preview': Type.Object({ data: Type.Array(CollectionMember), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() }),
  'filters-list': Type.Object({ data: Type.Array(SavedFilterRecord) }),
  'filter-get': SavedFilterRecord,
  'filter-create': SavedFilterRecord,
  'filter-update': SavedFilterRecord,
  'filter-delete': Message,
  'dashboard-prefs-get': Type.Object(DashboardPrefs),
  'dashboard-prefs-put': Type.Object({ message: Type.String(), ...DashboardPrefs }),
  'reader-settings-put': Type.Object({ message: Type.String(), media_item_id: Nullable(Type.String()), settings: ReaderSettings, updated_at: Type.String() }),
  'reader-settings-delete': Type.Object({ message: Type.String(), media_item_id: Type.String() }),
  'usage-counts': Type.Object({ counts: Type.Record(Type.String(), Usage) }),
} as const;

/**
 * Reading's operations: each name with its request schema (checked once, at the service) and its
 * result schema (what the handler is typed to answer and the gateway's client returns).
 */
export const ReadingOperations = operations(ReadingRequests, ReadingResults);
export type ReadingOperations = typeof ReadingOperations;
export type ReadingOp = keyof ReadingOperations & string;
export type ReadingRequest<K extends ReadingOp> = RequestOf<ReadingOperations, K>;
export type ReadingResult<K extends ReadingOp> = ResultOf<ReadingOperations, K>;
