// Highlights, notes, bookmarks (per user and item; soft delete with list, restore and purge of the
// deleted ones) and ratings. An annotation of a book the caller can't see is as absent as the book.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fail, Messages, Reading } from '@bindery/contracts';
import { sendFailure, sendResult } from '../http/reply';
import { visibleItem } from '../http/reading-client';
import { bodyOf } from './auth';
import { ItemParams, param, type ReadingDeps } from './reading-progress';
import Type from 'typebox';
import { errors, MessageBody, params, routeBody, serviceBody, SIGNED_IN } from '../http/schemas';
import { Annotation, AnnotationList, AnnotationWritten, Rating } from './reading-schemas';

const KINDS = { highlights: 'highlight', notes: 'note', bookmarks: 'bookmark' } as const;
const FIELDS = {
  position: 'where: `epubcfi` (a range for highlights), or `pos0`/`pos1`, `page`, `percentage`',
  text: 'the highlighted text',
  note: 'the note',
  color: 'a hex colour or a palette name',
  dedup_key: 'a client key: a replay answers the annotation already there',
};

/** What the annotation and rating routes share, built once per app. */
function annotationContext({ auth, reads, reading }: ReadingDeps) {
  /** The caller's annotation (of `kind`, live; or any), when its book is visible; else the failure is sent. */
  const mine = async (req: FastifyRequest, reply: FastifyReply, kind?: string): Promise<boolean> => {
    const a = await reading(req, 'annotation-get', { id: param(req, 'aid'), ...(kind ? { kind } : {}) });
    if (!a.ok) {
      sendFailure(reply, a.error);
      return false;
    }
    const c = await reads.context(req.caller!);
    if (!(await reads.catalog.itemLibrary(c.access, a.value.media_item_id))) {
      sendFailure(reply, fail('not_found', Reading.ReadingMessages.annotationNotFound));
      return false;
    }
    return true;
  };
  return {
    reads,
    reading,
    user: { onRequest: auth.requireUser },
    invalid: (reply: FastifyReply) => sendFailure(reply, fail('invalid_request', Messages.invalidRequest)),
    tags: ['annotations'],
    refused: errors(400, ...SIGNED_IN, 404),
    AidParams: { params: params({ aid: 'the annotation' }) },
    mine,
  };
}

type AnnotationContext = ReturnType<typeof annotationContext>;

export function readingAnnotationRoutes(app: FastifyInstance, deps: ReadingDeps): void {
  const c = annotationContext(deps);
  for (const [segment, kind] of Object.entries(KINDS)) annotationKindRoutes(app, c, segment, kind);
  deletedAnnotationRoutes(app, c);
  ratingRoutes(app, c);
}

/** One kind's routes (`segment` in the path): those of an item, then one by its id. */
function annotationKindRoutes(app: FastifyInstance, { reads, reading, user, invalid, tags, refused, AidParams, mine }: AnnotationContext, segment: string, kind: string): void {
  app.get(
    `/api/media-items/:id/${segment}`,
    { ...user, schema: { tags, summary: `your ${segment} in an item`, ...ItemParams, response: { 200: AnnotationList, ...refused } } },
    async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      return sendResult(reply, await reading(req, 'annotations-list', { item_id: item, kind }));
    },
  );
  const created = { 200: AnnotationWritten, 201: AnnotationWritten, ...errors(400, ...SIGNED_IN, 404) };
  const createSchema = {
    tags,
    summary: `add a ${kind} (200 with the one already there for a known dedup_key)`,
    ...ItemParams,
    body: routeBody(FIELDS, `a ${kind}`),
    response: created,
  };
  app.post(`/api/media-items/:id/${segment}`, { ...user, schema: createSchema }, async (req, reply) => {
    const item = await visibleItem(reads, req, reply, param(req));
    if (!item) return reply;
    const input = bodyOf(req);
    if (!input) return invalid(reply);
    const r = await reading(req, 'annotation-create', { item_id: item, kind, input });
    if (!r.ok) return sendFailure(reply, r.error);
    // a replay with a known dedup_key answers the annotation already there
    const { existing, ...a } = r.value;
    return reply.code(existing ? 200 : 201).send(a);
  });
  app.get(`/api/${segment}/:aid`, { ...user, schema: { tags, summary: `one ${kind}`, ...AidParams, response: { 200: Annotation, ...refused } } }, async (req, reply) => {
    if (!(await mine(req, reply, kind))) return reply;
    return sendResult(reply, await reading(req, 'annotation-get', { id: param(req, 'aid'), kind }));
  });
  for (const method of ['put', 'patch'] as const) {
    const schema = { tags, summary: `change a ${kind}`, ...AidParams, body: serviceBody(FIELDS), response: { 200: AnnotationWritten, ...refused } };
    app[method](`/api/${segment}/:aid`, { ...user, schema }, async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return invalid(reply);
      if (!(await mine(req, reply, kind))) return reply;
      return sendResult(reply, await reading(req, 'annotation-update', { id: param(req, 'aid'), kind, input }));
    });
  }
  const deleted = { 200: Type.Union([MessageBody, Annotation], { description: 'deleted (restorable from the deleted list)' }), ...refused };
  app.delete(`/api/${segment}/:aid`, { ...user, schema: { tags, summary: `delete a ${kind}`, ...AidParams, response: deleted } }, async (req, reply) => {
    if (!(await mine(req, reply, kind))) return reply;
    return sendResult(reply, await reading(req, 'annotation-delete', { id: param(req, 'aid'), kind }));
  });
}

