// Editing one book (issue 43), for an admin or a person the admin allowed: a form with every field
// the item has, each field a person set marked as locked (a rescan keeps it) with "Reset to the
// file's value", and the cover: upload an image, take a page of a comic or PDF, or go back to the
// file's own. The form is saved through PUT /api/media-items/<id> with only the fields changed (a
// field sent is a field locked); the API's own messages are shown as they are worded.
import { Outcome } from '../layout';
import { Cover, type Item } from './books';

/** An item as the API answers it once the catalog keeps locked fields (absent before). */
export type EditableItem = Item & { locked_fields?: string[] };

/** The roles a contributor may have, as the catalog names them (formats/roles.ts). */
export const ROLES = ['author', 'writer', 'editor', 'translator', 'illustrator', 'penciller', 'inker', 'colorist', 'letterer', 'cover_artist', 'narrator', 'contributor'];
const ROLE_LABEL = (r: string) => (r === 'cover_artist' ? 'Cover artist' : r[0]!.toUpperCase() + r.slice(1));

/** The formats whose pages the reader shows as pictures: a page of these can be the cover. */
const PAGED = ['cbz', 'cbr', 'cb7', 'cbt', 'pdf'];
export const hasPages = (item: Item) => item.formats.some((f) => PAGED.includes(f.format.toLowerCase()));
/** How many pages the picker shows as pictures (any page can be typed). */
const PICTURED = 12;

/** The fields of the form, the item's key each edits, and what the page calls it. */
export const FIELD_LABELS: Record<string, string> = {
  title: 'Title',
  sort_title: 'Sort title',
  contributors: 'Authors and other contributors',
  series: 'Series',
  series_index: 'Number in the series',
  publisher: 'Publisher',
  language: 'Language',
  description: 'Description',
  isbn: 'ISBN',
  identifiers: 'Identifiers',
  tags: 'Tags',
  year: 'Year',
  reading_direction: 'Reading direction',
  cover: 'Cover',
};

/** What the page says after a redirect back to it (the query names what was done). */
export type EditNotice = { kind: 'reset'; field: string } | { kind: 'cover'; how: 'uploaded' | 'page' | 'reset' } | null;

export function editNotice(q: Record<string, unknown>): EditNotice {
  if (typeof q.reset === 'string' && q.reset in FIELD_LABELS) return { kind: 'reset', field: q.reset };
  if (q.cover === 'uploaded' || q.cover === 'page' || q.cover === 'reset') return { kind: 'cover', how: q.cover };
  return null;
}

function Locked({ item, field }: { item: EditableItem; field: string }) {
  if (!item.locked_fields?.includes(field)) return null;
  // the cover has its own "Use the file's own cover" form below it
  if (field === 'cover')
    return (
      <span class="locked" id="locked-cover">
        <span class="locked-badge">Locked</span> a rescan keeps this cover.
      </span>
    );
  return (
    <span class="locked" id={`locked-${field}`}>
      <span class="locked-badge">Locked</span> a rescan keeps this value.{' '}
      <button
        type="button"
        class="link-button"
        id={`reset-${field}`}
        hx-post={`/books/${item.id}/edit/reset`}
        hx-vals={JSON.stringify({ field })}
        hx-target="#edit-outcome"
        aria-label={`${FIELD_LABELS[field]}: reset to the file's value`}
      >
        Reset to the file's value
      </button>
    </span>
  );
}

function Text({ item, field, value, hint, ...rest }: { item: EditableItem; field: string; value: string; hint?: string; [k: string]: unknown }) {
  return (
    <div class="edit-field">
      <label for={`e-${field}`}>{FIELD_LABELS[field]}</label>
      <input id={`e-${field}`} name={field} value={value} aria-describedby={hint ? `e-${field}-hint` : undefined} {...rest} />
      {hint && (
        <small id={`e-${field}-hint`} class="muted">
          {hint}
        </small>
      )}
      <Locked item={item} field={field} />
    </div>
  );
}

