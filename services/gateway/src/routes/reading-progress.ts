// Reading positions: /api/media-items/<id>/progress (GET, PUT, DELETE) and /api/progress/<id>/history.
// `/api/progress/<id>` itself is deliberately not registered (spec).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fail, Messages } from '@bindery/contracts';
import type { Auth } from '../http/authenticate';
import { sendFailure, sendResult } from '../http/reply';
import { visibleItem, type Reader } from '../http/reading-client';
import type { Reads } from '../read-model/reads';
import { bodyOf } from './auth';

export interface ReadingDeps {
  auth: Auth;
  reads: Reads;
  reading: Reader;
}

export const param = (req: FastifyRequest, k = 'id') => (req.params as Record<string, string>)[k]!;

export function readingProgressRoutes(app: FastifyInstance, { auth, reads, reading }: ReadingDeps): void {
  const user = { onRequest: auth.requireUser };
  app.get('/api/media-items/:id/progress', user, async (req, reply) => {
    const item = await visibleItem(reads, req, reply, param(req));
    if (!item) return reply;
    return sendResult(reply, await reading(req, 'progress-get', { item_id: item }));
  });
  for (const method of ['put', 'post'] as const) {
    app[method]('/api/media-items/:id/progress', user, async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest));
      return sendResult(reply, await reading(req, 'progress-put', { item_id: item, input }));
    });
  }
  app.delete('/api/media-items/:id/progress', user, async (req, reply) => {
    const item = await visibleItem(reads, req, reply, param(req));
    if (!item) return reply;
    return sendResult(reply, await reading(req, 'progress-delete', { item_id: item }));
  });
  // <id> is the media item's id (or the caller's progress record id)
  app.get('/api/progress/:id/history', user, async (req, reply) => {
    const which = await reading(req, 'progress-item', { id: param(req) });
    if (!which.ok) return sendFailure(reply, which.error);
    const item = await visibleItem(reads, req, reply, (which.value as { media_item_id: string }).media_item_id);
    if (!item) return reply;
    return sendResult(reply, await reading(req, 'progress-history', { item_id: item }));
  });
}
