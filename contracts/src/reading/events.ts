// What the reading service tells the rest of Bindery. Each event carries the whole record after the
// change (or what a reaction did), so a read model can be rebuilt from the log alone.
import Type from 'typebox';

const Uuid = Type.String({ format: 'uuid' });
const Time = Type.String();
const Nullable = <T extends Type.TSchema>(t: T) => Type.Union([t, Type.Null()]);

// Records are open objects: a field added later is optional here, so the log's older events still decode.

/** Where a reader is in a book, in each notation a client may send or need back. */
export const PositionFields = {
  context_text: Type.Optional(Type.String()),
  epubcfi: Type.Optional(Type.String()),
  spine_index: Type.Optional(Type.Number()),
  page: Type.Optional(Type.Number()),
  page_count: Type.Optional(Type.Number()),
  anchor_href: Type.Optional(Type.String()),
  css_selector: Type.Optional(Type.String()),
  char_offset: Type.Optional(Type.Number()),
  xpointer: Type.Optional(Type.String()),
  doc_offset: Type.Optional(Type.Number()),
};

/** A user's current position in a book. */
export const ProgressRecord = Type.Object({
  id: Uuid,
  media_item_id: Uuid,
  ...PositionFields,
  percentage: Type.Number(),
  finished: Type.Boolean(),
  client: Type.String(),
  device: Type.String(),
  version: Type.Integer(),
  created_at: Time,
  updated_at: Time,
});
export type ProgressRecord = Type.Static<typeof ProgressRecord>;

/** A line of a user's position history in a book. */
export const ProgressHistoryEntry = Type.Object({
  /** the position as stored beside the percentage */
  position: Type.Object({ ...PositionFields, percentage: Type.Optional(Type.Number()) }),
  percentage: Type.Number(),
  client: Type.String(),
  device: Type.String(),
  /** `saved`, `deleted`, `merged`, `conflict resolved: incoming kept`, … */
  reason: Type.String(),
  recorded_at: Time,
});
export type ProgressHistoryEntry = Type.Static<typeof ProgressHistoryEntry>;

/** One side of a progress conflict: the position and who wrote it. */
export const ConflictSide = Type.Object({
  ...PositionFields,
  percentage: Type.Number(),
  client: Type.String(),
  device: Type.String(),
  /** the Bindery device that sent the incoming side */
  bindery_device_id: Type.Optional(Type.String()),
  submitted_at: Type.Optional(Nullable(Time)),
  /** the current side's version and time */
  version: Type.Optional(Type.Integer()),
  updated_at: Type.Optional(Nullable(Time)),
});
export type ConflictSide = Type.Static<typeof ConflictSide>;

export const ConflictRecord = Type.Object({
  id: Uuid,
  media_item_id: Uuid,
  status: Type.Union([Type.Literal('open'), Type.Literal('resolved'), Type.Literal('dismissed')]),
  reason: Type.String(),
  current: ConflictSide,
  incoming: ConflictSide,
  resolution: Nullable(Type.String()),
  created_at: Time,
  closed_at: Nullable(Time),
});
export type ConflictRecord = Type.Static<typeof ConflictRecord>;

/** A highlight, note or bookmark; its position as stored, with the canonical span when it is known. */
export const AnnotationRecord = Type.Object({
  id: Uuid,
  media_item_id: Uuid,
  type: Type.Union([Type.Literal('highlight'), Type.Literal('note'), Type.Literal('bookmark')]),
  position: Type.Object({
    percentage: Type.Optional(Type.Number()),
    epubcfi: Type.Optional(Type.String()),
    page: Type.Optional(Type.Number()),
    pos0: Type.Optional(Type.String()),
    pos1: Type.Optional(Type.String()),
    chapter: Type.Optional(Type.String()),
    spine_index: Type.Optional(Type.Number()),
    doc_offset: Type.Optional(Type.Number()),
    end_spine_index: Type.Optional(Type.Number()),
    end_doc_offset: Type.Optional(Type.Number()),
  }),
  text: Type.String(),
  note: Type.String(),
  color: Nullable(Type.String()),
  dedup_key: Type.Optional(Nullable(Type.String())),
  created_at: Time,
  updated_at: Time,
  /** set while the annotation is deleted (restorable) */
  deleted_at: Type.Optional(Nullable(Time)),
});
export type AnnotationRecord = Type.Static<typeof AnnotationRecord>;

export const RatingRecord = Type.Object({ media_item_id: Uuid, rating: Type.Number(), review: Type.String(), created_at: Time, updated_at: Time });
export type RatingRecord = Type.Static<typeof RatingRecord>;

