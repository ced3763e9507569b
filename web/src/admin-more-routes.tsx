// The duplicate-content page, the scanner page, a library's edit and delete, and the book page's
// duplicate notice. Reads are the API's admin routes; writes are its own routes called as the
// signed-in admin, the catalog wording every outcome.
import type { FastifyInstance } from 'fastify';
import { action, field, Said } from './actions';
import type { Answer } from './api';
import { isHtmx, sendHtml } from './http';
import type { Render } from './layout';
import type { LibraryRow } from './pages/admin-libraries';
import { AdminConflicts, type ConflictGroup, ConflictNotice } from './pages/admin-conflicts';
import { AdminScanner, type FileIssue, type ScanStatus } from './pages/admin-scanner';
import type { PageContext } from './routes';
import { SessionList, type SessionRow } from './pages/sessions';

type Page = (path: string, opts: { admin?: boolean }, handler: (c: PageContext) => Promise<unknown>) => unknown;

const idOf = (req: { params: unknown }) => encodeURIComponent((req.params as { id: string }).id);

function Failed({ status }: { status: number }) {
  return <p id="failure">{`The server could not answer this page (${status}). Try again in a moment.`}</p>;
}

/** After a change, the list of libraries is fetched again (the page's own rendering of it). */
const RefetchLibraries = () => <div hx-get="/admin/libraries" hx-trigger="load" hx-select="#library-list" hx-target="#library-list" hx-swap="outerHTML" />;

export function adminMoreRoutes(app: FastifyInstance, page: Page, render: Render): void {
  sessionRoutes(app, page);
  page('/admin/conflicts', { admin: true }, async ({ reply, api, viewer }) => {
    const [c, libs] = await Promise.all([api<{ data: ConflictGroup[] }>('GET', '/api/admin/hash-conflicts'), api<LibraryRow[]>('GET', '/api/libraries')]);
    if (c.status !== 200)
      return render(
        reply,
        'Duplicate books',
        viewer,
        '/admin/libraries',
        <>
          <h1>Duplicate books</h1>
          <Failed status={c.status} />
        </>,
        502,
      );
    const names = new Map((libs.status === 200 ? libs.body : []).map((l) => [l.id, l.name]));
    return render(reply, 'Duplicate books', viewer, '/admin/libraries', <AdminConflicts groups={c.body.data} libraries={names} />);
  });

  // keep one (the others merge into it) or keep all; on success the group's choices go away
  action(
    app,
    '/admin/conflicts/:id/resolve',
    {
      done: 'conflict resolved',
      show: (a) => {
        const id = (a.body as { conflict?: { id?: string } }).conflict?.id ?? '';
        return (
          <>
            <Said a={a} fallback="conflict resolved" />
            {id && <div id={`conflict-members-${id}`} hx-swap-oob="outerHTML" />}
          </>
        );
      },
    },
    (api, f, req) => {
      const act = field(f, 'action') ?? '';
      const keep = field(f, 'keep_uuid');
      return api('POST', `/api/admin/hash-conflicts/${idOf(req)}/resolve`, { action: act, ...(keep !== undefined ? { keep_uuid: keep } : {}) });
    },
  );

  // the book page's notice, fetched after the page: only admins may read the pending groups
  page('/books/:id/conflict', {}, async ({ req, reply, api, viewer }) => {
    if (!isHtmx(req)) return reply.code(404).type('text/plain; charset=utf-8').send('not found');
    if (viewer.role !== 'admin') return sendHtml(reply, <ConflictNotice group={null} />, 200, true);
    const id = (req.params as { id: string }).id.toLowerCase();
    const c = await api<{ data: ConflictGroup[] }>('GET', '/api/admin/hash-conflicts');
    const group = c.status === 200 ? (c.body.data.find((g) => g.items.some((i) => i.id === id)) ?? null) : null;
    return sendHtml(reply, <ConflictNotice group={group} />, 200, true);
  });

  page('/admin/scanner', { admin: true }, async ({ reply, api, viewer }) => {
    const [libs, status, issues] = await Promise.all([
      api<LibraryRow[]>('GET', '/api/libraries'),
      api<ScanStatus>('GET', '/api/scanner/status'),
      api<{ data: FileIssue[] }>('GET', '/api/scanner/issues?limit=200'),
    ]);
    if (libs.status !== 200 || status.status !== 200)
      return render(
        reply,
        'Scanner',
        viewer,
        '/admin/libraries',
        <>
          <h1>Scanner</h1>
          <Failed status={status.status} />
        </>,
        502,
      );
    return render(
      reply,
      'Scanner',
      viewer,
      '/admin/libraries',
      <AdminScanner libraries={libs.body} status={status.body} issues={issues.status === 200 ? issues.body.data : []} />,
      200,
      { topic: 'scanner', refresh: '#scanner-status' },
    );
  });

  // a library's name, folders (a line each) and watching; the catalog checks them and words any refusal
  action(app, '/admin/libraries/:id/edit', { done: 'library updated', show: (a: Answer<unknown>) => <LibraryChanged a={a} fallback="library updated" /> }, (api, f, req) => {
    const folders = (field(f, 'folders') ?? '')
      .split(/\r?\n/)
      .map((x) => x.trim())
      .filter((x) => x !== '');
    const watch = field(f, 'watch');
    return api('PUT', `/api/libraries/${idOf(req)}`, { name: field(f, 'name') ?? '', folders, ...(watch !== undefined ? { watch } : {}) });
  });
  action(app, '/admin/libraries/:id/delete', { done: 'library deleted', show: (a: Answer<unknown>) => <LibraryChanged a={a} fallback="library deleted" /> }, (api, f, req) =>
    field(f, 'confirm') === 'yes' ? api('DELETE', `/api/libraries/${idOf(req)}`) : Promise.resolve({ status: 400, body: { error: 'tick the box to confirm the deletion' } }),
  );
}

/** After a sign-out, the list of sessions is fetched again. */
const RefetchSessions = () => <div hx-get="/profile/sessions" hx-trigger="load" hx-target="#sessions" hx-swap="outerHTML" />;
function SessionsChanged({ a, fallback }: { a: Answer<unknown>; fallback: string }) {
  return (
    <>
      <Said a={a} fallback={fallback} />
      <RefetchSessions />
    </>
  );
}

/** The profile's sessions: the caller's own, as the API lists them, and signing them out. */
export function sessionRoutes(app: FastifyInstance, page: Page): void {
  page('/profile/sessions', {}, async ({ reply, api }) => {
    const r = await api<{ data: SessionRow[] }>('GET', '/api/auth/sessions');
    return sendHtml(reply, r.status === 200 ? <SessionList sessions={r.body.data} /> : <SessionList sessions={[]} failed={r.status} />, 200, true);
  });
  action(app, '/profile/sessions/:id/sign-out', { done: 'session signed out', show: (a) => <SessionsChanged a={a} fallback="session signed out" /> }, (api, _f, req) =>
    api('DELETE', `/api/auth/sessions/${idOf(req)}`),
  );
  action(app, '/profile/sessions/sign-out-others', { done: 'signed out everywhere else', show: (a) => <SessionsChanged a={a} fallback="signed out everywhere else" /> }, (api) =>
    api('DELETE', '/api/auth/sessions'),
  );
}

function LibraryChanged({ a, fallback }: { a: Answer<unknown>; fallback: string }) {
  return (
    <>
      <Said a={a} fallback={fallback} />
      <RefetchLibraries />
    </>
  );
}
