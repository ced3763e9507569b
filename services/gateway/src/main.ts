// The gateway service: the only HTTP listener, and the keeper of the gateway's read models.
import { sql } from 'kysely';
import { migrate, type RunningService, type Runtime, type ServiceModule } from '@bindery/platform';
import { buildApp } from './app';
import { AuthView } from './projections/auth-view';
import { LibraryView } from './projections/libraries';
import { migrations, SCHEMA } from './projections/migrations';

export interface GatewayOptions {
  port: number;
  host: string;
  cookieSecure: boolean;
  bodyLimit?: number;
  /** fastify's `trustProxy` (default false: the socket's address is the client's) */
  trustProxy?: boolean | string | number;
  /** requests per client address and window, for login and register each (null: no limit) */
  authRateLimit?: { max: number; windowMs: number } | null;
  /** called with the bound address once listening */
  onListen?(url: string): void;
}

export function gatewayService(opts: GatewayOptions): ServiceModule {
  return {
    name: 'gateway',
    async start(rt: Runtime): Promise<RunningService> {
      await migrate(rt.db, SCHEMA, migrations);
      const view = new AuthView(rt.db);
      await view.start(rt.bus);
      const libraries = new LibraryView(rt.db);
      await libraries.start(rt.bus);
      let stopping = false;
      const app = await buildApp({
        bus: rt.bus,
        log: rt.log,
        view,
        libraries,
        tokenKey: rt.tokenKey,
        cookieSecure: opts.cookieSecure,
        rpcTimeoutMs: rt.rpcTimeoutMs,
        bodyLimit: opts.bodyLimit ?? 1024 * 1024,
        trustProxy: opts.trustProxy ?? false,
        authRateLimit: opts.authRateLimit === undefined ? { max: 20, windowMs: 60_000 } : opts.authRateLimit,
        ready: async () => {
          if (stopping) return false;
          try {
            await sql`select 1`.execute(rt.db);
            return true;
          } catch {
            return false;
          }
        },
      });
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
          await libraries.stop();
        },
      };
    },
  };
}
