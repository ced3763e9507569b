// Highlights, notes, bookmarks (per user and item; soft delete with list, restore and purge of the
// deleted ones) and ratings. An annotation of a book the caller can't see is as absent as the book.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fail, Messages, Reading } from '@bindery/contracts';
import { sendFailure, sendResult } from '../http/reply';
import { visibleItem } from '../http/reading-client';
import { bodyOf } from './auth';
import { param, type ReadingDeps } from './reading-progress';

const KINDS = { highlights: 'highlight', notes: 'note', bookmarks: 'bookmark' } as const;

export function readingAnnotationRoutes(app: FastifyInstance, { auth, reads, reading }: ReadingDeps): void {
  const user = { onRequest: auth.requireUser };
  const invalid = (reply: FastifyReply) => sendFailure(reply, fail('invalid_request', Messages.invalidRequest));

  /** The caller's annotation (of `kind`, live; or any), when its book is visible; else the failure is sent. */
  const mine = async (req: FastifyRequest, reply: FastifyReply, kind?: string): Promise<boolean> => {
    const a = await reading(req, 'annotation-get', { id: param(req, 'aid'), ...(kind ? { kind } : {}) });
    if (!a.ok) {
      sendFailure(reply, a.error);
      return false;
    }
    const c = await reads.context(req.caller!);
    if (!(await reads.catalog.itemLibrary(c.access, (a.value as { media_item_id: string }).media_item_id))) {
      sendFailure(reply, fail('not_found', Reading.ReadingMessages.annotationNotFound));
      return false;
    }
    return true;
  };

  for (const [segment, kind] of Object.entries(KINDS)) {
    app.get(`/api/media-items/:id/${segment}`, user, async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      return sendResult(reply, await reading(req, 'annotations-list', { item_id: item, kind }));
    });
    app.post(`/api/media-items/:id/${segment}`, user, async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      const input = bodyOf(req);
      if (!input) return invalid(reply);
      const r = await reading(req, 'annotation-create', { item_id: item, kind, input });
      if (!r.ok) return sendFailure(reply, r.error);
      // a replay with a known dedup_key answers the annotation already there
      const { existing, ...a } = r.value as { existing: boolean };
      return reply.code(existing ? 200 : 201).send(a);
    });
    app.get(`/api/${segment}/:aid`, user, async (req, reply) => {
      if (!(await mine(req, reply, kind))) return reply;
      return sendResult(reply, await reading(req, 'annotation-get', { id: param(req, 'aid'), kind }));
    });
    for (const method of ['put', 'patch'] as const) {
      app[method](`/api/${segment}/:aid`, user, async (req, reply) => {
        const input = bodyOf(req);
        if (!input) return invalid(reply);
        if (!(await mine(req, reply, kind))) return reply;
        return sendResult(reply, await reading(req, 'annotation-update', { id: param(req, 'aid'), kind, input }));
      });
    }
    app.delete(`/api/${segment}/:aid`, user, async (req, reply) => {
      if (!(await mine(req, reply, kind))) return reply;
      return sendResult(reply, await reading(req, 'annotation-delete', { id: param(req, 'aid'), kind }));
    });
  }

  app.get('/api/media-items/:id/annotations/deleted', user, async (req, reply) => {
    const item = await visibleItem(reads, req, reply, param(req));
    if (!item) return reply;
    return sendResult(reply, await reading(req, 'annotations-deleted', { item_id: item }));
  });
  app.delete('/api/media-items/:id/annotations/deleted', user, async (req, reply) => {
    const item = await visibleItem(reads, req, reply, param(req));
    if (!item) return reply;
    return sendResult(reply, await reading(req, 'annotations-purge-all', { item_id: item }));
  });
  app.post('/api/annotations/:aid/restore', user, async (req, reply) => {
    if (!(await mine(req, reply))) return reply;
    return sendResult(reply, await reading(req, 'annotation-restore', { id: param(req, 'aid') }));
  });
  app.delete('/api/annotations/:aid', user, async (req, reply) => {
    if (!(await mine(req, reply))) return reply;
    return sendResult(reply, await reading(req, 'annotation-purge', { id: param(req, 'aid') }));
  });

  app.get('/api/media-items/:id/rating', user, async (req, reply) => {
    const item = await visibleItem(reads, req, reply, param(req));
    if (!item) return reply;
    return sendResult(reply, await reading(req, 'rating-get', { item_id: item }));
  });
  for (const [method, op] of [
    ['post', 'rating-create'],
    ['put', 'rating-put'],
  ] as const) {
    app[method]('/api/media-items/:id/rating', user, async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      const input = bodyOf(req);
      if (!input) return invalid(reply);
      const r = await reading(req, op, { item_id: item, input });
      if (!r.ok) return sendFailure(reply, r.error);
      const { created, ...rating } = r.value as { created: boolean };
      return reply.code(created ? 201 : 200).send(rating);
    });
  }
  app.delete('/api/media-items/:id/rating', user, async (req, reply) => {
    const item = await visibleItem(reads, req, reply, param(req));
    if (!item) return reply;
    return sendResult(reply, await reading(req, 'rating-delete', { item_id: item }));
  });
}
