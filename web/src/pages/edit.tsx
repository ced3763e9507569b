// Editing one book (issue 43), for an admin or a person the admin allowed: a form with every field
// the item has, each field a person set marked as locked (a rescan keeps it) with "Reset to the
// file's value", and the cover: upload an image, take a page of a comic or PDF, or go back to the
// file's own. The form is saved through PUT /api/media-items/<id> with only the fields changed (a
// field sent is a field locked); the API's own messages are shown as they are worded.
import { Catalog } from '@bindery/contracts';
import { type MessageKey, useI18n } from '../i18n';
import { Outcome } from '../layout';
import { Cover, type Item } from './books';

/** An item as the API answers it once the catalog keeps locked fields (absent before). */
export type EditableItem = Item & { locked_fields?: string[] };

/** The roles a contributor may have, as the catalog names them (formats/roles.ts). */
export const ROLES = ['author', 'writer', 'editor', 'translator', 'illustrator', 'penciller', 'inker', 'colorist', 'letterer', 'cover_artist', 'narrator', 'contributor'];
const ROLE_LABELS: Record<string, MessageKey> = {
  author: 'edit.role.author',
  writer: 'edit.role.writer',
  editor: 'edit.role.editor',
  translator: 'edit.role.translator',
  illustrator: 'edit.role.illustrator',
  penciller: 'edit.role.penciller',
  inker: 'edit.role.inker',
  colorist: 'edit.role.colorist',
  letterer: 'edit.role.letterer',
  cover_artist: 'edit.role.cover_artist',
  narrator: 'edit.role.narrator',
  contributor: 'edit.role.contributor',
};
/** A role's name: one the catalog knows in the page's language, another as the file has it (capitalised). */
const roleLabel = (t: (k: MessageKey) => string, r: string) => {
  const key = ROLE_LABELS[r];
  return key ? t(key) : (r[0] ?? '').toUpperCase() + r.slice(1);
};

/** The formats whose pages the reader shows as pictures: a page of these can be the cover. */
const PAGED = ['cbz', 'cbr', 'cb7', 'cbt', 'pdf'];
export const hasPages = (item: Item) => item.formats.some((f) => PAGED.includes(f.format.toLowerCase()));
/** How many pages the picker shows as pictures (any page can be typed). */
const PICTURED = 12;

/** A text detail's name on the pages (Catalog.TEXT_FIELDS): its message `book.<name>`, which every catalog must have. */
export const detailLabel = (name: Catalog.TextField): MessageKey => `book.${name}`;

/** The fields of the form, the item's key each edits, and what the page calls it. */
export const FIELD_LABELS: Record<string, MessageKey> = {
  title: 'library.sort.title',
  sort_title: 'edit.field.sortTitle',
  contributors: 'edit.field.contributors',
  series: 'browse.series',
  series_index: 'edit.field.seriesIndex',
  language: 'book.language',
  ...Object.fromEntries(Catalog.TEXT_FIELD_NAMES.map((name) => [name, detailLabel(name)])),
  description: 'edit.field.description',
  identifiers: 'edit.field.identifiers',
  tags: 'book.tags',
  year: 'book.year',
  reading_direction: 'edit.field.direction',
  cover: 'edit.field.cover',
};
/** A field's name in the page's language. */
const labelOf = (t: (k: MessageKey) => string, field: string) => t(FIELD_LABELS[field] ?? 'library.sort.title');

/** What the page says after a redirect back to it (the query names what was done). */
export type EditNotice = { kind: 'reset'; field: string } | { kind: 'cover'; how: 'uploaded' | 'page' | 'reset' } | null;

export function editNotice(q: Record<string, unknown>): EditNotice {
  if (typeof q.reset === 'string' && q.reset in FIELD_LABELS) return { kind: 'reset', field: q.reset };
  if (q.cover === 'uploaded' || q.cover === 'page' || q.cover === 'reset') return { kind: 'cover', how: q.cover };
  return null;
}

