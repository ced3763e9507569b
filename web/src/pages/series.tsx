// A series: its books the caller may see, in series order (books without a number last, by title),
// each with the caller's progress.
import type { Item } from './books';
import { LibraryCard } from './library';

export interface SeriesBook {
  item: Item;
  percentage: number | null;
}

/** Series order: by number, then title; books without a number after the numbered ones. */
export function inSeriesOrder(books: SeriesBook[]): SeriesBook[] {
  const n = (b: SeriesBook) => (typeof b.item.series_index === 'number' ? b.item.series_index : Number.POSITIVE_INFINITY);
  return [...books].sort((a, b) => n(a) - n(b) || a.item.title.localeCompare(b.item.title));
}

export function SeriesPage({ name, books }: { name: string; books: SeriesBook[] }) {
  const done = books.filter((b) => (b.percentage ?? 0) >= 1).length;
  return (
    <>
      <p class="muted">Series</p>
      <h1 id="series-name">{name}</h1>
      <p id="series-summary">
        {books.length === 1 ? '1 book' : `${books.length} books`}, {done} finished. <a href="/library">Back to the library</a>
      </p>
      {books.length === 0 ? (
        <p id="no-results">No books in this series.</p>
      ) : (
        <ol id="grid" class="grid" aria-label="Books in series order">
          {books.map((b) => (
            <LibraryCard key={b.item.id} item={b.item} progress={b.percentage ?? 0} />
          ))}
        </ol>
      )}
    </>
  );
}
