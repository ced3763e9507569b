// The public bodies of the reading routes: positions, conflicts, annotations, ratings, collections,
// saved filters and the dashboard, as the reading service and the gateway's reading view answer them.
// Records list the fields clients rely on; the reading service may add more.
import Type from 'typebox';
import { MediaItem } from './catalog';
import { Nullable } from './schemas';

const S = Type.String();
const When = Nullable(S);
const Position = {
  percentage: Type.Number(),
  epubcfi: Type.Optional(Nullable(S)),
  context_text: Type.Optional(Nullable(S)),
  anchor_href: Type.Optional(S),
  css_selector: Type.Optional(S),
  char_offset: Type.Optional(Type.Integer()),
};
export const Progress = Type.Object(
  { id: S, media_item_id: S, ...Position, finished: Type.Boolean(), client: Nullable(S), device: Nullable(S), version: Type.Integer(), created_at: S, updated_at: S },
  { description: "the caller's position in the item" },
);
export const Conflict = Type.Object(
  { id: S, media_item_id: S, status: S, reason: Nullable(S), current: Type.Unknown(), incoming: Type.Unknown(), resolution: Type.Unknown(), created_at: S, closed_at: When },
  { description: 'a progress conflict' },
);
export const ProgressWritten = Type.Object(
  { status: S, healed: Type.Array(Type.Unknown()), progress: Progress, conflict: Type.Optional(Conflict) },
  { description: 'what became of the position: written, kept (the guard) or a conflict' },
);
export const History = Type.Object({ media_item_id: S, data: Type.Array(Type.Object({ percentage: Type.Number(), recorded_at: S })) }, { description: 'earlier positions' });
export const ConflictList = Type.Object({ data: Type.Array(Conflict) });
export const BulkConflicts = Type.Object({ message: S, succeeded: Type.Array(S), failed: Type.Array(Type.Unknown()) });

export const Annotation = Type.Object(
  {
    id: S,
    media_item_id: S,
    type: S,
    position: Type.Unknown(),
    text: Nullable(S),
    note: Nullable(S),
    color: Nullable(S),
    dedup_key: Nullable(S),
    created_at: S,
    updated_at: S,
    deleted_at: When,
  },
  { description: 'a highlight, note or bookmark' },
);
export const AnnotationWritten = Type.Object({ ...Annotation.properties, healed: Type.Optional(Type.Array(Type.Unknown())) });
export const AnnotationList = Type.Object({ data: Type.Array(Annotation) });
export const Rating = Type.Object({ media_item_id: S, rating: Type.Number(), review: Nullable(S), created_at: S, updated_at: S }, { description: 'a rating, 0.5 to 5 in halves' });

export const Collection = Type.Object(
  {
    id: S,
    name: S,
    description: Nullable(S),
    query_type: Nullable(S),
    is_system: Type.Boolean(),
    is_smart: Type.Boolean(),
    priority: Type.Number(),
    color: Nullable(S),
    icon: Nullable(S),
    show_on_dashboard: Type.Boolean(),
    rules: Type.Unknown(),
    auto_assign: Type.Unknown(),
    created_at: S,
    updated_at: S,
  },
  { description: 'a collection' },
);
export const CollectionList = Type.Object({ data: Type.Array(Collection) });
/** a member as the routes answer it: the media item, with the caller's position where known */
const Book = Type.Object({ media_item_id: S, percentage: Nullable(Type.Number()), item: MediaItem });
export const Members = Type.Object({ collection_id: S, data: Type.Array(Book), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() });
export const Preview = Type.Object({ data: Type.Array(Book) }, { description: 'the items a rule would hold' });
export const ItemsAdded = Type.Object({ message: S, added: Type.Array(S), failed: Type.Array(Type.Object({ id: S, error: S })) });
export const SavedFilter = Type.Object({ id: S, name: S, resource_type: S, filter: Type.Unknown(), created_at: S, updated_at: S }, { description: 'a saved filter' });
export const SavedFilterList = Type.Object({ data: Type.Array(SavedFilter) });
const Section = Type.Object({
  id: S,
  name: S,
  query_type: Nullable(S),
  is_system: Type.Boolean(),
  color: Nullable(S),
  icon: Nullable(S),
  priority: Type.Number(),
  total: Type.Integer(),
  books: Type.Array(Book),
});
export const Sections = Type.Object(
  { sections: Type.Array(Section), hidden_collections: Type.Array(S), collection_order: Type.Array(S) },
  { description: "the dashboard's sections, the caller's hidden ones left out and order applied" },
);
export const Preferences = Type.Object({ hidden_collections: Type.Array(S), collection_order: Type.Array(S) }, { description: 'dashboard preferences' });
