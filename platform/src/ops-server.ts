// The ops listener every process runs (OPS_PORT): /healthz (the process is up), /readyz (its
// database answers, its bus is connected, its services and consumers are live) and /metrics.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import type { Db, NoTables } from './db';
import { DEFAULT_RETRY, type Bus, type RetryPolicy } from './bus/types';
import { retryBudgetMs } from './bus/retry';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import type { RunningService } from './running-service';

const DB_TIMEOUT_MS = 2_000;
/**
 * A consumer on the same event for longer than its whole retry budget plus a minute (at least two
 * minutes) is stuck: a handler hangs, or the event cannot even be parked.
 */
export const stuckAfterMs = (retry: RetryPolicy = DEFAULT_RETRY) => Math.max(120_000, retryBudgetMs(retry) + 60_000);

export interface Readiness {
  ready: boolean;
  checks: { database: string; bus: string; services: string; consumers: string };
}

/** What "ready" means for one process; the gateway's own /readyz asks the same. */
export class Probes {
  private services: RunningService[] = [];

  constructor(
    private readonly db: Db<NoTables>,
    private readonly bus: Bus,
    private readonly stuckMs: number = stuckAfterMs(),
  ) {}

  track(services: RunningService[]): void {
    this.services = services;
  }

  async check(): Promise<Readiness> {
    const database = await this.database();
    const status = this.bus.status();
    const bus = status.connected ? 'ok' : 'disconnected';
    const notReady = this.services.filter((s) => !s.ready()).map((s) => s.name);
    const services = this.services.length === 0 ? 'starting' : notReady.length ? `not ready: ${notReady.join(', ')}` : 'ok';
    const now = Date.now();
    const bad = status.consumers.flatMap((c) => {
      if (!c.running) return [`${c.name} stopped`];
      if (c.busySince !== null && now - c.busySince > this.stuckMs) return [`${c.name} stuck for ${Math.round((now - c.busySince) / 1000)} s`];
      return [];
    });
    const consumers = bad.length ? bad.join(', ') : 'ok';
    return { ready: [database, bus, services, consumers].every((c) => c === 'ok'), checks: { database, bus, services, consumers } };
  }

  private async database(): Promise<string> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${DB_TIMEOUT_MS} ms`)), DB_TIMEOUT_MS)));
      await Promise.race([sql`select 1`.execute(this.db), timeout]);
      return 'ok';
    } catch (e) {
      return `unavailable: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** How long a client may take to send a request, its headers, or nothing at all (every HTTP listener). */
export interface HttpTimeouts {
  requestMs: number;
  headersMs: number;
  idleMs: number;
}

/**
 * Node's server options for `t`. Node checks the request and headers deadlines on a timer (every 30 s
 * unless told): every second here, or more often for deadlines of a few seconds.
 */
export function httpServerTimeouts(t: HttpTimeouts): { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number } {
  return {
    requestTimeout: t.requestMs,
    headersTimeout: t.headersMs,
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(t.headersMs / 4))),
  };
}

export interface OpsServer {
  url: string;
  close(): Promise<void>;
}

/** Starts the ops listener; a port taken is a start-up error, not a silent absence of probes. */
export async function startOpsServer(opts: { port: number; host: string; probes: Probes; metrics: Metrics; log: Logger; timeouts?: HttpTimeouts }): Promise<OpsServer> {
  const timeouts = opts.timeouts ?? { requestMs: 30_000, headersMs: 15_000, idleMs: 120_000 };
  const server: Server = createServer(httpServerTimeouts(timeouts), (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'application/json', JSON.stringify({ error: 'method not allowed' }));
    const work = (async () => {
      if (path === '/healthz') return send(200, 'application/json', JSON.stringify({ status: 'ok' }));
      if (path === '/readyz') {
        const r = await opts.probes.check();
        return send(r.ready ? 200 : 503, 'application/json', JSON.stringify({ status: r.ready ? 'ready' : 'not ready', checks: r.checks }));
      }
      if (path === '/metrics') {
        const m = await opts.metrics.text();
        return send(200, m.contentType, m.body);
      }
      return send(404, 'application/json', JSON.stringify({ error: 'not found' }));
    })();
    work.catch((e) => {
      opts.log.error({ err: e, path }, 'ops request failed');
      if (!res.headersSent) send(500, 'application/json', JSON.stringify({ error: 'internal server error' }));
    });
  });
  server.keepAliveTimeout = Math.min(5_000, timeouts.idleMs);
  server.setTimeout(timeouts.idleMs);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'EADDRINUSE'
          ? new Error(`invalid configuration: OPS_PORT ${opts.port} is already in use on ${opts.host} (set another port, or 0 to turn the ops listener off)`)
          : e,
      ),
    );
    server.listen(opts.port, opts.host, () => {
      server.removeAllListeners('error');
      server.on('error', (e) => opts.log.error({ err: e }, 'ops listener error'));
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  const url = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  opts.log.info({ url }, 'ops listener (healthz, readyz, metrics) started');
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeIdleConnections();
        server.close(() => resolve());
      }),
  };
}
