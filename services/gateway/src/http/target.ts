// The spec's id handling for `/<user_id>` routes, decided before the body is read (profile update,
// password change and delete rule 1 comes before their body rules): 403 for a caller who is not
// an admin here, then the route's params schema answers 400 `invalid user id` for a malformed id
// (params are validated before the body). Identity checks both again against its own state.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail, Messages } from '@bindery/contracts';
import { isFragment, sendFailure } from './reply';

/** An onRequest hook to run after requireUser. */
export async function checkTarget(req: FastifyRequest, reply: FastifyReply) {
  if (reply.sent) return reply;
  const frag = isFragment(req) && req.routeOptions.config?.fragmentErrors === true;
  if (req.caller?.role !== 'admin') return sendFailure(reply, fail('admin_required', Messages.adminRequired), frag);
}
