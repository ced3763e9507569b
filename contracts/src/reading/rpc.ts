// Request/reply messages the gateway sends to the reading service. The gateway has already checked
// that the caller may see the item (library access); bodies and query strings travel raw and the
// reading service validates them with its own messages.
import Type from 'typebox';
import { Caller } from '../identity/rpc';

const Input = Type.Record(Type.String(), Type.Unknown());
const Query = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]));
/** the caller's libraries: every one, or the listed ones */
export const AccessSchema = Type.Union([Type.Object({ all: Type.Literal(true) }), Type.Object({ all: Type.Literal(false), ids: Type.Array(Type.String()) })]);

/** One shape for every operation: which fields an operation reads is its handler's business. */
export const ReadingRequest = Type.Object({
  caller: Caller,
  /** the Bindery device the gateway authenticated the request as (a device credential), if any */
  device: Type.Optional(Type.Object({ device_id: Type.String({ format: 'uuid' }), name: Type.String({ maxLength: 100 }) })),
  access: Type.Optional(AccessSchema),
  item_id: Type.Optional(Type.String()),
  id: Type.Optional(Type.String()),
  kind: Type.Optional(Type.String()),
  input: Type.Optional(Input),
  query: Type.Optional(Query),
});
export type ReadingRequest = Type.Static<typeof ReadingRequest>;

export const ReadingOps = [
  'progress-get',
  'progress-put',
  'progress-delete',
  'progress-history',
  'progress-item',
  /** the Kobo routes: the reading states a Kobo was sent (its next push follows them) */
  'progress-delivered',
  'kosync-push',
  'kosync-pull',
  'kosync-documents',
  'kosync-link',
  'conflicts-list',
  'conflict-get',
  'conflict-resolve',
  'conflict-delete',
  'conflicts-bulk-resolve',
  'conflicts-bulk-dismiss',
  'conflicts-dismiss-all',
  'annotations-list',
  'annotation-create',
  'annotation-get',
  'annotation-update',
  'annotation-delete',
  'annotations-deleted',
  'annotation-restore',
  'annotation-purge',
  'annotations-purge-all',
  /** KOReader's plugin: a book's annotations as the device holds them, merged with the stored ones */
  'annotations-merge',
  /** KOReader's plugin: annotations the device deleted, by the keys it knows them by */
  'annotations-delete-keys',
  'rating-get',
  'rating-create',
  'rating-put',
  'rating-delete',
  'collection-get',
  'collection-create',
  'collection-update',
  'collection-delete',
  'collection-add',
  'collection-remove',
  'collection-restore-system',
  'collection-preview',
  'filters-list',
  'filter-get',
  'filter-create',
  'filter-update',
  'filter-delete',
  'dashboard-prefs-get',
  'dashboard-prefs-put',
  /** the web reader's settings, for all books (no item_id) or one book */
  'reader-settings-put',
  'reader-settings-delete',
] as const;
export type ReadingOp = (typeof ReadingOps)[number] | 'usage-counts';

/** The hash-conflict list asks how much reading data hangs on each item. */
export const UsageCountsRequest = Type.Object({ item_ids: Type.Array(Type.String(), { maxItems: 10000 }) });
export interface Usage {
  progress: number;
  highlights: number;
  bookmarks: number;
  notes: number;
  collections: number;
}
