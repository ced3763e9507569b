// Every series the caller may see (GET /api/series): a cover, the name, how many books, how many
// the caller has not begun (a badge) and their progress through it; searched as the person types
// (htmx swaps the results), an A-Z jump, a library, a read state and a sort, the total and pages.
import {
  BrowseTabs,
  countOf,
  FilterBox,
  hrefOf,
  queryOf,
  LetterJump,
  LibrarySelect,
  type LibraryName,
  letterParam,
  libraryParam,
  ListHeading,
  ListTotal,
  offsetParam,
  SelectField,
  Pager,
  textOf,
} from './browse';
import { seriesUrl, STATES } from './library';

/** Series a page shows. */
export const SERIES_PAGE = 48;

export const SERIES_SORTS: { value: string; label: string }[] = [
  { value: 'name', label: 'Name' },
  { value: '-name', label: 'Name, Z to A' },
  { value: '-created_at', label: 'Recently added' },
  { value: '-book_count', label: 'Most books' },
];

export interface SeriesSummary {
  name: string;
  book_count: number;
  read_count: number;
  in_progress_count: number;
  unread_count: number;
  progress: number;
  cover_item_id: string | null;
}

export interface SeriesListQuery {
  q: string;
  library: string;
  letter: string;
  state: string;
  sort: string;
  offset: number;
}

export function seriesListQuery(raw: Record<string, unknown>): SeriesListQuery {
  const sort = textOf(raw.sort);
  const state = textOf(raw.state);
  return {
    q: textOf(raw.q).trim(),
    library: libraryParam(raw.library),
    letter: letterParam(raw.letter),
    state: STATES.some((s) => s.value === state) ? state : '',
    sort: SERIES_SORTS.some((s) => s.value === sort) ? sort : 'name',
    offset: offsetParam(raw.offset),
  };
}

/** The query of GET /api/series for this page of series. */
export function seriesApiQuery(q: SeriesListQuery) {
  return queryOf({
    limit: SERIES_PAGE,
    offset: q.offset,
    q: q.q,
    library_id: q.library,
    letter: q.letter,
    read_status: q.state,
    sort: q.sort === 'name' ? '' : q.sort,
  });
}

/** This page's address with some choices changed. */
export const seriesListUrl = (q: SeriesListQuery, change: Partial<SeriesListQuery> = {}) => {
  const v = { ...q, offset: 0, ...change };
  return hrefOf('/series', { q: v.q, library: v.library, letter: v.letter, state: v.state, sort: v.sort === 'name' ? '' : v.sort, offset: v.offset });
};

const pct = (p: number) => Math.round(p * 100);

export function SeriesCard({ s }: { s: SeriesSummary }) {
  return (
    <li class="book series-card" data-series={s.name}>
      <a href={seriesUrl(s.name)} class="book-link series-link">
        <span class="cover-wrap">
          {s.cover_item_id ? (
            <img class="cover" src={`/api/media-items/${s.cover_item_id}/thumbnail`} alt="" loading="lazy" decoding="async" />
          ) : (
            <span class="cover placeholder" aria-hidden="true">
              {(s.name.trim()[0] ?? '?').toUpperCase()}
            </span>
          )}
          {s.unread_count > 0 && <span class="unread-badge">{s.unread_count} unread</span>}
        </span>
        <span class="book-title">{s.name}</span>
      </a>
      <span class="series-count muted">
        {countOf(s.book_count, ['book', 'books'])}
        {s.read_count > 0 && `, ${s.read_count} read`}
      </span>
      <progress max={100} value={pct(s.progress)} aria-label={`${s.name}: ${pct(s.progress)}% read`}>
        {`${pct(s.progress)}%`}
      </progress>
    </li>
  );
}

export function SeriesList({ q, series, total, libraries }: { q: SeriesListQuery; series: SeriesSummary[]; total: number; libraries: LibraryName[] }) {
  const active = [q.library, q.state].filter((v) => v !== '').length;
  return (
    <>
      <ListHeading kind="Series" libraries={libraries} library={q.library} />
      <BrowseTabs current="series" library={q.library} />
      <search aria-label="Find a series">
        <form id="series-search" class="name-search" method="get" action="/series">
          <div class="search-field">
            <label for="series-q">Find a series</label>
            <input
              id="series-q"
              name="q"
              type="search"
              value={q.q}
              autocomplete="off"
              maxlength={200}
              hx-get="/series"
              hx-include="#series-search"
              hx-trigger="input changed delay:300ms, search"
              hx-target="#series-results"
              hx-select="#series-results"
              hx-swap="outerHTML"
              hx-push-url="true"
            />
          </div>
          {q.letter && <input type="hidden" name="letter" value={q.letter} />}
          <FilterBox active={active} label="Filters and sort">
            <div class="filters card">
              <LibrarySelect libraries={libraries} value={q.library} />
              <SelectField name="state" label="Read state" options={STATES} value={q.state} any="Any" />
              <SelectField name="sort" label="Sort" options={SERIES_SORTS} value={q.sort} />
              <div class="actions">
                <button type="submit" class="primary" id="apply">
                  Apply
                </button>
              </div>
            </div>
          </FilterBox>
        </form>
      </search>
      <div id="series-results">
        <LetterJump current={q.letter} href={(letter) => seriesListUrl(q, { letter })} label="Series by first letter" />
        <ListTotal id="series-total" total={total} noun={['series', 'series']} letter={q.letter} q={q.q} />
        {series.length === 0 ? (
          <p id="no-results">No series match.</p>
        ) : (
          <ul id="series-grid" class="grid" aria-label="Series">
            {series.map((s) => (
              <SeriesCard key={s.name} s={s} />
            ))}
          </ul>
        )}
        <Pager total={total} offset={q.offset} size={SERIES_PAGE} href={(offset) => seriesListUrl(q, { offset })} />
      </div>
    </>
  );
}
