// An author: the books of theirs the caller may see, by title, with the series they belong to.
import type { Item } from './books';
import { LibraryCard } from './library';

export function AuthorPage({ name, items, total }: { name: string; items: Item[]; total: number }) {
  const series = [...new Set(items.map((i) => i.series).filter((s): s is string => !!s))].sort((a, b) => a.localeCompare(b));
  return (
    <>
      <p class="muted">Author</p>
      <h1 id="author-name">{name}</h1>
      <p id="author-summary">
        {total === 1 ? '1 book' : `${total} books`}
        {total > items.length && `, the first ${items.length} shown`}. <a href="/authors">All authors</a>
      </p>
      {series.length > 0 && (
        <nav aria-label="Series by this author">
          <ul class="plain inline-list" id="author-series">
            {series.map((s) => (
              <li key={s}>
                <a href={`/series/${encodeURIComponent(s)}`}>{s}</a>
              </li>
            ))}
          </ul>
        </nav>
      )}
      {items.length === 0 ? (
        <p id="no-results">No books by this author.</p>
      ) : (
        <ul id="grid" class="grid" aria-label="Books">
          {items.map((i) => (
            <LibraryCard key={i.id} item={i} />
          ))}
        </ul>
      )}
    </>
  );
}
