// Books kept offline and the writes waiting for the network, in IndexedDB ('bindery-offline'; the
// same database offline.js fills from the book page: keep both in step). `books` holds, per item, the
// file (a Blob), its locator data (sections), annotations, the position the server gave and the one
// read here; `outbox` the API writes made without a network, sent in order when it is back: a
// position per book (the latest replaces the earlier, so one write per book), an annotation by its
// dedup_key (a second delivery answers the one already there: nothing is made twice).

const NAME = 'bindery-offline';
let opened = null;

function db() {
  opened ??= new Promise((resolve, reject) => {
    const r = indexedDB.open(NAME, 1);
    r.onupgradeneeded = () => {
      const d = r.result;
      if (!d.objectStoreNames.contains('books')) d.createObjectStore('books', { keyPath: 'id' });
      if (!d.objectStoreNames.contains('outbox')) d.createObjectStore('outbox', { keyPath: 'key' });
    };
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
  return opened;
}

async function run(store, mode, fn) {
  const d = await db();
  return new Promise((resolve, reject) => {
    const tx = d.transaction(store, mode);
    const req = fn(tx.objectStore(store));
    tx.oncomplete = () => resolve(req?.result);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

/** The book kept offline, or null (also when IndexedDB is not there). */
export async function keptBook(id) {
  try {
    return (await run('books', 'readonly', (s) => s.get(id))) ?? null;
  } catch {
    return null;
  }
}

/** Updates a kept book's record (a no-op when the book is not kept). */
export async function updateKept(id, change) {
  try {
    const d = await db();
    await new Promise((resolve, reject) => {
      const tx = d.transaction('books', 'readwrite');
      const s = tx.objectStore('books');
      const g = s.get(id);
      g.onsuccess = () => {
        if (g.result) s.put(change(g.result));
      };
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
    });
  } catch {
    // not kept, or no IndexedDB: nothing to update
  }
}

/** Queues a write for when the network is back (`key` replaces a waiting write with the same key). */
export const queue = (w) => run('outbox', 'readwrite', (s) => s.put({ ...w, at: Date.now() }));

/** The waiting writes, oldest first. */
export async function waiting() {
  try {
    return ((await run('outbox', 'readonly', (s) => s.getAll())) ?? []).sort((a, b) => a.at - b.at);
  } catch {
    return [];
  }
}

let flushing = null;
/**
 * Sends the waiting writes in order through the normal API writes (`call`). A write the server
 * answered (done, or refused for good: a conflict the rules opened, a book gone) leaves the queue;
 * no answer (still offline) or a server failure stops the run, to be tried again.
 */
export function flush(call) {
  flushing ??= (async () => {
    let sent = 0;
    for (const w of await waiting()) {
      const r = await call(w.method, w.url, w.body);
      if (r.status === 0 || r.status >= 500) break;
      // the same key may have been queued again while this one was on its way: only this one goes
      const d = await db();
      await new Promise((resolve) => {
        const tx = d.transaction('outbox', 'readwrite');
        const s = tx.objectStore('outbox');
        const g = s.get(w.key);
        g.onsuccess = () => {
          if (g.result && g.result.at === w.at) s.delete(w.key);
        };
        tx.oncomplete = resolve;
        tx.onerror = resolve;
      });
      sent++;
    }
    return sent;
  })().finally(() => {
    flushing = null;
  });
  return flushing;
}

/** Drops a waiting write (a later one reached the server first). */
export async function drop(key) {
  try {
    await run('outbox', 'readwrite', (s) => s.delete(key));
  } catch {
    // nothing waiting
  }
}
