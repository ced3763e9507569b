// The library: a cover grid of what the caller may see, with search, filters (library, author,
// series, format, tag, read state), a sort that applies whatever the filters (relevance first only
// for free text, unless another sort is chosen), the total, and paging by "Load more" (a plain link;
// with htmx it appends the next page in place) and by page. Every grid comes from
// /api/media-items/search, which counts its matches. The caller's saved filters of the library are
// links that apply them. On a phone the filters fold away behind their summary.
import { type MessageKey, useI18n } from '../i18n';
import { Outcome } from '../layout';
import { BrowseTabs, countOf, FilterBox, LibrarySelect, type LibraryName, ListHeading, libraryParam, Pager, SelectField } from './browse';
import { Cover, type Item } from './books';
import { Pick, SelectionBar } from './bulk';

export const PAGE = 24;
/** A share (0 to 1) as a whole percentage in the page's language. */
export const PERCENT = { style: 'percent', maximumFractionDigits: 0 } as const;
export const FORMATS = ['epub', 'kepub', 'pdf', 'cbz', 'cbr', 'mobi', 'azw3', 'fb2'];
/** A choice of a list (a sort, a read state): its value and the message that names it. */
export interface Choice {
  value: string;
  label: MessageKey;
}
export const SORTS: Choice[] = [
  { value: 'title', label: 'library.sort.title' },
  { value: '-created_at', label: 'browse.recentlyAdded' },
  { value: 'author', label: 'library.author' },
  { value: 'series', label: 'browse.series' },
  { value: '-year', label: 'library.sort.newest' },
  { value: 'year', label: 'library.sort.oldest' },
];
/** The order of a free-text search unless another is chosen: the best matches first. */
export const RELEVANCE: Choice = { value: 'relevance', label: 'library.sort.relevance' };

/** The read states the list API's `read_status` takes, as the page names them. */
export const STATES: Choice[] = [
  { value: 'unread', label: 'state.unread' },
  { value: 'reading', label: 'state.reading' },
  { value: 'finished', label: 'state.finished' },
];

/** The choices with their names in the page's language (for a SelectField). */
export const named = (t: (k: MessageKey) => string, choices: readonly Choice[]) => choices.map((c) => ({ value: c.value, label: t(c.label) }));

/** The saved filters' `resource_type` for the library's queries. */
export const LIBRARY_FILTERS = 'media_items';

export interface SavedFilter {
  id: string;
  name: string;
  filter: Record<string, unknown>;
}

export interface LibraryQuery {
  q: string;
  /** a library's id, or '' for every library the caller may see */
  library: string;
  author: string;
  series: string;
  format: string;
  tag: string;
  state: string;
  sort: string;
  offset: number;
}

const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, 200) : '');

/** The sort a query gets when none is chosen: the best matches for free text, else the title. */
const defaultSort = (q: string) => (q === '' ? 'title' : RELEVANCE.value);

export function libraryQuery(raw: Record<string, unknown>): LibraryQuery {
  const offset = Number(text(raw.offset));
  const q = text(raw.q).trim();
  const sort = text(raw.sort);
  const format = text(raw.format).toLowerCase();
  return {
    q,
    library: libraryParam(raw.library),
    author: text(raw.author).trim(),
    series: text(raw.series).trim(),
    format: FORMATS.includes(format) ? format : '',
    tag: text(raw.tag).trim(),
    state: STATES.some((x) => x.value === raw.state) ? (raw.state as string) : '',
    sort: SORTS.some((s) => s.value === sort) || (sort === RELEVANCE.value && q !== '') ? sort : defaultSort(q),
    offset: Number.isInteger(offset) && offset >= 0 && offset <= 1_000_000 ? offset : 0,
  };
}

/** How many filters are set (the library and the read state count; the sort does not). */
export const activeFilters = (q: LibraryQuery) => (['q', 'library', 'author', 'series', 'format', 'tag', 'state'] as const).filter((k) => q[k] !== '').length;

/** The API URL that answers this page of the library: the search, which counts what matches. */
export function apiUrl(q: LibraryQuery): string {
  return `/api/media-items/search?${new URLSearchParams(searchQuery(q) as Record<string, string>)}`;
}

