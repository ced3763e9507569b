// What a calibre library brings beyond the catalog's fields (issue 44): the book page's custom
// columns, named as calibre shows them, and the admin's library page report with the import of
// calibre's ratings and read marks. Every value is text in the page (escaped by the renderer).
import type { Catalog } from '@bindery/contracts';
import { Outcome } from '../layout';

const stars = (r: number) => `${r / 2} of 5`;

function shown(c: Catalog.CalibreColumn): string {
  const v = c.value;
  if (Array.isArray(v)) return v.join(', ');
  if (typeof v === 'boolean') return v ? 'Yes' : 'No';
  if (c.type === 'rating' && typeof v === 'number') return stars(v);
  if (c.type === 'datetime' && typeof v === 'string') return v.slice(0, 10);
  if (c.type === 'series' && c.series_index !== undefined && c.series_index !== null) return `${String(v)} #${c.series_index}`;
  return String(v);
}

/** The book's calibre custom columns (label and value), when it is a calibre book with any. */
export function CalibreColumns({ item }: { item: Catalog.MediaItem }) {
  const c = item.calibre;
  if (!c || (c.columns.length === 0 && c.rating === null)) return null;
  return (
    <section aria-labelledby="calibre-title" id="calibre-columns">
      <h2 id="calibre-title">From calibre</h2>
      <dl class="meta">
        {c.rating !== null && (
          <>
            <dt>calibre rating</dt>
            <dd data-calibre="rating">{stars(c.rating)}</dd>
          </>
        )}
        {c.columns.map((col) => (
          <>
            <dt key={`dt-${col.label}`} title={`#${col.label}`}>
              {col.name}
            </dt>
            <dd key={`dd-${col.label}`} data-calibre={col.label} class={col.type === 'comments' ? 'description' : undefined}>
              {shown(col)}
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
  const id = `calibre-import-${library.id}`;
  return (
    <form id={id} hx-post={`/api/libraries/${library.id}/calibre-import`} hx-ext="bindery-json" hx-target={`#${id}-outcome`} class="inline-form">
      <label for={`${id}-user`}>Whose reading state</label>
      <select id={`${id}-user`} name="user_id">
        {users.map((u) => (
          <option key={u.id} value={u.id} selected={u.id === me}>
            {u.username}
          </option>
        ))}
      </select>
      <button type="submit">{`Import calibre ratings and read marks of ${library.name}`}</button>
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

const FIELD_NAMES: Record<string, string> = {
  title: 'Title',
  title_sort: 'Title sort',
  authors: 'Authors',
  series: 'Series',
  tags: 'Tags',
  publisher: 'Publisher',
  languages: 'Languages',
  identifiers: 'Identifiers',
  description: 'Comments',
  year: 'Published',
  rating: 'Rating',
  cover: 'Cover',
  custom_columns: 'Custom columns',
};

/** The migration reports of the calibre libraries (admin), as the last scan of each recorded it. */
export function CalibreReports({ sections, users, me }: { sections: CalibreSection[]; users: UserChoice[]; me: string }) {
  if (sections.length === 0) return null;
  return (
    <section class="card" aria-labelledby="calibre-reports-title" id="calibre-reports">
      <h2 id="calibre-reports-title">From calibre</h2>
      {sections.map(({ library, report: r, recorded_at }) => (
        <div key={library.id} id={`calibre-report-${library.id}`} data-library={library.id}>
          <h3>{library.name}</h3>
          <p data-calibre="summary">
            {`${r.books} ${r.books === 1 ? 'book' : 'books'} and ${r.formats} ${r.formats === 1 ? 'format' : 'formats'} taken from calibre`}
            {recorded_at && ` (read ${recorded_at.slice(0, 16).replace('T', ' ')} UTC)`}
          </p>
          <ul class="plain">
            {r.folders.map((f) => (
              <li key={f.folder}>{f.error ? `${f.folder} (${f.source}): not read: ${f.error}` : `${f.folder} (${f.source}): ${f.books} books, ${f.formats} formats`}</li>
            ))}
          </ul>
          <table class="stack" data-calibre="fields">
            <caption class="muted">{`Fields taken from calibre in ${library.name}`}</caption>
            <thead>
              <tr>
                <th scope="col">Field</th>
                <th scope="col">Books</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(r.fields).map(([f, n]) => (
                <tr key={f}>
                  <td data-label="Field">{FIELD_NAMES[f] ?? f}</td>
                  <td data-label="Books">{n}</td>
                </tr>
              ))}
              {r.columns.map((c) => (
                <tr key={`#${c.label}`}>
                  <td data-label="Field">{`${c.name} (#${c.label}, ${c.type})`}</td>
                  <td data-label="Books">{c.books}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h4>{r.unmapped_total === 0 ? 'Every value could be mapped.' : `${r.unmapped_total} ${r.unmapped_total === 1 ? 'value' : 'values'} could not be mapped`}</h4>
          {r.unmapped.length > 0 && (
            <ul data-calibre="unmapped">
              {r.unmapped.map((u, i) => (
                <li key={i}>{`${u.title ?? (u.book_id === null ? 'The library' : `Book ${u.book_id}`)}: ${u.field}: ${u.reason}`}</li>
              ))}
            </ul>
          )}
          {r.unmapped_total > r.unmapped.length && <p class="muted">{`Only the first ${r.unmapped.length} are listed.`}</p>}
          <CalibreImport library={library} users={users} me={me} />
        </div>
      ))}
    </section>
  );
}
