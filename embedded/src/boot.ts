// Starts a set of Bindery services in this process: embedded (PGlite + in-memory bus) or
// distributed (Postgres + NATS). The only code that knows every service.
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import Type from 'typebox';
import {
  BaseConfig, connectNatsBus, trackingWrites, createLogger, hostProcess, loadConfig, MemoryBus, openPGlite, openPostgres, tokenKey, tokenSecret,
  type Bus, type Database, type Host, type RunningService, type Runtime, type ServiceModule,
} from '@bindery/platform';
import { identityService } from '@bindery/identity';
import { gatewayService } from '@bindery/gateway';
import { catalogService } from '@bindery/catalog';
import { readingService } from '@bindery/reading';

export const Config = Type.Object({
  ...BaseConfig.properties,
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ default: '0.0.0.0', minLength: 1 }),
  COOKIE_SECURE: Type.Boolean({ default: false }),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024 }),
  BINDERY_SERVICES: Type.String({ default: 'identity,catalog,reading,gateway', pattern: '^(identity|catalog|reading|gateway)(,(identity|catalog|reading|gateway))*$' }),
  /** folders the admin folder browser shows and library folders must be inside, separated like PATH */
  LIBRARY_ROOTS: Type.String({ default: '/', minLength: 1 }),
  SCAN_WATCH: Type.Union([Type.Literal('auto'), Type.Literal('native'), Type.Literal('poll'), Type.Literal('off')], { default: 'auto' }),
  SCAN_RECONCILE_SECONDS: Type.Integer({ minimum: 1, maximum: 604800, default: 900 }),
  SCAN_ON_STARTUP: Type.Boolean({ default: true }),
  SCAN_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 4 }),
  SCAN_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 1000, default: 64 }),
});
export type Config = Type.Static<typeof Config>;

export interface Started {
  url: string | null;
  mode: Runtime['mode'];
  host: Host;
  services: RunningService[];
}

export async function boot(env: NodeJS.ProcessEnv = process.env, onListen?: (url: string) => void): Promise<Started> {
  const cfg = loadConfig(Config, env);
  const log = createLogger('bindery', cfg.LOG_LEVEL);
  const distributed = Boolean(cfg.DATABASE_URL || cfg.NATS_URL);
  if (distributed && !(cfg.DATABASE_URL && cfg.NATS_URL)) {
    throw new Error(`invalid configuration: ${cfg.DATABASE_URL ? 'NATS_URL' : 'DATABASE_URL'} is required in distributed mode (set both DATABASE_URL and NATS_URL, or neither for embedded mode)`);
  }
  const dataDir = resolve(cfg.DATA_DIR);
  const secret = tokenSecret(cfg.JWT_SECRET, dataDir, !distributed);
  const names = cfg.BINDERY_SERVICES.split(',');

  let database: Database;
  let bus: Bus;
  if (distributed) {
    database = await openPostgres(cfg.DATABASE_URL!, { application: `bindery-${names.join('+')}` });
    bus = await connectNatsBus(cfg.NATS_URL!, { name: `bindery-${names.join('+')}`, logger: log });
  } else {
    database = await openPGlite(join(dataDir, 'db'));
    bus = new MemoryBus();
  }
  log.info({ mode: distributed ? 'distributed' : 'embedded', services: names, database: database.kind, bus: bus.kind }, 'starting');

  const rt: Runtime = {
    mode: distributed ? 'distributed' : 'embedded',
    db: database.db,
    bus: trackingWrites(bus),
    log,
    now: () => new Date(),
    tokenKey: tokenKey(secret),
    rpcTimeoutMs: cfg.RPC_TIMEOUT_MS,
    dataDir,
  };
  let url: string | null = null;
  const roots = cfg.LIBRARY_ROOTS.split(delimiter).filter((r) => r !== '');
  if (roots.some((r) => !isAbsolute(r))) throw new Error('invalid configuration: LIBRARY_ROOTS must be absolute paths separated by ' + JSON.stringify(delimiter));
  const modules: Record<string, ServiceModule> = {
    identity: identityService,
    reading: readingService,
    catalog: catalogService({
      roots: roots.map((r) => resolve(r)),
      watch: cfg.SCAN_WATCH,
      reconcileSeconds: cfg.SCAN_RECONCILE_SECONDS,
      scanOnStartup: cfg.SCAN_ON_STARTUP,
      scanConcurrency: cfg.SCAN_CONCURRENCY,
      scanBatch: cfg.SCAN_BATCH_SIZE,
    }),
    gateway: gatewayService({
      port: cfg.PORT, host: cfg.HOST, cookieSecure: cfg.COOKIE_SECURE, bodyLimit: cfg.BODY_LIMIT_BYTES,
      onListen: (u) => {
        url = u;
        onListen?.(u);
      },
    }),
  };
  const running: RunningService[] = [];
  for (const n of names) running.push(await modules[n]!.start(rt));
  const host = hostProcess(log, running, async () => {
    await bus.close();
    await database.close();
  }, cfg.SHUTDOWN_TIMEOUT_MS);
  return { url, mode: rt.mode, host, services: running };
}
