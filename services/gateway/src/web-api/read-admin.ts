// Admin routes of the read side: which libraries a user may see, and the projections (status and
// rebuild from the log).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fail, isUuid, Messages } from '@bindery/contracts';
import type { CallIdentity } from '../http/rpc';
import type { Auth } from '../http/authenticate';
import { sendFailure, sendResult } from '../http/reply';
import type { Reads } from '../read-model/reads';
import { bodyOf } from './auth';
import Type from 'typebox';
import { errors, MessageBody, params, query, SIGNED_IN } from '../http/schemas';
import { Granted, Grants, GrantsBody, PermissionsBody, Permitted, Projection, Projections } from '@bindery/contracts/api/auth';

export interface ReadAdminDeps {
  identity: CallIdentity;
  auth: Auth;
  reads: Reads;
}

const userId = (req: FastifyRequest) => (req.params as { user_id: string }).user_id;

const UserParams = params({ user_id: 'the user' });

export function readAdminRoutes(app: FastifyInstance, { identity, auth, reads }: ReadAdminDeps): void {
  const admin = { onRequest: auth.requireAdmin };
  const tags = ['admin'];

  app.get(
    '/api/auth/users/:user_id/libraries',
    { ...admin, schema: { tags, summary: "a user's library access", params: UserParams, response: { 200: Grants, ...errors(400, ...SIGNED_IN, 404) } } },
    async (req, reply) => {
      const id = userId(req);
      if (!isUuid(id)) return sendFailure(reply, fail('invalid_user_id', Messages.invalidUserId));
      const g = await reads.identity.grants(id.toLowerCase());
      if (!g) return sendFailure(reply, fail('user_not_found', Messages.userNotFound));
      return reply.send({ user_id: id.toLowerCase(), ...g });
    },
  );

  const grantsBody = GrantsBody;
  const granted = Granted;
  app.put(
    '/api/auth/users/:user_id/libraries',
    { ...admin, schema: { tags, summary: "set a user's library access", params: UserParams, body: grantsBody, response: { 200: granted, ...errors(400, ...SIGNED_IN, 404) } } },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest));
      // grants name libraries that exist; identity can't know them, the gateway's catalog view does
      if (Array.isArray(input.library_ids)) {
        const known = await reads.catalog.libraryIds();
        const unknown = input.library_ids.find((x) => typeof x === 'string' && isUuid(x) && !known.has(x.toLowerCase()));
        if (unknown !== undefined) return sendFailure(reply, fail('validation', `${Messages.libraryNotFound}: ${String(unknown)}`));
      }
      return sendResult(reply, await identity('library-access-set', { caller: req.caller!, target_id: userId(req), input }));
    },
  );

  // what the admin allows a user beyond their role (issue 43): the caller carries it from identity's event
  const permissionsBody = PermissionsBody;
  const permitted = Permitted;
  app.put(
    '/api/auth/users/:user_id/permissions',
    { ...admin, schema: { tags, summary: "set a user's permissions", params: UserParams, body: permissionsBody, response: { 200: permitted, ...errors(400, ...SIGNED_IN, 404) } } },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest));
      return sendResult(reply, await identity('permissions-set', { caller: req.caller!, target_id: userId(req), input }));
    },
  );

  app.get(
    '/api/admin/projections',
    { ...admin, schema: { tags, summary: "the gateway's read models", response: { 200: Projections, ...errors(...SIGNED_IN) } } },
    async (_req, reply) => reply.send({ data: await reads.models.status() }),
  );

  const rebuilt = { 200: Type.Object({ message: Type.String(), projection: Projection }), 202: MessageBody, ...errors(...SIGNED_IN, 404, 409, 500) };
  const rebuildSchema = {
    tags,
    summary: 'rebuild a read model from the log',
    params: params({ name: 'the projection' }),
    querystring: query({ wait: '`true`: answer when it is done' }),
    response: rebuilt,
  };
  app.post('/api/admin/projections/:name/rebuild', { ...admin, schema: rebuildSchema }, async (req, reply) => {
    const { name } = req.params as { name: string };
    const r = reads.models.rebuild(name);
    if (r.status === 'unknown') return sendFailure(reply, fail('not_found', `unknown projection: ${name.slice(0, 50)}`));
    if (r.status === 'busy') return sendFailure(reply, fail('conflict', `projection ${name} is already being rebuilt`));
    r.done.catch(() => undefined);
    const wait = (req.query as { wait?: string }).wait === 'true';
    if (wait) {
      try {
        await r.done;
      } catch {
        return sendFailure(reply, fail('internal', `rebuild of ${name} failed; the live projection keeps serving`));
      }
      return reply.send({ message: `projection ${name} rebuilt`, projection: (await reads.models.status()).find((p) => p.name === name) });
    }
    return reply.code(202).send({ message: `rebuild of ${name} started` });
  });
}
