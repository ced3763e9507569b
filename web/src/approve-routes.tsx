// The approval page's two buttons: from the page itself only (its CSRF token), as the signed-in user, through the API's own routes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiFor } from './api';
import { fromOurPage, sendHtml } from './http';
import { Decide, Decided } from './pages/approve';

export function approveActions(app: FastifyInstance): void {
  for (const decision of ['approve', 'reject'] as const) {
    app.post(`/devices/approve/:id/${decision}`, async (req: FastifyRequest, reply: FastifyReply) => {
      if (!(await fromOurPage(app, req))) return reply.code(403).type('text/plain; charset=utf-8').send('forms of this page are sent by the page itself');
      const id = (req.params as { id: string }).id;
      const a = await apiFor(app, req)<{ error?: string; kosync?: { server: string; username: string | null; password: string }; kobo_config?: { line: string } }>(
        'POST',
        `/api/devices/${encodeURIComponent(id)}/${decision}`,
        {},
      );
      reply.header('X-Api-Status', String(a.status));
      if (a.status >= 400) return sendHtml(reply, <Decide id={id} error={a.body?.error ?? `Failed (${a.status})`} />, 200, true);
      const shown = { ...(a.body?.kosync ? { kosync: a.body.kosync } : {}), ...(a.body?.kobo_config ? { kobo: a.body.kobo_config } : {}) };
      return sendHtml(reply, <Decided approved={decision === 'approve'} {...shown} />, 200, true);
    });
  }
}
