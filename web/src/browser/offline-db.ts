// Books kept offline and the writes waiting for the network, in this browser's IndexedDB
// ('bindery-offline', version 2): the book page's "Keep offline" and the offline books page
// (offline.ts) and the reader (reader/store.ts) share this one module. `books` holds, per item, the
// file (a Blob; none for a comic or PDF), its locator data (sections), annotations, the position the
// server gave and the one read here; `pages` a comic's or PDF's page pictures (and a PDF page's
// text), keyed [item, page]; `outbox` the API writes made without a network, sent in order when it
// is back.

import type { PageText } from '../reader/pdf-text';

/** An annotation as the API gives it (GET /api/media-items/<id>/highlights or /notes), or as made offline. */
export interface AnnotationRecord {
  id: string;
  position?: { epubcfi?: string; percentage?: number } | null;
  text?: string | null;
  note?: string | null;
  color?: string | null;
}

/** A position read in this browser (the reader's last save), with when. */
export interface LocalPosition {
  percentage?: number;
  epubcfi?: string;
  page?: number;
  page_count?: number;
  at: number;
}

export interface KeptBook {
  id: string;
  title?: string;
  authors: string;
  format?: string;
  name: string;
  cover: string | null;
  sha256: string | null;
  /** the book's file (a text book); null for a comic or PDF, whose pages are in `pages` */
  file: Blob | null;
  /** 'pages' for a comic or PDF kept as pictures (absent on a text book) */
  kind?: 'text' | 'pages';
  /** a comic's or PDF's page count, and the width its pictures were kept at */
  page_count?: number;
  page_width?: number;
  /** the catalog's locator data (GET /api/media-items/<id>/sections), as it came */
  sections: unknown;
  annotations: { highlights: AnnotationRecord[]; notes: AnnotationRecord[] };
  /** the position the server gave when the book was kept */
  progress: unknown;
  local: LocalPosition | null;
  kept_at: number;
  size: number;
}

/** An API write made without a network: `key` replaces a waiting write with the same key. */
export interface Waiting {
  key: string;
  method: string;
  url: string;
  body: unknown;
  item: string;
  /** an annotation made offline: its kind and the record shown until it is sent */
  kind?: 'highlight' | 'note';
  record?: AnnotationRecord;
  /** when it was queued (the order of sending) */
  at: number;
}

/**
 * The width a comic's or PDF's pages are kept at, one for every screen: 1600 px is sharp on a
 * laptop window (about 1300-1500 device pixels wide) and on a phone held upright (1080-1290), and a
 * page at that width is some 200-400 KB, so a 200-page comic takes tens of MB, not hundreds. The
 * reader scales it (a zoom past it is the kept picture enlarged, not a sharper one).
 */
export const KEPT_PAGE_WIDTH = 1600;

/** A PDF page's text as the gateway answers it (/opds/pages/<id>/<n>/text), kept as it came. */
export type KeptPageText = PageText;

/** One page of a comic or PDF kept offline: its picture, and a PDF page's text (null: none). */
export interface KeptPage {
  item: string;
  /** 0-based, as the page stream counts */
  n: number;
  picture: Blob;
  text: KeptPageText | null;
}

type Store = 'books' | 'outbox' | 'pages';

let opened: Promise<IDBDatabase> | null = null;

function db(): Promise<IDBDatabase> {
  opened ??= new Promise((resolve, reject) => {
    const r = indexedDB.open('bindery-offline', 2);
    r.onupgradeneeded = () => {
      const d = r.result;
      if (!d.objectStoreNames.contains('books')) d.createObjectStore('books', { keyPath: 'id' });
      if (!d.objectStoreNames.contains('outbox')) d.createObjectStore('outbox', { keyPath: 'key' });
      if (!d.objectStoreNames.contains('pages')) d.createObjectStore('pages', { keyPath: ['item', 'n'] });
    };
    r.onsuccess = () => {
      // a tab with a newer version of the store: this connection gives way (the next call opens again)
      r.result.onversionchange = () => {
        r.result.close();
        opened = null;
      };
      resolve(r.result);
    };
    r.onerror = () => reject(r.error);
  });
  return opened;
}

