// Reading offline (issue 45): the book page's "Keep offline" control and the offline books page.
// Both are filled in by offline.js from this browser's own store (IndexedDB): the server knows
// nothing of what a browser keeps. What the script says is rendered here, in the reader's language,
// handed to it as the catalog's own messages in a data-words attribute, which it formats with the
// catalogs' small formatter (i18n/format.ts), as the reader's script does.
import { type Catalog, type MessageKey, useI18n } from '../i18n';
import type { Item } from './books';
import { readableFormat } from './reader';

/** What the "Keep offline" button says as it works. */
function keepWords(catalog: Catalog): Record<string, string> {
  return wordsFrom(catalog, {
    keep: 'offline.keep',
    removeCopy: 'offline.removeCopy',
    keeping: 'offline.keeping',
    keepingPages: 'offline.keepingPages',
    removed: 'offline.removed',
    kept: 'offline.kept',
    keptReady: 'offline.keptReady',
    failed: 'offline.failed',
    quota: 'offline.quota',
    quotaNeed: 'offline.quotaNeed',
    kb: 'offline.kb',
    mb: 'offline.mb',
  });
}

/** The catalog's own messages (ICU, placeholders left in) under the names the script asks for. */
const wordsFrom = (catalog: Catalog, keys: Record<string, MessageKey>): Record<string, string> =>
  Object.fromEntries(Object.entries(keys).map(([name, key]) => [name, catalog[key]]));

/**
 * "Keep offline" for a book the reader can open: a text book's file is kept, a comic's or PDF's
 * pages as pictures (and a PDF's page texts), so one with no page count has nothing to keep.
 */
export function KeepOffline({ item }: { item: Item }) {
  const { t, catalog } = useI18n();
  const chosen = readableFormat(item);
  if (!chosen || (chosen.kind === 'pages' && !(item.page_count && item.page_count > 0))) return null;
  return (
    <div class="keep-offline">
      <button
        type="button"
        id="keep-offline"
        data-item={item.id}
        data-title={item.title}
        data-authors={item.authors.join(', ')}
        data-format={chosen.format.format.toLowerCase()}
        data-kind={chosen.kind}
        data-page-count={chosen.kind === 'pages' ? (item.page_count ?? undefined) : undefined}
        data-file={chosen.format.file_url}
        data-name={chosen.format.file_path.split('/').pop()}
        data-sha256={chosen.format.sha256 ?? undefined}
        data-cover={item.cover_url === null ? undefined : `/api/media-items/${item.id}/cover`}
        data-words={JSON.stringify(keepWords(catalog))}
        hidden
      >
        {t('offline.keep')}
      </button>{' '}
      <span id="keep-offline-status" role="status" />{' '}
      <a href="/offline" id="offline-books-link">
        {t('offline.title')}
      </a>
    </div>
  );
}

/** The books this browser keeps for reading offline, with their size and a Remove button each. */
export function OfflineBooks() {
  const { t, catalog } = useI18n();
  const words = {
    ...keepWords(catalog),
    ...wordsFrom(catalog, {
      untitled: 'offline.untitled',
      meta: 'offline.meta',
      metaBy: 'offline.metaBy',
      remove: 'offline.remove',
      removeLabel: 'offline.removeLabel',
      removeLabelUntitled: 'offline.removeLabelUntitled',
      removedState: 'offline.removedState',
      offlineNow: 'offline.offlineNow',
      usage: 'offline.usage',
      usageQuota: 'offline.usageQuota',
    }),
  };
  return (
    <section aria-labelledby="offline-title">
      <h1 id="offline-title">{t('offline.title')}</h1>
      <p class="muted">{t('offline.intro')}</p>
      <p id="offline-state" role="status" />
      <ul id="offline-books" class="offline-books" aria-label={t('offline.listLabel')} data-words={JSON.stringify(words)} />
      <p id="offline-empty" class="muted" hidden>
        {t('offline.empty')}
      </p>
      <p id="offline-usage" class="muted" />
    </section>
  );
}
