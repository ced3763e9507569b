// /api/media-items/* and /api/admin/hash-conflicts/*, by request/reply to the catalog.
// `/api/media-items/<id>/download` is deliberately not registered: files are served under /uploads.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Catalog, fail, isUuid, Messages, type Reading } from '@bindery/contracts';
import type { CallOptional } from '../http/rpc';
import { sendFailure, sendResult } from '../http/reply';
import { type LocatorIndexOf, locatorIndexes } from '../read-model/locator-indexes';
import { sendJson } from '../read-model/reads';
import { bodyOf } from './auth';
import { queryOf, type CatalogDeps } from './libraries';
import { type CoverSource, coverSource } from '../files/covers';
import {
  BulkReport,
  BulkUpdateBody,
  HashResolveBody,
  IdsBody,
  ItemBody,
  ConflictList,
  ConflictResolved,
  ItemList,
  ItemQuery,
  ItemUpdated,
  MediaItem,
  SearchQuery,
  SearchResult,
  Sections,
} from './catalog-schemas';
import { Binary, content, Empty, errors, IdParams, MessageBody, query, SIGNED_IN } from '../http/schemas';

const id = (req: FastifyRequest) => (req.params as { id: string }).id;

export type Usage = Reading.Usage;
const NO_USAGE: Usage = { progress: 0, highlights: 0, bookmarks: 0, notes: 0, collections: 0 };

export function mediaItemRoutes(
  app: FastifyInstance,
  { catalog, auth, reads }: CatalogDeps,
  optional: CallOptional<Reading.ReadingOperations>,
  indexOf: LocatorIndexOf = locatorIndexes(catalog),
  covers: CoverSource = coverSource(reads.catalog, catalog, undefined),
): void {
  const m = mediaItemContext({ catalog, auth, reads }, optional, indexOf, covers);
  itemListRoutes(app, m);
  itemBatchRoutes(app, m);
  oneItemRoutes(app, m);
  pictureRoutes(app, m);
  hashConflictRoutes(app, m);
}

type MediaItemContext = ReturnType<typeof mediaItemContext>;

/** What the media item and hash conflict routes share, made once for them all. */
function mediaItemContext(
  { catalog, auth, reads }: Pick<CatalogDeps, 'catalog' | 'auth' | 'reads'>,
  optional: CallOptional<Reading.ReadingOperations>,
  indexOf: LocatorIndexOf,
  covers: CoverSource,
) {
  return {
    catalog,
    reads,
    optional,
    indexOf,
    covers,
    user: { onRequest: auth.requireUser },
    admin: { onRequest: auth.requireAdmin },
    editor: { onRequest: auth.requireEditor },
    invalid: () => fail('invalid_request', Messages.invalidRequest),
    tags: ['media items'],
    ItemBody,
  };
}

// Reads come from the gateway's read models, cached by the positions they reflect; a `read_status`
// filter also reflects the caller's own positions (the reading projection's position and the user).
function itemListRoutes(app: FastifyInstance, { reads, user, tags }: MediaItemContext): void {
  const keyOf = (req: FastifyRequest, c: { key: string; positions: Record<string, number> }) =>
    queryOf(req).read_status === undefined ? c.key : `${c.key}|${c.positions.reading ?? 0}|${req.caller!.user_id}`;
  app.get(
    '/api/media-items',
    { ...user, schema: { tags, summary: 'list media items', querystring: query(ItemQuery), response: { 200: ItemList, ...errors(400, ...SIGNED_IN) } } },
    async (req, reply) => {
      const c = await reads.context(req.caller!);
      const r = await reads.cached(`list|${keyOf(req, c)}|${req.url}`, () => reads.catalog.list(c.access, queryOf(req), req.caller!.user_id));
      return r.ok ? sendJson(reply, r.value) : sendFailure(reply, r.error);
    },
  );
  const searchSchema = { tags: ['search'], summary: 'search media items', querystring: query(SearchQuery), response: { 200: SearchResult, ...errors(400, ...SIGNED_IN, 404) } };
  app.get('/api/media-items/search', { ...user, schema: searchSchema }, async (req, reply) => {
    const c = await reads.context(req.caller!);
    const r = await reads.cached(`search|${keyOf(req, c)}|${req.url}`, () => reads.catalog.search(c.access, queryOf(req), req.caller!.user_id));
    return r.ok ? sendJson(reply, r.value) : sendFailure(reply, r.error);
  });
}

// A new item, and changes to many items at once.
function itemBatchRoutes(app: FastifyInstance, { catalog, admin, editor, invalid, tags, ItemBody }: MediaItemContext): void {
  app.post(
    '/api/media-items',
    { ...admin, schema: { tags, summary: 'create a media item (admin)', body: ItemBody, response: { 201: MediaItem, ...errors(400, ...SIGNED_IN, 404, 409) } } },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, invalid());
      return sendResult(reply, await catalog('item-create', { caller: req.caller!, input }), 201);
    },
  );
  app.post(
    '/api/media-items/bulk-delete',
    { ...admin, schema: { tags, summary: 'delete media items (admin)', body: IdsBody, response: { 200: BulkReport, ...errors(400, ...SIGNED_IN) } } },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, invalid());
      return sendResult(reply, await catalog('items-bulk-delete', { caller: req.caller!, input }));
    },
  );
  const bulkBody = BulkUpdateBody;
  app.post(
    '/api/media-items/bulk-update',
    { ...editor, schema: { tags, summary: 'change media items (admin or can_edit_metadata)', body: bulkBody, response: { 200: BulkReport, ...errors(400, ...SIGNED_IN) } } },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, invalid());
      return sendResult(reply, await catalog('items-bulk-update', { caller: req.caller!, input }));
    },
  );
}

