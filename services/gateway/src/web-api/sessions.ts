// /api/auth/sessions: the caller's own signed-in sessions, from the identity read model (fed by
// identity's session events), and signing one of them, or all but this one, out through identity.
// A user only ever sees and ends their own: the list is filtered by the caller, and identity checks
// the owner of the session it is asked to end.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Auth } from '../http/authenticate';
import type { CallIdentity } from '../http/rpc';
import { sendResult } from '../http/reply';
import type { Reads } from '../read-model/reads';
import { errors, IdParams, MessageBody, SIGNED_IN } from '../http/schemas';
import { SessionList, SignedOutOthers } from './auth-schemas';

export function sessionRoutes(app: FastifyInstance, { call, auth, reads }: { call: CallIdentity; auth: Auth; reads: Reads }): void {
  const user = { onRequest: auth.requireUser };
  const tags = ['auth'];
  const sessionId = (req: FastifyRequest) => (req.params as { id: string }).id;

  app.get('/api/auth/sessions', { ...user, schema: { tags, summary: 'your signed-in sessions', response: { 200: SessionList, ...errors(...SIGNED_IN) } } }, async (req, reply) => {
    const c = req.caller!;
    const rows = await reads.identity.sessions(c.user_id);
    return reply.send({
      data: rows.map((s) => ({
        id: s.id,
        client: s.client,
        started_at: s.started_at,
        last_used_at: s.last_used_at,
        expires_at: s.expires_at,
        current: c.jti !== undefined && s.jti === c.jti,
      })),
    });
  });

  app.delete(
    '/api/auth/sessions/:id',
    { ...user, schema: { tags, summary: 'sign one of your sessions out', params: IdParams, response: { 200: MessageBody, ...errors(400, ...SIGNED_IN, 404) } } },
    async (req, reply) => sendResult(reply, await call('session-revoke', { caller: req.caller!, session_id: sessionId(req) })),
  );

  // every session of the caller but the one making the request
  app.delete(
    '/api/auth/sessions',
    { ...user, schema: { tags, summary: 'sign out every other session', response: { 200: SignedOutOthers, ...errors(...SIGNED_IN) } } },
    async (req, reply) => sendResult(reply, await call('sessions-revoke-others', { caller: req.caller! })),
  );
}
