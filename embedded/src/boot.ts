// Starts a set of Bindery services in this process: embedded (PGlite + in-memory bus) or
// distributed (Postgres + NATS). The only code that knows every service.
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import Type from 'typebox';
import {
  BaseConfig,
  connectNatsBus,
  trackingWrites,
  createLogger,
  Foreground,
  hostProcess,
  loadConfig,
  MemoryBus,
  Metrics,
  openPGlite,
  keepStatistics,
  keepPostgresStatistics,
  openPostgres,
  privateDataDir,
  privateDataDirApart,
  Probes,
  startOpsServer,
  stuckAfterMs,
  tokenKey,
  tokenSecret,
  type Bus,
  type NatsBusOptions,
  type OpsServer,
  type RetryPolicy,
  type Database,
  type Host,
  type HttpTimeouts,
  type RunningService,
  type Tightened,
  type Runtime,
  type ServiceModule,
} from '@bindery/platform';
import { rpcSubject } from '@bindery/contracts';
import { binderyStreams, embeddedBackup, postgresBackup } from '@bindery/platform/backup';
import { identityService } from '@bindery/identity';
import { gatewayService, parsePublicUrls, scrubSecrets } from '@bindery/gateway';
import { catalogService, DEFAULT_LIBRARY_ROOTS } from '@bindery/catalog';
import { readingService } from '@bindery/reading';
import { deviceSyncService } from '@bindery/device-sync';

/**
 * services whose answers carry their committed events, for the gateway to fold at once (decisions
 * 96 and 116)
 */
const CARRIED = ['reading', 'device-sync'] as const;
/** carried sources whose relay takes longer runs (their writes' answers fold without it) */
const LONG_RELAY_RUNS = ['reading'] as const;
/**
 * the least gap between a carried source's relay passes under load (others: 8 ms): the gateway
 * folds its writes from their answers, so only the other consumers (device-sync, live updates) wait
 * for it, and longer runs cost every process less (decision 98)
 */
const CARRIED_RELAY_GAP_MS = 25;

export const Config = Type.Object({
  ...BaseConfig.properties,
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ default: '0.0.0.0', minLength: 1 }),
  COOKIE_SECURE: Type.Boolean({ default: false }),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024 }),
  /** the largest book file an upload takes (checked while it streams; default 500 MiB) */
  UPLOAD_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 1024 * 1024 * 1024 * 1024, default: 500 * 1024 * 1024 }),
  /**
   * Every HTTP listener (the gateway's, the ops listener): the whole request (headers and body) must
   * arrive within HTTP_REQUEST_TIMEOUT_SECONDS and its headers within HTTP_HEADERS_TIMEOUT_SECONDS
   * (else 408 and the connection closed); a connection with nothing sent either way for
   * HTTP_IDLE_TIMEOUT_SECONDS is closed, a kept-alive one between requests too. Answers (downloads)
   * and upgraded WebSockets are not timed by the first two.
   */
  HTTP_REQUEST_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 30 }),
  HTTP_HEADERS_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 15 }),
  HTTP_IDLE_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 86400, default: 120 }),
  /** whose X-Forwarded-For to believe: `false`, `true`, a hop count, or addresses/CIDRs separated by commas */
  TRUST_PROXY: Type.String({ default: 'false', pattern: '^(true|false|\\d{1,2}|[0-9a-fA-F.:/]+(,\\s*[0-9a-fA-F.:/]+)*)$' }),
  /** login and register requests per client address per window, each; 0 turns the limit off */
  AUTH_RATE_LIMIT_MAX: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 20 }),
  AUTH_RATE_LIMIT_WINDOW_SECONDS: Type.Integer({ minimum: 1, maximum: 86400, default: 60 }),
  /** the addresses people reach Bindery by (absolute http(s) URLs, commas between): absolute links use them, never a Host header naming anything else; empty: this machine's own addresses */
  PUBLIC_URL: Type.String({ default: '' }),
  /** where Kobo store calls Bindery does not answer go when an admin turns on the setting `kobo_store_proxy` */
  /**
   * where the catalog writes covers (default DATA_DIR/covers). A gateway given it (a volume shared
   * with the catalog, read-only is enough) serves covers from it instead of asking the catalog
   */
  COVERS_DIR: Type.Optional(Type.String({ minLength: 1 })),
  KOBO_STORE_URL: Type.String({ default: 'https://storeapi.kobo.com', pattern: '^https?://[^\\s]+$' }),
  /** open live-channel sockets per user */
  WS_MAX_SOCKETS_PER_USER: Type.Integer({ minimum: 1, maximum: 100_000, default: 50 }),
  /** the default of the `registration_enabled` setting (anyone may create an account) until an admin saves one */
  PUBLIC_REGISTRATION: Type.Boolean({ default: false }),
  BINDERY_SERVICES: Type.String({
    default: 'identity,catalog,reading,device-sync,gateway',
    pattern: '^(identity|catalog|reading|device-sync|gateway)(,(identity|catalog|reading|device-sync|gateway))*$',
  }),
  /** how long a device registration waits for approval, and how often the device should poll */
  DEVICE_REGISTRATION_TTL_SECONDS: Type.Integer({ minimum: 1, maximum: 86400, default: 600 }),
  DEVICE_POLL_INTERVAL_SECONDS: Type.Integer({ minimum: 1, maximum: 600, default: 5 }),
  /** folders the admin folder browser shows and library folders must be inside, separated like PATH */
  LIBRARY_ROOTS: Type.String({ default: DEFAULT_LIBRARY_ROOTS.join(delimiter), minLength: 1 }),
  SCAN_WATCH: Type.Union([Type.Literal('auto'), Type.Literal('native'), Type.Literal('poll'), Type.Literal('off')], { default: 'auto' }),
  SCAN_RECONCILE_SECONDS: Type.Integer({ minimum: 1, maximum: 604800, default: 900 }),
  SCAN_ON_STARTUP: Type.Boolean({ default: true }),
  SCAN_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 4 }),
  SCAN_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 1000, default: 64 }),
  /** the ops listener (/healthz, /readyz, /metrics) of this process; 0 turns it off */
  OPS_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 9464 }),
  /** its address: loopback unless set (it has no auth); `0.0.0.0` where probes or scrapers come from outside, as in Kubernetes */
  OPS_HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  /** tries of a failing event handler before the event is parked, and the backoff between them */
  EVENT_RETRY_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  EVENT_RETRY_BASE_MS: Type.Integer({ minimum: 1, maximum: 600000, default: 200 }),
  EVENT_RETRY_MAX_MS: Type.Integer({ minimum: 1, maximum: 3600000, default: 30000 }),
  /** streamed pages rendered at once per gateway, requests that may wait for them (then 503), and each render's limits */
  PAGE_RENDER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
  PAGE_RENDER_QUEUE: Type.Integer({ minimum: 0, maximum: 10_000, default: 16 }),
  PAGE_RENDER_MEMORY_MB: Type.Integer({ minimum: 64, maximum: 65_536, default: 512 }),
  PAGE_RENDER_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 600, default: 30 }),
  /** seconds the scanner lease lasts unrenewed; the holder renews it every third of that, scans included */
  SCAN_LEASE_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 30 }),
});
export type Config = Type.Static<typeof Config>;

