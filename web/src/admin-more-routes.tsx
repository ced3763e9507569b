// Admin: the duplicate-content page and settling a group, the book page's duplicate notice, and the
// scanner page. Reads are the API's admin routes; writes are its own routes called as the signed-in
// admin, the catalog wording every outcome.
import { action, field, Said } from './actions';
import type { Web } from './context';
import { isHtmx, sendHtml } from './http';
import { i18nFor } from './i18n/request';
import { Failed } from './layout';
import type { LibraryRow } from './pages/admin-libraries';
import { AdminConflicts, ConflictNotice } from './pages/admin-conflicts';
import { AdminScanner, type FileIssue, type ScanStatus } from './pages/admin-scanner';

const idOf = (req: { params: unknown }) => (req.params as { id: string }).id;

export function duplicateRoutes({ app, page, render }: Web): void {
  page('/admin/conflicts', { admin: true }, async ({ req, reply, api, viewer }) => {
    const { t } = i18nFor(req);
    const [c, libs] = await Promise.all([api.get('/api/admin/hash-conflicts'), api.get('/api/libraries')]);
    if (c.status !== 200) return render(reply, t('conflicts.title'), viewer, '/admin/libraries', <Failed status={c.status} />, 502);
    const names = new Map((libs.status === 200 ? libs.body : []).map((l) => [l.id, l.name]));
    return render(reply, t('conflicts.title'), viewer, '/admin/libraries', <AdminConflicts groups={c.body.data} libraries={names} />);
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
      return api.post('/api/admin/hash-conflicts/:id/resolve', { params: { id: idOf(req) }, body: { action: act, ...(keep !== undefined ? { keep_uuid: keep } : {}) } });
    },
  );

  // the book page's notice, fetched after the page: only admins may read the pending groups
  page('/books/:id/conflict', {}, async ({ req, reply, api, viewer }) => {
    if (!isHtmx(req)) return reply.code(404).type('text/plain; charset=utf-8').send('not found');
    if (viewer.role !== 'admin') return sendHtml(reply, <ConflictNotice group={null} />, 200, true);
    const id = (req.params as { id: string }).id.toLowerCase();
    const c = await api.get('/api/admin/hash-conflicts');
    const group = c.status === 200 ? (c.body.data.find((g) => g.items.some((i) => i.id === id)) ?? null) : null;
    return sendHtml(reply, <ConflictNotice group={group} />, 200, true);
  });
}

export function scannerRoutes({ page, render }: Web): void {
  page('/admin/scanner', { admin: true }, async ({ req, reply, api, viewer }) => {
    const { t } = i18nFor(req);
    const [libs, status, issues] = await Promise.all([api.get('/api/libraries'), api.get('/api/scanner/status'), api.get('/api/scanner/issues', { query: { limit: '200' } })]);
    if (libs.status !== 200 || status.status !== 200) return render(reply, t('scanner.title'), viewer, '/admin/libraries', <Failed status={status.status} />, 502);
    return render(
      reply,
      t('scanner.title'),
      viewer,
      '/admin/libraries',
      <AdminScanner libraries={libs.body as LibraryRow[]} status={status.body as ScanStatus} issues={issues.status === 200 ? (issues.body.data as FileIssue[]) : []} />,
      200,
      { topic: 'scanner', refresh: '#scanner-status' },
    );
  });
}
