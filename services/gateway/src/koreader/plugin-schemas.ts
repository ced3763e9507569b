// The KOReader plugin API's schemas: what the plugin sends (a book to find, a position, its
// annotations) and what it is answered.
import Type from 'typebox';
import { errors, Nullable } from '../http/schemas';

export const tags = ['koreader plugin'];
export const refused = errors(400, 401, 403, 404);
const S = Type.String();
const Formats = Type.Array(Type.Object({ format: S, sha256: Nullable(S) }));
export const Resolved = Type.Object(
  { media_item_id: S, uuid: S, matched_by: S, title: Nullable(S), authors: Type.Array(S), sha256: Nullable(S), formats: Formats },
  { description: 'the book, and how it was matched (uuid, sha256, file_path, title_author)' },
);
export const Library = Type.Object({ data: Type.Array(Type.Object({ uuid: S, title: S, sha256: Nullable(S) })) }, { description: 'a page of the books the device may see' });
export const Pushed = Type.Object({
  status: S,
  media_item_id: S,
  matched_by: S,
  healed: Type.Array(Type.Unknown()),
  progress: Type.Unknown(),
  conflict: Type.Optional(Type.Unknown()),
  deleted: Type.Object({ highlights: Type.Integer(), bookmarks: Type.Integer() }),
  ignored: Type.Unknown(),
});
const AnnotationOut = Type.Object({
  dedup_key: S,
  type: S,
  pos0: Type.Unknown(),
  pos1: Type.Unknown(),
  page: Type.Unknown(),
  percentage: Type.Unknown(),
  text: Nullable(S),
  book_sha256: Nullable(S),
});
const DeletedKeys = Type.Object({ highlights: Type.Array(S), notes: Type.Array(S), bookmarks: Type.Array(S) });
export const Metadata = Type.Object(
  {
    uuid: S,
    title: S,
    authors: Type.Array(S),
    sha256: Nullable(S),
    formats: Formats,
    percentage: Nullable(Type.Number()),
    koreader_xpointer: Nullable(S),
    page: Type.Unknown(),
    progress: Type.Unknown(),
    highlights: Type.Array(AnnotationOut),
    notes: Type.Array(AnnotationOut),
    bookmarks: Type.Array(AnnotationOut),
    deleted: DeletedKeys,
  },
  { description: "the book's position and annotations, and the keys deleted elsewhere" },
);
export const Merged = Type.Object({ media_item_id: S, matched_by: S }, { description: 'what was created, updated or left unchanged' });

const Text = (max: number) => Type.String({ maxLength: max });
const Opt = <T extends Parameters<typeof Type.Optional>[0]>(t: T) => Type.Optional(t);
const Keys = Type.Array(Text(512), { maxItems: 10_000 });

const Book = Type.Object({
  uuid: Opt(Type.Union([Type.String({ format: 'uuid' }), Type.Null()])),
  sha256: Opt(Type.Union([Type.String({ pattern: '^[0-9a-fA-F]{64}$' }), Type.Null()])),
  file_path: Opt(Type.Union([Text(4096), Type.Null()])),
  title: Opt(Type.Union([Text(2000), Type.Null()])),
  author: Opt(Type.Union([Text(2000), Type.Null()])),
  authors: Opt(Type.Union([Type.Array(Text(2000), { maxItems: 50 }), Text(2000), Type.Null()])),
  percentage: Type.Number({ minimum: 0, maximum: 100 }),
  epubcfi: Opt(Type.Union([Text(4096), Type.Null()])),
  page: Opt(Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()])),
  page_count: Opt(Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()])),
  deleted_highlights: Opt(Keys),
  deleted_bookmarks: Opt(Keys),
});
export type BookT = Type.Static<typeof Book>;
export const ProgressBody = Type.Array(Book, { minItems: 1, maxItems: 1 });

const Annotation = Type.Object({
  dedup_key: Opt(Type.Union([Text(512), Type.Null()])),
  type: Opt(Type.Union([Text(20), Type.Null()])),
  pos0: Opt(Type.Union([Text(4096), Type.Null()])),
  pos1: Opt(Type.Union([Text(4096), Type.Null()])),
  page: Opt(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  percentage: Opt(Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()])),
  text: Opt(Type.Union([Text(100_000), Type.Null()])),
  note: Opt(Type.Union([Text(100_000), Type.Null()])),
  chapter: Opt(Type.Union([Text(4096), Type.Null()])),
  color: Opt(Type.Union([Text(32), Type.Null()])),
  book_sha256: Opt(Type.Union([Text(64), Type.Null()])),
});
const List = Type.Array(Annotation, { maxItems: 5000 });
export const BookmarksBody = Type.Object({
  book_uuid: Opt(Type.Union([Type.String({ format: 'uuid' }), Type.Null()])),
  book_sha256: Opt(Type.Union([Type.String({ pattern: '^[0-9a-fA-F]{64}$' }), Type.Null()])),
  bookmarks: Opt(List),
  notes: Opt(List),
  highlights: Opt(List),
});
export const ResolveQuery = Type.Object({
  uuid: Opt(Text(64)),
  sha256: Opt(Text(128)),
  file_path: Opt(Text(4096)),
  title: Opt(Text(2000)),
  author: Opt(Text(2000)),
});
export const Paging = Type.Object({ limit: Opt(Type.String({ pattern: '^\\d{1,4}$' })), offset: Opt(Type.String({ pattern: '^\\d{1,9}$' })) });
