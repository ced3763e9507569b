// /api/libraries/*, /api/scanner/*: libraries and the scanner, by request/reply to the catalog.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { fail, Messages } from '@bindery/contracts';
import type { Auth } from '../http/authenticate';
import type { CallCatalog, CallIdentity } from '../http/rpc';
import { sendFailure, sendResult } from '../http/reply';
import { sendJson, type Reads } from '../read-model/reads';
import { bodyOf } from './auth';
import { Browse, Issues, LibraryList, LibraryRecord, ScanQueued, ScanSettings, ScanSettingsUpdated, ScanStatus } from './catalog-schemas';
import { errors, IdParams, MessageBody, query, serviceBody, SIGNED_IN } from '../http/schemas';
import { LibraryBody } from '@bindery/contracts/api/catalog';

export interface CatalogDeps {
  catalog: CallCatalog;
  identity: CallIdentity;
  auth: Auth;
  reads: Reads;
}

const id = (req: FastifyRequest) => (req.params as { id: string }).id;
export const queryOf = (req: FastifyRequest) => (req.query ?? {}) as Record<string, string | string[]>;

export function libraryRoutes(app: FastifyInstance, deps: CatalogDeps): void {
  const l = libraryContext(deps);
  libraryListRoutes(app, l);
  scanSettingsRoutes(app, l);
  libraryRecordRoutes(app, l);
  scannerRoutes(app, l);
}

type LibraryContext = ReturnType<typeof libraryContext>;

/** What the library and scanner routes share, made once for them all. */
function libraryContext({ catalog, identity, auth, reads }: CatalogDeps) {
  return {
    catalog,
    identity,
    reads,
    user: { onRequest: auth.requireUser },
    admin: { onRequest: auth.requireAdmin },
    invalid: () => fail('invalid_request', Messages.invalidRequest),
    tags: ['libraries'],
    refused: errors(...SIGNED_IN),
  };
}

// The libraries the caller may see, from the read model (server paths only for admins), and the
// server's folders an admin browses for a library's.
function libraryListRoutes(app: FastifyInstance, { catalog, reads, user, admin, tags, refused }: LibraryContext): void {
  // asked by every library page (its library filter): kept per catalog position, access and role,
  // since counting each library's items is a scan of the items (issue 43 made the page ask it)
  // kept as sent (the route's serializer once, then the same Buffer: its entity tag, record 129)
  const librariesKept = new LRUCache<string, Buffer>({ max: 256 });
  const visibleLibraries = async (req: FastifyRequest, reply: FastifyReply) => {
    const c = await reads.context(req.caller!);
    const admin = req.caller!.role === 'admin';
    const key = `${c.key}|${admin}`;
    let body = librariesKept.get(key);
    if (!body) {
      body = Buffer.from(String(reply.serialize(await reads.catalog.libraries(c.access, admin))));
      librariesKept.set(key, body);
    }
    return sendJson(reply, body);
  };
  const listed = { tags, summary: 'the libraries you may see', response: { 200: LibraryList, ...refused } };
  app.get('/api/libraries', { ...user, schema: listed }, visibleLibraries);
  app.get('/api/libraries/visibility', { ...user, schema: listed }, visibleLibraries);
  const browseSchema = {
    tags,
    summary: "browse the server's folders (admin)",
    querystring: query({ path: 'an absolute folder (none: the allowed roots)' }),
    response: { 200: Browse, ...errors(400, ...SIGNED_IN) },
  };
  app.get('/api/libraries/browse', { ...admin, schema: browseSchema }, async (req, reply) => {
    const path = queryOf(req).path;
    return sendResult(reply, await catalog('browse', { caller: req.caller!, ...(typeof path === 'string' && path !== '' ? { path } : {}) }));
  });
}

