// Admin: the libraries page (with each library's calibre report), the folder browser it picks a new
// library's folder with, and a library's edit and delete, each the API's own route called as the
// signed-in admin, the catalog wording every outcome.
import { action, field, Said } from './actions';
import { type Answer, refusal } from './api';
import { calibreSections } from './calibre-sections';
import type { Web } from './context';
import { sendHtml } from './http';
import { apiError } from './i18n';
import { i18nFor } from './i18n/request';
import { Failed } from './layout';
import { AdminLibraries, type Browse, FolderBrowser, type LibraryRow } from './pages/admin-libraries';

const idOf = (req: { params: unknown }) => (req.params as { id: string }).id;

export function adminLibrariesRoutes({ page, render }: Web): void {
  page('/admin/libraries', { admin: true }, async ({ req, reply, api, viewer }) => {
    const { t } = i18nFor(req);
    const [libs, roots] = await Promise.all([api.get('/api/libraries'), api.get('/api/libraries/browse')]);
    if (libs.status !== 200 || roots.status !== 200) return render(reply, t('libs.title'), viewer, '/admin/libraries', <Failed status={libs.status} />, 502);
    const calibre = await calibreSections(api, libs.body, viewer.id);
    return render(
      reply,
      t('libs.title'),
      viewer,
      '/admin/libraries',
      <AdminLibraries libraries={libs.body as LibraryRow[]} roots={roots.body as Browse} calibre={calibre} />,
      200,
      {
        topic: 'scanner',
        refresh: '#libraries',
      },
    );
  });
}

export function folderBrowserRoutes({ page }: Web): void {
  // the folder browser's next folder, as a fragment (opening a folder also chooses it)
  page('/admin/libraries/browse', { admin: true }, async ({ req, reply, api }) => {
    const path = (req.query as Record<string, unknown>).path;
    const r = await api.get('/api/libraries/browse', { query: typeof path === 'string' && path !== '' ? { path } : {} });
    if (r.status !== 200)
      return sendHtml(
        reply,
        <div id="folder-browser" class="alert alert-error" role="alert">
          {r.error ? apiError(i18nFor(req), r.error) : i18nFor(req).t('libs.browseFailed', { status: String(r.status) })}
        </div>,
        200,
        true,
      );
    return sendHtml(reply, <FolderBrowser b={r.body as Browse} oob />, 200, true);
  });
}

/** After a change, the list of libraries is fetched again (the page's own rendering of it). */
const RefetchLibraries = () => <div hx-get="/admin/libraries" hx-trigger="load" hx-select="#library-list" hx-target="#library-list" hx-swap="outerHTML" />;

function LibraryChanged({ a, fallback }: { a: Answer<unknown>; fallback: string }) {
  return (
    <>
      <Said a={a} fallback={fallback} />
      <RefetchLibraries />
    </>
  );
}

export function libraryEditActions({ app }: Web): void {
  // a library's name, folders (a line each) and watching; the catalog checks them and words any refusal
  action(app, '/admin/libraries/:id/edit', { done: 'library updated', show: (a: Answer<unknown>) => <LibraryChanged a={a} fallback="library updated" /> }, (api, f, req) => {
    const folders = (field(f, 'folders') ?? '')
      .split(/\r?\n/)
      .map((x) => x.trim())
      .filter((x) => x !== '');
    const watch = field(f, 'watch');
    return api.put('/api/libraries/:id', { params: { id: idOf(req) }, body: { name: field(f, 'name') ?? '', folders, ...(watch !== undefined ? { watch } : {}) } });
  });
  action(app, '/admin/libraries/:id/delete', { done: 'library deleted', show: (a: Answer<unknown>) => <LibraryChanged a={a} fallback="library deleted" /> }, (api, f, req) =>
    field(f, 'confirm') === 'yes' ? api.delete('/api/libraries/:id', { params: { id: idOf(req) } }) : Promise.resolve(refusal(400, 'tick the box to confirm the deletion')),
  );
}
