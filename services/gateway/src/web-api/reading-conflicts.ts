// Progress conflicts: /api/progress-conflicts (list, get, resolve, delete, bulk resolve, bulk dismiss,
// dismiss all). A conflict on a book the caller can no longer see is as absent as the book.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fail, Messages, Reading } from '@bindery/contracts';
import { sendFailure, sendResult } from '../http/reply';
import { bodyOf } from './auth';
import { queryOf } from './libraries';
import { DashboardView } from '../read-model/dashboard-view';
import { visibleItem } from '../http/reading-client';
import { ItemParams, param, type ReadingDeps } from './reading-progress';
import { errors, IdParams, MessageBody, query, serviceBody, SIGNED_IN } from '../http/schemas';
import { BulkConflicts, Conflict, ConflictList } from './reading-schemas';
import { ConflictResolveBody } from '@bindery/contracts/api/reading';

export function readingConflictRoutes(app: FastifyInstance, { auth, reads, reading }: ReadingDeps): void {
  const user = { onRequest: auth.requireUser };
  const access = async (req: FastifyRequest) => (await reads.context(req.caller!)).access;
  const invalid = (reply: FastifyReply) => sendFailure(reply, fail('invalid_request', Messages.invalidRequest));
  const tags = ['progress conflicts'];
  const refused = errors(400, ...SIGNED_IN, 404);
  const BulkBody = serviceBody({ ids: 'conflict ids', keep: 'for resolve: `current` or `incoming`' });

  /** The caller's conflict, when its book is visible to them; otherwise the failure is sent. */
  const mine = async (req: FastifyRequest, reply: FastifyReply): Promise<boolean> => {
    const c = await reading(req, 'conflict-get', { id: param(req) });
    if (!c.ok) {
      sendFailure(reply, c.error);
      return false;
    }
    const a = await access(req);
    if (!(await reads.catalog.itemLibrary(a, c.value.media_item_id))) {
      sendFailure(reply, fail('not_found', Reading.ReadingMessages.conflictNotFound));
      return false;
    }
    return true;
  };

  // one book's open conflicts, from the gateway's reading view (the book page asks on every visit)
  const view = new DashboardView(reads.db);
  app.get(
    '/api/media-items/:id/progress-conflicts',
    { ...user, schema: { tags, summary: "an item's open conflicts", ...ItemParams, response: { 200: ConflictList, ...refused } } },
    async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      return { data: await view.openConflicts(req.caller!.user_id, item) };
    },
  );
  const listQuery = query({ status: 'open, resolved or dismissed', media_item_id: 'one item', limit: 'how many', offset: 'how many to skip' });
  app.get(
    '/api/progress-conflicts',
    { ...user, schema: { tags, summary: 'your progress conflicts', querystring: listQuery, response: { 200: ConflictList, ...errors(400, ...SIGNED_IN) } } },
    async (req, reply) => sendResult(reply, await reading(req, 'conflicts-list', { access: await access(req), query: queryOf(req) })),
  );
  const bulk = (summary: string) => ({ ...user, schema: { tags, summary, body: BulkBody, response: { 200: BulkConflicts, ...errors(400, ...SIGNED_IN) } } });
  app.post('/api/progress-conflicts/bulk-resolve', bulk('resolve several conflicts'), async (req, reply) => {
    const input = bodyOf(req);
    if (!input) return invalid(reply);
    return sendResult(reply, await reading(req, 'conflicts-bulk-resolve', { access: await access(req), input }));
  });
  app.post('/api/progress-conflicts/bulk-dismiss', bulk('dismiss several conflicts'), async (req, reply) => {
    const input = bodyOf(req);
    if (!input) return invalid(reply);
    return sendResult(reply, await reading(req, 'conflicts-bulk-dismiss', { access: await access(req), input }));
  });
  app.post(
    '/api/progress-conflicts/dismiss-all',
    { ...user, schema: { tags, summary: 'dismiss every open conflict', response: { 200: BulkConflicts, ...errors(...SIGNED_IN) } } },
    async (req, reply) => sendResult(reply, await reading(req, 'conflicts-dismiss-all', { access: await access(req) })),
  );
  app.get('/api/progress-conflicts/:id', { ...user, schema: { tags, summary: 'one conflict', params: IdParams, response: { 200: Conflict, ...refused } } }, async (req, reply) => {
    if (!(await mine(req, reply))) return reply;
    return sendResult(reply, await reading(req, 'conflict-get', { id: param(req) }));
  });
  const resolveBody = ConflictResolveBody;
  app.post(
    '/api/progress-conflicts/:id/resolve',
    { ...user, schema: { tags, summary: 'resolve a conflict', params: IdParams, body: resolveBody, response: { 200: Conflict, ...errors(400, ...SIGNED_IN, 404, 409) } } },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return invalid(reply);
      if (!(await mine(req, reply))) return reply;
      return sendResult(reply, await reading(req, 'conflict-resolve', { id: param(req), input }));
    },
  );
  app.delete(
    '/api/progress-conflicts/:id',
    { ...user, schema: { tags, summary: 'delete a conflict', params: IdParams, response: { 200: MessageBody, ...refused } } },
    async (req, reply) => {
      if (!(await mine(req, reply))) return reply;
      return sendResult(reply, await reading(req, 'conflict-delete', { id: param(req) }));
    },
  );
}
