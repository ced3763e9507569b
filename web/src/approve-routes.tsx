// A device registration's approval page and its two buttons: from the page itself only (its CSRF
// token), as the signed-in user, through the API's own routes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiFor } from './api';
import type { Web } from './context';
import { fromOurPage, sendHtml } from './http';
import { apiError } from './i18n';
import { i18nFor } from './i18n/request';
import { Failed } from './layout';
import { Approve, Decide, Decided, type Pending } from './pages/approve';
import { viewerOf } from './context';

export function approveRoutes({ app, page, render }: Web): void {
  page('/devices/approve/:id', {}, async ({ req, reply, api, viewer }) => {
    const id = (req.params as { id: string }).id;
    const i18n = i18nFor(req);
    const { t } = i18n;
    const r = await api.get('/api/devices/pending/:id', { params: { id } });
    if (r.status === 404 || r.status === 400)
      return render(
        reply,
        t('approve.registration'),
        viewer,
        '/devices',
        <>
          <h1>{t('approve.registration')}</h1>
          <p id="result" data-outcome="missing">
            {r.status === 404 ? t('approve.missing') : r.error ? apiError(i18n, r.error) : t('approve.missing')}
          </p>
        </>,
        r.status,
      );
    if (r.status !== 200) return render(reply, t('approve.registration'), viewer, '/devices', <Failed status={r.status} />, 503);
    return render(reply, r.body.status === 'pending' ? t('approve.title') : t('approve.registration'), viewer, '/devices', <Approve p={r.body as Pending} />);
  });
  approveActions(app);
}

function approveActions(app: FastifyInstance): void {
  for (const decision of ['approve', 'reject'] as const) {
    app.post(`/devices/approve/:id/${decision}`, async (req: FastifyRequest, reply: FastifyReply) => {
      if (!(await fromOurPage(app, req))) return reply.code(403).type('text/plain; charset=utf-8').send('forms of this page are sent by the page itself');
      const id = (req.params as { id: string }).id;
      const api = apiFor(app, req);
      const a = await api.post(`/api/devices/:id/${decision}`, { params: { id } });
      reply.header('X-Api-Status', String(a.status));
      // the answer in the person's own language (their profile's), as the page was
      const i18n = i18nFor(req, await viewerOf(api));
      const { t } = i18n;
      if (a.status >= 400) return sendHtml(reply, <Decide id={id} error={a.error ? apiError(i18n, a.error) : t('approve.failed', { status: String(a.status) })} />, 200, true);
      const b = a.body && 'device' in a.body ? a.body : null;
      const shown = { ...(b?.kosync ? { kosync: b.kosync } : {}), ...(b?.kobo_config ? { kobo: b.kobo_config } : {}) };
      return sendHtml(reply, <Decided approved={decision === 'approve'} {...shown} />, 200, true);
    });
  }
}
