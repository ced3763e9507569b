// Collections (/api/collections: system, custom, smart; items; preview; restore a system one), saved
// filters (/api/saved-filters) and the dashboard (/api/dashboard/sections, /api/dashboard/preferences).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { fail, isUuid, Messages, Reading, type Result } from '@bindery/contracts';
import { sendFailure, sendResult } from '../http/reply';
import { visibleItem } from '../http/reading-client';
import { withItems } from '../read-model/reading-items';
import { DashboardView } from '../read-model/dashboard-view';
import { sendJson } from '../read-model/reads';
import { bodyOf } from './auth';
import { queryOf } from './libraries';
import { param, type ReadingDeps } from './reading-progress';
import { errors, IdParams, MessageBody, params, query, serviceBody, SIGNED_IN } from '../http/schemas';
import { Collection, CollectionList, ItemsAdded, Members, Preferences, Preview, SavedFilter, SavedFilterList, Sections } from './reading-schemas';
import { AddItemsBody, CollectionBody, FilterBody } from '@bindery/contracts/api/reading';

/** A whole-number query parameter, its default when absent, null when malformed. */
function whole(raw: string | string[] | undefined, dflt: number): number | null {
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (v === undefined || v === '') return dflt;
  return /^\d{1,9}$/.test(v) ? Number(v) : null;
}

/** What the collection, saved filter and dashboard routes share, built once per app. */
function collectionContext({ auth, reads, reading }: ReadingDeps) {
  const user = { onRequest: auth.requireUser };
  const access = async (req: FastifyRequest) => (await reads.context(req.caller!)).access;
  const invalid = (reply: FastifyReply) => sendFailure(reply, fail('invalid_request', Messages.invalidRequest));
  const tags = ['collections'];
  const withBody =
    (op: Parameters<typeof reading>[1], status = 200, extra: (req: FastifyRequest) => Record<string, unknown> = () => ({})) =>
    async (req: FastifyRequest, reply: FastifyReply) => {
      const input = bodyOf(req);
      if (!input) return invalid(reply);
      return sendResult(reply, await reading(req, op, { input, access: await access(req), query: queryOf(req), ...extra(req) }), status);
    };
  /** A page of member ids from reading, with each visible item's JSON. */
  const books = async (req: FastifyRequest, reply: FastifyReply, r: Result<Reading.ReadingResult<'collection-preview'>>) => {
    if (!r.ok) return sendFailure(reply, r.error);
    const v = r.value;
    return reply.send({ ...v, data: await withItems(reads.db, await access(req), v.data) });
  };
  return {
    reads,
    reading,
    dashboard: new DashboardView(reads.db),
    access,
    invalid,
    refused: errors(400, ...SIGNED_IN, 404),
    CollectionBody,
    page: query({ limit: 'how many (default 50, at most 1000)', offset: 'how many to skip' }),
    s: (summary: string, rest: object) => ({ ...user, schema: { tags, summary, ...rest } }),
    withBody,
    books,
  };
}

type CollectionContext = ReturnType<typeof collectionContext>;

export function readingCollectionRoutes(app: FastifyInstance, deps: ReadingDeps): void {
  const c = collectionContext(deps);
  collectionRoutes(app, c);
  collectionMemberRoutes(app, c);
  savedFilterRoutes(app, c);
  dashboardRoutes(app, c);
}

