// Admin: the libraries (folders, item counts, last scan) with a rescan button each, and a form to
// create one whose folder is picked with the server's folder browser (GET /api/libraries/browse,
// rendered here as an htmx fragment: opening a folder also selects it).
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
  return (
    <>
      <div id="folder-browser" class="card">
        <p id="browse-path">{b.path ? `In ${b.path}` : 'Library roots'}</p>
        <ul class="plain folders" aria-label="Folders">
          {b.path && (
            <li>
              <button type="button" hx-get={browseUrl(b.parent)} hx-target="#folder-browser" hx-swap="outerHTML" id="browse-up">
                Up
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
        {b.truncated && <p class="muted">Only the first folders are listed.</p>}
      </div>
      {oob && <ChosenFolder path={b.path} oob />}
    </>
  );
}

export function ChosenFolder({ path, oob = false }: { path: string | null; oob?: boolean }) {
  return (
    <div id="chosen-folder" hx-swap-oob={oob ? 'outerHTML' : undefined}>
      <label for="lib-folder">Folder</label>
      <input id="lib-folder" name="folders[]" value={path ?? ''} required readonly aria-describedby="folder-help" />
      <p id="folder-help" class="muted">
        Open a folder below to choose it.
      </p>
    </div>
  );
}

export function AdminLibraries({ libraries, roots, calibre }: { libraries: LibraryRow[]; roots: Browse; calibre?: Parameters<typeof CalibreReports>[0] }) {
  return (
    <>
      <h1>Libraries</h1>
      <AdminTabs current="/admin/libraries" />
      <div id="library-list">
        {libraries.length === 0 ? (
          <p id="no-libraries">No library yet: create the first one below.</p>
        ) : (
          <table id="libraries" class="stack">
            <caption class="muted">Every library of this server</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Folders</th>
                <th scope="col">Books</th>
                <th scope="col">Last scan</th>
                <th scope="col">Scan</th>
              </tr>
            </thead>
            <tbody>
              {libraries.map((l) => (
                <tr key={l.id} data-library={l.id}>
                  <td data-label="Name">{l.name}</td>
                  <td data-label="Folders">{l.folders.join(', ')}</td>
                  <td data-label="Books">{l.item_count}</td>
                  <td data-label="Last scan">{l.last_scan_at ? new Date(l.last_scan_at).toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : 'never'}</td>
                  <td data-label="Scan">
                    <form hx-post="/api/scanner/scan" hx-ext="bindery-json" hx-target={`#scan-${l.id}`}>
                      <input type="hidden" name="library_id" value={l.id} />
                      <button type="submit" aria-label={`Rescan ${l.name}`}>
                        Rescan
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
        <h2 id="create-title">Create a library</h2>
        <form id="create-library" hx-post="/api/libraries" hx-ext="bindery-json" hx-target="#create-outcome" data-reload>
          <label for="lib-name">Name</label>
          <input id="lib-name" name="name" required maxlength={100} />
          <ChosenFolder path={null} />
          <button type="submit" class="primary" id="create">
            Create
          </button>
          <Outcome id="create-outcome" />
        </form>
        <h3>Server folders</h3>
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
  return (
    <section class="card" aria-labelledby="change-title">
      <h2 id="change-title">Change a library</h2>
      <ul class="plain" id="change-libraries">
        {libraries.map((l) => (
          <li key={l.id} id={`change-${l.id}`} data-library={l.id}>
            <details>
              <summary>{l.name}</summary>
              <form hx-post={`/admin/libraries/${l.id}/edit`} hx-target={`#edit-outcome-${l.id}`}>
                <label for={`edit-name-${l.id}`}>Name</label>
                <input id={`edit-name-${l.id}`} name="name" value={l.name} required maxlength={100} />
                <label for={`edit-folders-${l.id}`}>Folders (one server path a line)</label>
                <textarea id={`edit-folders-${l.id}`} name="folders" rows={Math.max(2, l.folders.length)}>
                  {l.folders.join('\n')}
                </textarea>
                <label for={`edit-watch-${l.id}`}>Watch the folders for changes</label>
                <select id={`edit-watch-${l.id}`} name="watch">
                  <option value="true" selected={l.watch !== false}>
                    yes: new and changed files are scanned as they appear
                  </option>
                  <option value="false" selected={l.watch === false}>
                    no: only when scanned
                  </option>
                </select>
                <button type="submit" class="primary">{`Save ${l.name}`}</button>
                <Outcome id={`edit-outcome-${l.id}`} />
              </form>
              <form hx-post={`/admin/libraries/${l.id}/delete`} hx-target={`#change-${l.id}`} hx-swap="innerHTML">
                <label class="inline">
                  <input type="checkbox" name="confirm" value="yes" required />{' '}
                  {`Delete ${l.name}: its ${l.item_count === 1 ? 'book leaves' : `${l.item_count} books leave`} the catalog; the files stay on disk`}
                </label>
                <button type="submit" class="danger">{`Delete ${l.name}`}</button>
              </form>
            </details>
          </li>
        ))}
      </ul>
    </section>
  );
}
