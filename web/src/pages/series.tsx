// A series (GET /api/series/<name>): its books the caller may see in index order (books without a
// number last, by title) with the caller's progress, its description (its first book's that has
// one), "Read next" (the first book not finished, straight into the reader), the whole numbers
// missing, and actions on every book at once: mark them read or unread, add them to a collection.
import { useI18n } from '../i18n';
import { Outcome } from '../layout';
import type { Item } from './books';
import { countOf, Pager } from './browse';
import { LibraryCard, PERCENT } from './library';
import { SelectionBar } from './bulk';
import type { SeriesSummary } from './series-list';

export interface SeriesBook {
  media_item_id: string;
  percentage: number | null;
  item: Item;
}

export interface SeriesDetail extends SeriesSummary {
  description: string | null;
  next_item_id: string | null;
  next_title: string | null;
  next_percentage: number | null;
  missing_numbers: number[];
  missing_count: number;
  data: SeriesBook[];
  total: number;
  offset: number;
}

/** A collection of the caller's own that books can be added to (not a system or smart one). */
export interface CollectionChoice {
  id: string;
  name: string;
}

const pct = (p: number) => Math.round(p * 100);

/** Books a series page shows; the pager reaches the rest. */
export const SERIES_BOOKS_PAGE = 60;

/** The series page's own address at `offset` (the name encoded whole, as its links make it). */
const pageUrl = (name: string, offset: number) => `/series/${encodeURIComponent(name)}${offset > 0 ? `?offset=${offset}` : ''}`;

function Missing({ s }: { s: SeriesDetail }) {
  const { t, number } = useI18n();
  if (s.missing_count === 0) return null;
  const more = s.missing_count - s.missing_numbers.length;
  const numbers = s.missing_numbers.map((n) => number(n)).join(', ');
  return (
    <p id="series-missing">{more > 0 ? t('seriesPage.missingMore', { count: s.missing_count, numbers, more }) : t('seriesPage.missing', { count: s.missing_count, numbers })}</p>
  );
}

function ReadNext({ s }: { s: SeriesDetail }) {
  const { t } = useI18n();
  if (s.next_item_id === null)
    return (
      <p id="series-done" class="alert alert-success">
        {t('seriesPage.done')}
      </p>
    );
  const what = t((s.next_percentage ?? 0) > 0 ? 'seriesPage.continue' : 'seriesPage.readNext');
  return (
    <p>
      <a class="button primary" id="read-next" href={`/read/${s.next_item_id}`}>
        {s.next_title !== null ? t('seriesPage.nextTitle', { what, title: s.next_title }) : what}
      </a>
    </p>
  );
}

/** Mark every book read or unread, or add every book to one of the caller's collections. */
function BulkActions({ s, collections }: { s: SeriesDetail; collections: CollectionChoice[] }) {
  const { t } = useI18n();
  return (
    <section class="card" aria-labelledby="bulk-title" id="series-actions">
      <h2 id="bulk-title">{t('seriesPage.everyBook')}</h2>
      <div class="row">
        <button type="button" id="mark-read" hx-post="/series/mark" hx-vals={JSON.stringify({ series: s.name, state: 'read' })} hx-target="#bulk-outcome">
          {t('seriesPage.markRead')}
        </button>
        <button type="button" id="mark-unread" hx-post="/series/mark" hx-vals={JSON.stringify({ series: s.name, state: 'unread' })} hx-target="#bulk-outcome">
          {t('seriesPage.markUnread')}
        </button>
      </div>
      {collections.length === 0 ? (
        <p class="muted" id="no-own-collections">
          {t('seriesPage.noCollections')} <a href="/collections">{t('nav.collections')}</a>
          {t('seriesPage.noCollectionsAfter')}
        </p>
      ) : (
        <form id="series-collect" class="inline-form" hx-post="/series/collect" hx-target="#bulk-outcome">
          <input type="hidden" name="series" value={s.name} />
          <label for="series-collection">{t('seriesPage.addEveryBookTo')}</label>
          <select id="series-collection" name="collection" class="grow">
            {collections.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
          <button type="submit" id="series-collect-submit">
            {t('seriesPage.add')}
          </button>
        </form>
      )}
      <Outcome id="bulk-outcome" />
    </section>
  );
}

export function SeriesPage({ s, collections, editor = false, mail = false }: { s: SeriesDetail; collections: CollectionChoice[]; editor?: boolean; mail?: boolean }) {
  const i18n = useI18n();
  const { t, number } = i18n;
  return (
    <>
      <p class="muted eyebrow">{t('browse.series')}</p>
      <h1 id="series-name">{s.name}</h1>
      <div id="series-body">
        <div class={s.cover_item_id ? 'series-head with-cover' : 'series-head'}>
          {s.cover_item_id && <img class="cover series-cover" src={`/api/media-items/${s.cover_item_id}/thumbnail`} alt="" decoding="async" />}
          <div>
            <p id="series-summary">
              {t('seriesPage.summary', { books: countOf(i18n, s.book_count, 'count.books'), finished: s.read_count })}
              {s.in_progress_count > 0 && ` ${t('seriesPage.inProgress', { count: s.in_progress_count })}`}{' '}
              {s.unread_count > 0 && (
                <span class="badge" id="series-unread">
                  {t('series.unread', { count: s.unread_count })}
                </span>
              )}{' '}
              <a href="/series">{t('seriesPage.all')}</a>
            </p>
            <progress id="series-progress" max={100} value={pct(s.progress)} aria-label={t('browse.readShare', { name: s.name, share: number(s.progress, PERCENT) })}>
              {number(s.progress, PERCENT)}
            </progress>
            {s.description && (
              <p id="series-description" class="description">
                {s.description}
              </p>
            )}
            <ReadNext s={s} />
            <Missing s={s} />
          </div>
        </div>
        <ol id="grid" class="grid" aria-label={t('seriesPage.inOrder')}>
          {s.data.map((b) => (
            <LibraryCard key={b.media_item_id} item={b.item} progress={b.percentage ?? 0} pick />
          ))}
        </ol>
        {s.total > SERIES_BOOKS_PAGE && (
          <>
            <p class="muted" id="series-shown">
              {s.data.length === 0 ? t('seriesPage.noneHere', { total: s.total }) : t('seriesPage.shown', { from: s.offset + 1, to: s.offset + s.data.length, total: s.total })}
            </p>
            <Pager total={s.total} offset={s.offset} size={SERIES_BOOKS_PAGE} href={(offset) => pageUrl(s.name, offset)} />
          </>
        )}
      </div>
      <SelectionBar total={s.total} scope={{ kind: 'series', name: s.name }} editor={editor} mail={mail} />
      <BulkActions s={s} collections={collections} />
    </>
  );
}
