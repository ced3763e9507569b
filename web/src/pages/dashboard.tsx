// The dashboard: the sections GET /api/dashboard/sections answers (the user's hidden collections
// left out, their order applied), each a row of books; "Continue Reading" shows progress bars.
import { BookCard, type Item } from './books';

export interface Section {
  id: string;
  name: string;
  query_type: string | null;
  is_system: boolean;
  total: number;
  books: { media_item_id: string; percentage: number | null; item: Item }[];
}

export function Dashboard({ sections, username }: { sections: Section[]; username: string }) {
  const shown = sections.filter((s) => s.books.length > 0);
  return (
    <>
      <h1>Welcome, {username}</h1>
      {shown.length === 0 && (
        <p id="empty-dashboard">
          Nothing here yet. Books appear here once a library holds some: <a href="/library">open the library</a>.
        </p>
      )}
      {shown.map((s) => (
        <section class="shelf" aria-labelledby={`s-${s.id}`} data-section={s.query_type ?? 'custom'} key={s.id}>
          <h2 id={`s-${s.id}`}>
            {s.name} <span class="count">({s.total})</span>
          </h2>
          <ul class="row">
            {s.books.map((b) => (
              <BookCard key={b.media_item_id} item={b.item} progress={s.query_type === 'continue-reading' ? (b.percentage ?? 0) : null} />
            ))}
          </ul>
        </section>
      ))}
    </>
  );
}
