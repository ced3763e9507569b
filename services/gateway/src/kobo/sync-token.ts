// Our `x-kobo-synctoken`: `BINDERY.` + base64url of `{"v":1,"g":<generation>,"s":<store token?>}`.
// The generation names the answer the device last received (the gateway keeps what each answer
// sent until the device presents its token). A device that synced with the Kobo store, Calibre-Web
// or Komga presents their token instead; it is accepted as "nothing received from us yet", its store
// part kept inside ours, and replaced by ours in the answer.

export const SYNC_TOKEN_VERSION = 1;
const PREFIX = 'BINDERY.';
const MAX_TOKEN = 8192;

export interface SyncToken {
  /** the generation of our last answer the device holds; 0: none (a first sync, or another server's token) */
  gen: number;
  /** the Kobo store's own token, kept for a store proxy */
  store: string | null;
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
    const j = b64json(s.slice(PREFIX.length)) as { v?: unknown; g?: unknown; s?: unknown } | null;
    if (j && j.v === SYNC_TOKEN_VERSION && Number.isInteger(j.g) && (j.g as number) >= 0 && (j.g as number) < 2 ** 31)
      return { gen: j.g as number, store: typeof j.s === 'string' ? j.s : null, kind: 'bindery' };
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

export const makeSyncToken = (gen: number, store: string | null): string =>
  PREFIX + Buffer.from(JSON.stringify({ v: SYNC_TOKEN_VERSION, g: gen, ...(store ? { s: store } : {}) })).toString('base64url');
