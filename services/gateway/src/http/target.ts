// The spec's id handling for `/<user_id>` routes, decided before the body is read (profile update,
// password change and delete rule 1 comes before their body rules): 403 for a caller who is not
// an admin, then 400 for a malformed id. Identity checks both again against its own state.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail, Messages } from '@bindery/contracts';
import { isFragment, sendFailure } from './reply';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An onRequest hook to run after requireUser. */
export async function checkTarget(req: FastifyRequest, reply: FastifyReply) {
  if (reply.sent) return reply;
  const id = (req.params as { user_id?: string }).user_id;
  if (id === undefined) return;
  const frag = isFragment(req) && req.routeOptions.config?.fragmentErrors === true;
  if (req.caller?.role !== 'admin') return sendFailure(reply, fail('admin_required', Messages.adminRequired), frag);
  if (!UUID.test(id)) return sendFailure(reply, fail('invalid_user_id', Messages.invalidUserId), frag);
}
