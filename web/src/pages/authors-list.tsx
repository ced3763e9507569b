// Every author of the books the caller may see (GET /api/authors): the name to their page, how many
// books and series; searched as the person types, an A-Z jump, a library and a sort, the total and pages.
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
import { authorUrl, type Choice, named } from './library';

/** Authors a page shows. */
export const AUTHORS_PAGE = 100;

export const AUTHOR_SORTS: Choice[] = [
  { value: 'name', label: 'browse.name' },
  { value: '-name', label: 'browse.nameZA' },
  { value: '-book_count', label: 'browse.mostBooks' },
];

export interface AuthorSummary {
  name: string;
  book_count: number;
  series_count: number;
}

export interface AuthorListQuery {
  q: string;
  library: string;
  letter: string;
  sort: string;
  offset: number;
}

export function authorListQuery(raw: Record<string, unknown>): AuthorListQuery {
  const sort = textOf(raw.sort);
  return {
    q: textOf(raw.q).trim(),
    library: libraryParam(raw.library),
    letter: letterParam(raw.letter),
    sort: AUTHOR_SORTS.some((s) => s.value === sort) ? sort : 'name',
    offset: offsetParam(raw.offset),
  };
}

/** The query of GET /api/authors for this page of authors. */
export function authorsApiQuery(q: AuthorListQuery) {
  return queryOf({ limit: AUTHORS_PAGE, offset: q.offset, q: q.q, library_id: q.library, letter: q.letter, sort: q.sort === 'name' ? '' : q.sort });
}

export const authorListUrl = (q: AuthorListQuery, change: Partial<AuthorListQuery> = {}) => {
  const v = { ...q, offset: 0, ...change };
  return hrefOf('/authors', { q: v.q, library: v.library, letter: v.letter, sort: v.sort === 'name' ? '' : v.sort, offset: v.offset });
};

export function AuthorList({ q, authors, total, libraries }: { q: AuthorListQuery; authors: AuthorSummary[]; total: number; libraries: LibraryName[] }) {
  const i18n = useI18n();
  const { t } = i18n;
  return (
    <>
      <ListHeading kind="browse.authors" libraries={libraries} library={q.library} />
      <BrowseTabs current="authors" library={q.library} />
      <search aria-label={t('authors.find')}>
        <form id="authors-search" class="name-search" method="get" action="/authors">
          <div class="search-field">
            <label for="authors-q">{t('authors.find')}</label>
            <input
              id="authors-q"
              name="q"
              type="search"
              value={q.q}
              autocomplete="off"
              maxlength={200}
              hx-get="/authors"
              hx-include="#authors-search"
              hx-trigger="input changed delay:300ms, search"
              hx-target="#authors-results"
              hx-select="#authors-results"
              hx-swap="outerHTML"
              hx-push-url="true"
            />
          </div>
          {q.letter && <input type="hidden" name="letter" value={q.letter} />}
          <FilterBox active={q.library ? 1 : 0} label={t('browse.filtersAndSort')}>
            <div class="filters card">
              <LibrarySelect libraries={libraries} value={q.library} />
              <SelectField name="sort" label={t('browse.sort')} options={named(t, AUTHOR_SORTS)} value={q.sort} />
              <div class="actions">
                <button type="submit" class="primary" id="apply">
                  {t('browse.apply')}
                </button>
              </div>
            </div>
          </FilterBox>
        </form>
      </search>
      <div id="authors-results">
        <LetterJump current={q.letter} href={(letter) => authorListUrl(q, { letter })} label={t('authors.byLetter')} />
        <ListTotal id="authors-total" total={total} noun="count.authors" letter={q.letter} q={q.q} />
        {authors.length === 0 ? (
          <p id="no-results">{t('authors.noResults')}</p>
        ) : (
          <ul id="authors-grid" class="name-list" aria-label={t('browse.authors')}>
            {authors.map((a) => (
              <li key={a.name} class="name-item" data-author={a.name}>
                <a href={authorUrl(a.name)} class="author-link">
                  {a.name}
                </a>{' '}
                <span class="muted author-counts">
                  {a.series_count > 0
                    ? t('authors.counts', { books: countOf(i18n, a.book_count, 'count.books'), series: countOf(i18n, a.series_count, 'count.series') })
                    : countOf(i18n, a.book_count, 'count.books')}
                </span>
              </li>
            ))}
          </ul>
        )}
        <Pager total={total} offset={q.offset} size={AUTHORS_PAGE} href={(offset) => authorListUrl(q, { offset })} />
      </div>
    </>
  );
}