/** The deleted annotations: an item's list and purge, restore one, purge one for good. */
function deletedAnnotationRoutes(app: FastifyInstance, { reads, reading, user, tags, refused, AidParams, mine }: AnnotationContext): void {
  app.get(
    '/api/media-items/:id/annotations/deleted',
    { ...user, schema: { tags, summary: 'your deleted annotations in an item', ...ItemParams, response: { 200: AnnotationList, ...refused } } },
    async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      return sendResult(reply, await reading(req, 'annotations-deleted', { item_id: item }));
    },
  );
  const purged = Type.Object({ message: Type.String(), purged: Type.Integer() });
  app.delete(
    '/api/media-items/:id/annotations/deleted',
    { ...user, schema: { tags, summary: 'purge your deleted annotations in an item', ...ItemParams, response: { 200: purged, ...refused } } },
    async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      return sendResult(reply, await reading(req, 'annotations-purge-all', { item_id: item }));
    },
  );
  app.post(
    '/api/annotations/:aid/restore',
    { ...user, schema: { tags, summary: 'restore a deleted annotation', ...AidParams, response: { 200: Annotation, ...errors(400, ...SIGNED_IN, 404, 409) } } },
    async (req, reply) => {
      if (!(await mine(req, reply))) return reply;
      return sendResult(reply, await reading(req, 'annotation-restore', { id: param(req, 'aid') }));
    },
  );
  app.delete(
    '/api/annotations/:aid',
    { ...user, schema: { tags, summary: 'purge an annotation for good', ...AidParams, response: { 200: MessageBody, ...refused } } },
    async (req, reply) => {
      if (!(await mine(req, reply))) return reply;
      return sendResult(reply, await reading(req, 'annotation-purge', { id: param(req, 'aid') }));
    },
  );
}

/** The caller's rating of an item: read, create or replace, forget. */
function ratingRoutes(app: FastifyInstance, { reads, reading, user, invalid, refused }: AnnotationContext): void {
  app.get(
    '/api/media-items/:id/rating',
    { ...user, schema: { tags: ['ratings'], summary: 'your rating of an item', ...ItemParams, response: { 200: Rating, ...refused } } },
    async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      return sendResult(reply, await reading(req, 'rating-get', { item_id: item }));
    },
  );
  for (const [method, op] of [
    ['post', 'rating-create'],
    ['put', 'rating-put'],
  ] as const) {
    const body = routeBody({ rating: '0.5 to 5, in halves', review: 'text' });
    const schema = { tags: ['ratings'], summary: 'rate an item (201 when new)', ...ItemParams, body, response: { 200: Rating, 201: Rating, ...refused } };
    app[method]('/api/media-items/:id/rating', { ...user, schema }, async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      const input = bodyOf(req);
      if (!input) return invalid(reply);
      const r = await reading(req, op, { item_id: item, input });
      if (!r.ok) return sendFailure(reply, r.error);
      const { created, ...rating } = r.value;
      return reply.code(created ? 201 : 200).send(rating);
    });
  }
  app.delete(
    '/api/media-items/:id/rating',
    { ...user, schema: { tags: ['ratings'], summary: 'forget your rating', ...ItemParams, response: { 200: MessageBody, ...refused } } },
    async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      return sendResult(reply, await reading(req, 'rating-delete', { item_id: item }));
    },
  );
}
