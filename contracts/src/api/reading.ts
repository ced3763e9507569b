// The public bodies of the reading routes: positions, conflicts, annotations, ratings, collections,
// saved filters and the dashboard, as the reading service and the gateway's reading view answer them.
// Records list the fields clients rely on; the reading service may add more.
import Type from 'typebox';
import { MediaItem } from './catalog';
import { Nullable, routeBody, serviceBody } from './schemas';

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
    item_count: Type.Optional(Type.Integer({ description: 'how many items it holds (one collection asked for)' })),
    created_at: S,
    updated_at: S,
  },
  { description: 'a collection' },
);
export const CollectionList = Type.Object({ data: Type.Array(Collection) });
/** a member as the routes answer it: the media item, with the caller's position where known */
const Book = Type.Object({ media_item_id: S, percentage: Nullable(Type.Number()), item: MediaItem });
export const Members = Type.Object({ collection_id: S, data: Type.Array(Book), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() });
export const Preview = Type.Object(
  { data: Type.Array(Book), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() },
  { description: 'the items a rule would hold' },
);
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
/** a position's fields (the reading service checks them) */
export const PositionBody = routeBody(
  {
    percentage: 'a fraction from 0 to 1',
    epubcfi: 'an EPUB CFI (or a reader xpointer)',
    context_text: 'text around the position',
    anchor_href: 'the document the position is in',
    css_selector: 'the element',
    char_offset: 'UTF-16 code units into it',
    client: 'what reports it',
    device: 'the device name',
    base_version: 'the version this write follows',
  },
  'a reading position',
);
export const ReaderSettings = Type.Object(
  {
    font_size: Type.Optional(Type.Integer({ description: 'per cent, 60 to 250' })),
    font_family: Type.Optional(Type.String({ description: 'publisher, serif, sans or mono' })),
    line_spacing: Type.Optional(Type.String({ description: 'publisher, 1.2, 1.5 or 1.9' })),
    margins: Type.Optional(Type.String({ description: 'narrow, normal or wide' })),
    text_align: Type.Optional(Type.String({ description: 'publisher, justify or start' })),
    hyphens: Type.Optional(Type.String({ description: 'publisher, auto or none' })),
    theme: Type.Optional(Type.String({ description: 'profile, light, sepia, dark or black' })),
  },
  { description: 'reader settings (an absent field is the reader default)' },
);
export const Kept = Type.Object({ settings: ReaderSettings, updated_at: Type.String() });
export const AllBooks = Type.Object({ all_books: Nullable(Kept) });
export const ForBook = Type.Object({ media_item_id: Type.String(), all_books: Nullable(Kept), this_book: Nullable(Kept) });
export const Saved = Type.Object({ message: Type.String(), media_item_id: Nullable(Type.String()), settings: ReaderSettings, updated_at: Type.String() });
export const Removed = Type.Object({ message: Type.String(), media_item_id: Type.String() });
export const ReaderSettingsBody = routeBody(
  {
    font_size: 'per cent, a whole number from 60 to 250',
    font_family: 'publisher, serif, sans or mono',
    line_spacing: 'publisher, 1.2, 1.5 or 1.9',
    margins: 'narrow, normal or wide',
    text_align: 'publisher, justify or start',
    hyphens: 'publisher, auto or none',
    theme: 'profile, light, sepia, dark or black',
  },
  'reader settings, replacing those kept',
);
export const CollectionBody = serviceBody({
  name: 'the name',
  description: 'a description',
  color: 'a hex colour',
  icon: 'an emoji',
  show_on_dashboard: 'shown as a dashboard section',
  priority: 'its place on the dashboard',
  rules: 'a smart collection: its filter rules',
  filter_id: 'a smart collection from a saved filter',
  auto_assign: 'rules that add new items',
});
export const AddItemsBody = serviceBody({ media_item_ids: 'the items to add (1 to 1000)' });
export const FilterBody = serviceBody({ name: 'the name', resource_type: 'what it filters, like media_items', filter: 'the filter (an object or a list)' });
export const ConflictResolveBody = routeBody({ keep: '`current` or `incoming`' });
