// The library: a cover grid of what the caller may see, with search, filters (author, series,
// format, tag), sort, and paging by "Load more" (a plain link; with htmx it appends the next page
// in place). Filtered and searched lists come from /api/media-items/search (relevance, then
// title); unfiltered ones from /api/media-items with the chosen sort.
import { BookCard, type Item } from './books';

export const PAGE = 24;
export const FORMATS = ['epub', 'kepub', 'pdf', 'cbz', 'cbr', 'mobi', 'azw3', 'fb2'];
export const SORTS: { value: string; label: string }[] = [
  { value: 'title', label: 'Title' },
  { value: '-created_at', label: 'Recently added' },
  { value: 'author', label: 'Author' },
  { value: 'series', label: 'Series' },
  { value: '-year', label: 'Newest first' },
  { value: 'year', label: 'Oldest first' },
];

export interface LibraryQuery {
  q: string;
  author: string;
  series: string;
  format: string;
  tag: string;
  sort: string;
  offset: number;
}

const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, 200) : '');

export function libraryQuery(raw: Record<string, unknown>): LibraryQuery {
  const offset = Number(text(raw.offset));
  const sort = text(raw.sort);
  const format = text(raw.format).toLowerCase();
  return {
    q: text(raw.q).trim(),
    author: text(raw.author).trim(),
    series: text(raw.series).trim(),
    format: FORMATS.includes(format) ? format : '',
    tag: text(raw.tag).trim(),
    sort: SORTS.some((s) => s.value === sort) ? sort : 'title',
    offset: Number.isInteger(offset) && offset >= 0 && offset <= 1_000_000 ? offset : 0,
  };
}

export const filtered = (q: LibraryQuery) => q.q !== '' || q.author !== '' || q.series !== '' || q.format !== '' || q.tag !== '';

/** The API URL that answers this page of the library. */
export function apiUrl(q: LibraryQuery): string {
  const p = new URLSearchParams({ limit: String(PAGE + 1), offset: String(q.offset) });
  if (!filtered(q)) {
    p.set('sort', q.sort);
    return `/api/media-items?${p}`;
  }
  if (q.q) p.set('q', q.q);
  if (q.author) p.set('author_filter', q.author);
  if (q.series) p.set('series_filter', q.series);
  if (q.format) p.set('format', q.format);
  if (q.tag) p.set('tags_filter', q.tag);
  return `/api/media-items/search?${p}`;
}

/** This page's own URL with another offset. */
export function pageUrl(q: LibraryQuery, offset: number): string {
  const p = new URLSearchParams();
  for (const k of ['q', 'author', 'series', 'format', 'tag'] as const) if (q[k]) p.set(k, q[k]);
  if (q.sort !== 'title') p.set('sort', q.sort);
  if (offset) p.set('offset', String(offset));
  const s = p.toString();
  return s ? `/library?${s}` : '/library';
}

/** The autocomplete fields: the page's field name and the search API's suggestion key. */
export const SUGGEST: Record<string, string> = { author: 'authors', series: 'series', tag: 'genres' };

/** Suggestions for a field as a datalist (swapped in as the user types). */
export function Suggestions({ field, values }: { field: string; values: string[] }) {
  return (
    <datalist id={`${field}-options`}>
      {values.map((v) => (
        <option key={v} value={`"${v}"`}>
          {v}
        </option>
      ))}
    </datalist>
  );
}

function Field({ id, label, value, type = 'text' }: { id: keyof LibraryQuery; label: string; value: string; type?: string }) {
  const suggest = id in SUGGEST;
  return (
    <div>
      <label for={`f-${id}`}>{label}</label>
      <input
        id={`f-${id}`}
        name={id}
        type={type}
        value={value}
        autocomplete="off"
        list={suggest ? `${id}-options` : undefined}
        hx-get={suggest ? `/library/suggest?field=${id}` : undefined}
        hx-trigger={suggest ? 'input changed delay:250ms, focus once' : undefined}
        hx-target={suggest ? `#${id}-options` : undefined}
        hx-swap={suggest ? 'outerHTML' : undefined}
      />
      {suggest && <Suggestions field={id} values={[]} />}
    </div>
  );
}

export function LoadMore({ q, more, oob = false }: { q: LibraryQuery; more: boolean; oob?: boolean }) {
  const next = pageUrl(q, q.offset + PAGE);
  return (
    <div id="load-more" class="load-more" hx-swap-oob={oob ? 'outerHTML' : undefined}>
      {more && (
        <a class="button" href={next} hx-get={next} hx-target="#grid" hx-swap="beforeend" hx-push-url="false">
          Load more
        </a>
      )}
    </div>
  );
}

export function Books({ items }: { items: Item[] }) {
  return (
    <>
      {items.map((i) => (
        <BookCard key={i.id} item={i} />
      ))}
    </>
  );
}

export function Library({ q, items, more }: { q: LibraryQuery; items: Item[]; more: boolean }) {
  return (
    <>
      <h1>Library</h1>
      <search aria-label="Search and filter the library">
        <form class="filters card" method="get" action="/library">
          <Field id="q" label="Search" value={q.q} type="search" />
          <Field id="author" label="Author" value={q.author} />
          <Field id="series" label="Series" value={q.series} />
          <Field id="tag" label="Tag" value={q.tag} />
          <div>
            <label for="f-format">Format</label>
            <select id="f-format" name="format">
              <option value="">Any</option>
              {FORMATS.map((f) => (
                <option key={f} value={f} selected={q.format === f}>
                  {f.toUpperCase()}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for="f-sort">Sort</label>
            <select id="f-sort" name="sort" disabled={filtered(q)} aria-describedby="sort-note">
              {SORTS.map((s) => (
                <option key={s.value} value={s.value} selected={q.sort === s.value}>
                  {s.label}
                </option>
              ))}
            </select>
          </div>
          <div class="actions">
            <button type="submit" class="primary" id="apply">
              Apply
            </button>
            <a href="/library" id="clear">
              Clear
            </a>
          </div>
        </form>
      </search>
      <p id="sort-note" class="muted">
        {filtered(q) ? 'Search results are ordered by relevance, then title.' : `Showing ${q.offset === 0 ? 'the first' : 'more'} books.`}
      </p>
      {items.length === 0 ? (
        <p id="no-results">No books match.</p>
      ) : (
        <ul id="grid" class="grid" aria-label="Books">
          <Books items={items} />
        </ul>
      )}
      <LoadMore q={q} more={more} />
    </>
  );
}