function trustProxy(v: string): boolean | string | number {
  if (v === 'true' || v === 'false') return v === 'true';
  return /^\d+$/.test(v) ? Number(v) : v;
}

function natsAuth(cfg: Config): NatsBusOptions['auth'] {
  if (cfg.NATS_CREDS) {
    if (cfg.NATS_USER) throw new Error('invalid configuration: NATS_CREDS and NATS_USER are exclusive (one way to sign in to NATS)');
    return { credsFile: cfg.NATS_CREDS };
  }
  if (!cfg.NATS_USER !== !cfg.NATS_PASSWORD)
    throw new Error(`invalid configuration: ${cfg.NATS_USER ? 'NATS_PASSWORD' : 'NATS_USER'} is required with ${cfg.NATS_USER ? 'NATS_USER' : 'NATS_PASSWORD'}`);
  return cfg.NATS_USER ? { user: cfg.NATS_USER, pass: cfg.NATS_PASSWORD! } : undefined;
}

export interface Started {
  url: string | null;
  mode: Runtime['mode'];
  host: Host;
  services: RunningService[];
}

export async function boot(env: NodeJS.ProcessEnv = process.env, onListen?: (url: string) => void): Promise<Started> {
  const cfg = loadConfig(Config, env);
  // no Kobo token, reader key or device credential in any line, whichever service wrote it
  const log = createLogger('bindery', cfg.LOG_LEVEL, { scrub: scrubSecrets });
  const distributed = Boolean(cfg.DATABASE_URL || cfg.NATS_URL);
  if (distributed && !(cfg.DATABASE_URL && cfg.NATS_URL)) {
    throw new Error(
      `invalid configuration: ${cfg.DATABASE_URL ? 'NATS_URL' : 'DATABASE_URL'} is required in distributed mode (set both DATABASE_URL and NATS_URL, or neither for embedded mode)`,
    );
  }
  const natsAuthOpts = distributed ? natsAuth(cfg) : undefined;
  if (cfg.HTTP_HEADERS_TIMEOUT_SECONDS > cfg.HTTP_REQUEST_TIMEOUT_SECONDS)
    throw new Error('invalid configuration: HTTP_HEADERS_TIMEOUT_SECONDS must not be more than HTTP_REQUEST_TIMEOUT_SECONDS (the headers are part of the request)');
  const httpTimeouts: HttpTimeouts = {
    requestMs: cfg.HTTP_REQUEST_TIMEOUT_SECONDS * 1000,
    headersMs: cfg.HTTP_HEADERS_TIMEOUT_SECONDS * 1000,
    idleMs: cfg.HTTP_IDLE_TIMEOUT_SECONDS * 1000,
  };
  const dataDir = resolve(cfg.DATA_DIR);
  // The embedded database (password hashes, notes) and the token secret are the owner's alone. The
  // umask (main.ts) covers most files; PGlite sets some modes itself (its initial cluster 0666, files
  // it writes through stdio 0644), so the tree is tightened again once it is open, once the services
  // have migrated, and after it is closed: those walks take only the data directory's own entries
  // and PGlite's folder. The whole tree (what an earlier version or another umask left; a library's
  // covers are 200,000 files at 100,000 books) is walked once a start, in a thread of its own, while
  // the services start; DATA_DIR is 0700 from the first moment, which keeps others out meanwhile.
  const report = (when: string, kept: Tightened) => {
    if (kept.tightened) log.debug({ dataDir, entries: kept.tightened, when }, 'data directory: group and other permissions removed');
    if (kept.failed.length) log.warn({ dataDir, paths: kept.failed.slice(0, 10), count: kept.failed.length }, 'data directory: could not remove group and other permissions');
  };
  const keepPrivate = (when: string) => {
    if (!distributed) report(when, privateDataDir(dataDir, 'db'));
  };
  keepPrivate('start');
  const wholeTree = distributed ? null : privateDataDirApart(dataDir);
  const secret = tokenSecret(cfg.JWT_SECRET, dataDir, !distributed);
  const names = cfg.BINDERY_SERVICES.split(',');

  let database: Database;
  let bus: Bus;
  const metrics = new Metrics();
  const retry: RetryPolicy = { attempts: cfg.EVENT_RETRY_ATTEMPTS, baseMs: cfg.EVENT_RETRY_BASE_MS, maxMs: cfg.EVENT_RETRY_MAX_MS };
  if (distributed) {
    database = await openPostgres(cfg.DATABASE_URL!, { application: `bindery-${names.join('+')}`, max: cfg.DATABASE_POOL_MAX });
    bus = await connectNatsBus(cfg.NATS_URL!, {
      name: `bindery-${names.join('+')}`,
      logger: log,
      metrics,
      retry,
      auth: natsAuthOpts,
      streamReplicas: cfg.NATS_STREAM_REPLICAS,
      inboxPrefix: `_INBOX.${names.join('_')}`,
      // no answer waits for a carried source's relay: it takes longer runs (decision 98)
      relayGapMs: Object.fromEntries(LONG_RELAY_RUNS.map((s) => [s, CARRIED_RELAY_GAP_MS])),
      coalesce: [rpcSubject('reading', 'progress-put')],
    });
  } else {
    database = await openPGlite(join(dataDir, 'db'), { sharedBuffers: cfg.PGLITE_SHARED_BUFFERS });
    keepPrivate('database open');
    bus = new MemoryBus({ logger: log, metrics, retry });
  }
  metrics.watchBus(() => bus.status());
  const probes = new Probes(database.db, bus, stuckAfterMs(retry));
  log.info({ mode: distributed ? 'distributed' : 'embedded', services: names, database: database.kind, bus: bus.kind }, 'starting');

  const rt: Runtime = {
    mode: distributed ? 'distributed' : 'embedded',
    db: database.db,
    // reading's and device-sync's answers carry their events: the gateway folds them at once (decisions 96, 116)
    bus: trackingWrites(bus, { carry: CARRIED }),
    log,
    now: () => new Date(),
    tokenKey: tokenKey(secret),
    rpcTimeoutMs: cfg.RPC_TIMEOUT_MS,
    dataDir,
    metrics,
    probes,
    foreground: new Foreground(),
    // the whole deployment's backup (issue 46): PGlite's own image here, pg_dump of every schema from one snapshot distributed
    backup: distributed
      ? postgresBackup({
          url: cfg.DATABASE_URL!,
          streams: () =>
            binderyStreams({
              url: cfg.NATS_URL!,
              ...(natsAuthOpts && 'user' in natsAuthOpts ? natsAuthOpts : {}),
              ...(natsAuthOpts && 'credsFile' in natsAuthOpts ? natsAuthOpts : {}),
            }),
        })
      : embeddedBackup({ db: database.db, dumpDataDir: database.dumpDataDir!, dataDir, coverDir: resolve(cfg.COVERS_DIR ?? join(dataDir, 'covers')) }),
  };
  let url: string | null = null;
  const roots = cfg.LIBRARY_ROOTS.split(delimiter).filter((r) => r !== '');
  if (roots.some((r) => !isAbsolute(r))) throw new Error('invalid configuration: LIBRARY_ROOTS must be absolute paths separated by ' + JSON.stringify(delimiter));
  const modules: Record<string, ServiceModule> = {
    identity: identityService({ publicRegistration: cfg.PUBLIC_REGISTRATION }),
    reading: readingService,
    'device-sync': deviceSyncService({ registrationTtlSeconds: cfg.DEVICE_REGISTRATION_TTL_SECONDS, pollIntervalSeconds: cfg.DEVICE_POLL_INTERVAL_SECONDS }),
    catalog: catalogService({
      roots: roots.map((r) => resolve(r)),
      watch: cfg.SCAN_WATCH,
      reconcileSeconds: cfg.SCAN_RECONCILE_SECONDS,
      scanOnStartup: cfg.SCAN_ON_STARTUP,
      scanConcurrency: cfg.SCAN_CONCURRENCY,
      scanBatch: cfg.SCAN_BATCH_SIZE,
      leaseSeconds: cfg.SCAN_LEASE_SECONDS,
      ...(cfg.COVERS_DIR ? { coverDir: resolve(cfg.COVERS_DIR) } : {}),
    }),
    gateway: gatewayService({
      port: cfg.PORT,
      host: cfg.HOST,
      cookieSecure: cfg.COOKIE_SECURE,
      bodyLimit: cfg.BODY_LIMIT_BYTES,
      uploadMaxBytes: cfg.UPLOAD_MAX_BYTES,
      timeouts: httpTimeouts,
      trustProxy: trustProxy(cfg.TRUST_PROXY),
      publicUrls: parsePublicUrls(cfg.PUBLIC_URL),
      koboStoreUrl: cfg.KOBO_STORE_URL.replace(/\/+$/, ''),
      // the catalog's covers: its directory in this process, or a shared one named by COVERS_DIR
      ...(cfg.COVERS_DIR || names.includes('catalog') ? { coverDir: resolve(cfg.COVERS_DIR ?? join(dataDir, 'covers')) } : {}),
      maxSocketsPerUser: cfg.WS_MAX_SOCKETS_PER_USER,
      authRateLimit: cfg.AUTH_RATE_LIMIT_MAX === 0 ? null : { max: cfg.AUTH_RATE_LIMIT_MAX, windowMs: cfg.AUTH_RATE_LIMIT_WINDOW_SECONDS * 1000 },
      pageRender: {
        concurrency: cfg.PAGE_RENDER_CONCURRENCY,
        queue: cfg.PAGE_RENDER_QUEUE,
        memoryMb: cfg.PAGE_RENDER_MEMORY_MB,
        timeoutMs: cfg.PAGE_RENDER_TIMEOUT_SECONDS * 1000,
      },
      onListen: (u) => {
        url = u;
        onListen?.(u);
      },
    }),
  };
  const running: RunningService[] = [];
  // Probes answer from the start: /healthz while services migrate and catch up, /readyz 503 until they run.
  const ops: OpsServer | null = cfg.OPS_PORT ? await startOpsServer({ port: cfg.OPS_PORT, host: cfg.OPS_HOST, probes, metrics, log, timeouts: httpTimeouts }) : null;
  try {
    for (const n of names) {
      const t0 = performance.now();
      running.push(await modules[n]!.start(rt));
      log.debug({ service: n, ms: Math.round(performance.now() - t0) }, 'service started');
    }
  } catch (e) {
    await ops?.close();
    throw e;
  }
  probes.track(running);
  keepPrivate('services started');
  if (wholeTree) {
    const kept = await wholeTree;
    report(kept.thread ? 'start, the whole tree (a thread)' : 'start, the whole tree', kept);
  }
  // no autovacuum in PGlite: the planner's statistics are refreshed as the logs grow; on PostgreSQL,
  // where autovacuum is off or behind a large scan (decisions 79 and 91)
  const stopStatistics = database.kind === 'pglite' ? keepStatistics(database.db, log) : keepPostgresStatistics(database.db, log);
  const host = hostProcess(
    log,
    running,
    async () => {
      await ops?.close();
      await stopStatistics();
      await bus.close();
      await database.close();
      keepPrivate('database closed');
    },
    cfg.SHUTDOWN_TIMEOUT_MS,
  );
  return { url, mode: rt.mode, host, services: running };
}
