// The HTTP surface: fastify with the body parsers, one error mapper, and the route groups.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import { fail, Messages } from '@bindery/contracts';
import type { Bus, Logger } from '@bindery/platform';
import { authenticator } from './http/authenticate';
import { catalogClient, identityClient, optionalClient } from './http/rpc';
import { isFragment, sendFailure } from './http/reply';
import { authRoutes } from './routes/auth';
import { systemRoutes } from './routes/system';
import { libraryRoutes } from './routes/libraries';
import { mediaItemRoutes } from './routes/media-items';
import { uploadsRoutes } from './routes/uploads';
import type { AuthView } from './projections/auth-view';
import type { Reads } from './read-model/reads';
import { readAdminRoutes } from './routes/read-admin';
import { profileRoutes } from './routes/profile';
import { readingClient } from './http/reading-client';
import { readingProgressRoutes } from './routes/reading-progress';
import { readingConflictRoutes } from './routes/reading-conflicts';
import { readingAnnotationRoutes } from './routes/reading-annotations';
import { readingCollectionRoutes } from './routes/reading-collections';

const DRAIN_MAX_BYTES = 16 * 1024 * 1024;
const DRAIN_MAX_MS = 5000;

/** Discards what is left of a request body, up to a size and time bound; past either, gives up. */
function drain(raw: IncomingMessage, maxBytes: number, maxMs: number): Promise<void> {
  const declared = Number(raw.headers['content-length'] ?? NaN);
  if (raw.readableEnded || raw.destroyed || (Number.isFinite(declared) && declared > maxBytes)) return Promise.resolve();
  return new Promise((resolve) => {
    let seen = 0;
    const done = () => {
      clearTimeout(timer);
      raw.off('data', onData).off('end', done).off('close', done).off('error', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > maxBytes) done();
    };
    const timer = setTimeout(done, maxMs);
    raw.on('data', onData).once('end', done).once('close', done).once('error', done);
    raw.resume();
  });
}

export interface AppOptions {
  bus: Bus;
  log: Logger;
  view: AuthView;
  reads: Reads;
  /** how long a write waits for the read models to show it before answering anyway */
  readYourWritesMs?: number;
  tokenKey: Uint8Array;
  cookieSecure: boolean;
  rpcTimeoutMs: number;
  bodyLimit: number;
  ready(): Promise<boolean>;
}

export async function buildApp(o: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: o.log as FastifyBaseLogger, bodyLimit: o.bodyLimit, logController: new LogController({ disableRequestLogging: true }), trustProxy: true });
  app.decorateRequest('caller', null);
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: o.bodyLimit });

  // An empty JSON body counts as `{}`; malformed JSON and prototype poisoning are refused.
  const strict = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: o.bodyLimit }, (req, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, {});
    strict(req, body as string, done);
  });

  app.setErrorHandler((e: FastifyError, req, reply) => {
    // Body errors on routes whose failures are fragments (register, login) are fragments too.
    const frag = isFragment(req) && req.routeOptions.config?.fragmentErrors === true;
    if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      // Read the rest of a moderately oversized body first: answering while the client still
      // writes makes Node close the connection, and the client sees a broken pipe, not the 413.
      return drain(req.raw, DRAIN_MAX_BYTES, DRAIN_MAX_MS).then(() => {
        // fastify marks parse failures `connection: close` in case more data follows; none does now
        if (req.raw.readableEnded) reply.removeHeader('connection');
        return sendFailure(reply, fail('payload_too_large', Messages.payloadTooLarge), frag);
      });
    }
    if (e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest), frag);
    req.log.error({ err: e, url: req.url }, 'request failed');
    return sendFailure(reply, fail('internal', Messages.internal));
  });
  app.setNotFoundHandler((_req, reply) => sendFailure(reply, fail('not_found', Messages.notFound)));

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => ((await o.ready()) ? { status: 'ready' } : reply.code(503).send({ status: 'not ready' })));

  // read your writes: a write's answer waits, bounded, until the read models have applied it
  const ryw = o.readYourWritesMs ?? 5000;
  const afterWrite = async (source: string, position: number) => {
    if (!(await o.reads.models.waitFor(source, position, ryw))) o.log.warn({ source, position }, 'read models lag behind a write');
  };
  const call = identityClient(o.bus, o.log, o.rpcTimeoutMs, afterWrite);
  const auth = authenticator(o.tokenKey, o.view);
  authRoutes(app, { call, auth, cookie: { secure: o.cookieSecure } });
  profileRoutes(app, { call, auth, reads: o.reads });
  systemRoutes(app, { call, auth });
  const catalog = catalogClient(o.bus, o.log, o.rpcTimeoutMs, afterWrite);
  libraryRoutes(app, { catalog, identity: call, auth, reads: o.reads });
  mediaItemRoutes(app, { catalog, identity: call, auth, reads: o.reads }, optionalClient(o.bus, o.rpcTimeoutMs));
  readAdminRoutes(app, { identity: call, auth, reads: o.reads });
  const reading = { auth, reads: o.reads, reading: readingClient(o.bus, o.log, o.rpcTimeoutMs, afterWrite) };
  readingProgressRoutes(app, reading);
  readingConflictRoutes(app, reading);
  readingAnnotationRoutes(app, reading);
  readingCollectionRoutes(app, reading);
  uploadsRoutes(app, {
    requireUser: auth.requireUser,
    folders: async (req, id) => {
      const c = await o.reads.context(req.caller!);
      return (await o.reads.catalog.library(c.access, true, id)).ok ? o.reads.catalog.folders(id) : null;
    },
    catalogued: async (req, id, rel) => (await o.reads.catalog.fileItem((await o.reads.context(req.caller!)).access, id, rel)) !== null,
  });
  return app;
}
