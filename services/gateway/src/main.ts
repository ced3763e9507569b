// The gateway service: the only HTTP listener, and the keeper of the gateway's read models.
import { asTables, migrate, parkingBus, ParkingLot, type NoTables, type HttpTimeouts, type RunningService, type Runtime, type ServiceModule } from '@bindery/platform';
import { buildApp } from './app';
import { backupSettings } from './read-model/backup-settings';
import { AuthView } from './read-model/auth-view';
import { ReadModels } from './read-model/read-model';
import { Reads } from './read-model/reads';
import { migrations, SCHEMA } from './read-model/migrations';
import type { PageRenderOptions } from './opds/page-sources';
import type { GatewayDb } from './read-model/database';

export interface GatewayOptions {
  port: number;
  host: string;
  cookieSecure: boolean;
  bodyLimit?: number;
  /** how long a client may take to send a request, its headers, or nothing (defaults: 30 s, 15 s, 120 s) */
  timeouts?: HttpTimeouts;
  /** fastify's `trustProxy` (default false: the socket's address is the client's) */
  trustProxy?: boolean | string | number;
  /** requests per client address and window, for login and register each (null: no limit) */
  authRateLimit?: { max: number; windowMs: number } | null;
  /** the addresses people reach this server by (PUBLIC_URL); empty: only this machine's own */
  publicUrls?: string[];
  /** open live-channel sockets per user */
  maxSocketsPerUser?: number;
  /** streamed pages: renders at once, their queue, each render's memory and time (default DEFAULT_PAGE_RENDER) */
  pageRender?: PageRenderOptions;
  /** the real Kobo store, for the calls an admin lets through (setting `kobo_store_proxy`) */
  koboStoreUrl?: string;
  /** the catalog's cover directory, when this process can read it */
  coverDir?: string;
  /** the largest book file an upload takes (UPLOAD_MAX_BYTES) */
  uploadMaxBytes?: number;
  /** called with the bound address once listening */
  onListen?(url: string): void;
}

export function gatewayService(opts: GatewayOptions): ServiceModule {
  return {
    name: 'gateway',
    async start(rt: Runtime): Promise<RunningService> {
      const t0 = performance.now();
      const lap = (step: string) => rt.log.debug({ step, ms: Math.round(performance.now() - t0) }, 'gateway start');
      await migrate(rt.db, SCHEMA, migrations);
      lap('migrated');
      const parking = new ParkingLot(rt.db, SCHEMA, rt.log);
      rt.metrics.watchParking(parking);
      const db = asTables<GatewayDb, NoTables>(rt.db);
      const view = new AuthView(db);
      await view.start(parkingBus(rt.bus, parking));
      const models = new ReadModels(db, parkingBus(rt.bus, parking), rt.log, rt.mode === 'embedded', undefined, rt.metrics);
      lap('auth view');
      await models.start();
      lap('read models');
      const reads = new Reads(db, models);
      let stopping = false;
      const app = await buildApp({
        bus: rt.bus,
        log: rt.log,
        view,
        reads,
        tokenKey: rt.tokenKey,
        cookieSecure: opts.cookieSecure,
        rpcTimeoutMs: rt.rpcTimeoutMs,
        foreground: rt.foreground,
        bodyLimit: opts.bodyLimit ?? 1024 * 1024,
        ...(opts.timeouts ? { timeouts: opts.timeouts } : {}),
        metrics: rt.metrics,
        parking,
        // the process's readiness: its database, its bus and its consumers, not just `select 1`
        ready: async () => !stopping && (await rt.probes.check()).ready,
        trustProxy: opts.trustProxy ?? false,
        publicUrls: opts.publicUrls ?? [],
        ...(opts.koboStoreUrl ? { koboStoreUrl: opts.koboStoreUrl } : {}),
        ...(opts.coverDir ? { coverDir: opts.coverDir } : {}),
        ...(opts.maxSocketsPerUser ? { maxSocketsPerUser: opts.maxSocketsPerUser } : {}),
        authRateLimit: opts.authRateLimit === undefined ? { max: 20, windowMs: 60_000 } : opts.authRateLimit,
        ...(opts.pageRender ? { pageRender: opts.pageRender } : {}),
        ...(opts.uploadMaxBytes ? { uploadMaxBytes: opts.uploadMaxBytes } : {}),
        backup: { ...(rt.backup ? { source: rt.backup } : {}), settings: () => backupSettings(rt.db) },
      });
      lap('app built');
      const address = await app.listen({ port: opts.port, host: opts.host });
      opts.onListen?.(address);
      return {
        name: 'gateway',
        ready: () => !stopping,
        async stop() {
          stopping = true;
          // Stop accepting and let in-flight requests finish. A keep-alive connection that goes idle
          // after its last response would hold the close until its timeout, so keep closing idle ones.
          const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
          try {
            await app.close();
          } finally {
            clearInterval(sweep);
          }
          await view.stop();
          await models.stop();
        },
      };
    },
  };
}
