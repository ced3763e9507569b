// Admin: duplicate content. Each pending group (books whose files share a SHA-256) lists its
// members with their library, file paths and how much reading data hangs on each (the reading
// service's counts); "Keep this one" keeps that book and merges the others into it, "Keep all"
// dismisses the group. The catalog decides and words the outcome.
import type { Reading } from '@bindery/contracts';
import { type I18n, type MessageKey, useI18n } from '../i18n';
import type { Item } from './books';
import { Outcome } from '../layout';
import { AdminTabs } from './admin-tabs';

/** how much reading data hangs on an item (the reading service's count) */
export type Usage = Reading.Usage;
export interface ConflictGroup {
  id: string;
  sha256: string;
  created_at: string;
  items: (Item & { usage: Usage })[];
}

const USAGE: [keyof Usage, MessageKey][] = [
  ['progress', 'conflicts.usage.progress'],
  ['highlights', 'conflicts.usage.highlights'],
  ['bookmarks', 'conflicts.usage.bookmarks'],
  ['notes', 'conflicts.usage.notes'],
  ['collections', 'conflicts.usage.collections'],
];

/** "2 reading positions, 1 highlight", or "No reading data" (in the reader's language). */
export function usageText(u: Usage, { t, locale }: Pick<I18n, 't' | 'locale'>): string {
  const parts = USAGE.filter(([k]) => u[k] > 0).map(([k, key]) => t(key, { n: u[k] }));
  return parts.length === 0 ? t('conflicts.usage.none') : new Intl.ListFormat(locale, { type: 'unit', style: 'short' }).format(parts);
}

export function AdminConflicts({ groups, libraries }: { groups: ConflictGroup[]; libraries: Map<string, string> }) {
  const i18n = useI18n();
  const { t } = i18n;
  return (
    <>
      <h1>{t('conflicts.heading')}</h1>
      <AdminTabs current="/admin/conflicts" />
      <p class="muted">{t('conflicts.intro')}</p>
      {groups.length === 0 ? (
        <p id="no-conflicts">{t('conflicts.none')}</p>
      ) : (
        <ul class="plain conflicts" id="conflicts">
          {groups.map((g, n) => (
            <li key={g.id} id={`conflict-${g.id}`} class="card conflict" data-conflict={g.id}>
              <h2 id={`conflict-title-${g.id}`}>{t('conflicts.group', { n: n + 1, count: g.items.length })}</h2>
              <p class="muted">
                SHA-256 <code>{g.sha256}</code>
              </p>
              <div id={`conflict-members-${g.id}`}>
                <ul class="plain">
                  {g.items.map((i) => (
                    <li key={i.id} class="conflict-member" data-item={i.id}>
                      <p class="member-title">
                        <a href={`/books/${i.id}`}>{i.title}</a>
                        {i.authors.length > 0 && <span class="muted">{` ${t('conflicts.by', { authors: i.authors.join(', ') })}`}</span>}
                      </p>
                      <dl class="meta">
                        <dt>{t('conflicts.library')}</dt>
                        <dd class="member-library">{libraries.get(i.library_id) ?? i.library_id}</dd>
                        <dt>{t('conflicts.files')}</dt>
                        <dd class="member-paths">{(i.formats.length > 0 ? i.formats.map((f) => f.file_path) : [i.file_path ?? '']).join(', ')}</dd>
                        <dt>{t('conflicts.readingData')}</dt>
                        <dd class="member-usage">{usageText(i.usage, i18n)}</dd>
                      </dl>
                      <form hx-post={`/admin/conflicts/${g.id}/resolve`} hx-target={`#conflict-outcome-${g.id}`}>
                        <input type="hidden" name="action" value="keep" />
                        <input type="hidden" name="keep_uuid" value={i.id} />
                        <button type="submit" class="primary" aria-label={t('conflicts.keepOneLabel', { title: i.title, file: (i.formats[0]?.file_path ?? i.file_path) || i.id })}>
                          {t('conflicts.keepOne')}
                        </button>
                      </form>
                    </li>
                  ))}
                </ul>
                <form hx-post={`/admin/conflicts/${g.id}/resolve`} hx-target={`#conflict-outcome-${g.id}`}>
                  <input type="hidden" name="action" value="keep_all" />
                  <button type="submit" id={`keep-all-${g.id}`} aria-describedby={`conflict-title-${g.id}`}>
                    {t('conflicts.keepAll')}
                  </button>
                </form>
              </div>
              <Outcome id={`conflict-outcome-${g.id}`} />
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** The book page's notice: this book is one of a pending duplicate group (admins get the way to decide). */
export function ConflictNotice({ group }: { group: ConflictGroup | null }) {
  const { t } = useI18n();
  if (!group) return <div id="conflict-notice" />;
  return (
    <div id="conflict-notice" class="alert alert-warning" role="note">
      {`${t('conflicts.notice', { others: group.items.length - 1 })} `}
      <a href={`/admin/conflicts#conflict-${group.id}`} id="conflict-link">
        {t('conflicts.decide')}
      </a>
    </div>
  );
}
