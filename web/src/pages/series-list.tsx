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
import { useI18n } from '../i18n';
import { type Choice, named, PERCENT, seriesUrl, STATES } from './library';

/** Series a page shows. */
export const SERIES_PAGE = 48;

export const SERIES_SORTS: Choice[] = [
  { value: 'name', label: 'browse.name' },
  { value: '-name', label: 'browse.nameZA' },
  { value: '-created_at', label: 'browse.recentlyAdded' },
  { value: '-book_count', label: 'browse.mostBooks' },
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
  const i18n = useI18n();
  const { t, number } = i18n;
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
          {s.unread_count > 0 && <span class="unread-badge">{t('series.unread', { count: s.unread_count })}</span>}
        </span>
        <span class="book-title">{s.name}</span>
      </a>
      <span class="series-count muted">
        {s.read_count > 0 ? t('series.countRead', { books: countOf(i18n, s.book_count, 'count.books'), read: s.read_count }) : countOf(i18n, s.book_count, 'count.books')}
      </span>
      <progress max={100} value={pct(s.progress)} aria-label={t('browse.readShare', { name: s.name, share: number(s.progress, PERCENT) })}>
        {number(s.progress, PERCENT)}
      </progress>
    </li>
  );
}

export function SeriesList({ q, series, total, libraries }: { q: SeriesListQuery; series: SeriesSummary[]; total: number; libraries: LibraryName[] }) {
  const { t } = useI18n();
  const active = [q.library, q.state].filter((v) => v !== '').length;
  return (
    <>
      <ListHeading kind="browse.series" libraries={libraries} library={q.library} />
      <BrowseTabs current="series" library={q.library} />
      <search aria-label={t('series.find')}>
        <form id="series-search" class="name-search" method="get" action="/series">
          <div class="search-field">
            <label for="series-q">{t('series.find')}</label>
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
          <FilterBox active={active} label={t('browse.filtersAndSort')}>
            <div class="filters card">
              <LibrarySelect libraries={libraries} value={q.library} />
              <SelectField name="state" label={t('browse.readState')} options={named(t, STATES)} value={q.state} any={t('browse.any')} />
              <SelectField name="sort" label={t('browse.sort')} options={named(t, SERIES_SORTS)} value={q.sort} />
              <div class="actions">
                <button type="submit" class="primary" id="apply">
                  {t('browse.apply')}
                </button>
              </div>
            </div>
          </FilterBox>
        </form>
      </search>
      <div id="series-results">
        <LetterJump current={q.letter} href={(letter) => seriesListUrl(q, { letter })} label={t('series.byLetter')} />
        <ListTotal id="series-total" total={total} noun="count.series" letter={q.letter} q={q.q} />
        {series.length === 0 ? (
          <p id="no-results">{t('series.noResults')}</p>
        ) : (
          <ul id="series-grid" class="grid" aria-label={t('browse.series')}>
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
