// The dashboard: the sections GET /api/dashboard/sections answers (the user's hidden collections
// left out, their order applied), each a row of books; "Continue Reading" shows progress bars.
// "Arrange sections" moves and hides them: each button sends the whole new preference (PUT
// /api/dashboard/preferences), computed here, and the page reloads in the new order.
import { type I18n, type MessageKey, useI18n } from '../i18n';
import { Outcome } from '../layout';
import { BookCard, type Item } from './books';

export interface Section {
  id: string;
  name: string;
  query_type: string | null;
  is_system: boolean;
  total: number;
  books: { media_item_id: string; percentage: number | null; item: Item }[];
}

const list = (ids: string[]) => (ids.length ? ids : ['']);
const swap = (ids: string[], i: number, j: number) => {
  const out = [...ids];
  [out[i], out[j]] = [out[j]!, out[i]!];
  return out;
};

const SYSTEM_NAMES: Record<string, MessageKey> = {
  'continue-reading': 'system.continue-reading',
  'recently-added': 'system.recently-added',
  'recently-read': 'system.recently-read',
  'not-started': 'system.not-started',
  'continue-series': 'system.continue-series',
};

/** A section's name: a system collection's in the reader's language, a person's own as they wrote it. */
export function sectionName(s: { name: string; is_system?: boolean; query_type?: string | null }, t: I18n['t']): string {
  const key = s.is_system && s.query_type ? SYSTEM_NAMES[s.query_type] : undefined;
  return key ? t(key) : s.name;
}

function Arrange({ sections, hidden }: { sections: Section[]; hidden: { id: string; name: string }[] }) {
  const { t } = useI18n();
  const order = sections.map((s) => s.id);
  const hiddenIds = hidden.map((h) => h.id);
  const put = (vals: Record<string, string[]>, action: string, name: string, id: string) => (
    <button
      type="button"
      hx-put="/api/dashboard/preferences"
      hx-vals={JSON.stringify(vals)}
      hx-target="#arrange-outcome"
      data-reload
      aria-label={t('dash.actionOn', { action, name })}
      id={id}
    >
      {action}
    </button>
  );
  return (
    <details class="card" id="arrange">
      <summary>{t('dash.arrange')}</summary>
      <ul class="plain" hx-ext="bindery-json" aria-label={t('dash.sections')}>
        {sections.map((s, i) => {
          const name = sectionName(s, t);
          return (
            <li key={s.id} data-arrange={s.id}>
              <span class="arrange-name">{name}</span> {i > 0 && put({ 'collection_order[]': swap(order, i, i - 1) }, t('dash.moveUp'), name, `up-${s.id}`)}{' '}
              {i < sections.length - 1 && put({ 'collection_order[]': swap(order, i, i + 1) }, t('dash.moveDown'), name, `down-${s.id}`)}{' '}
              {put({ 'hidden_collections[]': [...hiddenIds, s.id] }, t('dash.hide'), name, `hide-${s.id}`)}
            </li>
          );
        })}
        {hidden.map((h) => (
          <li key={h.id} data-arrange={h.id} class="muted">
            <span class="arrange-name">{h.name}</span> {t('dash.hidden')}{' '}
            {put({ 'hidden_collections[]': list(hiddenIds.filter((x) => x !== h.id)) }, t('dash.show'), h.name, `show-${h.id}`)}
          </li>
        ))}
      </ul>
      <Outcome id="arrange-outcome" />
    </details>
  );
}

export function Dashboard({ sections, hidden, username }: { sections: Section[]; hidden: { id: string; name: string }[]; username: string }) {
  const shown = sections.filter((s) => s.books.length > 0);
  const { t } = useI18n();
  return (
    <>
      <h1>{t('dash.welcome', { name: username })}</h1>
      <Arrange sections={sections} hidden={hidden} />
      <div id="sections">
        {shown.length === 0 && (
          <p id="empty-dashboard">
            {t('dash.empty')} <a href="/library">{t('dash.openLibrary')}</a>.
          </p>
        )}
        {shown.map((s) => (
          <section class="shelf" aria-labelledby={`s-${s.id}`} data-section={s.query_type ?? 'custom'} key={s.id}>
            <h2 id={`s-${s.id}`}>
              {sectionName(s, t)} <span class="count">({s.total})</span>
            </h2>
            <ul class="grid shelf-books">
              {s.books.map((b) => (
                <BookCard key={b.media_item_id} item={b.item} progress={s.query_type === 'continue-reading' ? (b.percentage ?? 0) : null} />
              ))}
            </ul>
          </section>
        ))}
      </div>
    </>
  );
}
