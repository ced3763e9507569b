// Admin: the libraries (folders, item counts, last scan) with a rescan button each, and a form to
// create one whose folder is picked with the server's folder browser (GET /api/libraries/browse,
// rendered here as an htmx fragment: opening a folder also selects it).
import { useI18n } from '../i18n';
import { Outcome } from '../layout';
import { AdminTabs } from './admin-tabs';
import { CalibreReports } from './calibre';

export interface LibraryRow {
  id: string;
  name: string;
  folders: string[];
  item_count: number;
  last_scan_at: string | null;
  watch?: boolean;
}
export interface Browse {
  path: string | null;
  parent: string | null;
  entries: { name: string; path: string; readable: boolean }[];
  truncated: boolean;
}

const browseUrl = (path: string | null) => (path ? `/admin/libraries/browse?${new URLSearchParams({ path })}` : '/admin/libraries/browse');

/** The folder browser at `path` (null: the allowed roots), and the chosen folder swapped in beside the form. */
export function FolderBrowser({ b, oob = false }: { b: Browse; oob?: boolean }) {
  const { t } = useI18n();
  return (
    <>
      <div id="folder-browser" class="card">
        <p id="browse-path">{b.path ? t('libs.in', { path: b.path }) : t('libs.roots')}</p>
        <ul class="plain folders" aria-label={t('libs.folders')}>
          {b.path && (
            <li>
              <button type="button" hx-get={browseUrl(b.parent)} hx-target="#folder-browser" hx-swap="outerHTML" id="browse-up">
                {t('libs.up')}
              </button>
            </li>
          )}
          {b.entries.map((e) => (
            <li key={e.path}>
              <button type="button" hx-get={browseUrl(e.path)} hx-target="#folder-browser" hx-swap="outerHTML" disabled={!e.readable} data-folder={e.path}>
                {e.name}
              </button>
            </li>
          ))}
        </ul>
        {b.truncated && <p class="muted">{t('libs.truncated')}</p>}
      </div>
      {oob && <ChosenFolder path={b.path} oob />}
    </>
  );
}

export function ChosenFolder({ path, oob = false }: { path: string | null; oob?: boolean }) {
  const { t } = useI18n();
  return (
    <div id="chosen-folder" hx-swap-oob={oob ? 'outerHTML' : undefined}>
      <label for="lib-folder">{t('libs.folder')}</label>
      <input id="lib-folder" name="folders[]" value={path ?? ''} required readonly aria-describedby="folder-help" />
      <p id="folder-help" class="muted">
        {t('libs.folderHelp')}
      </p>
    </div>
  );
}

export function AdminLibraries({ libraries, roots, calibre }: { libraries: LibraryRow[]; roots: Browse; calibre?: Parameters<typeof CalibreReports>[0] }) {
  const { t, number, date } = useI18n();
  return (
    <>
      <h1>{t('libs.heading')}</h1>
      <AdminTabs current="/admin/libraries" />
      <div id="library-list">
        {libraries.length === 0 ? (
          <p id="no-libraries">{t('libs.none')}</p>
        ) : (
          <table id="libraries" class="stack">
            <caption class="muted">{t('libs.caption')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('libs.name')}</th>
                <th scope="col">{t('libs.folders')}</th>
                <th scope="col">{t('libs.books')}</th>
                <th scope="col">{t('libs.lastScan')}</th>
                <th scope="col">{t('libs.scan')}</th>
              </tr>
            </thead>
            <tbody>
              {libraries.map((l) => (
                <tr key={l.id} data-library={l.id}>
                  <td data-label={t('libs.name')}>{l.name}</td>
                  <td data-label={t('libs.folders')}>{l.folders.join(', ')}</td>
                  <td data-label={t('libs.books')}>{number(l.item_count)}</td>
                  <td data-label={t('libs.lastScan')}>{l.last_scan_at ? date(l.last_scan_at, { dateStyle: 'medium', timeStyle: 'short' }) : t('libs.never')}</td>
                  <td data-label={t('libs.scan')}>
                    <form hx-post="/api/scanner/scan" hx-ext="bindery-json" hx-target={`#scan-${l.id}`}>
                      <input type="hidden" name="library_id" value={l.id} />
                      <button type="submit" aria-label={t('libs.rescanLabel', { name: l.name })}>
                        {t('libs.rescan')}
                      </button>
                      <Outcome id={`scan-${l.id}`} />
                    </form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      <section class="card" aria-labelledby="create-title">
        <h2 id="create-title">{t('libs.create.heading')}</h2>
        <form id="create-library" hx-post="/api/libraries" hx-ext="bindery-json" hx-target="#create-outcome" data-reload>
          <label for="lib-name">{t('libs.name')}</label>
          <input id="lib-name" name="name" required maxlength={100} />
          <ChosenFolder path={null} />
          <button type="submit" class="primary" id="create">
            {t('libs.create.submit')}
          </button>
          <Outcome id="create-outcome" />
        </form>
        <h3>{t('libs.serverFolders')}</h3>
        <FolderBrowser b={roots} />
      </section>
      {calibre && <CalibreReports {...calibre} />}
      {libraries.length > 0 && <ChangeLibraries libraries={libraries} />}
    </>
  );
}

/**
 * Rename a library, change its folders (one server path a line; the catalog checks each and scans
 * again when they change) or delete it after a confirmation (its books leave the catalog; files stay).
 */
function ChangeLibraries({ libraries }: { libraries: LibraryRow[] }) {
  const { t } = useI18n();
  return (
    <section class="card" aria-labelledby="change-title">
      <h2 id="change-title">{t('libs.change.heading')}</h2>
      <ul class="plain" id="change-libraries">
        {libraries.map((l) => (
          <li key={l.id} id={`change-${l.id}`} data-library={l.id}>
            <details>
              <summary>{l.name}</summary>
              <form hx-post={`/admin/libraries/${l.id}/edit`} hx-target={`#edit-outcome-${l.id}`}>
                <label for={`edit-name-${l.id}`}>{t('libs.name')}</label>
                <input id={`edit-name-${l.id}`} name="name" value={l.name} required maxlength={100} />
                <label for={`edit-folders-${l.id}`}>{t('libs.change.folders')}</label>
                <textarea id={`edit-folders-${l.id}`} name="folders" rows={Math.max(2, l.folders.length)}>
                  {l.folders.join('\n')}
                </textarea>
                <label for={`edit-watch-${l.id}`}>{t('libs.change.watch')}</label>
                <select id={`edit-watch-${l.id}`} name="watch">
                  <option value="true" selected={l.watch !== false}>
                    {t('libs.change.watchYes')}
                  </option>
                  <option value="false" selected={l.watch === false}>
                    {t('libs.change.watchNo')}
                  </option>
                </select>
                <button type="submit" class="primary">
                  {t('libs.change.save', { name: l.name })}
                </button>
                <Outcome id={`edit-outcome-${l.id}`} />
              </form>
              <form hx-post={`/admin/libraries/${l.id}/delete`} hx-target={`#change-${l.id}`} hx-swap="innerHTML">
                <label class="inline">
                  <input type="checkbox" name="confirm" value="yes" required /> {t('libs.change.deleteConfirm', { name: l.name, count: l.item_count })}
                </label>
                <button type="submit" class="danger">
                  {t('libs.change.delete', { name: l.name })}
                </button>
              </form>
            </details>
          </li>
        ))}
      </ul>
    </section>
  );
}