export function EditBook({ item, notice }: { item: EditableItem; notice: EditNotice }) {
  const rows = [...item.contributors, { name: '', role: 'author' }, { name: '', role: 'author' }];
  const ids = [...Object.entries(item.identifiers), ['', ''], ['', '']] as [string, string][];
  const pages = item.page_count ?? 0;
  return (
    <article class="edit-page" aria-labelledby="edit-title">
      <p>
        <a href={`/books/${item.id}`} id="back-to-book">
          {`← Back to ${item.title}`}
        </a>
      </p>
      <h1 id="edit-title">{`Edit ${item.title}`}</h1>
      {notice && (
        <div class="alert alert-success" role="status" id="edit-notice">
          {notice.kind === 'reset'
            ? `${FIELD_LABELS[notice.field]} now has the file's value again.`
            : notice.how === 'uploaded'
              ? 'The new cover is saved.'
              : notice.how === 'page'
                ? 'The cover is now the page you chose.'
                : "The cover is the file's own again."}
        </div>
      )}
      <p class="muted">Fields you change here are locked: a rescan of the file keeps your value until you reset it. The book's files are never changed.</p>
      <form id="edit-form" class="edit-form card" hx-post={`/books/${item.id}/edit`} hx-target="#edit-outcome">
        <Text item={item} field="title" value={item.title} required maxlength={1000} />
        <Text item={item} field="sort_title" value={item.sort_title} maxlength={1000} hint="How the title sorts (“Hobbit, The”); empty: from the title." />
        <fieldset class="edit-field" aria-describedby="e-contributors-hint">
          <legend>{FIELD_LABELS.contributors}</legend>
          <small id="e-contributors-hint" class="muted">
            One person a row; empty rows are left out. Add more after saving.
          </small>
          {rows.map((c, i) => (
            <div class="contributor-row" key={i}>
              <label for={`e-name-${i}`}>{`Name ${i + 1}`}</label>
              <input id={`e-name-${i}`} name="contributor_name" value={c.name} maxlength={200} />
              <label for={`e-role-${i}`}>{`Role ${i + 1}`}</label>
              <select id={`e-role-${i}`} name="contributor_role">
                {(ROLES.includes(c.role) ? ROLES : [...ROLES, c.role]).map((r) => (
                  <option key={r} value={r} selected={r === c.role}>
                    {ROLE_LABEL(r)}
                  </option>
                ))}
              </select>
            </div>
          ))}
          <Locked item={item} field="contributors" />
        </fieldset>
        <Text item={item} field="series" value={item.series ?? ''} maxlength={500} />
        <Text item={item} field="series_index" value={item.series_index === null ? '' : String(item.series_index)} inputmode="decimal" hint="A number, such as 3 or 2.5." />
        <Text item={item} field="publisher" value={item.publisher ?? ''} maxlength={500} />
        <Text item={item} field="language" value={item.language ?? ''} maxlength={35} hint="A language tag, such as en, fr or ja." />
        <Text item={item} field="year" value={item.year === null ? '' : String(item.year)} inputmode="numeric" />
        <Text item={item} field="isbn" value={item.isbn ?? ''} maxlength={20} />
        <fieldset class="edit-field">
          <legend>{FIELD_LABELS.identifiers}</legend>
          {ids.map(([k, v], i) => (
            <div class="identifier-row" key={i}>
              <label for={`e-scheme-${i}`}>{`Kind ${i + 1}`}</label>
              <input id={`e-scheme-${i}`} name="identifier_scheme" value={k} maxlength={50} placeholder="asin, goodreads…" />
              <label for={`e-ident-${i}`}>{`Value ${i + 1}`}</label>
              <input id={`e-ident-${i}`} name="identifier_value" value={v} maxlength={200} />
            </div>
          ))}
          <Locked item={item} field="identifiers" />
        </fieldset>
        <Text item={item} field="tags" value={item.tags.join(', ')} hint="Separated by commas." />
        <div class="edit-field">
          <label for="e-reading_direction">{FIELD_LABELS.reading_direction}</label>
          <select id="e-reading_direction" name="reading_direction">
            <option value="" selected={item.reading_direction === null}>
              Not set
            </option>
            <option value="ltr" selected={item.reading_direction === 'ltr'}>
              Left to right
            </option>
            <option value="rtl" selected={item.reading_direction === 'rtl'}>
              Right to left (manga)
            </option>
          </select>
          <Locked item={item} field="reading_direction" />
        </div>
        <div class="edit-field">
          <label for="e-description">{FIELD_LABELS.description}</label>
          <textarea id="e-description" name="description" rows={8}>
            {item.description ?? ''}
          </textarea>
          <Locked item={item} field="description" />
        </div>
        <div class="actions">
          <button type="submit" class="primary" id="save-edit">
            Save changes
          </button>
          <a href={`/books/${item.id}`}>Cancel</a>
        </div>
        <Outcome id="edit-outcome" />
      </form>
      <section class="card" aria-labelledby="cover-title" id="cover-section">
        <h2 id="cover-title">Cover</h2>
        <div class="cover-now">
          <Cover item={item} big />
          <Locked item={item} field="cover" />
        </div>
        <form id="cover-upload" data-cover-upload={`/api/media-items/${item.id}/cover`} data-done={`/books/${item.id}/edit?cover=uploaded`}>
          <label for="cover-file">Upload an image (JPEG, PNG, WebP or GIF, at most 20 MB)</label>
          <input id="cover-file" name="cover" type="file" accept="image/jpeg,image/png,image/webp,image/gif" required />
          <button type="submit" id="upload-cover">
            Upload cover
          </button>
          <Outcome id="cover-outcome" />
        </form>
        {hasPages(item) && (
          <form id="cover-page" hx-post={`/books/${item.id}/cover/page`} hx-target="#cover-page-outcome">
            {pages > 0 && (
              <fieldset class="page-picker">
                <legend>Take a page as the cover</legend>
                <ul class="plain page-choices">
                  {Array.from({ length: Math.min(pages, PICTURED) }, (_, i) => (
                    <li key={i}>
                      <label class="page-choice" for={`page-${i + 1}`}>
                        <input type="radio" class="page-radio" id={`page-${i + 1}`} name="page_choice" value={String(i + 1)} />
                        <img src={`/opds/pages/${item.id}/${i}?width=160`} alt="" loading="lazy" decoding="async" width={80} />
                        <span>{`Page ${i + 1}`}</span>
                      </label>
                    </li>
                  ))}
                </ul>
              </fieldset>
            )}
            <label for="page-number">{pages > 0 ? `Or type a page number (1 to ${pages})` : 'Page number'}</label>
            <input id="page-number" name="page" inputmode="numeric" />
            <button type="submit" id="use-page">
              Use this page
            </button>
            <Outcome id="cover-page-outcome" />
          </form>
        )}
        <form id="cover-reset" hx-post={`/books/${item.id}/cover/reset`} hx-target="#cover-reset-outcome">
          <button type="submit" id="reset-cover">
            Use the file's own cover
          </button>
          <Outcome id="cover-reset-outcome" />
        </form>
      </section>
    </article>
  );
}
