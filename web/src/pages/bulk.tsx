// The selection of the library grid and the series page (issue 43): a checkbox on each cover (shift-
// click ticks a range, edit.js), "select all matching" (every book the current filters match,
// gathered by the server through the search), and a bar of actions for the selection: set the
// series, add or remove tags, set the authors, the language or the reading direction (for people
// who may edit), mark read, unread or reset progress (anyone, for their own progress), and send the
// books to the person's e-reader (when this server mails).
import { type MessageKey, useI18n } from '../i18n';
import { Outcome } from '../layout';
import type { Item } from './books';

/** What "all matching" means on this page: the library's filters (its query string) or one series. */
export type SelectionScope = { kind: 'library'; query: string } | { kind: 'series'; name: string };

/** The checkbox on a cover: part of the selection form wherever it sits in the page. */
export function Pick({ item }: { item: Item }) {
  const { t } = useI18n();
  return (
    <label class="pick" for={`pick-${item.id}`}>
      <input type="checkbox" id={`pick-${item.id}`} class="pick-box" form="selection" name="ids" value={item.id} />
      <span class="visually-hidden">{t('bulk.select', { title: item.title })}</span>
    </label>
  );
}

const EDITS: { value: string; label: MessageKey }[] = [
  { value: 'series', label: 'bulk.setSeries' },
  { value: 'add_tags', label: 'bulk.addTags' },
  { value: 'remove_tags', label: 'bulk.removeTags' },
  { value: 'authors', label: 'bulk.setAuthors' },
  { value: 'language', label: 'bulk.setLanguage' },
  { value: 'reading_direction', label: 'bulk.setDirection' },
];

/** What edit.js says as the selection changes, in the page's language (it holds no words of its own). */
const SELECTION_WORDS: Record<string, MessageKey> = {
  allOne: 'bulk.js.allOne',
  allMany: 'bulk.js.allMany',
  none: 'bulk.js.none',
  one: 'bulk.js.one',
  many: 'bulk.js.many',
};

export function SelectionBar({ total, scope, editor, mail = false }: { total: number; scope: SelectionScope; editor: boolean; mail?: boolean }) {
  const { t, number, locale } = useI18n();
  // the counts' words with a {n} edit.js fills in (the number already in the page's language when it is the total)
  const words = Object.fromEntries(Object.entries(SELECTION_WORDS).map(([k, key]) => [k, t(key, { total: number(total), n: '{n}' })]));
  return (
    <form
      id="selection"
      class="selection-bar card"
      hx-post="/library/bulk"
      hx-target="#selection-outcome"
      aria-labelledby="selection-title"
      data-words={JSON.stringify(words)}
      data-locale={locale}
    >
      <h2 id="selection-title">{t('bulk.title')}</h2>
      <p id="selection-count" class="muted" aria-live="polite">
        {t('bulk.tick')}
      </p>
      <div class="selection-controls">
        <label class="inline" for="select-all">
          <input type="checkbox" id="select-all" name="all_matching" value="1" data-total={String(total)} />{' '}
          {scope.kind === 'series' ? t('bulk.everyOfSeries', { total }) : t('bulk.allMatching', { total })}
        </label>
        {scope.kind === 'library' ? <input type="hidden" name="query" value={scope.query} /> : <input type="hidden" name="series_scope" value={scope.name} />}
        <div>
          <label for="selection-action">{t('bulk.action')}</label>
          <select id="selection-action" name="action">
            <option value="read">{t('bulk.markRead')}</option>
            <option value="unread">{t('bulk.markUnread')}</option>
            <option value="reset">{t('bulk.reset')}</option>
            {mail && <option value="send">{t('bulk.send')}</option>}
            {editor &&
              EDITS.map((e) => (
                <option key={e.value} value={e.value}>
                  {t(e.label)}
                </option>
              ))}
          </select>
        </div>
        {editor && (
          <div class="grow">
            <label for="selection-value">{t('smart.value')}</label>
            <input id="selection-value" name="value" maxlength={2000} aria-describedby="selection-value-hint" />
            <small id="selection-value-hint" class="muted">
              {t('bulk.valueHint')}
            </small>
          </div>
        )}
        <div class="actions">
          <button type="submit" class="primary" id="selection-apply">
            {t('browse.apply')}
          </button>
          <button type="button" id="selection-clear" hidden>
            {t('bulk.clear')}
          </button>
        </div>
      </div>
      <Outcome id="selection-outcome" />
    </form>
  );
}
