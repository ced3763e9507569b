// What a calibre library brings beyond the catalog's fields (issue 44): the book page's custom
// columns, named as calibre shows them, and the admin's library page report with the import of
// calibre's ratings and read marks. Every value is text in the page (escaped by the renderer).
import type { Catalog } from '@bindery/contracts';
import { type I18n, type MessageKey, useI18n } from '../i18n';
import { Outcome } from '../layout';

const stars = ({ t, number }: I18n, r: number) => t('book.stars', { n: number(r / 2) });

function shown(i18n: I18n, c: Catalog.CalibreColumn): string {
  const v = c.value;
  if (Array.isArray(v)) return v.join(', ');
  if (typeof v === 'boolean') return i18n.t(v ? 'calibre.yes' : 'calibre.no');
  if (c.type === 'rating' && typeof v === 'number') return stars(i18n, v);
  if (c.type === 'datetime' && typeof v === 'string') return v.slice(0, 10);
  if (c.type === 'series' && c.series_index !== undefined && c.series_index !== null) return `${String(v)} #${c.series_index}`;
  return String(v);
}

/** The book's calibre custom columns (label and value), when it is a calibre book with any. */
export function CalibreColumns({ item }: { item: Catalog.MediaItem }) {
  const i18n = useI18n();
  const c = item.calibre;
  if (!c || (c.columns.length === 0 && c.rating === null)) return null;
  return (
    <section aria-labelledby="calibre-title" id="calibre-columns">
      <h2 id="calibre-title">{i18n.t('calibre.from')}</h2>
      <dl class="meta">
        {c.rating !== null && (
          <>
            <dt>{i18n.t('calibre.rating')}</dt>
            <dd data-calibre="rating">{stars(i18n, c.rating)}</dd>
          </>
        )}
        {c.columns.map((col) => (
          <>
            <dt key={`dt-${col.label}`} title={`#${col.label}`}>
              {col.name}
            </dt>
            <dd key={`dd-${col.label}`} data-calibre={col.label} class={col.type === 'comments' ? 'description' : undefined}>
              {shown(i18n, col)}
            </dd>
          </>
        ))}
      </dl>
    </section>
  );
}

export interface UserChoice {
  id: string;
  username: string;
}

/** The admin's import of calibre's ratings and read marks into a person's reading state. */
export function CalibreImport({ library, users, me }: { library: { id: string; name: string }; users: UserChoice[]; me: string }) {
  const { t } = useI18n();
  const id = `calibre-import-${library.id}`;
  return (
    <form id={id} hx-post={`/api/libraries/${library.id}/calibre-import`} hx-ext="bindery-json" hx-target={`#${id}-outcome`} class="inline-form">
      <label for={`${id}-user`}>{t('calibre.whose')}</label>
      <select id={`${id}-user`} name="user_id">
        {users.map((u) => (
          <option key={u.id} value={u.id} selected={u.id === me}>
            {u.username}
          </option>
        ))}
      </select>
      <button type="submit">{t('calibre.import', { library: library.name })}</button>
      <Outcome id={`${id}-outcome`} />
    </form>
  );
}

/** A library whose last scan read calibre records: its report, and the import of ratings and read marks. */
export interface CalibreSection {
  library: { id: string; name: string };
  report: Catalog.CalibreReport;
  recorded_at: string | null;
}

const FIELD_NAMES: Record<string, MessageKey> = {
  title: 'library.sort.title',
  title_sort: 'calibre.field.titleSort',
  authors: 'browse.authors',
  series: 'browse.series',
  tags: 'book.tags',
  publisher: 'book.publisher',
  languages: 'calibre.field.languages',
  identifiers: 'edit.field.identifiers',
  description: 'calibre.field.comments',
  year: 'calibre.field.published',
  rating: 'smart.field.rating',
  cover: 'edit.field.cover',
  custom_columns: 'calibre.field.customColumns',
};

/** The migration reports of the calibre libraries (admin), as the last scan of each recorded it. */
export function CalibreReports({ sections, users, me }: { sections: CalibreSection[]; users: UserChoice[]; me: string }) {
  const { t, number, date } = useI18n();
  if (sections.length === 0) return null;
  const fieldName = (f: string) => {
    const key = FIELD_NAMES[f];
    return key ? t(key) : f;
  };
  return (
    <section class="card" aria-labelledby="calibre-reports-title" id="calibre-reports">
      <h2 id="calibre-reports-title">{t('calibre.from')}</h2>
      {sections.map(({ library, report: r, recorded_at }) => (
        <div key={library.id} id={`calibre-report-${library.id}`} data-library={library.id}>
          <h3>{library.name}</h3>
          <p data-calibre="summary">
            {t('calibre.summary', { books: r.books, formats: r.formats })}
            {recorded_at && ` ${t('calibre.readAt', { when: date(recorded_at, { dateStyle: 'medium', timeStyle: 'short', timeZoneName: 'short' }) })}`}
          </p>
          <ul class="plain">
            {r.folders.map((f) => (
              <li key={f.folder}>
                {f.error
                  ? t('calibre.folderError', { folder: f.folder, source: f.source, error: f.error })
                  : t('calibre.folder', { folder: f.folder, source: f.source, books: f.books, formats: f.formats })}
              </li>
            ))}
          </ul>
          <table class="stack" data-calibre="fields">
            <caption class="muted">{t('calibre.fieldsCaption', { library: library.name })}</caption>
            <thead>
              <tr>
                <th scope="col">{t('smart.field')}</th>
                <th scope="col">{t('browse.books')}</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(r.fields).map(([f, n]) => (
                <tr key={f}>
                  <td data-label={t('smart.field')}>{fieldName(f)}</td>
                  <td data-label={t('browse.books')}>{number(n)}</td>
                </tr>
              ))}
              {r.columns.map((c) => (
                <tr key={`#${c.label}`}>
                  <td data-label={t('smart.field')}>{`${c.name} (#${c.label}, ${c.type})`}</td>
                  <td data-label={t('browse.books')}>{number(c.books)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h4>{r.unmapped_total === 0 ? t('calibre.allMapped') : t('calibre.unmapped', { count: r.unmapped_total })}</h4>
          {r.unmapped.length > 0 && (
            <ul data-calibre="unmapped">
              {r.unmapped.map((u, i) => (
                <li key={i}>
                  {t('calibre.unmappedOne', {
                    what: u.title ?? (u.book_id === null ? t('calibre.theLibrary') : t('calibre.bookN', { id: u.book_id })),
                    field: u.field,
                    reason: u.reason,
                  })}
                </li>
              ))}
            </ul>
          )}
          {r.unmapped_total > r.unmapped.length && <p class="muted">{t('calibre.onlyFirst', { count: r.unmapped.length })}</p>}
          <CalibreImport library={library} users={users} me={me} />
        </div>
      ))}
    </section>
  );
}
