// A Kobo's tags are its owner's collections: made, renamed, deleted, filled and emptied on the
// device, they are the reading service's (only books the owner can see go in).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isUuid, type Result } from '@bindery/contracts';
import type { CallDeviceSync } from '../http/device-sync-client';
import type { Reader } from '../http/reading-client';
import type { Reads } from '../read-model/reads';

export interface TagDeps {
  reads: Reads;
  reading: Reader;
  devices: CallDeviceSync;
}

/** Tags on the device are the owner's collections: create, rename, delete, add and remove books. */
export function koboTagRoutes(app: FastifyInstance, P: string, hook: { onRequest: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown> }, deps: TagDeps): void {
  const itemIds = (body: unknown): string[] | null => {
    const items = (body as { Items?: unknown } | null)?.Items;
    if (items === undefined) return [];
    if (!Array.isArray(items) || items.length > 1000) return null;
    const out: string[] = [];
    for (const i of items) {
      const id = (i as { RevisionId?: unknown } | null)?.RevisionId;
      if (typeof id !== 'string' || !isUuid(id)) return null;
      out.push(id.toLowerCase());
    }
    return out;
  };
  const nameOf = (body: unknown): string | null => {
    const n = (body as { Name?: unknown } | null)?.Name;
    return typeof n === 'string' && n.trim() !== '' && n.length <= 200 ? n.trim() : null;
  };
  const visibleIds = async (req: FastifyRequest, ids: string[]) => {
    const a = (await deps.reads.context(req.caller!)).access;
    const out: string[] = [];
    for (const id of ids) if (await deps.reads.catalog.itemLibrary(a, id)) out.push(id);
    return out;
  };
  const send = (reply: FastifyReply, r: Result<unknown>, status = 200) =>
    r.ok ? reply.code(status).send(r.value ?? {}) : reply.code(r.error.code === 'not_found' ? 404 : 400).send({ error: r.error.message });
  const tagId = (req: FastifyRequest) => (req.params as { tagId: string }).tagId;

  app.post(`${P}/v1/library/tags`, hook, async (req, reply) => {
    const name = nameOf(req.body);
    const ids = itemIds(req.body);
    if (!name || !ids) return reply.code(400).send({ error: 'invalid request' });
    const r = await deps.reading(req, 'collection-create', { input: { name } });
    if (!r.ok) return send(reply, r);
    const id = r.value.id;
    const add = await visibleIds(req, ids);
    if (add.length) await deps.reading(req, 'collection-add', { id, input: { media_item_ids: add } });
    // on a device that gets only its shelves, a tag made there is one of them
    if (req.kobo!.books === 'shelves') await deps.devices('shelf-add', { caller: req.caller!, id: req.kobo!.device_id, input: { collection_id: id, collection_name: name } });
    return reply.code(201).send(JSON.stringify(id));
  });
  app.put(`${P}/v1/library/tags/:tagId`, hook, async (req, reply) => {
    const name = nameOf(req.body);
    if (!name || !isUuid(tagId(req))) return reply.code(400).send({ error: 'invalid request' });
    return send(reply, await deps.reading(req, 'collection-update', { id: tagId(req), input: { name } }));
  });
  app.delete(`${P}/v1/library/tags/:tagId`, hook, async (req, reply) => {
    if (!isUuid(tagId(req))) return reply.code(400).send({ error: 'invalid request' });
    return send(reply, await deps.reading(req, 'collection-delete', { id: tagId(req) }));
  });
  for (const items of ['items', 'Items']) {
    app.post(`${P}/v1/library/tags/:tagId/${items}`, hook, async (req, reply) => {
      const ids = itemIds(req.body);
      if (!ids || !isUuid(tagId(req))) return reply.code(400).send({ error: 'invalid request' });
      const add = await visibleIds(req, ids);
      if (add.length === 0) return reply.code(201).send({});
      return send(reply, await deps.reading(req, 'collection-add', { id: tagId(req), input: { media_item_ids: add } }), 201);
    });
    app.post(`${P}/v1/library/tags/:tagId/${items}/delete`, hook, async (req, reply) => {
      const ids = itemIds(req.body);
      if (!ids || !isUuid(tagId(req))) return reply.code(400).send({ error: 'invalid request' });
      for (const id of ids) {
        const r = await deps.reading(req, 'collection-remove', { id: tagId(req), item_id: id });
        if (!r.ok && r.error.code !== 'not_found') return send(reply, r);
      }
      return reply.send({});
    });
  }
}
