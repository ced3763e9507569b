// The reader's side of the books kept offline and the writes waiting for the network (the shared
// IndexedDB module, browser/offline-db.ts, which offline.ts fills from the book page). The outbox
// holds a position per book (the latest replaces the earlier, so one write per book) and an
// annotation by its dedup_key (a second delivery answers the one already there: nothing is made
// twice), sent in order when the network is back.
import { allWaiting, changeBook, deleteWaiting, deleteWaitingIf, getBook, getPage, type KeptBook, markedKept, pageTexts, putWaiting, type Waiting } from '../browser/offline-db';
import type { KeptPages } from './pages';
import { queryPattern } from './pdf-text';
import type { PageHit } from './search';

export { markedKept };
import type { Answer } from './http';

export type { KeptBook, Waiting };

/** The book kept offline, or null (also when IndexedDB is not there). */
export async function keptBook(id: string): Promise<KeptBook | null> {
  try {
    return (await getBook(id)) ?? null;
  } catch {
    return null;
  }
}

/** A comic's or PDF's pages kept in this browser, read page by page as the reader shows them. */
export function keptPages(item: string, book: KeptBook): KeptPages {
  const page = (i: number) => getPage(item, i).catch(() => undefined);
  return {
    count: book.page_count ?? 0,
    picture: async (i) => (await page(i))?.picture ?? null,
    text: async (i) => (await page(i))?.text ?? null,
  };
}

/** hits one search answers, and the context each side of one (as the gateway's search) */
const MAX_HITS = 200;
const CONTEXT = 40;
/**
 * Searches a kept PDF's page texts as the gateway searches the file (its pdf-text.ts): each page's
 * runs joined by a space, the query's spaces matching any, case-insensitive, some context each side.
 */
export async function searchKept(item: string, query: string): Promise<{ hits: PageHit[]; truncated: boolean }> {
  const texts = await pageTexts(item).catch(() => []);
  const re = queryPattern(query);
  const hits: PageHit[] = [];
  for (const [page, text] of texts.entries()) {
    if (!text) continue;
    const s = text.items
      .map((i) => i.str)
      .join(' ')
      .replace(/\s+/gu, ' ');
    for (const m of s.matchAll(re)) {
      if (hits.length >= MAX_HITS) return { hits, truncated: true };
      const at = m.index ?? 0;
      const start = Math.max(0, at - CONTEXT);
      const end = Math.min(s.length, at + m[0].length + CONTEXT);
      hits.push({ page, pre: (start > 0 ? '…' : '') + s.slice(start, at), match: m[0], post: s.slice(at + m[0].length, end) + (end < s.length ? '…' : '') });
    }
  }
  return { hits, truncated: false };
}

/** Updates a kept book's record (a no-op when the book is not kept). */
export async function updateKept(id: string, change: (book: KeptBook) => KeptBook): Promise<void> {
  try {
    await changeBook(id, change);
  } catch {
    // not kept, or no IndexedDB: nothing to update
  }
}

/** Queues a write for when the network is back (`key` replaces a waiting write with the same key). */
export const queue = (w: Omit<Waiting, 'at'>) => putWaiting({ ...w, at: Date.now() });

/** The waiting writes, oldest first. */
export async function waiting(): Promise<Waiting[]> {
  try {
    return ((await allWaiting()) ?? []).sort((a, b) => a.at - b.at);
  } catch {
    return [];
  }
}

let flushing: Promise<number> | null = null;
/**
 * Sends the waiting writes in order through the normal API writes (`call`). A write the server
 * answered (done, or refused for good: a conflict the rules opened, a book gone) leaves the queue;
 * no answer (still offline) or a server failure stops the run, to be tried again.
 */
export function flush(call: (method: string, url: string, body: unknown) => Promise<Answer>): Promise<number> {
  flushing ??= (async () => {
    let sent = 0;
    for (const w of await waiting()) {
      const r = await call(w.method, w.url, w.body);
      if (r.status === 0 || r.status >= 500) break;
      // the same key may have been queued again while this one was on its way: only this one goes
      await deleteWaitingIf(w.key, (now) => now.at === w.at).catch(() => undefined);
      sent++;
    }
    return sent;
  })().finally(() => {
    flushing = null;
  });
  return flushing;
}

/** Drops a waiting write (a later one reached the server first). */
export async function drop(key: string): Promise<void> {
  try {
    await deleteWaiting(key);
  } catch {
    // nothing waiting
  }
}
