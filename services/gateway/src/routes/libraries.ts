// /api/libraries/*, /api/scanner/*: libraries and the scanner, by request/reply to the catalog.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fail, Messages, type Identity } from '@bindery/contracts';
import type { Auth } from '../http/authenticate';
import type { CallCatalog, CallIdentity } from '../http/rpc';
import { sendFailure, sendResult } from '../http/reply';
import type { Reads } from '../read-model/reads';
import { bodyOf } from './auth';

export interface CatalogDeps {
  catalog: CallCatalog;
  identity: CallIdentity;
  auth: Auth;
  reads: Reads;
}

const id = (req: FastifyRequest) => (req.params as { id: string }).id;
export const queryOf = (req: FastifyRequest) => (req.query ?? {}) as Record<string, string | string[]>;

export function libraryRoutes(app: FastifyInstance, { catalog, identity, auth, reads }: CatalogDeps): void {
  const user = { onRequest: auth.requireUser };
  const admin = { onRequest: auth.requireAdmin };
  const invalid = () => fail('invalid_request', Messages.invalidRequest);

  // The libraries the caller may see, from the read model; server paths only for admins.
  const visibleLibraries = async (req: FastifyRequest, reply: FastifyReply) => {
    const c = await reads.context(req.caller!);
    return reply.send(await reads.catalog.libraries(c.access, req.caller!.role === 'admin'));
  };
  app.get('/api/libraries', user, visibleLibraries);
  app.get('/api/libraries/visibility', user, visibleLibraries);
  app.get('/api/libraries/browse', admin, async (req, reply) => {
    const path = queryOf(req).path;
    return sendResult(reply, await catalog('browse', { caller: req.caller!, ...(typeof path === 'string' && path !== '' ? { path } : {}) }));
  });

  // Legacy: the scan poll interval, stored as the system setting of the same name.
  app.get('/api/libraries/scan-settings', admin, async (req, reply) => {
    const r = await identity('settings-get', { caller: req.caller! });
    if (!r.ok) return sendFailure(reply, r.error);
    const e = (r.value as { settings: Identity.SettingEntry[] }).settings.find((x) => x.key === 'scan_poll_interval_seconds');
    return reply.send({ scan_poll_interval_seconds: e?.value });
  });
  app.put('/api/libraries/scan-settings', admin, async (req, reply) => {
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
  });

  app.get('/api/libraries/:id', user, async (req, reply) => {
    const c = await reads.context(req.caller!);
    return sendResult(reply, await reads.catalog.library(c.access, req.caller!.role === 'admin', id(req)));
  });
  app.post('/api/libraries', admin, async (req, reply) => {
    const input = bodyOf(req);
    if (!input) return sendFailure(reply, invalid());
    return sendResult(reply, await catalog('library-create', { caller: req.caller!, input }), 201);
  });
  for (const method of ['put', 'patch'] as const) {
    app[method]('/api/libraries/:id', admin, async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, invalid());
      return sendResult(reply, await catalog('library-update', { caller: req.caller!, id: id(req), input }));
    });
  }
  app.delete('/api/libraries/:id', admin, async (req, reply) => sendResult(reply, await catalog('library-delete', { caller: req.caller!, id: id(req) })));

  app.post('/api/scanner/scan', admin, async (req, reply) => {
    const input = bodyOf(req);
    if (!input) return sendFailure(reply, invalid());
    return sendResult(reply, await catalog('scan-start', { caller: req.caller!, input }), 202);
  });
  app.get('/api/scanner/status', admin, async (req, reply) => sendResult(reply, await catalog('scan-status', { caller: req.caller! })));
  app.get('/api/scanner/issues', admin, async (req, reply) => sendResult(reply, await catalog('scan-issues', { caller: req.caller!, query: queryOf(req) })));
}
