// Books' locator indexes, asked of the catalog (which builds one per EPUB file at scan time) once
// per file hash and kept in a small LRU: the Kobo routes map its spans through them, the web reader
// weighs its sections by them.
import { gunzipSync } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import type { CallCatalog } from '../http/rpc';
import type * as Locator from '@bindery/locator';

export type LocatorIndexOf = (sha256: string) => Promise<Locator.LocatorIndex | null>;

export function locatorIndexes(catalog: CallCatalog, max = 64): LocatorIndexOf {
  const indexes = new LRUCache<string, Locator.LocatorIndex>({ max });
  return async (sha256) => {
    const hit = indexes.get(sha256);
    if (hit) return hit;
    const r = await catalog('locator-index', { sha256 });
    if (!r.ok) return null;
    const index = JSON.parse(gunzipSync(Buffer.from(r.value.index_gz, 'base64')).toString('utf8')) as Locator.LocatorIndex;
    indexes.set(sha256, index);
    return index;
  };
}