/** The collections themselves: list, create, preview a rule, restore a system one, read, change, delete. */
function collectionRoutes(app: FastifyInstance, { reads, reading, dashboard, access, invalid, refused, CollectionBody, page, s, withBody, books }: CollectionContext): void {
  // kept until the read models move past a catalog or reading change (or the caller's access changes):
  // the system collections' counts are the costly part, and every series page asks for the list
  app.get('/api/collections', s('your collections', { response: { 200: CollectionList, ...errors(...SIGNED_IN) } }), async (req, reply) => {
    const c = await reads.context(req.caller!);
    const user = req.caller!.user_id;
    const r = await reads.cached(`collections|${c.key}|${c.positions.reading ?? 0}|${user}`, async () => ({
      ok: true,
      value: JSON.stringify({ data: await dashboard.collections(user, c.access) }),
    }));
    return r.ok ? sendJson(reply, r.value) : sendFailure(reply, r.error);
  });
  app.post(
    '/api/collections',
    s('create a collection', { body: CollectionBody, response: { 201: Collection, ...errors(400, ...SIGNED_IN, 404, 409) } }),
    withBody('collection-create', 201),
  );
  app.post(
    '/api/collections/preview',
    s('the items a rule would hold', { querystring: page, body: CollectionBody, response: { 200: Preview, ...errors(400, ...SIGNED_IN, 404) } }),
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return invalid(reply);
      return books(req, reply, await reading(req, 'collection-preview', { input, access: await access(req), query: queryOf(req) }));
    },
  );
  const restoreBody = serviceBody({ query_type: 'which system collection' });
  app.post(
    '/api/collections/system/restore',
    s('restore a system collection (201 when it was gone)', { body: restoreBody, response: { 200: Collection, 201: Collection, ...errors(400, ...SIGNED_IN) } }),
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return invalid(reply);
      const r = await reading(req, 'collection-restore-system', { input });
      if (!r.ok) return sendFailure(reply, r.error);
      const { restored, ...c } = r.value;
      return reply.code(restored ? 201 : 200).send(c);
    },
  );
  app.get('/api/collections/:id', s('one collection', { params: IdParams, response: { 200: Collection, ...refused } }), async (req, reply) => {
    const id = param(req);
    if (!isUuid(id)) return sendFailure(reply, fail('validation', Reading.ReadingMessages.invalidCollectionId));
    const [c] = await dashboard.collections(req.caller!.user_id, await access(req), id.toLowerCase());
    return c ? reply.send(c) : sendFailure(reply, fail('not_found', Reading.ReadingMessages.collectionNotFound));
  });
  for (const method of ['put', 'patch'] as const)
    app[method](
      '/api/collections/:id',
      s('change a collection', { params: IdParams, body: CollectionBody, response: { 200: Collection, ...errors(400, ...SIGNED_IN, 404, 409) } }),
      withBody('collection-update', 200, (req) => ({ id: param(req) })),
    );
  app.delete('/api/collections/:id', s('delete a collection', { params: IdParams, response: { 200: MessageBody, ...refused } }), async (req, reply) =>
    sendResult(reply, await reading(req, 'collection-delete', { id: param(req) })),
  );
}

/** A collection's members: a page of its books, add items, take one out. */
function collectionMemberRoutes(app: FastifyInstance, { reads, reading, dashboard, access, invalid, refused, page, s }: CollectionContext): void {
  // a collection's books, from the gateway's tables like the dashboard
  app.get('/api/collections/:id/items', s("a collection's items", { params: IdParams, querystring: page, response: { 200: Members, ...refused } }), async (req, reply) => {
    const id = param(req);
    if (!isUuid(id)) return sendFailure(reply, fail('validation', Reading.ReadingMessages.invalidCollectionId));
    const q = queryOf(req);
    const limit = whole(q.limit, 50);
    const offset = whole(q.offset, 0);
    if (limit === null || limit < 1 || limit > 1000) return sendFailure(reply, fail('validation', 'limit must be a whole number from 1 to 1000'));
    if (offset === null || offset < 0) return sendFailure(reply, fail('validation', 'offset must be a whole number of at least 0'));
    const c = await dashboard.collection(req.caller!.user_id, id.toLowerCase());
    if (!c) return sendFailure(reply, fail('not_found', Reading.ReadingMessages.collectionNotFound));
    const b = await dashboard.books(req.caller!.user_id, await access(req), c, limit, offset);
    return reply.send({ collection_id: c.id, data: b.books, total: b.total, limit, offset });
  });
  const addBody = AddItemsBody;
  app.post('/api/collections/:id/items', s('add items to a collection', { params: IdParams, body: addBody, response: { 200: ItemsAdded, ...refused } }), async (req, reply) => {
    const input = bodyOf(req);
    if (!input) return invalid(reply);
    const ids = input.media_item_ids;
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > 1000 || !ids.every((i) => isUuid(i)))
      return sendFailure(reply, fail('validation', 'media_item_ids must be a non-empty list of media item ids'));
    // only items the caller may see can be added; the others are reported as not found
    const a = await access(req);
    const ok: string[] = [];
    const failed: { id: string; error: string }[] = [];
    for (const id of ids as string[]) (await reads.catalog.itemLibrary(a, id)) ? ok.push(id.toLowerCase()) : failed.push({ id, error: Messages.mediaItemNotFound });
    if (ok.length === 0) {
      const c = await reading(req, 'collection-get', { id: param(req) });
      if (!c.ok) return sendFailure(reply, c.error);
      return reply.send({ message: 'items added', added: [], failed });
    }
    const r = await reading(req, 'collection-add', { id: param(req), input: { media_item_ids: ok } });
    if (!r.ok) return sendFailure(reply, r.error);
    return reply.send({ ...r.value, failed });
  });
  const memberParams = params({ id: 'the collection', item: 'the media item' });
  app.delete(
    '/api/collections/:id/items/:item',
    s('take an item out of a collection', { params: memberParams, response: { 200: MessageBody, ...refused } }),
    async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req, 'item'));
      if (!item) return reply;
      return sendResult(reply, await reading(req, 'collection-remove', { id: param(req), item_id: item }));
    },
  );
}

