// Covers and thumbnails as the gateway serves them. Where it can reach the catalog's cover directory
// (embedded mode; distributed with COVERS_DIR on a shared volume) it reads the file the catalog
// rendered, named by the content hash it was made from, without a bus call; a cover not rendered yet
// (or no shared directory) is asked of the catalog, which renders it. The caller's right to see the
// item is checked here from the read model, before either.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Catalog, err, fail, Messages, ok, type Result } from '@bindery/contracts';

type Caller = Catalog.Caller;
import type { CallCatalog } from '../http/rpc';
import type { Access } from '../read-model/access';
import type { CatalogView } from '../read-model/catalog-view';

export type CoverKind = 'cover' | 'thumbnail';
export interface Cover {
  content_type: string;
  etag: string;
  data: Buffer;
}

/** The file the catalog writes for a cover key (services/catalog/src/scanner/covers.ts names it the same way). */
export const coverPath = (dir: string, key: string, kind: CoverKind) => join(dir, key.slice(0, 2), `${key}${kind === 'thumbnail' ? '-thumb' : ''}.jpg`);
/** The same ETag the catalog gives: a new file content is a new key, a re-render a new size. */
export const coverEtag = (key: string, kind: CoverKind, size: number) => `"${key.slice(0, 16)}-${kind[0]}-${size}"`;

export function coverSource(catalogView: CatalogView, catalog: CallCatalog, dir: string | undefined) {
  const fromCatalog = async (caller: Caller, id: string, kind: CoverKind): Promise<Result<Cover>> => {
    const r = await catalog('item-cover', { caller, id, kind });
    if (!r.ok) return r;
    const c = r.value;
    return ok({ content_type: c.content_type, etag: c.etag, data: Buffer.from(c.data_base64, 'base64') });
  };
  return {
    /** The cover of an item `access` lets the caller see; not found otherwise (a hidden item's cover is as absent as the item). */
    async get(caller: Caller, access: Access, id: string, kind: CoverKind): Promise<Result<Cover>> {
      const item = await catalogView.coverOf(access, id);
      if (!item) return err(fail('not_found', Messages.mediaItemNotFound));
      if (!item.has_cover) return err(fail('not_found', Messages.coverNotFound));
      if (dir && item.key) {
        try {
          const data = await readFile(coverPath(dir, item.key, kind));
          return ok({ content_type: 'image/jpeg', etag: coverEtag(item.key, kind, data.length), data });
        } catch {
          // not rendered yet, or rendered under another key: the catalog knows
        }
      }
      return fromCatalog(caller, id.toLowerCase(), kind);
    },
  };
}

export type CoverSource = ReturnType<typeof coverSource>;
