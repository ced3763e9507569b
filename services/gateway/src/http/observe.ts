// Every request gets an id (the caller's X-Request-Id when sane, else a new one), echoed in the
// response and held in the async context, so the bus sends it with each RPC and every log line
// on both sides carries it. Latency is recorded by route pattern, never by raw URL.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { acceptRequestId, REQUEST_ID_HEADER, withRequestContext, type Metrics, type RequestContext } from '@bindery/platform';

const contexts = new WeakMap<FastifyRequest, RequestContext>();

export function observeRequests(app: FastifyInstance, metrics?: Metrics): void {
  app.addHook('onRequest', (req, reply, done) => {
    const ctx: RequestContext = { requestId: acceptRequestId(req.headers[REQUEST_ID_HEADER]), onWritten: undefined };
    if (req.method !== 'GET' && req.method !== 'HEAD') contexts.set(req, ctx); // see `reenter`
    reply.header(REQUEST_ID_HEADER, ctx.requestId);
    withRequestContext(ctx, done);
  });
  // Body parsing runs on stream callbacks outside the context: enter the same one again before the
  // handler, on the routes that take a body (a GET never leaves the context: one hook less per read).
  const reenter = (req: FastifyRequest, _reply: FastifyReply, done: () => void) => {
    const ctx = contexts.get(req);
    if (ctx) withRequestContext(ctx, done);
    else done();
  };
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.every((m) => m === 'GET' || m === 'HEAD')) return;
    const own = route.preHandler;
    route.preHandler = own === undefined ? [reenter] : [reenter, ...(Array.isArray(own) ? own : [own])];
  });
  if (metrics) {
    app.addHook('onResponse', (req, reply, done) => {
      metrics.httpDuration.observe({ method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) }, reply.elapsedTime / 1000);
      done();
    });
  }
}
