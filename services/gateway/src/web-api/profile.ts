// GET /api/auth/profile from the gateway's identity projection, without a bus round trip.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Auth } from '../http/authenticate';
import type { CallIdentity } from '../http/rpc';
import { sendResult } from '../http/reply';
import { sendJson, type Reads } from '../read-model/reads';
import { Identity } from '@bindery/contracts';
import { errors, SIGNED_IN } from '../http/schemas';

export function profileRoutes(app: FastifyInstance, { call, auth, reads }: { call: CallIdentity; auth: Auth; reads: Reads }): void {
  const slow = async (req: FastifyRequest, reply: FastifyReply, position: number) => {
    const p = await reads.identity.profile(req.caller!.user_id, position);
    if (p !== null) return sendJson(reply, p);
    // not in the projection (yet): identity answers, with its own messages
    return sendResult(reply, await call('profile-get', { caller: req.caller! }));
  };
  // a frequent read: answered without a promise when the profile is cached at the current position
  const schema = { tags: ['auth'], summary: 'your profile', response: { 200: Identity.UserProfile, ...errors(...SIGNED_IN, 404, 500) } };
  app.get('/api/auth/profile', { onRequest: auth.requireUser, schema }, (req, reply) => {
    const position = reads.models.position('identity');
    const p = reads.identity.profileCached(req.caller!.user_id, position);
    if (typeof p !== 'string') return slow(req, reply, position);
    sendJson(reply, p);
  });
}