function Locked({ item, field }: { item: EditableItem; field: string }) {
  const { t } = useI18n();
  if (!item.locked_fields?.includes(field)) return null;
  // the cover has its own "Use the file's own cover" form below it
  if (field === 'cover')
    return (
      <span class="locked" id="locked-cover">
        <span class="locked-badge">{t('edit.locked')}</span> {t('edit.lockedCover')}
      </span>
    );
  return (
    <span class="locked" id={`locked-${field}`}>
      <span class="locked-badge">{t('edit.locked')}</span> {t('edit.lockedValue')}{' '}
      <button
        type="button"
        class="link-button"
        id={`reset-${field}`}
        hx-post={`/books/${item.id}/edit/reset`}
        hx-vals={JSON.stringify({ field })}
        hx-target="#edit-outcome"
        aria-label={t('edit.resetLabel', { field: labelOf(t, field) })}
      >
        {t('edit.reset')}
      </button>
    </span>
  );
}

function Text({ item, field, value, hint, ...rest }: { item: EditableItem; field: string; value: string; hint?: string; [k: string]: unknown }) {
  const { t } = useI18n();
  return (
    <div class="edit-field">
      <label for={`e-${field}`}>{labelOf(t, field)}</label>
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
  const { t, number } = useI18n();
  // what edit.js says of the cover upload, in the page's language ({status}: the answer's)
  const coverWords = {
    choose: t('edit.js.choose'),
    uploading: t('upload.js.uploading'),
    failed: t('upload.js.failed', { status: '{status}' }),
    saved: t('edit.cover.uploaded'),
    unreachable: t('edit.js.unreachable'),
  };
  return (
    <article class="edit-page" aria-labelledby="edit-title">
      <p>
        <a href={`/books/${item.id}`} id="back-to-book">
          {t('edit.back', { title: item.title })}
        </a>
      </p>
      <h1 id="edit-title">{t('edit.heading', { title: item.title })}</h1>
      {notice && (
        <div class="alert alert-success" role="status" id="edit-notice">
          {notice.kind === 'reset'
            ? t('edit.resetDone', { field: labelOf(t, notice.field) })
            : t(notice.how === 'uploaded' ? 'edit.cover.uploaded' : notice.how === 'page' ? 'edit.cover.page' : 'edit.cover.reset')}
        </div>
      )}
      <p class="muted">{t('edit.intro')}</p>
      <form id="edit-form" class="edit-form card" hx-post={`/books/${item.id}/edit`} hx-target="#edit-outcome">
        <Text item={item} field="title" value={item.title} required maxlength={1000} />
        <Text item={item} field="sort_title" value={item.sort_title} maxlength={1000} hint={t('edit.hint.sortTitle')} />
        <fieldset class="edit-field" aria-describedby="e-contributors-hint">
          <legend>{labelOf(t, 'contributors')}</legend>
          <small id="e-contributors-hint" class="muted">
            {t('edit.hint.contributors')}
          </small>
          {rows.map((c, i) => (
            <div class="contributor-row" key={i}>
              <label for={`e-name-${i}`}>{t('edit.nameN', { n: i + 1 })}</label>
              <input id={`e-name-${i}`} name="contributor_name" value={c.name} maxlength={200} />
              <label for={`e-role-${i}`}>{t('edit.roleN', { n: i + 1 })}</label>
              <select id={`e-role-${i}`} name="contributor_role">
                {(ROLES.includes(c.role) ? ROLES : [...ROLES, c.role]).map((r) => (
                  <option key={r} value={r} selected={r === c.role}>
                    {roleLabel(t, r)}
                  </option>
                ))}
              </select>
            </div>
          ))}
          <Locked item={item} field="contributors" />
        </fieldset>
        <Text item={item} field="series" value={item.series ?? ''} maxlength={500} />
        <Text
          item={item}
          field="series_index"
          value={item.series_index === null ? '' : String(item.series_index)}
          inputmode="decimal"
          hint={t('edit.hint.seriesIndex', { a: number(3), b: number(2.5) })}
        />
        <Text item={item} field="language" value={item.language ?? ''} maxlength={35} hint={t('edit.hint.language')} />
        {Catalog.TEXT_FIELD_NAMES.map((name) => (
          <Text key={name} item={item} field={name} value={item[name] ?? ''} maxlength={Catalog.TEXT_FIELDS[name].max} />
        ))}
        <Text item={item} field="year" value={item.year === null ? '' : String(item.year)} inputmode="numeric" />
        <fieldset class="edit-field">
          <legend>{labelOf(t, 'identifiers')}</legend>
          {ids.map(([k, v], i) => (
            <div class="identifier-row" key={i}>
              <label for={`e-scheme-${i}`}>{t('edit.kindN', { n: i + 1 })}</label>
              <input id={`e-scheme-${i}`} name="identifier_scheme" value={k} maxlength={50} placeholder="asin, goodreads…" />
              <label for={`e-ident-${i}`}>{t('edit.valueN', { n: i + 1 })}</label>
              <input id={`e-ident-${i}`} name="identifier_value" value={v} maxlength={200} />
            </div>
          ))}
          <Locked item={item} field="identifiers" />
        </fieldset>
        <Text item={item} field="tags" value={item.tags.join(', ')} hint={t('edit.hint.tags')} />
        <div class="edit-field">
          <label for="e-reading_direction">{labelOf(t, 'reading_direction')}</label>
          <select id="e-reading_direction" name="reading_direction">
            <option value="" selected={item.reading_direction === null}>
              {t('edit.direction.none')}
            </option>
            <option value="ltr" selected={item.reading_direction === 'ltr'}>
              {t('edit.direction.ltr')}
            </option>
            <option value="rtl" selected={item.reading_direction === 'rtl'}>
              {t('edit.direction.rtl')}
            </option>
          </select>
          <Locked item={item} field="reading_direction" />
        </div>
        <div class="edit-field">
          <label for="e-description">{labelOf(t, 'description')}</label>
          <textarea id="e-description" name="description" rows={8}>
            {item.description ?? ''}
          </textarea>
          <Locked item={item} field="description" />
        </div>
        <div class="actions">
          <button type="submit" class="primary" id="save-edit">
            {t('edit.save')}
          </button>
          <a href={`/books/${item.id}`}>{t('edit.cancel')}</a>
        </div>
        <Outcome id="edit-outcome" />
      </form>
      <section class="card" aria-labelledby="cover-title" id="cover-section">
        <h2 id="cover-title">{labelOf(t, 'cover')}</h2>
        <div class="cover-now">
          <Cover item={item} big />
          <Locked item={item} field="cover" />
        </div>
        <form id="cover-upload" data-cover-upload={`/api/media-items/${item.id}/cover`} data-done={`/books/${item.id}/edit?cover=uploaded`} data-words={JSON.stringify(coverWords)}>
          <label for="cover-file">{t('edit.cover.file', { size: `${number(20)} MB` })}</label>
          <input id="cover-file" name="cover" type="file" accept="image/jpeg,image/png,image/webp,image/gif" required />
          <button type="submit" id="upload-cover">
            {t('edit.cover.upload')}
          </button>
          <Outcome id="cover-outcome" />
        </form>
        {hasPages(item) && (
          <form id="cover-page" hx-post={`/books/${item.id}/cover/page`} hx-target="#cover-page-outcome">
            {pages > 0 && (
              <fieldset class="page-picker">
                <legend>{t('edit.cover.takePage')}</legend>
                <ul class="plain page-choices">
                  {Array.from({ length: Math.min(pages, PICTURED) }, (_, i) => (
                    <li key={i}>
                      <label class="page-choice" for={`page-${i + 1}`}>
                        <input type="radio" class="page-radio" id={`page-${i + 1}`} name="page_choice" value={String(i + 1)} />
                        <img src={`/opds/pages/${item.id}/${i}?width=160`} alt="" loading="lazy" decoding="async" width={80} />
                        <span>{t('edit.pageN', { n: i + 1 })}</span>
                      </label>
                    </li>
                  ))}
                </ul>
              </fieldset>
            )}
            <label for="page-number">{pages > 0 ? t('edit.cover.typePage', { pages }) : t('edit.cover.pageNumber')}</label>
            <input id="page-number" name="page" inputmode="numeric" />
            <button type="submit" id="use-page">
              {t('edit.cover.usePage')}
            </button>
            <Outcome id="cover-page-outcome" />
          </form>
        )}
        <form id="cover-reset" hx-post={`/books/${item.id}/cover/reset`} hx-target="#cover-reset-outcome">
          <button type="submit" id="reset-cover">
            {t('edit.cover.useOwn')}
          </button>
          <Outcome id="cover-reset-outcome" />
        </form>
      </section>
    </article>
  );
}
