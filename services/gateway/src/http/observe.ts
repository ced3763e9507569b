// Every request gets an id (the caller's X-Request-Id when sane, else a new one), echoed in the
// response and held in the async context, so the bus sends it with each RPC and every log line
// on both sides carries it. Latency is recorded by route pattern, never by raw URL.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { acceptRequestId, REQUEST_ID_HEADER, withRequestId, type Metrics } from '@bindery/platform';

const ids = new WeakMap<FastifyRequest, string>();

export function observeRequests(app: FastifyInstance, metrics?: Metrics): void {
  app.addHook('onRequest', (req, reply, done) => {
    const id = acceptRequestId(req.headers[REQUEST_ID_HEADER]);
    ids.set(req, id);
    reply.header(REQUEST_ID_HEADER, id);
    withRequestId(id, done);
  });
  // Body parsing runs on stream callbacks outside the context: enter it again before the handler.
  app.addHook('preHandler', (req, _reply, done) => withRequestId(ids.get(req), done));
  if (metrics) {
    app.addHook('onResponse', (req, reply, done) => {
      metrics.httpDuration.observe({ method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) }, reply.elapsedTime / 1000);
      done();
    });
  }
}