/** Saved filters: list, save, read, change, delete. */
function savedFilterRoutes(app: FastifyInstance, { reading, refused, s, withBody }: CollectionContext): void {
  const ft = { tags: ['saved filters'] };
  app.get(
    '/api/saved-filters',
    s('your saved filters', { ...ft, querystring: query({ resource_type: 'only those of this kind' }), response: { 200: SavedFilterList, ...errors(400, ...SIGNED_IN) } }),
    async (req, reply) => sendResult(reply, await reading(req, 'filters-list', { query: queryOf(req) })),
  );
  app.post(
    '/api/saved-filters',
    s('save a filter', { ...ft, body: FilterBody, response: { 201: SavedFilter, ...errors(400, ...SIGNED_IN, 409) } }),
    withBody('filter-create', 201),
  );
  app.get('/api/saved-filters/:id', s('one saved filter', { ...ft, params: IdParams, response: { 200: SavedFilter, ...refused } }), async (req, reply) =>
    sendResult(reply, await reading(req, 'filter-get', { id: param(req) })),
  );
  for (const method of ['put', 'patch'] as const)
    app[method](
      '/api/saved-filters/:id',
      s('change a saved filter', { ...ft, params: IdParams, body: FilterBody, response: { 200: SavedFilter, ...errors(400, ...SIGNED_IN, 404, 409) } }),
      withBody('filter-update', 200, (req) => ({ id: param(req) })),
    );
  app.delete('/api/saved-filters/:id', s('delete a saved filter', { ...ft, params: IdParams, response: { 200: MessageBody, ...refused } }), async (req, reply) =>
    sendResult(reply, await reading(req, 'filter-delete', { id: param(req) })),
  );
}

/** The dashboard: its sections and the caller's preferences. */
function dashboardRoutes(app: FastifyInstance, { reads, reading, dashboard, s, withBody }: CollectionContext): void {
  // served from the gateway's own tables (catalog and reading projections), no bus round trip
  const dt = { tags: ['dashboard'] };
  app.get(
    '/api/dashboard/sections',
    s('your dashboard', { ...dt, querystring: query({ limit: 'books per section (default 20, at most 1000)' }), response: { 200: Sections, ...errors(400, ...SIGNED_IN) } }),
    async (req, reply) => {
      const limit = whole(queryOf(req).limit, 20);
      if (limit === null || limit < 1 || limit > 1000) return sendFailure(reply, fail('validation', 'limit must be a whole number from 1 to 1000'));
      // cached by the positions it reflects (catalog, identity through the access, reading) and the
      // minute: "Recently Added" and smart rules `within_days` move with the clock, not with events
      const c = await reads.context(req.caller!);
      const uid = req.caller!.user_id;
      const minute = Math.floor(Date.now() / 60_000);
      const r = await reads.cached(`dashboard|${c.key}|${c.positions.reading ?? 0}|${uid}|${limit}|${minute}`, async () => ({
        ok: true as const,
        value: JSON.stringify(await dashboard.sections(uid, c.access, limit)),
      }));
      return r.ok ? sendJson(reply, r.value) : sendFailure(reply, r.error);
    },
  );
  app.get('/api/dashboard/preferences', s('your dashboard preferences', { ...dt, response: { 200: Preferences, ...errors(...SIGNED_IN) } }), async (req, reply) =>
    sendResult(reply, await reading(req, 'dashboard-prefs-get', {})),
  );
  const prefsBody = serviceBody({ hidden_collections: 'collection ids to hide', collection_order: 'collection ids in order' });
  const prefsUpdated = Type.Object({ message: Type.String(), ...Preferences.properties });
  app.put(
    '/api/dashboard/preferences',
    s('change your dashboard preferences', { ...dt, body: prefsBody, response: { 200: prefsUpdated, ...errors(400, ...SIGNED_IN) } }),
    withBody('dashboard-prefs-put'),
  );
}