/** The query of GET /api/media-items/search for this page of the library (`limit`: how many). */
export function searchQuery(q: LibraryQuery, limit = PAGE) {
  return {
    limit: String(limit),
    offset: String(q.offset),
    ...(q.sort !== RELEVANCE.value ? { sort: q.sort } : {}),
    ...(q.library ? { library_id: q.library } : {}),
    ...(q.state ? { read_status: q.state } : {}),
    ...(q.q ? { q: q.q } : {}),
    ...(q.author ? { author_filter: q.author } : {}),
    ...(q.series ? { series_filter: q.series } : {}),
    ...(q.format ? { format: q.format } : {}),
    ...(q.tag ? { tags_filter: q.tag } : {}),
  };
}

/** This page's own URL with another offset. */
export function pageUrl(q: LibraryQuery, offset: number): string {
  const p = new URLSearchParams();
  for (const k of ['q', 'library', 'author', 'series', 'format', 'tag', 'state'] as const) if (q[k]) p.set(k, q[k]);
  if (q.sort !== defaultSort(q.q)) p.set('sort', q.sort);
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

/** "Load more": the next page appended in place (a plain link without htmx). */
export function LoadMore({ q, total, oob = false }: { q: LibraryQuery; total: number; oob?: boolean }) {
  const { t } = useI18n();
  const next = pageUrl(q, q.offset + PAGE);
  return (
    <div id="load-more" class="load-more" hx-swap-oob={oob ? 'outerHTML' : undefined}>
      {q.offset + PAGE < total && (
        <a class="button" href={next} hx-get={next} hx-target="#grid" hx-swap="beforeend" hx-push-url="false">
          {t('library.loadMore')}
        </a>
      )}
    </div>
  );
}

/** The pager, as far as the grid has got ("Load more" moves it on). */
export function LibraryPages({ q, total, oob = false }: { q: LibraryQuery; total: number; oob?: boolean }) {
  return (
    <div id="pages" hx-swap-oob={oob ? 'outerHTML' : undefined}>
      <Pager total={total} offset={q.offset} size={PAGE} href={(o) => pageUrl(q, o)} />
    </div>
  );
}

/** The pages of an author and of a series (the name URL-encoded whole, any character allowed). */
export const authorUrl = (name: string) => `/authors/${encodeURIComponent(name)}`;
export const seriesUrl = (name: string) => `/series/${encodeURIComponent(name)}`;

/** A book of the grid: its cover and title to its page, its authors and series to theirs. */
export function LibraryCard({ item, progress, pick = false }: { item: Item; progress?: number | null; pick?: boolean }) {
  const { t, number } = useI18n();
  return (
    <li class="book" data-book={item.id}>
      {pick && <Pick item={item} />}
      <a href={`/books/${item.id}`} class="book-link">
        <Cover item={item} />
        <span class="book-title">{item.title}</span>
      </a>
      {item.authors.length > 0 && (
        <span class="book-authors">
          {item.authors.map((a, i) => (
            <>
              {i > 0 && ', '}
              <a href={authorUrl(a)} class="author-link">
                {a}
              </a>
            </>
          ))}
        </span>
      )}
      {item.series && (
        <span class="book-series">
          <a href={seriesUrl(item.series)} class="series-link">
            {item.series}
          </a>
          {item.series_index !== null && ` #${item.series_index}`}
        </span>
      )}
      {typeof progress === 'number' && (
        <progress max={100} value={Math.round(progress * 100)} aria-label={t('browse.readShare', { name: item.title, share: number(progress, PERCENT) })}>
          {number(progress, PERCENT)}
        </progress>
      )}
    </li>
  );
}

export function Books({ items }: { items: Item[] }) {
  return (
    <>
      {items.map((i) => (
        <LibraryCard key={i.id} item={i} pick />
      ))}
    </>
  );
}

/** The query a saved filter holds, as the library's own (unknown or malformed parts dropped). */
export const savedQuery = (f: SavedFilter) => libraryQuery(f.filter && typeof f.filter === 'object' ? f.filter : {});

/** The saved filters' place: they arrive just after the page (the grid's answer waits for nothing but the grid). */
function SavedFiltersSlot({ q }: { q: LibraryQuery }) {
  const { t } = useI18n();
  const query = pageUrl({ ...q, offset: 0 }, 0).replace(/^\/library\??/, '');
  return (
    <section class="card" id="saved-filters" aria-labelledby="saved-title" hx-get={`/library/saved${query ? `?${query}` : ''}`} hx-trigger="load" hx-swap="outerHTML">
      <h2 id="saved-title">{t('library.savedFilters')}</h2>
    </section>
  );
}

/** The caller's saved filters (links that apply them, delete) and "Save this filter" for the current query. */
export function SavedFilters({ q, saved }: { q: LibraryQuery; saved: SavedFilter[] }) {
  const { t } = useI18n();
  const { offset: _o, ...query } = q;
  return (
    <section class="card" aria-labelledby="saved-title" id="saved-filters">
      <h2 id="saved-title">{t('library.savedFilters')}</h2>
      {saved.length === 0 ? (
        <p id="no-saved">{t('library.noneYet')}</p>
      ) : (
        <ul class="plain" id="saved-list">
          {saved.map((f) => (
            <li key={f.id} data-filter={f.id}>
              <a href={pageUrl(savedQuery(f), 0)} class="saved-link">
                {f.name}
              </a>{' '}
              <button
                type="button"
                hx-delete={`/api/saved-filters/${f.id}`}
                hx-target="#saved-outcome"
                data-reload
                id={`delete-filter-${f.id}`}
                aria-label={t('library.deleteFilter', { name: f.name })}
              >
                {t('library.delete')}
              </button>
            </li>
          ))}
        </ul>
      )}
      <form id="save-filter" class="inline-form" hx-post="/library/filters" hx-target="#saved-outcome">
        {Object.entries(query).map(([k, v]) => (
          <input key={k} type="hidden" name={k} value={v} />
        ))}
        <label for="filter-name">{t('library.saveFilterAs')}</label>
        <input id="filter-name" name="name" maxlength={100} required class="grow" />
        <button type="submit" id="save-filter-submit">
          {t('library.saveFilter')}
        </button>
      </form>
      <Outcome id="saved-outcome" />
    </section>
  );
}

export function Library({
  q,
  items,
  total,
  libraries,
  editor = false,
  mail = false,
}: {
  q: LibraryQuery;
  items: Item[];
  total: number;
  libraries: LibraryName[];
  editor?: boolean;
  mail?: boolean;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const sorts = q.q ? [RELEVANCE, ...SORTS] : SORTS;
  return (
    <>
      <ListHeading kind="browse.library" libraries={libraries} library={q.library} />
      <BrowseTabs current="books" library={q.library} />
      <search aria-label={t('library.searchLabel')}>
        <FilterBox active={activeFilters(q)}>
          <form class="filters card" method="get" action="/library">
            <Field id="q" label={t('library.search')} value={q.q} type="search" />
            <LibrarySelect libraries={libraries} value={q.library} />
            <Field id="author" label={t('library.author')} value={q.author} />
            <Field id="series" label={t('browse.series')} value={q.series} />
            <Field id="tag" label={t('library.tag')} value={q.tag} />
            <SelectField name="format" label={t('library.format')} options={FORMATS.map((f) => ({ value: f, label: f.toUpperCase() }))} value={q.format} any={t('browse.any')} />
            <SelectField name="state" label={t('browse.readState')} options={named(t, STATES)} value={q.state} any={t('browse.any')} />
            <SelectField name="sort" label={t('browse.sort')} options={named(t, sorts)} value={q.sort} />
            <div class="actions">
              <button type="submit" class="primary" id="apply">
                {t('browse.apply')}
              </button>
              <a href={q.library ? `/library?library=${q.library}` : '/library'} id="clear">
                {t('library.clear')}
              </a>
            </div>
          </form>
        </FilterBox>
      </search>
      <p id="library-total" class="muted">
        {t(q.sort === RELEVANCE.value && total > 0 ? 'library.totalBest' : 'library.total', { total: countOf(i18n, total, 'count.books') })}
      </p>
      {items.length === 0 ? (
        <p id="no-results">{t('library.noResults')}</p>
      ) : (
        <ul id="grid" class="grid" aria-label={t('browse.books')}>
          <Books items={items} />
        </ul>
      )}
      <LoadMore q={q} total={total} />
      <LibraryPages q={q} total={total} />
      {items.length > 0 && (
        <SelectionBar total={total} scope={{ kind: 'library', query: pageUrl({ ...q, offset: 0 }, 0).replace(/^\/library\??/, '') }} editor={editor} mail={mail} />
      )}
      <SavedFiltersSlot q={q} />
    </>
  );
}
