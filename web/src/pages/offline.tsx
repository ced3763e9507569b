// Reading offline (issue 45): the book page's "Keep offline" control and the offline books page.
// Both are filled in by offline.js from this browser's own store (IndexedDB): the server knows
// nothing of what a browser keeps. What the script says is rendered here, in the reader's language,
// and handed to it in a data-words attribute (the script formats no message of its own).
import { type I18n, type MessageKey, useI18n, type Values } from '../i18n';
import type { Item } from './books';
import { readableFormat } from './reader';

/** A message with `{name}` left in place of each of `names`, for the script to fill in. */
const template = (t: I18n['t'], key: MessageKey, names: string[], values: Values = {}) => t(key, { ...values, ...Object.fromEntries(names.map((n) => [n, `{${n}}`])) });

/**
 * A message with a count, once per plural category of the language (the script picks one with
 * `Intl.PluralRules`): each rendered with a number of that category, put back as `{count}`.
 */
export function pluralTemplates(i18n: I18n, key: MessageKey, names: string[]): Record<string, string> {
  const rules = new Intl.PluralRules(i18n.locale);
  const out: Record<string, string> = {};
  for (let n = 0; n <= 200; n++) {
    const category = rules.select(n);
    if (out[category] !== undefined) continue;
    out[category] = template(i18n.t, key, names, { count: n }).replace(i18n.number(n), '{count}');
  }
  return out;
}

/** What the "Keep offline" button says as it works. */
function keepWords(t: I18n['t']): Record<string, string> {
  return {
    keep: t('offline.keep'),
    removeCopy: t('offline.removeCopy'),
    keeping: t('offline.keeping'),
    removed: t('offline.removed'),
    kept: template(t, 'offline.kept', ['size']),
    keptReady: template(t, 'offline.keptReady', ['size']),
    failed: template(t, 'offline.failed', ['error']),
    quota: t('offline.quota'),
    quotaNeed: template(t, 'offline.quotaNeed', ['size']),
    kb: template(t, 'offline.kb', ['n']),
    mb: template(t, 'offline.mb', ['n']),
  };
}

/** "Keep offline" for a book the reader lays out as text (its file is read from this browser). */
export function KeepOffline({ item }: { item: Item }) {
  const { t } = useI18n();
  const chosen = readableFormat(item);
  if (chosen?.kind !== 'text') return null;
  return (
    <div class="keep-offline">
      <button
        type="button"
        id="keep-offline"
        data-item={item.id}
        data-title={item.title}
        data-authors={item.authors.join(', ')}
        data-format={chosen.format.format.toLowerCase()}
        data-file={chosen.format.file_url}
        data-name={chosen.format.file_path.split('/').pop()}
        data-sha256={chosen.format.sha256 ?? undefined}
        data-cover={item.cover_url === null ? undefined : `/api/media-items/${item.id}/cover`}
        data-words={JSON.stringify(keepWords(t))}
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
  const i18n = useI18n();
  const { t } = i18n;
  const words = {
    ...keepWords(t),
    untitled: t('offline.untitled'),
    meta: template(t, 'offline.meta', ['format', 'size']),
    metaBy: template(t, 'offline.metaBy', ['authors', 'format', 'size']),
    remove: t('offline.remove'),
    removeLabel: template(t, 'offline.removeLabel', ['title']),
    removeLabelUntitled: t('offline.removeLabelUntitled'),
    removedState: template(t, 'offline.removedState', ['title']),
    offlineNow: t('offline.offlineNow'),
    usage: pluralTemplates(i18n, 'offline.usage', ['size']),
    usageQuota: pluralTemplates(i18n, 'offline.usageQuota', ['size', 'quota']),
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
