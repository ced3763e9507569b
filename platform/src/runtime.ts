// What a service is given to run: its database handle, the bus, a logger, a clock and the token key.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db, NoTables } from './db';
import type { Bus } from './bus/types';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import type { Probes } from './ops-server';
import type { RunningService } from './running-service';
import type { BackupSource } from './backup/snapshot';

export interface Runtime {
  mode: 'embedded' | 'distributed';
  /** the process's database, for raw SQL: each service takes its typed view (`asTables<ItsDb, NoTables>(rt.db)`) */
  db: Db<NoTables>;
  bus: Bus;
  log: Logger;
  now: () => Date;
  /** HS256 key for session tokens */
  tokenKey: Uint8Array;
  rpcTimeoutMs: number;
  dataDir: string;
  /** the process's Prometheus registry and its instruments */
  metrics: Metrics;
  /** the process's readiness (database, bus, services, consumers) */
  probes: Probes;
  /** requests this process is answering now (HTTP and RPC); background work gives way to them */
  foreground: Foreground;
  /** takes a backup of the whole deployment (the gateway's admin route and its schedule), where this process can */
  backup?: BackupSource;
}

/**
 * Counts the requests a process is answering: the gateway's HTTP requests, the services' RPCs. Work
 * that can wait (the catalog's cover and index passes) waits while it is above zero, so on a small
 * machine — or in embedded mode, on the one thread — a request does not share the cores with it.
 */
export class Foreground {
  active = 0;
  /** a request begins; the function returned ends it (once, however often it is called) */
  begin(): () => void {
    this.active++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.active--;
    };
  }
  /** counts `fn` as answered in the foreground while it runs */
  async answer<T>(fn: () => Promise<T>): Promise<T> {
    const end = this.begin();
    try {
      return await fn();
    } finally {
      end();
    }
  }
}

export interface ServiceModule {
  name: string;
  start(rt: Runtime): Promise<RunningService>;
}

/**
 * The token secret: JWT_SECRET when given; in embedded mode a random one kept in the data
 * directory (mode 0600) so sessions survive restarts.
 */
export function tokenSecret(envSecret: string | undefined, dataDir: string, embedded: boolean): string {
  if (envSecret) return envSecret;
  if (!embedded) throw new Error('invalid configuration: JWT_SECRET is required in distributed mode (at least 32 characters)');
  const file = join(dataDir, 'jwt-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const s = randomBytes(48).toString('base64url');
  writeFileSync(file, s + '\n', { mode: 0o600 });
  return s;
}
