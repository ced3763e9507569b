// Uploading books (issue 43): the upload page, and the drop zone the library page carries. Both are
// one form: the target library and one of its folders (an htmx fragment redrawn when the library
// changes), an optional subfolder, the files (chosen or dropped); upload.js sends each file on its own
// request to POST /api/libraries/<id>/uploads with a progress bar, and lists what came of it.
import { type I18n, type MessageKey, useI18n } from '../i18n';

export interface UploadLibrary {
  id: string;
  name: string;
}
export interface UploadFolder {
  index: number;
  name: string;
  path?: string;
}

export const ACCEPT = '.epub,.kepub,.pdf,.cbz,.cbr,.cb7,.mobi,.prc,.azw,.azw3,.fb2,.zip';
const FORMATS = 'EPUB, KEPUB, PDF, CBZ, CBR, CB7, MOBI, PRC, AZW, AZW3, FB2';

export const sizeText = (n: number, number: I18n['number'] = (v) => String(v)): string =>
  n >= 2 ** 30 ? `${number(Math.round((n / 2 ** 30) * 10) / 10)} GiB` : n >= 2 ** 20 ? `${number(Math.round(n / 2 ** 20))} MiB` : `${number(Math.round(n / 1024))} KiB`;

/** What upload.js says of each file, in the page's language ({placeholders} it fills in). */
const SCRIPT_WORDS: Record<string, MessageKey> = {
  uploadOf: 'upload.js.uploadOf',
  waiting: 'upload.js.waiting',
  chooseLibrary: 'upload.js.chooseLibrary',
  tooLarge: 'upload.js.tooLarge',
  uploading: 'upload.js.uploading',
  checking: 'upload.js.checking',
  catalogued: 'upload.js.catalogued',
  cataloguedAs: 'upload.js.cataloguedAs',
  issue: 'upload.js.issue',
  issueAs: 'upload.js.issueAs',
  stored: 'upload.js.stored',
  storedAs: 'upload.js.storedAs',
  open: 'upload.js.open',
  openThere: 'upload.js.openThere',
  signedOut: 'upload.js.signedOut',
  failed: 'upload.js.failed',
  lost: 'upload.js.lost',
};
/** The script's words with their placeholders left for it to fill. */
const scriptWords = (t: I18n['t']) =>
  JSON.stringify(Object.fromEntries(Object.entries(SCRIPT_WORDS).map(([k, key]) => [k, t(key, { name: '{name}', limit: '{limit}', error: '{error}', status: '{status}' })])));

/** The library and folder choice; `id` tells the page's and the drop zone's apart. */
export function UploadTargets({ id, libraries, library, folders }: { id: string; libraries: UploadLibrary[]; library: string | null; folders: UploadFolder[] }) {
  const { t } = useI18n();
  return (
    <div class="upload-targets" id={`${id}-targets`}>
      <div>
        <label for={`${id}-library`}>{t('browse.library')}</label>
        <select id={`${id}-library`} name="library" hx-get={`/upload/targets?id=${id}`} hx-trigger="change" hx-target={`#${id}-targets`} hx-swap="outerHTML" hx-include="this">
          {libraries.map((l) => (
            <option key={l.id} value={l.id} selected={l.id === library}>
              {l.name}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for={`${id}-folder`}>{t('upload.folder')}</label>
        <select id={`${id}-folder`} name="folder" disabled={folders.length === 0}>
          {folders.map((f) => (
            <option key={f.index} value={String(f.index)}>
              {f.path ?? f.name}
            </option>
          ))}
        </select>
      </div>
    </div>
  );
}

/** The form: targets, subfolder, files and the drop area, the results list. */
export function UploadForm(p: { id: string; libraries: UploadLibrary[]; library: string | null; folders: UploadFolder[]; maxBytes: number; compact?: boolean }) {
  const { t, number, locale } = useI18n();
  const help = `${p.id}-help`;
  return (
    <form
      class={`upload card${p.compact ? ' upload-compact' : ''}`}
      id={p.id}
      data-upload
      data-max-bytes={String(p.maxBytes)}
      data-words={scriptWords(t)}
      data-locale={locale}
      aria-describedby={help}
    >
      {p.libraries.length === 0 ? (
        <p class="muted">{t('upload.noLibrary')}</p>
      ) : (
        <>
          <UploadTargets id={p.id} libraries={p.libraries} library={p.library} folders={p.folders} />
          <label for={`${p.id}-subfolder`}>{t('upload.subfolder')}</label>
          <input id={`${p.id}-subfolder`} name="subfolder" type="text" autocomplete="off" placeholder={t('upload.subfolderExample')} aria-describedby={`${p.id}-subfolder-help`} />
          <p id={`${p.id}-subfolder-help`} class="muted">
            {t('upload.subfolderHelp')}
          </p>
          <div class="dropzone" data-dropzone>
            <label for={`${p.id}-files`}>{t('upload.files')}</label>
            <input id={`${p.id}-files`} name="files" type="file" multiple accept={ACCEPT} />
            <p class="muted">{t('upload.orDrop')}</p>
          </div>
          <button type="submit" class="primary">
            {t('upload.submit')}
          </button>
        </>
      )}
      <p id={help} class="muted">
        {t('upload.help', { formats: FORMATS, size: sizeText(p.maxBytes, number) })}
      </p>
      <ul class="plain upload-results" aria-label={t('upload.results')} aria-live="polite" data-results />
    </form>
  );
}

export function UploadPage(p: { libraries: UploadLibrary[]; library: string | null; folders: UploadFolder[]; maxBytes: number }) {
  const { t } = useI18n();
  return (
    <>
      <h1>{t('upload.title')}</h1>
      <p>
        {t('upload.intro')} <a href="/library">{t('lib.back')}</a>
      </p>
      <UploadForm id="upload" {...p} />
    </>
  );
}

/** The library page's drop zone: the form loads its choices when the page shows. */
export function UploadDrop({ library }: { library: string | undefined }) {
  const { t } = useI18n();
  const at = library ? `?${new URLSearchParams({ library })}` : '';
  return (
    <section class="upload-drop" aria-labelledby="upload-drop-title">
      <h2 id="upload-drop-title">{t('upload.drop.title')}</h2>
      <p>
        {t('upload.drop.text')} <a href={`/upload${at}`}>{t('upload.drop.link')}</a>
        {t('upload.drop.after')}
      </p>
      <div hx-get={`/upload/form${at}`} hx-trigger="load" hx-swap="outerHTML">
        <p class="muted">{t('upload.drop.loading')}</p>
      </div>
    </section>
  );
}
