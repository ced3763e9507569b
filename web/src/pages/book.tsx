// One book: cover, metadata, formats with download links, the caller's progress and rating, and
// their collections (add with htmx; the reading service decides).
import { Catalog } from '@bindery/contracts';
import { useI18n } from '../i18n';
import { Outcome } from '../layout';
import { Cover, type Item, percent } from './books';
import { CalibreColumns } from './calibre';
import { detailLabel } from './edit';
import { type ProgressConflict, ProgressConflicts } from './progress-conflicts';
import { KeepOffline } from './offline';
import { readableFormat } from './reader';

export interface Progress {
  percentage: number | null;
  updated_at?: string | null;
}
export interface Collection {
  id: string;
  name: string;
  is_system: boolean;
}

const size = (n: number) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1024))} KB`);
const filterLink = (key: string, value: string) => `/library?${new URLSearchParams({ [key]: `"${value}"` })}`;

export function Book({
  item,
  progress,
  rating,
  conflicts = [],
  canEdit = false,
  saved = false,
  sendTo = null,
}: {
  item: Item;
  /** the viewer's e-reader address when this server mails ('' when they set none), null when it does not */
  sendTo?: string | null;
  progress: Progress | null;
  rating: number | null;
  conflicts?: ProgressConflict[];
  /** an admin, or a person the admin allowed to edit (issue 43): the Edit action */
  canEdit?: boolean;
  /** just back from the edit page's save */
  saved?: boolean;
}) {
  const { t } = useI18n();
  return (
    <article class="book-page" aria-labelledby="book-title">
      <div>
        <Cover item={item} big />
      </div>
      <div>
        {saved && (
          <div class="alert alert-success" role="status" id="edit-saved">
            {t('book.saved')}
          </div>
        )}
        <h1 id="book-title">{item.title}</h1>
        {canEdit && (
          <p>
            <a class="button" id="edit-book" href={`/books/${item.id}/edit`}>
              {t('book.edit')}
            </a>
          </p>
        )}
        <div id="conflict-notice" hx-get={`/books/${item.id}/conflict`} hx-trigger="load" hx-swap="outerHTML" />
        {item.authors.length > 0 && (
          <p id="book-authors">
            {t('book.by')}{' '}
            {item.authors.map((a, i) => (
              <>
                {i > 0 && ', '}
                <a href={`/authors/${encodeURIComponent(a)}`}>{a}</a>
              </>
            ))}
          </p>
        )}
        <dl class="meta">
          {item.series && (
            <>
              <dt>{t('book.series')}</dt>
              <dd>
                <a href={`/series/${encodeURIComponent(item.series)}`}>{item.series}</a>
                {item.series_index !== null && ` #${item.series_index}`}
              </dd>
            </>
          )}
          {item.year !== null && (
            <>
              <dt>{t('book.year')}</dt>
              <dd>{item.year}</dd>
            </>
          )}
          {item.language && (
            <>
              <dt>{t('book.language')}</dt>
              <dd>{item.language}</dd>
            </>
          )}
          {Catalog.TEXT_FIELD_NAMES.map(
            (name) =>
              item[name] && (
                <>
                  <dt>{t(detailLabel(name))}</dt>
                  <dd>{item[name]}</dd>
                </>
              ),
          )}
          {item.tags.length > 0 && (
            <>
              <dt>{t('book.tags')}</dt>
              <dd>
                {item.tags.map((tag, i) => (
                  <>
                    {i > 0 && ', '}
                    <a href={filterLink('tag', tag)}>{tag}</a>
                  </>
                ))}
              </dd>
            </>
          )}
          <dt>{t('book.progress')}</dt>
          <dd id="book-progress">
            {progress && progress.percentage !== null ? (
              <>
                <progress max={100} value={Math.round(progress.percentage * 100)} aria-label={t('book.readSoFar')}>
                  {percent(progress.percentage)}
                </progress>{' '}
                {t('book.percentRead', { share: percent(progress.percentage) })}
              </>
            ) : (
              t('book.notStarted')
            )}
          </dd>
          <dt>{t('book.yourRating')}</dt>
          <dd id="book-rating">{rating === null ? t('book.notRated') : t('book.stars', { n: rating })}</dd>
        </dl>
        <ProgressConflicts item={item.id} conflicts={conflicts} />
        <form id="rate" class="inline-form" hx-put={`/api/media-items/${item.id}/rating`} hx-ext="bindery-json" hx-target="#rating-outcome" data-reload>
          <label for="rating">{t('book.rate')}</label>
          <select id="rating" name="rating:number">
            {[5, 4, 3, 2, 1].map((n) => (
              <option key={n} value={n} selected={n === (rating ?? 5)}>
                {t('book.stars', { n })}
              </option>
            ))}
          </select>
          <button type="submit" id="save-rating">
            {t('book.saveRating')}
          </button>
          <Outcome id="rating-outcome" />
        </form>
        {item.description && <p class="description">{item.description}</p>}
        <CalibreColumns item={item} />
        <section aria-labelledby="formats-title">
          <h2 id="formats-title">{t('book.formats')}</h2>
          {readableFormat(item) && (
            <p>
              <a class="button primary" id="read" href={`/read/${encodeURIComponent(item.id)}`}>
                {t('book.read')}
              </a>
            </p>
          )}
          <KeepOffline item={item} />
          {item.formats.length === 0 ? (
            <p class="muted">{t('book.noFile')}</p>
          ) : (
            <ul class="formats" id="formats">
              {item.formats.map((f) => (
                <li key={f.file_path}>
                  <a href={f.file_url} download>
                    {t('book.download', { format: f.format.toUpperCase() })}
                  </a>{' '}
                  <span class="muted">({size(f.size)})</span>
                </li>
              ))}
            </ul>
          )}
          {sendTo !== null && item.formats.length > 0 && (
            <div id="send">
              {sendTo === '' ? (
                <p class="muted" id="send-hint">
                  {t('book.mailHint')} <a href="/profile">{t('book.mailHintLink')}</a>.
                </p>
              ) : (
                <button type="button" id="send-ereader" hx-post={`/api/media-items/${item.id}/send`} hx-target="#send-outcome">
                  {t('book.sendTo', { address: sendTo })}
                </button>
              )}
              <Outcome id="send-outcome" />
            </div>
          )}
        </section>
        <section aria-labelledby="annotations-title">
          <h2 id="annotations-title">{t('book.annotations')}</h2>
          <div id="annotations" hx-get={`/books/${item.id}/annotations`} hx-trigger="load" hx-swap="outerHTML">
            <p class="muted">{t('book.loadingHighlights')}</p>
          </div>
        </section>
        <section aria-labelledby="collections-title">
          <h2 id="collections-title">{t('book.collections')}</h2>
          {/* the collection list counts each collection's books: fetched after the page, not before it */}
          <div id="collection-picker" hx-get={`/books/${item.id}/collections`} hx-trigger="load" hx-swap="outerHTML">
            <p class="muted">{t('book.loadingCollections')}</p>
          </div>
        </section>
      </div>
    </article>
  );
}

/** The "add to a collection" form for a book (an htmx fragment of the book page). */
export function CollectionPicker({ item, collections }: { item: { id: string }; collections: Collection[] }) {
  const custom = collections.filter((c) => !c.is_system);
  const { t } = useI18n();
  return (
    <div id="collection-picker">
      {custom.length === 0 ? (
        <p class="muted">{t('book.noCollections')}</p>
      ) : (
        <form id="add-to-collection" hx-ext="bindery-json" hx-target="#collection-outcome" hx-swap="innerHTML" data-item={item.id}>
          <label for="collection">{t('book.addToCollection')}</label>
          <select id="collection" name="collection">
            {custom.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
          <input type="hidden" name="media_item_ids[]" value={item.id} />
          <button type="submit" class="primary" id="add-collection" hx-post="/api/collections/{collection}/items">
            {t('book.add')}
          </button>
          <Outcome id="collection-outcome" />
        </form>
      )}
    </div>
  );
}
