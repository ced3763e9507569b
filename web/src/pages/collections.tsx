// Your collections: the system ones and your own, with how many books each holds; create, rename,
// reorder (move up, move down) and delete your own (the reading service decides); smart ones made
// with the rule builder; one collection's books, and removing a book from a collection of your own.
import { useI18n } from '../i18n';
import { Outcome } from '../layout';
import { Cover, type Item } from './books';
import { countOf } from './browse';
import { sectionName } from './dashboard';
import { type LibraryChoice, RuleBuilder, type SavedRules } from './smart-collection';

export interface CollectionRow {
  id: string;
  name: string;
  is_system: boolean;
  /** a system collection's kind (its name in the reader's language) */
  query_type?: string | null;
  item_count: number;
  description?: string;
  is_smart?: boolean;
  /** a smart collection's rules */
  rules?: SavedRules | null;
}

export function Collections({ collections }: { collections: CollectionRow[] }) {
  const own = collections.filter((c) => !c.is_system);
  const system = collections.filter((c) => c.is_system);
  const { t, number } = useI18n();
  return (
    <>
      <h1>{t('nav.collections')}</h1>
      <section class="card" aria-labelledby="own-title">
        <h2 id="own-title">{t('coll.yours')}</h2>
        {own.length === 0 ? (
          <p id="no-collections">{t('library.noneYet')}</p>
        ) : (
          <ul class="plain" id="own-collections">
            {own.map((c, i) => (
              <li key={c.id} data-collection={c.id}>
                <a href={`/collections/${c.id}`} class="collection-link">
                  {c.name}
                </a>{' '}
                <span class="count">({number(c.item_count)})</span>
                {c.is_smart && <span class="badge">{t('coll.smart')}</span>}
                <span class="move-buttons">
                  <button
                    type="button"
                    hx-post={`/collections/${c.id}/move?dir=up`}
                    hx-target={`#collection-outcome-${c.id}`}
                    id={`up-${c.id}`}
                    aria-label={t('coll.moveUp', { name: c.name })}
                    disabled={i === 0}
                  >
                    {t('coll.up')}
                  </button>
                  <button
                    type="button"
                    hx-post={`/collections/${c.id}/move?dir=down`}
                    hx-target={`#collection-outcome-${c.id}`}
                    id={`down-${c.id}`}
                    aria-label={t('coll.moveDown', { name: c.name })}
                    disabled={i === own.length - 1}
                  >
                    {t('coll.down')}
                  </button>
                </span>
                <form class="inline-form" hx-put={`/api/collections/${c.id}`} hx-ext="bindery-json" hx-target={`#collection-outcome-${c.id}`} data-reload>
                  <label for={`rename-${c.id}`}>{t('coll.newName')}</label>
                  <input id={`rename-${c.id}`} name="name" value={c.name} maxlength={100} required class="grow" />
                  <button type="submit" id={`rename-save-${c.id}`} aria-label={t('coll.rename', { name: c.name })}>
                    {t('coll.renameButton')}
                  </button>
                  <button
                    type="button"
                    hx-delete={`/api/collections/${c.id}`}
                    hx-target={`#collection-outcome-${c.id}`}
                    data-reload
                    id={`delete-${c.id}`}
                    aria-label={t('coll.delete', { name: c.name })}
                  >
                    {t('library.delete')}
                  </button>
                  <Outcome id={`collection-outcome-${c.id}`} />
                </form>
              </li>
            ))}
          </ul>
        )}
        <form id="new-collection" class="inline-form" hx-post="/api/collections" hx-ext="bindery-json" hx-target="#new-outcome" data-reload>
          <label for="new-name">{t('coll.new')}</label>
          <input id="new-name" name="name" maxlength={100} required class="grow" />
          <button type="submit" id="create-collection" class="primary">
            {t('coll.create')}
          </button>
          <Outcome id="new-outcome" />
        </form>
      </section>
      <RuleBuilder />
      <section class="card" aria-labelledby="system-title">
        <h2 id="system-title">{t('coll.madeForYou')}</h2>
        <ul class="plain" id="system-collections">
          {system.map((c) => (
            <li key={c.id}>
              <a href={`/collections/${c.id}`}>{sectionName(c, t)}</a> <span class="count">({number(c.item_count)})</span>
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}

/**
 * One collection's books. A custom collection's books each have "Remove"; a smart collection's books
 * follow its rules, which are edited here (the builder, filled in); a system collection's are made
 * for you. Every action's outcome shows at the top, under the name.
 */
export function CollectionPage({
  c,
  books,
  libraries = [],
  notice,
}: {
  c: CollectionRow;
  books: { media_item_id: string; item: Item }[];
  libraries?: LibraryChoice[];
  notice?: string | undefined;
}) {
  const smart = Boolean(c.is_smart || c.rules);
  const i18n = useI18n();
  const { t } = i18n;
  return (
    <>
      <h1>{sectionName(c, t)}</h1>
      <p id="collection-kind">
        {t(c.is_system ? 'coll.kind.system' : smart ? 'coll.kind.smart' : 'coll.kind.own')}{' '}
        <span id="collection-count">{t('library.total', { total: countOf(i18n, c.item_count, 'count.books') })}</span> <a href="/collections">{t('coll.all')}</a>
      </p>
      {notice && (
        <div class="alert alert-success" role="status" id="collection-notice">
          {notice}
        </div>
      )}
      <Outcome id="collection-page-outcome" />
      {books.length === 0 ? (
        <p id="empty-collection">{t('coll.empty')}</p>
      ) : (
        <ul id="grid" class="grid" aria-label={t('browse.books')}>
          {books.map((b) => (
            <li class="book" key={b.media_item_id} data-book={b.media_item_id}>
              <a href={`/books/${b.item.id}`} class="book-link">
                <Cover item={b.item} />
                <span class="book-title">{b.item.title}</span>
              </a>
              {b.item.authors.length > 0 && <span class="book-authors">{b.item.authors.join(', ')}</span>}
              {!c.is_system && !smart && (
                <button
                  type="button"
                  hx-delete={`/api/collections/${c.id}/items/${b.media_item_id}`}
                  hx-target="#collection-page-outcome"
                  data-reload
                  id={`remove-${b.media_item_id}`}
                  aria-label={t('coll.removeFrom', { title: b.item.title, name: c.name })}
                >
                  {t('coll.remove')}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {smart && !c.is_system && <RuleBuilder editing={{ id: c.id, name: c.name, rules: c.rules ?? null }} libraries={libraries} />}
    </>
  );
}
