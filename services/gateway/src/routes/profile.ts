// GET /api/auth/profile from the gateway's identity projection, without a bus round trip.
import type { FastifyInstance } from 'fastify';
import type { Auth } from '../http/authenticate';
import type { CallIdentity } from '../http/rpc';
import { sendResult } from '../http/reply';
import { sendJson, type Reads } from '../read-model/reads';

export function profileRoutes(app: FastifyInstance, { call, auth, reads }: { call: CallIdentity; auth: Auth; reads: Reads }): void {
  app.get('/api/auth/profile', { onRequest: auth.requireUser }, async (req, reply) => {
    const p = await reads.identity.profile(req.caller!.user_id, reads.models.position('identity'));
    if (p !== null) return sendJson(reply, p);
    // not in the projection (yet): identity answers, with its own messages
    return sendResult(reply, await call('profile-get', { caller: req.caller! }));
  });
}
