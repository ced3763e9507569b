// Reading positions: /api/media-items/<id>/progress (GET, PUT, DELETE) and /api/progress/<id>/history.
// `/api/progress/<id>` itself is deliberately not registered (spec).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { fail, Messages } from '@bindery/contracts';
import type { Auth } from '../http/authenticate';
import { sendFailure, sendResult } from '../http/reply';
import { visibleItem, type Reader } from '../http/reading-client';
import type { Reads } from '../read-model/reads';
import { bodyOf } from './auth';
import { errors, IdParams, MessageBody, SIGNED_IN } from '../http/schemas';
import { History, PositionBody, Progress, ProgressWritten } from './reading-schemas';
export { PositionBody };

export const ItemParams = { params: IdParams };

export interface ReadingDeps {
  auth: Auth;
  reads: Reads;
  reading: Reader;
}

export const param = (req: FastifyRequest, k = 'id') => (req.params as Record<string, string>)[k]!;

export function readingProgressRoutes(app: FastifyInstance, { auth, reads, reading }: ReadingDeps): void {
  const user = { onRequest: auth.requireUser };
  const tags = ['progress'];
  const refused = errors(400, ...SIGNED_IN, 404);
  app.get(
    '/api/media-items/:id/progress',
    { ...user, schema: { tags, summary: 'your position in an item', ...ItemParams, response: { 200: Progress, ...refused } } },
    async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      return sendResult(reply, await reading(req, 'progress-get', { item_id: item }));
    },
  );
  for (const method of ['put', 'post'] as const) {
    const schema = { tags, summary: 'report your position', ...ItemParams, body: PositionBody, response: { 200: ProgressWritten, ...errors(400, ...SIGNED_IN, 404, 409) } };
    app[method]('/api/media-items/:id/progress', { ...user, schema }, async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest));
      return sendResult(reply, await reading(req, 'progress-put', { item_id: item, input }));
    });
  }
  app.delete(
    '/api/media-items/:id/progress',
    { ...user, schema: { tags, summary: 'forget your position', ...ItemParams, response: { 200: MessageBody, ...refused } } },
    async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      return sendResult(reply, await reading(req, 'progress-delete', { item_id: item }));
    },
  );
  // <id> is the media item's id (or the caller's progress record id)
  const historyParams = { params: Type.Object({ id: Type.String({ description: 'a media item id, or your progress record id' }) }) };
  app.get(
    '/api/progress/:id/history',
    { ...user, schema: { tags, summary: 'earlier positions in an item', ...historyParams, response: { 200: History, ...refused } } },
    async (req, reply) => {
      const which = await reading(req, 'progress-item', { id: param(req) });
      if (!which.ok) return sendFailure(reply, which.error);
      const item = await visibleItem(reads, req, reply, which.value.media_item_id);
      if (!item) return reply;
      return sendResult(reply, await reading(req, 'progress-history', { item_id: item }));
    },
  );
}
