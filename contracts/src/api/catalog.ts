// The public bodies of /api/libraries, /api/scanner, /api/media-items and /api/admin/hash-conflicts:
// the catalog's records as the gateway's read models and the catalog answer them.
import Type from 'typebox';
import * as Catalog from '../catalog/index';
import { Nullable, serviceBody } from './schemas';

const { folders, ...libraryFields } = Catalog.Library.properties;
/** a library; its folders (server paths) only for admins */
export const LibraryRecord = Type.Object({ ...libraryFields, folders: Type.Optional(folders) }, { description: 'a library' });
export const LibraryList = Type.Array(LibraryRecord, { description: 'the libraries the caller may see' });
export const MediaItem = Catalog.MediaItem;
export const ItemList = Type.Object({ data: Type.Array(MediaItem) }, { description: 'media items' });
export const SearchResult = Type.Object(
  {
    data: Type.Array(MediaItem),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
    suggestions: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()), { description: 'autocomplete values per field asked for' })),
  },
  { description: 'matching media items, a page of them' },
);
export const ItemUpdated = Type.Object({ ...MediaItem.properties, search_fields: Type.Unknown({ description: 'the fields search matches on, as stored' }) });
export const BulkReport = Type.Object({
  message: Type.String(),
  succeeded: Type.Array(Type.String()),
  failed: Type.Array(Type.Object({ id: Type.String(), error: Type.String() })),
});
export const Usage = Type.Object({ progress: Type.Integer(), highlights: Type.Integer(), bookmarks: Type.Integer(), notes: Type.Integer(), collections: Type.Integer() });
export const ConflictList = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        id: Type.String(),
        sha256: Type.String(),
        status: Type.String(),
        created_at: Type.String(),
        items: Type.Array(Type.Object({ ...MediaItem.properties, usage: Usage })),
      }),
    ),
  },
  { description: 'pending duplicate-content groups with each member’s usage' },
);
export const ConflictResolved = Type.Object({
  message: Type.String(),
  conflict: Type.Object({ id: Type.String(), status: Type.String(), kept_item_id: Nullable(Type.String()), removed_item_ids: Type.Array(Type.String()) }),
});
export const Sections = Type.Object(
  { sha256: Type.String(), sections: Type.Array(Type.Object({ href: Type.String(), linear: Type.Boolean(), length: Type.Integer() })) },
  { description: "the EPUB's sections and their text lengths" },
);
const Scan = Type.Object({}, { description: 'a scan: its library, status, reason and counts' });
export const ScanStatus = Type.Object({ scanning: Type.Boolean(), queued: Type.Integer(), scans: Type.Array(Scan) });
export const ScanQueued = Type.Object({ message: Type.String(), scans: Type.Array(Scan) });
export const Issues = Type.Object({ data: Type.Array(Catalog.FileIssue) }, { description: 'files the scanner could not read' });
export const Browse = Type.Object(
  { path: Nullable(Type.String()), parent: Nullable(Type.String()), entries: Type.Array(Type.Unknown()), truncated: Type.Boolean() },
  { description: "a folder of the server's file system (the allowed roots when no path is given)" },
);
export const ScanSettings = Type.Object({ scan_poll_interval_seconds: Type.Optional(Type.Integer()) });
export const ScanSettingsUpdated = Type.Object({ scan_poll_interval_seconds: Type.Integer(), message: Type.String() });

export const ItemQuery = {
  library_id: 'a library (UUID)',
  limit: 'how many (default 50, at most 1000)',
  offset: 'how many to skip',
  sort: 'the order',
  read_status: "the caller's read state",
};
export const SearchQuery = {
  ...ItemQuery,
  sort: 'the order, whatever the filters (as the list takes it); without one, relevance to `q`, then title',
  q: 'free text',
  author_filter: 'fuzzy, or exact in double quotes',
  series_filter: 'fuzzy, or exact in double quotes',
  genre_filter: 'fuzzy (kept for tags)',
  language_filter: 'fuzzy, or exact in double quotes',
  tags_filter: 'fuzzy, or exact in double quotes',
  publisher_filter: 'fuzzy, or exact in double quotes',
  format: 'a file format',
  year: 'exact',
  has_cover: 'true or false',
  has_file: 'true or false',
  has_isbn: 'true or false',
  has_series: 'true or false',
  authors: 'autocomplete authors',
  genres: 'autocomplete genres',
  series: 'autocomplete series',
  languages: 'autocomplete languages',
};
export const FolderList = Type.Object({
  library_id: Type.String(),
  max_bytes: Type.Integer(),
  folders: Type.Array(Type.Object({ index: Type.Integer(), name: Type.String(), path: Type.Optional(Type.String()) })),
});
export const CalibreReportAnswer = Type.Object({ report: Type.Union([Catalog.CalibreReport, Type.Null()]), recorded_at: Type.Union([Type.String(), Type.Null()]) });
export const LibraryBody = serviceBody({ name: 'the name', folders: 'server folders (absolute paths)', watch: 'follow changes on disk (default true)' });
export const HashResolveBody = serviceBody({ action: '`keep` or `keep_all`', keep_uuid: 'for `keep`: the member to keep' });
export const IdsBody = serviceBody({ ids: 'media item ids' });
export const BulkUpdateBody = serviceBody({ ids: 'media item ids', changes: 'the fields to set, `add_tags`, `remove_tags`' });
export const ItemBody = serviceBody(
  { library_id: 'the library', title: 'the title', file_path: 'a file in a library folder', authors: 'names', tags: 'tags', series: 'the series', series_index: 'its place' },
  'the item’s fields; the catalog checks each',
);
/** the JSON form of PUT /api/media-items/<id>/cover (a picture may be the body instead) */
export const CoverPageBody = Type.Object({ page: Type.Optional(Type.Unknown({ description: 'a page of the book (its number)' })) });
