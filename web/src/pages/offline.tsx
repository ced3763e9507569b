// Reading offline (issue 45): the book page's "Keep offline" control and the offline books page.
// Both are filled in by offline.js from this browser's own store (IndexedDB): the server knows
// nothing of what a browser keeps.
import type { Item } from './books';
import { readableFormat } from './reader';

/** "Keep offline" for a book the reader lays out as text (its file is read from this browser). */
export function KeepOffline({ item }: { item: Item }) {
  const chosen = readableFormat(item);
  if (chosen?.kind !== 'text') return null;
  return (
    <div class="keep-offline">
      <button
        type="button"
        id="keep-offline"
        data-item={item.id}
        data-title={item.title}
        data-authors={item.authors.join(', ')}
        data-format={chosen.format.format.toLowerCase()}
        data-file={chosen.format.file_url}
        data-name={chosen.format.file_path.split('/').pop()}
        data-sha256={chosen.format.sha256 ?? undefined}
        data-cover={item.cover_url === null ? undefined : `/api/media-items/${item.id}/cover`}
        hidden
      >
        Keep offline
      </button>{' '}
      <span id="keep-offline-status" role="status" />{' '}
      <a href="/offline" id="offline-books-link">
        Offline books
      </a>
    </div>
  );
}

/** The books this browser keeps for reading offline, with their size and a Remove button each. */
export function OfflineBooks() {
  return (
    <section aria-labelledby="offline-title">
      <h1 id="offline-title">Offline books</h1>
      <p class="muted">Books kept in this browser open in the reader without a network. Positions, highlights and notes made offline are sent when the network is back.</p>
      <p id="offline-state" role="status" />
      <ul id="offline-books" class="offline-books" aria-label="Books kept in this browser" />
      <p id="offline-empty" class="muted" hidden>
        No book is kept in this browser. Use “Keep offline” on a book’s page.
      </p>
      <p id="offline-usage" class="muted" />
    </section>
  );
}