/**
 * A reader's text settings (the web reader's "Text" panel), for all books or one: the values the
 * reading service accepts (handlers/reader-settings.ts checks them). Every field may be absent (the
 * reader's default).
 */
export const ReaderSettingsValues = {
  font_family: ['publisher', 'serif', 'sans', 'mono'],
  line_spacing: ['publisher', '1.2', '1.5', '1.9'],
  margins: ['narrow', 'normal', 'wide'],
  text_align: ['publisher', 'justify', 'start'],
  hyphens: ['publisher', 'auto', 'none'],
  theme: ['profile', 'light', 'sepia', 'dark', 'black'],
} as const;
export const READER_FONT_SIZE = { min: 60, max: 250 } as const;
export const ReaderSettings = Type.Object({
  font_size: Type.Optional(Type.Integer()),
  font_family: Type.Optional(Type.String()),
  line_spacing: Type.Optional(Type.String()),
  margins: Type.Optional(Type.String()),
  text_align: Type.Optional(Type.String()),
  hyphens: Type.Optional(Type.String()),
  theme: Type.Optional(Type.String()),
});
export type ReaderSettings = Type.Static<typeof ReaderSettings>;

/** A system, custom or smart collection (its members travel in `collection-items-changed`, or follow its rules). */
export const CollectionRecord = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Type.String(),
  /** a system collection's rule (`continue-reading`, …); null for the user's own */
  query_type: Nullable(Type.String()),
  is_system: Type.Boolean(),
  is_smart: Type.Boolean(),
  priority: Type.Integer(),
  color: Nullable(Type.String()),
  icon: Nullable(Type.String()),
  show_on_dashboard: Type.Boolean(),
  /** a smart collection's rules `{match, conditions}` */
  rules: Type.Unknown(),
  /** a custom collection's rules for newly catalogued items */
  auto_assign: Type.Unknown(),
  created_at: Time,
  updated_at: Time,
});
export type CollectionRecord = Type.Static<typeof CollectionRecord>;

export const SavedFilterRecord = Type.Object({ id: Uuid, name: Type.String(), resource_type: Type.String(), filter: Type.Unknown(), created_at: Time, updated_at: Time });
export type SavedFilterRecord = Type.Static<typeof SavedFilterRecord>;

/** An annotation's canonical span as stored (its start and end in an EPUB, and that EPUB's SHA-256); null parts when unknown. */
export const AnnotationAnchor = Type.Object({
  start_spine: Nullable(Type.Integer()),
  start_offset: Nullable(Type.Integer()),
  end_spine: Nullable(Type.Integer()),
  end_offset: Nullable(Type.Integer()),
  sha256: Nullable(Type.String()),
});
export type AnnotationAnchor = Type.Static<typeof AnnotationAnchor>;

/** KOReader's stock sync: a user's last push for a document id, and the item it is linked to. */
export const KosyncDocumentRecord = Type.Object({
  document: Type.String(),
  media_item_id: Nullable(Uuid),
  linked_by: Nullable(Type.String()),
  percentage: Type.Number(),
  progress: Type.String(),
  device: Type.String(),
  device_id: Type.String(),
  /** the Bindery device whose sync key signed the push in (null: the user's password) */
  bindery_device_id: Type.Optional(Nullable(Uuid)),
  timestamp: Type.Integer(),
  pushed_at: Time,
  created_at: Time,
});
export type KosyncDocumentRecord = Type.Static<typeof KosyncDocumentRecord>;

