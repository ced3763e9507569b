// Hostile text stops at the door, for every route (including ones added later): a NUL or other
// control character, or a lone UTF-16 surrogate, in the query or body is a 400 before anything
// crosses the bus or reaches a database. In the path it names no resource: 404.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail, findBadText, Messages } from '@bindery/contracts';
import { isFragment, sendFailure } from './reply';

export async function guardInput(req: FastifyRequest, reply: FastifyReply) {
  if (findBadText(req.params)) return sendFailure(reply, fail('not_found', Messages.notFound));
  const frag = isFragment(req) && req.routeOptions.config?.fragmentErrors === true;
  const bad = findBadText(req.query) ?? findBadText(req.body);
  if (bad) return sendFailure(reply, fail('validation', bad.message), frag);
  // A route with a body schema binds an absent body as `{}`, as the hand-written binders did.
  if (req.body === undefined && req.routeOptions.schema?.body) req.body = {};
}
