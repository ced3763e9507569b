// Answers under /api and /kobo are a user's: keys and tokens (the reader key, a Kobo's
// initialization with its token in a hundred addresses, device credentials), profiles, lists.
// Every one is sent `X-Content-Type-Options: nosniff` (a browser never reads one as HTML or a
// script) and `Cache-Control: no-store` (no browser or proxy keeps it), set before the route runs:
// a route whose answer may be kept (covers, book files, the plugin, the API document) says so with
// its own Cache-Control, which replaces this one. Refusals (401, 429) are private answers too.
import type { FastifyInstance } from 'fastify';

const PRIVATE = /^\/(api|kobo)(\/|$|\?)/;

export function privateAnswers(app: FastifyInstance): void {
  app.addHook('onRequest', (req, reply, done) => {
    if (PRIVATE.test(req.url)) reply.header('X-Content-Type-Options', 'nosniff').header('Cache-Control', 'no-store');
    done();
  });
}