export const ReadingEvents = {
  'reading.system-collections-created.v1': Type.Object({ user_id: Uuid, collections: Type.Array(CollectionRecord) }),
  /** `device_id`: the Bindery device that wrote the position (its credential or sync key); absent for the web and other clients */
  // `sha256`: the hashes stored with the position (the item's files'), absent in older events
  // `history`: the history line the save wrote with it; older events leave it out, their line being
  // a `progress-history-recorded` event of its own right after
  'reading.progress-saved.v1': Type.Object({
    user_id: Uuid,
    media_item_id: Uuid,
    progress: ProgressRecord,
    device_id: Type.Optional(Uuid),
    sha256: Type.Optional(Type.Array(Type.String())),
    history: Type.Optional(ProgressHistoryEntry),
    /**
     * The time the device itself counts as spent reading this book on it, in total so far, in
     * seconds (a Kobo's `SpentReadingMinutes` × 60); absent where the device says none (decision 120).
     */
    spent_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
    /** the seconds the reader was active in the book since the device's previous save (the web reader); absent where it says none */
    active_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
  'reading.progress-deleted.v1': Type.Object({ user_id: Uuid, media_item_id: Uuid }),
  /** a line of the position history (`GET /api/progress/<id>/history`): each deletion, conflict outcome and merge (a save's line rides in its `progress-saved`) */
  'reading.progress-history-recorded.v1': Type.Object({ user_id: Uuid, media_item_id: Uuid, entry: ProgressHistoryEntry }),
  'reading.progress-conflict-opened.v1': Type.Object({ user_id: Uuid, conflict: ConflictRecord }),
  'reading.progress-conflict-closed.v1': Type.Object({ user_id: Uuid, conflict: ConflictRecord }),
  'reading.progress-conflict-deleted.v1': Type.Object({ user_id: Uuid, conflict_id: Uuid }),
  /** `anchor`: the canonical span as stored (absent in older events: read back from the record's position) */
  'reading.annotation-saved.v1': Type.Object({ user_id: Uuid, annotation: AnnotationRecord, anchor: Type.Optional(AnnotationAnchor) }),
  'reading.annotation-purged.v1': Type.Object({ user_id: Uuid, annotation_id: Uuid, media_item_id: Uuid }),
  'reading.rating-set.v1': Type.Object({ user_id: Uuid, media_item_id: Uuid, rating: RatingRecord }),
  'reading.rating-deleted.v1': Type.Object({ user_id: Uuid, media_item_id: Uuid }),
  'reading.collection-saved.v1': Type.Object({ user_id: Uuid, collection: CollectionRecord }),
  'reading.collection-deleted.v1': Type.Object({ user_id: Uuid, collection_id: Uuid }),
  /** `added_at`: when each added item joined, in the order of `added` (absent in older events) */
  'reading.collection-items-changed.v1': Type.Object({
    user_id: Uuid,
    collection_id: Uuid,
    added: Type.Array(Uuid),
    removed: Type.Array(Uuid),
    added_at: Type.Optional(Type.Array(Time)),
  }),
  'reading.saved-filter-saved.v1': Type.Object({ user_id: Uuid, filter: SavedFilterRecord }),
  'reading.saved-filter-deleted.v1': Type.Object({ user_id: Uuid, filter_id: Uuid }),
  'reading.dashboard-preferences-changed.v1': Type.Object({ user_id: Uuid, hidden_collections: Type.Array(Type.String()), collection_order: Type.Array(Type.String()) }),
  /** KOReader's stock sync: the user's last push for a document id, and its link to a media item */
  // `progress_version`: the item position the push became (answered verbatim while current);
  // `label`: the name its positions carry when a Bindery device's sync key signed it in. Both absent in older events.
  'reading.kosync-document-saved.v1': Type.Object({
    user_id: Uuid,
    document: KosyncDocumentRecord,
    progress_version: Type.Optional(Nullable(Type.Integer())),
    label: Type.Optional(Nullable(Type.String())),
  }),
  /**
   * What a device was given of the user's positions (a Kobo's sync or state answer, KOReader's pull,
   * the plugin's or the web's read): per book the record's id, version and percentage. The device's
   * next push follows that version (docs/decisions.md, "Devices follow the position they were given").
   * `device` is the name its pushes carry, or `kosync:<document>` for a stock KOReader signed in by
   * password (its pull names no device); `via` says which answer gave it.
   */
  'reading.progress-delivered.v1': Type.Object({
    user_id: Uuid,
    device: Type.String(),
    via: Type.String(),
    delivered: Type.Array(Type.Object({ media_item_id: Uuid, progress_id: Uuid, version: Type.Integer(), percentage: Type.Number() })),
    delivered_at: Time,
  }),
  /** a user's reader settings: for all books (`media_item_id` null) or for one book, replaced whole */
  'reading.reader-settings-set.v1': Type.Object({ user_id: Uuid, media_item_id: Nullable(Uuid), settings: ReaderSettings, updated_at: Time }),
  /** a book's own reader settings are gone: it follows the settings for all books again */
  'reading.reader-settings-cleared.v1': Type.Object({ user_id: Uuid, media_item_id: Uuid }),
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

/**
 * Fields some reading events carry for reading's own projection alone, live and at a rebuild
 * (stored hashes, an annotation's stored span, member times, a KOReader push's version and label, a
 * save's history line): not part of what a client is told about the change.
 */
export const REPLAY_ONLY_FIELDS = ['sha256', 'anchor', 'added_at', 'progress_version', 'label', 'history'] as const;