/** One request in its own transaction: its result once the transaction is done. */
async function run<T>(store: Store, mode: IDBTransactionMode, fn: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const d = await db();
  return new Promise((resolve, reject) => {
    const tx = d.transaction(store, mode);
    const req = fn(tx.objectStore(store));
    tx.oncomplete = () => resolve(req.result);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

/**
 * Reads a record and writes what `change` makes of it in one transaction: a record to put, `null`
 * to delete it, `undefined` to leave it (a missing record is never made).
 */
async function modify<T>(store: Store, key: string, change: (current: T) => T | null | undefined): Promise<void> {
  const d = await db();
  await new Promise<void>((resolve, reject) => {
    const tx = d.transaction(store, 'readwrite');
    const s = tx.objectStore(store);
    const g: IDBRequest<T | undefined> = s.get(key);
    g.onsuccess = () => {
      if (g.result === undefined) return;
      const next = change(g.result);
      if (next === null) s.delete(key);
      else if (next !== undefined) s.put(next);
    };
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

export const getBook = (id: string): Promise<KeptBook | undefined> => run('books', 'readonly', (s) => s.get(id));
export const allBooks = (): Promise<KeptBook[]> => run('books', 'readonly', (s) => s.getAll());
/**
 * A book kept in this browser also leaves a mark in localStorage, read synchronously: the reader
 * waits for IndexedDB (its first opening costs about 100 ms) only when the mark says the book may
 * be kept, or when there is no network. A missing mark only means the network's copy is read first.
 */
const keptMark = (id: string) => `bindery.kept.${id}`;
export function markedKept(id: string): boolean {
  try {
    return localStorage.getItem(keptMark(id)) === '1';
  } catch {
    return true;
  }
}
function mark(id: string, kept: boolean): void {
  try {
    if (kept) localStorage.setItem(keptMark(id), '1');
    else localStorage.removeItem(keptMark(id));
  } catch {
    // no localStorage: the reader always asks IndexedDB
  }
}
export const putBook = (book: KeptBook): Promise<IDBValidKey> =>
  run('books', 'readwrite', (s) => s.put(book)).then((key) => {
    mark(book.id, true);
    return key;
  });
/** every page of one item, as a key range of `pages` */
const pagesOf = (id: string) => IDBKeyRange.bound([id, 0], [id, Number.MAX_SAFE_INTEGER]);
/** Forgets a kept book: its record and every page of it, in one transaction. */
export const deleteBook = async (id: string): Promise<undefined> => {
  mark(id, false);
  const d = await db();
  return new Promise((resolve, reject) => {
    const tx = d.transaction(['books', 'pages'], 'readwrite');
    tx.objectStore('books').delete(id);
    tx.objectStore('pages').delete(pagesOf(id));
    tx.oncomplete = () => resolve(undefined);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
};
/** Stores one page of a comic or PDF (written before its book's record, which says it is kept). */
export const putPage = (page: KeptPage): Promise<IDBValidKey> => run('pages', 'readwrite', (s) => s.put(page));
export const getPage = (id: string, n: number): Promise<KeptPage | undefined> => run('pages', 'readonly', (s) => s.get([id, n]));
/** The pages stored for an item. */
export const countPages = (id: string): Promise<number> => run('pages', 'readonly', (s) => s.count(pagesOf(id)));
/** Each stored page's text of an item, in page order (a search reads them all; the pictures stay on disk). */
export async function pageTexts(id: string): Promise<(KeptPageText | null)[]> {
  const d = await db();
  return new Promise((resolve, reject) => {
    const out: (KeptPageText | null)[] = [];
    const tx = d.transaction('pages', 'readonly');
    const req = tx.objectStore('pages').openCursor(pagesOf(id));
    req.onsuccess = () => {
      const c = req.result;
      if (!c) return;
      const page = c.value as KeptPage;
      out[page.n] = page.text;
      c.continue();
    };
    tx.oncomplete = () => resolve(out);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}
/** Changes a kept book's record (nothing when it is not kept). */
export const changeBook = (id: string, change: (book: KeptBook) => KeptBook): Promise<void> => modify('books', id, change);

export const allWaiting = (): Promise<Waiting[]> => run('outbox', 'readonly', (s) => s.getAll());
export const putWaiting = (w: Waiting): Promise<IDBValidKey> => run('outbox', 'readwrite', (s) => s.put(w));
export const deleteWaiting = (key: string): Promise<undefined> => run('outbox', 'readwrite', (s) => s.delete(key));
/** Deletes a waiting write if `sent` says it is the one sent (the same key may have been queued again since). */
export const deleteWaitingIf = (key: string, sent: (w: Waiting) => boolean): Promise<void> => modify<Waiting>('outbox', key, (w) => (sent(w) ? null : undefined));
