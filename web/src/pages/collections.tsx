// Your collections: the system ones and your own, with how many books each holds; create, rename,
// reorder (move up, move down) and delete your own (the reading service decides); smart ones made
// with the rule builder; one collection's books, and removing a book from a collection of your own.
import { Outcome } from '../layout';
import { Cover, type Item } from './books';
import { type LibraryChoice, RuleBuilder, type SavedRules } from './smart-collection';

export interface CollectionRow {
  id: string;
  name: string;
  is_system: boolean;
  item_count: number;
  description?: string;
  is_smart?: boolean;
  /** a smart collection's rules */
  rules?: SavedRules | null;
}

export function Collections({ collections }: { collections: CollectionRow[] }) {
  const own = collections.filter((c) => !c.is_system);
  const system = collections.filter((c) => c.is_system);
  return (
    <>
      <h1>Collections</h1>
      <section class="card" aria-labelledby="own-title">
        <h2 id="own-title">Your collections</h2>
        {own.length === 0 ? (
          <p id="no-collections">None yet.</p>
        ) : (
          <ul class="plain" id="own-collections">
            {own.map((c, i) => (
              <li key={c.id} data-collection={c.id}>
                <a href={`/collections/${c.id}`} class="collection-link">
                  {c.name}
                </a>{' '}
                <span class="count">({c.item_count})</span>
                {c.is_smart && <span class="badge">smart</span>}
                <span class="move-buttons">
                  <button
                    type="button"
                    hx-post={`/collections/${c.id}/move?dir=up`}
                    hx-target={`#collection-outcome-${c.id}`}
                    id={`up-${c.id}`}
                    aria-label={`Move ${c.name} up`}
                    disabled={i === 0}
                  >
                    Up
                  </button>
                  <button
                    type="button"
                    hx-post={`/collections/${c.id}/move?dir=down`}
                    hx-target={`#collection-outcome-${c.id}`}
                    id={`down-${c.id}`}
                    aria-label={`Move ${c.name} down`}
                    disabled={i === own.length - 1}
                  >
                    Down
                  </button>
                </span>
                <form class="inline-form" hx-put={`/api/collections/${c.id}`} hx-ext="bindery-json" hx-target={`#collection-outcome-${c.id}`} data-reload>
                  <label for={`rename-${c.id}`}>New name</label>
                  <input id={`rename-${c.id}`} name="name" value={c.name} maxlength={100} required class="grow" />
                  <button type="submit" id={`rename-save-${c.id}`} aria-label={`Rename ${c.name}`}>
                    Rename
                  </button>
                  <button
                    type="button"
                    hx-delete={`/api/collections/${c.id}`}
                    hx-target={`#collection-outcome-${c.id}`}
                    data-reload
                    id={`delete-${c.id}`}
                    aria-label={`Delete ${c.name}`}
                  >
                    Delete
                  </button>
                  <Outcome id={`collection-outcome-${c.id}`} />
                </form>
              </li>
            ))}
          </ul>
        )}
        <form id="new-collection" class="inline-form" hx-post="/api/collections" hx-ext="bindery-json" hx-target="#new-outcome" data-reload>
          <label for="new-name">A new collection</label>
          <input id="new-name" name="name" maxlength={100} required class="grow" />
          <button type="submit" id="create-collection" class="primary">
            Create
          </button>
          <Outcome id="new-outcome" />
        </form>
      </section>
      <RuleBuilder />
      <section class="card" aria-labelledby="system-title">
        <h2 id="system-title">Made for you</h2>
        <ul class="plain" id="system-collections">
          {system.map((c) => (
            <li key={c.id}>
              <a href={`/collections/${c.id}`}>{c.name}</a> <span class="count">({c.item_count})</span>
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
  return (
    <>
      <h1>{c.name}</h1>
      <p id="collection-kind">
        {c.is_system ? 'Made for you: its books follow your reading.' : smart ? 'A smart collection: its books are the ones its rules match.' : 'Your collection.'}{' '}
        <span id="collection-count">{c.item_count === 1 ? '1 book.' : `${c.item_count} books.`}</span> <a href="/collections">All collections</a>
      </p>
      {notice && (
        <div class="alert alert-success" role="status" id="collection-notice">
          {notice}
        </div>
      )}
      <Outcome id="collection-page-outcome" />
      {books.length === 0 ? (
        <p id="empty-collection">No books in this collection.</p>
      ) : (
        <ul id="grid" class="grid" aria-label="Books">
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
                  aria-label={`Remove ${b.item.title} from ${c.name}`}
                >
                  Remove
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
