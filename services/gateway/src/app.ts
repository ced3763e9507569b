// The HTTP surface: fastify with the body parsers, the input guard every route passes, the login and
// register rate limit, one error mapper, and the route groups.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifySchemaValidationError, type RouteOptions } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import zlib from 'node:zlib';
import compress from '@fastify/compress';
import rateLimit from '@fastify/rate-limit';
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox';
import { DeviceSync, fail, Messages, rateLimitedMessage, type Reading } from '@bindery/contracts';
import {
  currentRequestContext,
  Mailer,
  mailConfig,
  httpServerTimeouts,
  type Bus,
  type Foreground,
  type HttpTimeouts,
  type Logger,
  type Metrics,
  type ParkingLot,
  type Subscription,
} from '@bindery/platform';
import { authenticator } from './http/authenticate';
import { AuthFailures } from './http/auth-failures';
import { Origins } from './http/origin';
import { catalogClient, identityClient, optionalClient, type AfterWrite } from './http/rpc';
import { sendFailure } from './http/reply';
import { clientErrorHandler, errorHandler, frameworkErrors } from './http/errors';
import { HttpFailure } from './http/failure';
import { guardInput } from './http/input-guard';
import { requestDeadline } from './http/request-deadline';
import { jsonBodyParser } from './http/json-body';
import { authRoutes } from './web-api/auth';
import { systemRoutes } from './web-api/system';
import { libraryRoutes } from './web-api/libraries';
import { calibreImportRoutes } from './web-api/calibre-import';
import { mediaItemRoutes } from './web-api/media-items';
import { itemEditRoutes } from './web-api/item-edits';
import { Streams } from './opds/streams';
import { browseRoutes } from './web-api/browse';
import { uploadsRoutes } from './web-api/uploads';
import { libraryUploadRoutes } from './web-api/library-uploads';
import { UploadOutcomes } from './files/upload-outcomes';
import { adminOpsRoutes } from './web-api/admin-ops';
import { backupRoutes, type BackupDeps } from './web-api/backup';
import { observeRequests } from './http/observe';
import { privateAnswers } from './http/private-answers';
import { positionTokens } from './http/position-token';
import type { AuthView } from './read-model/auth-view';
import type { Reads } from './read-model/reads';
import { localizedErrors } from './http/localized-errors';
import { readAdminRoutes } from './web-api/read-admin';
import { statisticsRoutes } from './web-api/statistics';
import { profileRoutes } from './web-api/profile';
import { sessionRoutes } from './web-api/sessions';
import { oidcRoutes } from './web-api/oidc';
import { mailRoutes } from './web-api/mail';
import { findConverter, SendWorker } from './mail/sends';
import { opdsRoutes } from './opds/routes';
import { opdsKeyRoutes } from './web-api/opds-keys';
import { liveChannel } from './web-api/ws';
import { readingClient } from './http/reading-client';
import { readingProgressRoutes } from './web-api/reading-progress';
import { readingConflictRoutes } from './web-api/reading-conflicts';
import { readingAnnotationRoutes } from './web-api/reading-annotations';
import { readingCollectionRoutes } from './web-api/reading-collections';
import { readerSettingsRoutes } from './web-api/reader-settings';
import { kosyncRoutes } from './koreader/kosync';
import { koreaderPluginRoutes } from './koreader/plugin';
import { koreaderDownloadRoutes } from './koreader/plugin-download';
import { deviceAuthenticator } from './http/device-auth';
import { syncKeys } from './koreader/sync-keys';
import { VerifiedCache } from './http/verified-cache';
import { followCredentialChanges } from './http/verified-feed';
import { deviceSyncClient } from './http/device-sync-client';
import { deviceSyncRoutes } from './web-api/device-sync';
import { deviceRoutes } from './web-api/devices';
import { DeviceView } from './read-model/device-view';
import { webRoutes } from '@bindery/web';
import type { PageRenderOptions } from './opds/page-sources';
import { koboDeviceRoutes } from './web-api/kobo-devices';
import { koboRoutes, koboSchema } from './kobo/routes';
import { koboAuthenticator } from './kobo/auth';
import { kepubSource } from './kobo/kepubs';
import { locatorIndexes } from './read-model/locator-indexes';
import { coverSource } from './files/covers';
import { BROTLI_QUALITY, GZIP_LEVEL, MIN_BYTES, sendPacked } from './http/packed-answers';
import { type ApiDocument, openApi, webSchema } from './openapi';
import Type, { type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

export interface AppOptions {
  bus: Bus;
  log: Logger;
  view: AuthView;
  reads: Reads;
  /** the process's count of requests being answered (background work gives way to them); none: not counted */
  foreground?: Foreground;
  /** how long a write waits for the read models to show it before answering anyway */
  readYourWritesMs?: number;
  tokenKey: Uint8Array;
  cookieSecure: boolean;
  rpcTimeoutMs: number;
  bodyLimit: number;
  /**
   * the whole request within `requestMs`, its headers within `headersMs` (else 408 and closed), and a
   * connection silent either way for `idleMs` closed, between kept-alive requests too (defaults 30 s,
   * 15 s, 120 s). Upgraded WebSockets leave Node's request tracking and `ws` clears their idle timer.
   */
  timeouts?: HttpTimeouts;
  /** fastify's `trustProxy`: whose X-Forwarded-For to believe for the client address (false: none) */
  trustProxy: boolean | string | number;
  /** per client address, for login and register each; null turns the limit off */
  authRateLimit: { max: number; windowMs: number } | null;
  /** the addresses people reach this server by, for absolute links (PUBLIC_URL); empty: this machine's own */
  publicUrls?: string[];
  /** the real Kobo store, for the calls an admin lets through (setting `kobo_store_proxy`) */
  koboStoreUrl?: string;
  /** the catalog's cover directory, when this process can read it (embedded; COVERS_DIR on a shared volume) */
  coverDir?: string;
  /** open live-channel sockets one user may hold (default 50) */
  maxSocketsPerUser?: number;
  /** streamed pages: renders at once, their queue, each render's memory and time */
  pageRender?: PageRenderOptions;
  ready(): Promise<boolean>;
  metrics?: Metrics;
  /** the gateway's parked events (its own consumers) */
  parking?: ParkingLot;
  /** the largest book file an upload takes (UPLOAD_MAX_BYTES; default 500 MiB) */
  uploadMaxBytes?: number;
  /** backups: the process's source and the schedule's settings (none: the route answers 503) */
  backup?: Omit<BackupDeps, 'auth' | 'log'>;
  /** told of every route as it is registered */
  onRoute?: (route: RouteOptions) => void;
}

/** A validator that checks and never converts. */
function checkOnly(schema: TSchema) {
  const c = Compile(schema);
  return (value: unknown) => (c.Check(value) ? { value } : { error: c.Errors(value) as unknown as FastifySchemaValidationError[] });
}

type Timeouts = NonNullable<AppOptions['timeouts']>;

export async function buildApp(o: AppOptions): Promise<FastifyInstance> {
  const timeouts = o.timeouts ?? { requestMs: 30_000, headersMs: 15_000, idleMs: 120_000 };
  const app = newServer(o, timeouts);
  // the API document sees every route registered after it
  const document = await openApi(app, o.onRoute ? { onRoute: o.onRoute } : {});
  await plumbing(app, o, timeouts);
  const p = sharedParts(app, o);
  const mail = await accountRoutes(app, o, p);
  catalogRoutes(app, o, p);
  readingRoutes(app, o, p);
  deviceRoutesOf(app, o, p, document);
  uploadRoutesOf(app, o, p, timeouts);
  adminOpsRoutes(app, { auth: p.auth, bus: o.bus, rpcTimeoutMs: o.rpcTimeoutMs, ...(o.parking ? { parking: o.parking } : {}) });
  if (o.backup) backupRoutes(app, { auth: p.auth, log: o.log, ...o.backup });
  // the web app's pages and assets (web/): they read through the routes above, in-process
  document.describing(webSchema, () => webRoutes(app, { origin: (req) => p.origins.publicBase(req), csrf: p.auth.csrfOf, mail }));
  return app;
}

/** fastify with the server's timeouts, limits and error shapes, and its validators. */
function newServer(o: AppOptions, timeouts: Timeouts): FastifyInstance {
  const app = Fastify({
    loggerInstance: o.log as FastifyBaseLogger,
    bodyLimit: o.bodyLimit,
    // a body trickled a byte at a time, or headers never finished, no longer hold a connection for ever
    // the whole-request deadline is kept per request (http/request-deadline.ts): an upload lifts it
    http: httpServerTimeouts({ ...timeouts, requestMs: 0 }),
    requestTimeout: 0,
    connectionTimeout: timeouts.idleMs,
    keepAliveTimeout: timeouts.idleMs,
    logController: new LogController({ disableRequestLogging: true }),
    // a hop count is a number at runtime; fastify's types only list strings and booleans
    trustProxy: o.trustProxy as boolean | string,
    frameworkErrors,
    clientErrorHandler,
    // stopping, the gateway closes first and the services behind it stay up until it has: a request
    // read after the close began (a busy process, a keep-alive connection) is served, not refused
    // (the listener is closed, readiness already says no)
    return503OnClosing: false,
    // a series or author name is one path segment, URL-encoded whole: 200 characters of CJK text
    // are 1,800 encoded (the default of 100 made a long name's page "not found")
    routerOptions: { maxParamLength: 2048 },
  });
  // Compiled on a route's first request, not at start: ~200 schemas cost a restart tens of ms of CPU
  // that most of them never need (a device route on a server without devices, say).
  // Path parameters are text and their schemas say so: they are checked, not converted (TypeBox's
  // conversion cannot take the `*` of a wildcard route as a property name).
  app.setValidatorCompiler((def) => {
    let check: ReturnType<typeof TypeBoxValidatorCompiler> | null = null;
    return (data) => {
      if (!check) check = def.httpPart === 'params' ? checkOnly(def.schema as TSchema) : TypeBoxValidatorCompiler(def);
      return check(data);
    };
  });
  return app;
}

/** What every request passes: deadlines, counting, compression, body parsers, the input guard, errors, health. */
async function plumbing(app: FastifyInstance, o: AppOptions, timeouts: Timeouts): Promise<void> {
  app.addHook('onRequest', requestDeadline(timeouts.requestMs));
  app.decorateRequest('caller', null);
  app.decorateRequest('device', null);
  observeRequests(app, o.metrics);
  // /api and /kobo answers: nosniff, and no-store unless a route says it may be kept
  privateAnswers(app);
  await app.register(cookie);
  // Answers compressed for clients that accept it (brotli at a quality that costs little CPU, else
  // gzip), only for compressible types and bodies of 1 KiB or more. Book files are never compressed:
  // devices need their Content-Length and byte ranges (the sender marks them with Accept-Ranges).
  // Answers the read models keep are compressed once per encoding (http/packed-answers.ts).
  const foreground = o.foreground;
  if (foreground) {
    // each request counts until its response is done or cut off; a WebSocket upgrade leaves HTTP for
    // good and is not a request being answered
    app.addHook('onRequest', async (req, reply) => {
      if (req.headers.upgrade) return;
      reply.raw.once('close', foreground.begin());
    });
  }
  // an /api error in the request's language as an extra field (before the answer is packed)
  localizedErrors(app, o.reads);
  app.addHook('onSend', async (req, reply, payload) => {
    if (reply.getHeader('accept-ranges') !== undefined) {
      req.headers['x-no-compression'] = 'file';
      return payload;
    }
    return sendPacked(req, reply, payload);
  });
  await app.register(compress, {
    global: true,
    threshold: MIN_BYTES,
    encodings: ['br', 'gzip'],
    brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
    zlibOptions: { level: GZIP_LEVEL },
  });
  // read your writes across replicas: a request presenting a position token waits (bounded) for it
  positionTokens(app, o.reads.models, { waitMs: Math.min(o.readYourWritesMs ?? 5000, 2000), secureCookie: o.cookieSecure });
  await app.register(formbody, { bodyLimit: o.bodyLimit });
  jsonBodyParser(app, o.bodyLimit);
  // Routes opt in with `config.rateLimit`; counters are per gateway process, keyed by client address.
  await app.register(rateLimit, {
    global: false,
    max: o.authRateLimit?.max ?? 1,
    timeWindow: o.authRateLimit?.windowMs ?? 60_000,
    errorResponseBuilder: (_req, c) => new HttpFailure(fail('rate_limited', rateLimitedMessage(Math.max(1, Math.ceil(c.ttl / 1000))))),
  });
  app.addHook('preValidation', guardInput);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((_req, reply) => sendFailure(reply, fail('not_found', Messages.notFound)));

  const Status = Type.Object({ status: Type.String() });
  app.get('/healthz', { schema: { tags: ['system'], summary: 'liveness', response: { 200: Status } } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { tags: ['system'], summary: 'readiness', response: { 200: Status, 503: Status } } }, async (_req, reply) =>
    (await o.ready()) ? { status: 'ready' } : reply.code(503).send({ status: 'not ready' }),
  );
}

/** Read your writes: a write's answer waits, bounded, until the read models have applied it. */
function afterWriteOf(o: AppOptions): AfterWrite {
  const ryw = o.readYourWritesMs ?? 5000;
  return async (source, position, events) => {
    const waited = o.metrics?.readYourWrites.startTimer({ source });
    // the write's own events, when its service carried them: folded at once if they follow what the read model holds
    if (events?.length) o.reads.models.offer(source, events);
    const reached = await o.reads.models.waitFor(source, position, ryw);
    waited?.({ outcome: reached ? 'reached' : 'timeout' });
    if (reached) currentRequestContext()?.onWritten?.(source, position);
    else o.log.warn({ source, position }, 'read models lag behind a write');
  };
}

/** The services' clients and the checks and caches that several route groups share. */
function sharedParts(app: FastifyInstance, o: AppOptions) {
  const afterWrite = afterWriteOf(o);
  const call = identityClient(o.bus, o.log, o.rpcTimeoutMs, afterWrite);
  const catalog = catalogClient(o.bus, o.log, o.rpcTimeoutMs, afterWrite);
  // sign-ins taken on trust (OPDS Basic and reader keys, KOReader's stock sync); a sync key's entry
  // goes as soon as this process applies a change of devices (a device deleted, a key replaced), a
  // user's as soon as identity says their credentials changed
  const verified = new VerifiedCache();
  o.reads.models.onChange((source) => {
    if (source === DeviceSync.SOURCE) verified.forgetDevices();
  });
  let credentialFeed: Subscription | null = null;
  app.addHook('onReady', async () => {
    credentialFeed = await followCredentialChanges(o.bus, verified, o.log);
  });
  app.addHook('onClose', async () => credentialFeed?.stop());
  // one budget of failed password and key checks per client address, across every surface
  const failures = new AuthFailures(o.authRateLimit);
  return {
    call,
    catalog,
    verified,
    failures,
    auth: authenticator(o.tokenKey, o.view),
    origins: new Origins(o.publicUrls),
    reading: readingClient(o.bus, o.log, o.rpcTimeoutMs, afterWrite),
    devices: deviceSyncClient(o.bus, o.log, o.rpcTimeoutMs, afterWrite),
    // devices: `deviceAuth.requireDevice` guards device routes (a device credential, never a session)
    deviceAuth: deviceAuthenticator(o.reads.db, o.reads.models, failures),
    // books' locator indexes, one cache for the web reader's sections and the Kobo's annotations
    locatorIndex: locatorIndexes(catalog),
    // covers from the catalog's directory where this process can read it, else over the bus
    covers: coverSource(o.reads.catalog, catalog, o.coverDir),
    // one set of page streams: the OPDS pages and an editor's cover from a page share its render limits
    streams: new Streams(o.reads, o.pageRender, (msg) => app.log.warn(msg)),
  };
}
type Parts = ReturnType<typeof sharedParts>;

/** Accounts, sessions, single sign-on, mail and the system settings; true when mail is set up. */
async function accountRoutes(app: FastifyInstance, o: AppOptions, p: Parts): Promise<boolean> {
  const { call, auth, origins } = p;
  const deviceView = new DeviceView(o.reads);
  authRoutes(app, {
    failures: p.failures,
    origins,
    verified: p.verified,
    call,
    auth,
    cookie: { secure: o.cookieSecure },
    rateLimited: o.authRateLimit !== null,
    deviceCounts: () => deviceView.counts(),
  });
  profileRoutes(app, { call, auth, reads: o.reads });
  sessionRoutes(app, { call, auth, reads: o.reads });
  oidcRoutes(app, { call, auth, origins, cookie: { secure: o.cookieSecure }, rateLimited: o.authRateLimit !== null });
  // mail (issue 47): SMTP_URL and MAIL_FROM, checked here once at start; without them its routes answer 503
  const mailSettings = mailConfig();
  const mailer = mailSettings ? new Mailer(mailSettings) : null;
  if (mailer) app.addHook('onClose', async () => mailer.close());
  // books mailed to e-readers: this process's worker takes the sends that are due
  const sends = mailer ? new SendWorker(call, mailer, o.reads, o.log, await findConverter()) : null;
  if (sends) {
    app.addHook('onReady', async () => sends.start());
    app.addHook('onClose', async () => sends.stop());
  }
  mailRoutes(app, { mailer, call, auth, reads: o.reads, origins, cookie: { secure: o.cookieSecure }, log: o.log, rateLimited: o.authRateLimit !== null, sends });
  systemRoutes(app, { call, auth });
  return mailer !== null;
}

/** Libraries, books, their edits, browsing and the read models' admin. */
function catalogRoutes(app: FastifyInstance, o: AppOptions, p: Parts): void {
  const deps = { catalog: p.catalog, identity: p.call, auth: p.auth, reads: o.reads };
  libraryRoutes(app, deps);
  mediaItemRoutes(app, deps, optionalClient<Reading.ReadingOperations>(o.bus, o.rpcTimeoutMs, 'reading'), p.locatorIndex, p.covers);
  itemEditRoutes(app, deps, p.streams);
  browseRoutes(app, { auth: p.auth, reads: o.reads });
  readAdminRoutes(app, { identity: p.call, auth: p.auth, reads: o.reads });
  statisticsRoutes(app, { auth: p.auth, reads: o.reads });
}

/** OPDS, reading state, calibre imports and KOReader's stock sync. */
function readingRoutes(app: FastifyInstance, o: AppOptions, p: Parts): void {
  const reading = { auth: p.auth, reads: o.reads, reading: p.reading };
  const { auth, verified, failures, origins } = p;
  opdsRoutes(app, { covers: p.covers, auth, identity: p.call, catalog: p.catalog, reads: o.reads, reading: p.reading, verified, failures, origins, streams: p.streams });
  opdsKeyRoutes(app, { auth, identity: p.call, verified, origins });
  readingProgressRoutes(app, reading);
  readingConflictRoutes(app, reading);
  readingAnnotationRoutes(app, reading);
  readingCollectionRoutes(app, reading);
  readerSettingsRoutes(app, reading);
  calibreImportRoutes(app, { ...reading, catalog: p.catalog });
  // KOReader reads its own pushes from the reading service, never from the read models: no wait for them
  kosyncRoutes(app, {
    ...reading,
    pushReading: readingClient(o.bus, o.log, o.rpcTimeoutMs),
    identity: p.call,
    failures,
    createLimited: o.authRateLimit !== null,
    verified,
    syncKeys: syncKeys(o.reads.db),
  });
}

/** Devices: registration and sync, the Kobo, the live channel and the KOReader plugin. */
function deviceRoutesOf(app: FastifyInstance, o: AppOptions, p: Parts, document: ApiDocument): void {
  const { auth, deviceAuth, devices, origins } = p;
  deviceSyncRoutes(app, { deviceAuth, devices, reads: o.reads });
  deviceRoutes(app, { auth, deviceAuth, devices, reads: o.reads, rateLimited: o.authRateLimit !== null, origins });
  koboDeviceRoutes(app, { auth, devices, origins });
  // a KEPUB is made on its first request: that may take longer than an ordinary request
  const kepubs = kepubSource(catalogClient(o.bus, o.log, Math.max(o.rpcTimeoutMs, 60_000)));
  document.describing(koboSchema, () =>
    koboRoutes(app, {
      covers: p.covers,
      reads: o.reads,
      koboAuth: koboAuthenticator(o.reads.db, o.reads.models),
      kepubs,
      reading: p.reading,
      devices,
      catalog: p.catalog,
      locatorIndex: p.locatorIndex,
      origins,
      storeUrl: o.koboStoreUrl ?? 'https://storeapi.kobo.com',
      failures: p.failures,
    }),
  );
  liveChannel(app, { auth, bus: o.bus, log: o.log, device: deviceAuth, origins, maxSocketsPerUser: o.maxSocketsPerUser, ...(o.metrics ? { metrics: o.metrics } : {}) });
  koreaderPluginRoutes(app, { deviceAuth, reads: o.reads, reading: p.reading });
  koreaderDownloadRoutes(app);
}

/** Book files served from library folders, and uploads into them. */
function uploadRoutesOf(app: FastifyInstance, o: AppOptions, p: Parts, timeouts: Timeouts): void {
  uploadsRoutes(app, {
    requireUser: p.auth.requireUser,
    folders: async (req, id) => {
      const c = await o.reads.context(req.caller!);
      return (await o.reads.catalog.library(c.access, true, id)).ok ? o.reads.catalog.folders(id) : null;
    },
    catalogued: async (req, id, rel) => (await o.reads.catalog.fileItem((await o.reads.context(req.caller!)).access, id, rel)) !== null,
  });
  // book uploads: the scanner's outcome for each file followed from the catalog's log
  const outcomes = new UploadOutcomes();
  app.addHook('onReady', () => outcomes.start(o.bus));
  app.addHook('onClose', () => outcomes.stop());
  libraryUploadRoutes(app, { auth: p.auth, reads: o.reads, catalog: p.catalog, outcomes, maxBytes: o.uploadMaxBytes ?? 500 * 1024 * 1024, requestMs: timeouts.requestMs });
}
