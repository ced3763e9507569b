// Our `x-kobo-synctoken`: `BINDERY.` + base64url of `{"v":1,"g":<generation>,"d":<device>,"s":<store token?>,"a":<cursor?>}`.
// The generation names the answer the device last received (the gateway keeps what each answer
// sent until the device presents its token); `d` names the Kobo it was made for (a digest of its
// id), so another Kobo's or another server's token is not taken for this one's. A device that
// synced with the Kobo store, Calibre-Web or Komga presents their token instead; it is read as
// "nothing received from us" (a full sync), its store part kept inside ours, and replaced by ours
// in the answer. A page answered with `x-kobo-sync:
// continue` names the last book or tag it sent (`a`, `i:<id>` or `t:<id>`): the next page goes on
// after it (a token without one, from before, starts at the beginning).
import { createHash } from 'node:crypto';

export const SYNC_TOKEN_VERSION = 1;
const PREFIX = 'BINDERY.';
const MAX_TOKEN = 8192;
const CURSOR = /^([it]):([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** Where a continued sync goes on: after this book, or after this tag (books come first). */
export interface SyncCursor {
  phase: 'i' | 't';
  id: string;
}

export interface SyncToken {
  /** the generation of our last answer the device holds; 0: none (a first sync, or another server's token) */
  gen: number;
  /** the Kobo store's own token, kept for a store proxy */
  store: string | null;
  /** where a continued sync goes on (null: from the start) */
  after?: SyncCursor | null;
  /** ours: the digest of the Kobo it was made for (absent in tokens made before it was added) */
  device?: string;
  /** what the device presented: ours, the store's, Calibre-Web's, Komga's, none, or unreadable */
  kind: 'bindery' | 'store' | 'calibre-web' | 'komga' | 'none' | 'unreadable';
}

const b64json = (s: string): unknown => {
  try {
    return JSON.parse(Buffer.from(s, 'base64').toString('utf8'));
  } catch {
    return null;
  }
};

export function parseSyncToken(raw: string | string[] | undefined): SyncToken {
  const s = typeof raw === 'string' ? raw.trim() : '';
  if (s === '') return { gen: 0, store: null, kind: 'none' };
  if (s.length > MAX_TOKEN) return { gen: 0, store: null, kind: 'unreadable' };
  if (s.startsWith(PREFIX)) {
    const j = b64json(s.slice(PREFIX.length)) as { v?: unknown; g?: unknown; d?: unknown; s?: unknown; a?: unknown } | null;
    if (j && j.v === SYNC_TOKEN_VERSION && Number.isInteger(j.g) && (j.g as number) >= 0 && (j.g as number) < 2 ** 31) {
      const a = typeof j.a === 'string' ? CURSOR.exec(j.a) : null;
      return {
        gen: j.g as number,
        store: typeof j.s === 'string' ? j.s : null,
        after: a ? { phase: a[1] as 'i' | 't', id: a[2]! } : null,
        ...(typeof j.d === 'string' ? { device: j.d } : {}),
        kind: 'bindery',
      };
    }
    return { gen: 0, store: null, kind: 'unreadable' };
  }
  if (s.startsWith('KOMGA.')) {
    const j = b64json(s.slice(6)) as { rawKoboSyncToken?: unknown } | null;
    return { gen: 0, store: typeof j?.rawKoboSyncToken === 'string' ? j.rawKoboSyncToken : null, kind: 'komga' };
  }
  // the store's own: two base64 parts joined by a dot
  if (/^[A-Za-z0-9+/=_-]+\.[A-Za-z0-9+/=_-]+$/.test(s)) return { gen: 0, store: s, kind: 'store' };
  const cw = b64json(s) as { data?: { raw_kobo_store_token?: unknown } } | null;
  if (cw && typeof cw === 'object' && cw.data && typeof cw.data === 'object')
    return { gen: 0, store: typeof cw.data.raw_kobo_store_token === 'string' && cw.data.raw_kobo_store_token ? cw.data.raw_kobo_store_token : null, kind: 'calibre-web' };
  return { gen: 0, store: null, kind: 'unreadable' };
}

/** The name a token gives the Kobo it was made for: 12 hex characters of a digest of its id. */
export const deviceDigest = (deviceId: string): string => createHash('sha256').update(`bindery-kobo:${deviceId.toLowerCase()}`).digest('hex').slice(0, 12);

/**
 * `after`: the last key (`i:<id>` or `t:<id>`) of a page answered with `x-kobo-sync: continue`;
 * `device`: the Kobo's id, named in the token by its digest
 */
export const makeSyncToken = (gen: number, store: string | null, after?: string, device?: string): string =>
  PREFIX +
  Buffer.from(
    JSON.stringify({ v: SYNC_TOKEN_VERSION, g: gen, ...(device ? { d: deviceDigest(device) } : {}), ...(store ? { s: store } : {}), ...(after ? { a: after } : {}) }),
  ).toString('base64url');
