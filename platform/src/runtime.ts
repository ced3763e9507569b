// What a service is given to run: its database handle, the bus, a logger, a clock and the token key.
import { randomBytes } from 'node:crypto';
import { chmodSync, type Dirent, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db, NoTables } from './db';
import type { Bus } from './bus/types';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import type { Probes } from './ops-server';

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

export interface RunningService {
  name: string;
  /** false while catching up or stopping */
  ready(): boolean;
  /** stop taking work, finish what is in flight */
  stop(): Promise<void>;
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

/**
 * The data directory is the owner's alone (embedded mode keeps password hashes and notes in it):
 * created 0700, or tightened to 0700, and every file and folder under it stripped of group and other
 * permissions (what an earlier version or another umask left). Symlinks are left as they are, and so
 * is what they point to. With `within`, only the data directory, its own entries and the tree under
 * its subfolder `within` are walked (the walks after the first at a start: what the process itself
 * writes outside that folder follows its umask, and a library's covers need not be walked again).
 * Returns how many entries were tightened and the paths it could not change.
 */
export function privateDataDir(dir: string, within?: string): { tightened: number; failed: string[] } {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let tightened = 0;
  const failed: string[] = [];
  const tighten = (path: string, mode: number) => {
    if ((mode & 0o077) === 0) return;
    try {
      chmodSync(path, mode & 0o700);
      tightened++;
    } catch {
      failed.push(path);
    }
  };
  const walk = (entries: Dirent[]) => {
    for (const e of entries) {
      if (e.isSymbolicLink()) continue;
      const path = join(e.parentPath, e.name);
      try {
        tighten(path, lstatSync(path).mode & 0o777);
      } catch {
        failed.push(path);
      }
    }
  };
  // DATA_DIR itself may be a symlink to the folder meant: that folder is tightened
  tighten(dir, statSync(dir).mode & 0o777);
  if (within === undefined) {
    walk(readdirSync(dir, { recursive: true, withFileTypes: true }));
  } else {
    walk(readdirSync(dir, { withFileTypes: true }));
    const sub = join(dir, within);
    if (existsSync(sub) && !lstatSync(sub).isSymbolicLink()) walk(readdirSync(sub, { recursive: true, withFileTypes: true }));
  }
  return { tightened, failed };
}