function oneItemRoutes(app: FastifyInstance, { catalog, reads, indexOf, user, admin, editor, invalid, tags, ItemBody }: MediaItemContext): void {
  app.get(
    '/api/media-items/:id',
    { ...user, schema: { tags, summary: 'one media item', params: IdParams, response: { 200: MediaItem, ...errors(400, ...SIGNED_IN, 404) } } },
    async (req, reply) => {
      const c = await reads.context(req.caller!);
      const r = await reads.cached(`item|${c.key}|${id(req)}`, () => reads.catalog.item(c.access, id(req)));
      return r.ok ? sendJson(reply, r.value) : sendFailure(reply, r.error);
    },
  );
  // the EPUB's sections and their text lengths (the locator index's weights): the web reader places
  // a page in the book by them, so its percentage is the one every device's position carries
  app.get(
    '/api/media-items/:id/sections',
    { ...user, schema: { tags, summary: "an EPUB's sections", params: IdParams, response: { 200: Sections, ...errors(400, ...SIGNED_IN, 404) } } },
    async (req, reply) => {
      const c = await reads.context(req.caller!);
      const r = await reads.cached(`item|${c.key}|${id(req)}`, () => reads.catalog.item(c.access, id(req)));
      if (!r.ok) return sendFailure(reply, r.error);
      const item = JSON.parse(r.value.toString()) as Catalog.MediaItem;
      const epub = item.formats.find((f) => f.format.toLowerCase() === 'epub' && f.sha256);
      const index = epub ? await indexOf(epub.sha256!) : null;
      if (!index) return sendFailure(reply, fail('not_found', Messages.sectionsNotFound));
      reply.header('Cache-Control', 'private, max-age=3600');
      return { sha256: epub!.sha256, sections: index.spine.map(([, href, linear], i) => ({ href, linear: linear === 1, length: index.docs[i]?.n ?? 0 })) };
    },
  );
  for (const method of ['put', 'patch'] as const) {
    const schema = {
      tags,
      summary: 'change a media item (admin or can_edit_metadata)',
      params: IdParams,
      body: ItemBody,
      response: { 200: ItemUpdated, ...errors(400, ...SIGNED_IN, 404, 409) },
    };
    app[method]('/api/media-items/:id', { ...editor, schema }, async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, invalid());
      return sendResult(reply, await catalog('item-update', { caller: req.caller!, id: id(req), input }));
    });
  }
  app.delete(
    '/api/media-items/:id',
    { ...admin, schema: { tags, summary: 'delete a media item (admin)', params: IdParams, response: { 200: MessageBody, ...errors(400, ...SIGNED_IN, 404) } } },
    async (req, reply) => sendResult(reply, await catalog('item-delete', { caller: req.caller!, id: id(req) })),
  );
}

function pictureRoutes(app: FastifyInstance, { catalog, reads, covers, user, tags }: MediaItemContext): void {
  for (const kind of ['cover', 'thumbnail'] as const) {
    const picture = { 200: content('image/jpeg', `the ${kind}`, Binary), 304: Empty('unchanged (If-None-Match)'), ...errors(400, ...SIGNED_IN, 404) };
    app.get(`/api/media-items/:id/${kind}`, { ...user, schema: { tags, summary: `the item's ${kind}`, params: IdParams, response: picture } }, async (req, reply) => {
      // a cover of an item the caller can't see is as absent as the item
      const ctx = await reads.context(req.caller!);
      // an id that is not one is the catalog's to answer (its message)
      if (!isUuid(id(req))) return sendResult(reply, await catalog('item-cover', { caller: req.caller!, id: id(req), kind }));
      const r = await covers.get(req.caller!, ctx.access, id(req), kind);
      if (!r.ok) return sendFailure(reply, r.error);
      const c = r.value;
      reply.header('ETag', c.etag).header('Cache-Control', 'private, max-age=86400');
      if (req.headers['if-none-match'] === c.etag) return reply.code(304).send();
      return reply.type(c.content_type).send(c.data);
    });
  }
}

function hashConflictRoutes(app: FastifyInstance, { catalog, optional, admin, invalid }: MediaItemContext): void {
  app.get(
    '/api/admin/hash-conflicts',
    { ...admin, schema: { tags: ['admin'], summary: 'pending duplicate-content groups', response: { 200: ConflictList, ...errors(...SIGNED_IN) } } },
    async (req, reply) => {
      const r = await catalog('conflicts-list', { caller: req.caller! });
      if (!r.ok) return sendFailure(reply, r.error);
      const groups = r.value.data;
      const ids = groups.flatMap((g) => g.items.map((i) => i.id));
      // usage counts come from the reading service; until it is deployed, nothing uses these items
      const usage = ids.length ? await optional('usage-counts', { item_ids: ids }) : null;
      const counts = usage?.ok ? usage.value.counts : {};
      return reply.send({
        data: groups.map((g) => ({ ...g, items: g.items.map((i) => ({ ...i, usage: { ...NO_USAGE, ...(counts[i.id] ?? {}) } })) })),
      });
    },
  );
  const resolveBody = HashResolveBody;
  const resolved = { 200: ConflictResolved, ...errors(400, ...SIGNED_IN, 404, 409) };
  app.post(
    '/api/admin/hash-conflicts/:id/resolve',
    { ...admin, schema: { tags: ['admin'], summary: 'resolve a duplicate-content group', params: IdParams, body: resolveBody, response: resolved } },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, invalid());
      return sendResult(reply, await catalog('conflict-resolve', { caller: req.caller!, id: id(req), input }));
    },
  );
}