// Legacy: the scan poll interval, stored as the system setting of the same name.
function scanSettingsRoutes(app: FastifyInstance, { identity, admin, invalid, tags, refused }: LibraryContext): void {
  app.get(
    '/api/libraries/scan-settings',
    { ...admin, schema: { tags, summary: 'the scan poll interval (legacy)', response: { 200: ScanSettings, ...refused } } },
    async (req, reply) => {
      const r = await identity('settings-get', { caller: req.caller! });
      if (!r.ok) return sendFailure(reply, r.error);
      const e = r.value.settings.find((x) => x.key === 'scan_poll_interval_seconds');
      return reply.send({ scan_poll_interval_seconds: e?.value });
    },
  );
  const scanSettingsBody = serviceBody({ scan_poll_interval_seconds: 'integer seconds, 1 to 3600' });
  app.put(
    '/api/libraries/scan-settings',
    { ...admin, schema: { tags, summary: 'set the scan poll interval (legacy)', body: scanSettingsBody, response: { 200: ScanSettingsUpdated, ...errors(400, ...SIGNED_IN) } } },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input || !('scan_poll_interval_seconds' in input)) return sendFailure(reply, invalid());
      let v = input.scan_poll_interval_seconds;
      if (typeof v === 'string' && /^\d+$/.test(v.trim())) v = Number(v);
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 3600) {
        return sendFailure(reply, fail('validation', 'scan_poll_interval_seconds must be an integer between 1 and 3600'));
      }
      const r = await identity('settings-put', { caller: req.caller!, input: { scan_poll_interval_seconds: v } });
      if (!r.ok) return sendFailure(reply, r.error);
      return reply.send({ scan_poll_interval_seconds: v, message: 'scan settings updated' });
    },
  );
}

function libraryRecordRoutes(app: FastifyInstance, { catalog, reads, user, admin, invalid, tags }: LibraryContext): void {
  app.get(
    '/api/libraries/:id',
    { ...user, schema: { tags, summary: 'one library', params: IdParams, response: { 200: LibraryRecord, ...errors(400, ...SIGNED_IN, 404) } } },
    async (req, reply) => {
      const c = await reads.context(req.caller!);
      return sendResult(reply, await reads.catalog.library(c.access, req.caller!.role === 'admin', id(req)));
    },
  );
  app.post(
    '/api/libraries',
    { ...admin, schema: { tags, summary: 'create a library (admin)', body: LibraryBody, response: { 201: LibraryRecord, ...errors(400, ...SIGNED_IN, 409) } } },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, invalid());
      return sendResult(reply, await catalog('library-create', { caller: req.caller!, input }), 201);
    },
  );
  for (const method of ['put', 'patch'] as const) {
    const schema = { tags, summary: 'change a library (admin)', params: IdParams, body: LibraryBody, response: { 200: LibraryRecord, ...errors(400, ...SIGNED_IN, 404, 409) } };
    app[method]('/api/libraries/:id', { ...admin, schema }, async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, invalid());
      return sendResult(reply, await catalog('library-update', { caller: req.caller!, id: id(req), input }));
    });
  }
  app.delete(
    '/api/libraries/:id',
    { ...admin, schema: { tags, summary: 'delete a library (admin)', params: IdParams, response: { 200: MessageBody, ...errors(400, ...SIGNED_IN, 404) } } },
    async (req, reply) => sendResult(reply, await catalog('library-delete', { caller: req.caller!, id: id(req) })),
  );
}

function scannerRoutes(app: FastifyInstance, { catalog, admin, invalid, refused }: LibraryContext): void {
  const scanBody = serviceBody({ library_id: 'one library (none: every library)' });
  app.post(
    '/api/scanner/scan',
    { ...admin, schema: { tags: ['scanner'], summary: 'scan libraries (admin)', body: scanBody, response: { 202: ScanQueued, ...errors(400, ...SIGNED_IN, 404) } } },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, invalid());
      return sendResult(reply, await catalog('scan-start', { caller: req.caller!, input }), 202);
    },
  );
  app.get('/api/scanner/status', { ...admin, schema: { tags: ['scanner'], summary: 'recent scans (admin)', response: { 200: ScanStatus, ...refused } } }, async (req, reply) =>
    sendResult(reply, await catalog('scan-status', { caller: req.caller! })),
  );
  const issuesQuery = query({ library_id: 'one library', limit: 'how many (default 100, at most 1000)' });
  app.get(
    '/api/scanner/issues',
    {
      ...admin,
      schema: { tags: ['scanner'], summary: 'files the scanner could not read (admin)', querystring: issuesQuery, response: { 200: Issues, ...errors(400, ...SIGNED_IN) } },
    },
    async (req, reply) => sendResult(reply, await catalog('scan-issues', { caller: req.caller!, query: queryOf(req) })),
  );
}
