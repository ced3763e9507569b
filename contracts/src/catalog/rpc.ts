// Request/reply messages the gateway sends to the catalog. Bodies and query strings travel raw:
// the catalog validates them and answers with the exact messages.
import Type from 'typebox';
import { Caller } from '../identity/rpc';
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

export type CatalogOp = keyof typeof CatalogRequests;
export type CatalogRequest<K extends CatalogOp> = Type.Static<(typeof CatalogRequests)[K]>;

export interface CoverFile {
  content_type: string;
  etag: string;
  data_base64: string;
}
export type { Caller } from '../identity/rpc';
