// What the reading service tells the rest of Bindery. Each event carries the whole record after the
// change (or what a reaction did), so a read model can be rebuilt from the log alone.
import Type from 'typebox';

const Uuid = Type.String({ format: 'uuid' });
const Row = Type.Record(Type.String(), Type.Unknown());

export const ReadingEvents = {
  'reading.system-collections-created.v1': Type.Object({ user_id: Uuid, collections: Type.Array(Row) }),
  /** `device_id`: the Bindery device that wrote the position (its credential or sync key); absent for the web and other clients */
  'reading.progress-saved.v1': Type.Object({ user_id: Uuid, media_item_id: Uuid, progress: Row, device_id: Type.Optional(Uuid) }),
  'reading.progress-deleted.v1': Type.Object({ user_id: Uuid, media_item_id: Uuid }),
  'reading.progress-conflict-opened.v1': Type.Object({ user_id: Uuid, conflict: Row }),
  'reading.progress-conflict-closed.v1': Type.Object({ user_id: Uuid, conflict: Row }),
  'reading.progress-conflict-deleted.v1': Type.Object({ user_id: Uuid, conflict_id: Uuid }),
  'reading.annotation-saved.v1': Type.Object({ user_id: Uuid, annotation: Row }),
  'reading.annotation-purged.v1': Type.Object({ user_id: Uuid, annotation_id: Uuid, media_item_id: Uuid }),
  'reading.rating-set.v1': Type.Object({ user_id: Uuid, media_item_id: Uuid, rating: Row }),
  'reading.rating-deleted.v1': Type.Object({ user_id: Uuid, media_item_id: Uuid }),
  'reading.collection-saved.v1': Type.Object({ user_id: Uuid, collection: Row }),
  'reading.collection-deleted.v1': Type.Object({ user_id: Uuid, collection_id: Uuid }),
  'reading.collection-items-changed.v1': Type.Object({ user_id: Uuid, collection_id: Uuid, added: Type.Array(Uuid), removed: Type.Array(Uuid) }),
  'reading.saved-filter-saved.v1': Type.Object({ user_id: Uuid, filter: Row }),
  'reading.saved-filter-deleted.v1': Type.Object({ user_id: Uuid, filter_id: Uuid }),
  'reading.dashboard-preferences-changed.v1': Type.Object({ user_id: Uuid, hidden_collections: Type.Array(Type.String()), collection_order: Type.Array(Type.String()) }),
  /** KOReader's stock sync: the user's last push for a document id, and its link to a media item */
  'reading.kosync-document-saved.v1': Type.Object({ user_id: Uuid, document: Row }),
  /** a deleted account's reading data is gone */
  'reading.user-data-removed.v1': Type.Object({ user_id: Uuid }),
  /** a hash conflict kept one item: the others' reading data now belongs to it */
  'reading.items-merged.v1': Type.Object({ kept_item_id: Uuid, removed_item_ids: Type.Array(Uuid), user_ids: Type.Array(Uuid) }),
  /** a removed item's reading data found its book again, by SHA-256, under a new item id */
  'reading.item-data-restored.v1': Type.Object({ from_item_id: Uuid, to_item_id: Uuid, sha256: Type.String(), user_ids: Type.Array(Uuid) }),
} as const;

export type ReadingEventType = keyof typeof ReadingEvents;
export type ReadingEvent = {
  [K in ReadingEventType]: { type: K; data: Type.Static<(typeof ReadingEvents)[K]> };
}[ReadingEventType];
