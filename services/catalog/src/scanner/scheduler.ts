// The scanner's driver. One replica holds the scanner lease (always the only one in embedded
// mode); it runs queued scans one at a time, watches library folders, queues a scan at start-up
// and a reconcile crawl now and then. Requests made anywhere are rows in the scan queue.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Catalog } from '@bindery/contracts';
import type { Ctx } from '../handlers/context';
import { changeLibrary } from '../handlers/libraries';
import { detectConflicts } from '../handlers/conflicts';
import { pollIntervalSeconds } from '../handlers/identity-events';
import { nextQueued, publicScan, requestScan, pruneScans, requeueRunning, scanStream, type ScanRow } from '../handlers/scans';
import { allLibraries } from '../store/libraries';
import { SCHEMA } from '../store/migrations';

import { scanLibrary, type ScanCounts } from './scan-library';
import { ScanStopped } from './scan-stopped';
import type { WatchFn, WatchHandle } from './watcher';
import { renderMissingCovers } from './covers';
import { indexMissingBooks } from './indexes';
import { scanMetrics, type ScanFinished } from './metrics';
import type { CTrx } from '../store/schema';

const DEBOUNCE_MS = 1000;
/** How often a running scan looks whether its library still exists (a delete on any replica). */
const LIBRARY_CHECK_MS = 1000;

/** how long an embedded scheduler waits after the process starts before its first step (see `run`) */
const EMBEDDED_START_GRACE_MS = 1500;

export class Scheduler {
  private readonly me = randomUUID();
  private leader = false;
  private stopping = false;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  private watchers = new Map<string, { sig: string; handle: WatchHandle; polling: boolean }>();
  private debounce = new Map<string, NodeJS.Timeout>();
  private timers: NodeJS.Timeout[] = [];
  private lastReconcile = Date.now();
  private lastWatchSync = 0;
  private forcePolling = new Set<string>();
  private covers: Promise<void> | null = null;
  private coversAgain = false;
  /** renews the lease while this replica holds it, during scans too */
  private heartbeat: NodeJS.Timeout | null = null;
  private beating = false;
  private lostLease = false;
  /** the scan running now, so a lost lease, a deleted library or a stop can cut it short */
  private current: AbortController | null = null;
  private readonly scanFinished: ScanFinished;

  constructor(
    private ctx: Ctx,
    private watchFn: WatchFn,
  ) {
    this.scanFinished = scanMetrics(ctx.rt.metrics);
  }

  start(): void {
    this.loop = this.run().catch((e) => this.ctx.rt.log.error({ err: e }, 'scanner stopped'));
  }

  /** Something changed (a scan was queued, a library was created or changed): look now. */
  kick(): void {
    this.lastWatchSync = 0;
    this.wake?.();
  }

  /** The poll interval changed: polling watchers start again with it. */
  settingsChanged(): void {
    for (const [id, w] of this.watchers) if (w.polling) this.watchers.set(id, { ...w, sig: 'stale' });
    this.lastWatchSync = 0;
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    // a scan cut short stays 'running'; the next leader queues it again (becomeLeader)
    this.current?.abort(new ScanStopped('stopping'));
    this.stopHeartbeat();
    this.kick();
    await this.loop;
    await this.covers;
    for (const t of this.debounce.values()) clearTimeout(t);
    for (const t of this.timers) clearTimeout(t);
    await Promise.all([...this.watchers.values()].map((w) => w.handle.close().catch(() => undefined)));
    this.watchers.clear();
    if (this.leader && this.ctx.rt.mode === 'distributed') {
      await this.ctx.db
        .withSchema(SCHEMA)
        .deleteFrom('leases')
        .where('name', '=', 'scanner')
        .where('owner', '=', this.me)
        .execute()
        .catch(() => undefined);
    }
  }

  private async takeLease(): Promise<boolean> {
    if (this.ctx.rt.mode === 'embedded') return true;
    const r = await sql<{ owner: string }>`
      insert into ${sql.table(`${SCHEMA}.leases`)} (name, owner, expires_at)
      values ('scanner', ${this.me}, now() + make_interval(secs => ${this.ctx.opts.leaseSeconds}))
      on conflict (name) do update set owner = excluded.owner, expires_at = excluded.expires_at
      where ${sql.table(`${SCHEMA}.leases`)}.owner = excluded.owner or ${sql.table(`${SCHEMA}.leases`)}.expires_at < now()
      returning owner`.execute(this.ctx.db);
    return r.rows.length > 0;
  }

  /**
   * Renews the lease a few times per lease period, on its own timer, so a scan longer than the
   * lease keeps it. A renewal that finds another owner ends this replica's turn at once.
   */
  private startHeartbeat(): void {
    if (this.ctx.rt.mode === 'embedded' || this.heartbeat) return;
    const beat = async () => {
      if (this.beating || !this.leader || this.stopping) return;
      this.beating = true;
      try {
        if (!(await this.takeLease())) this.loseLease();
      } catch (e) {
        // the database is away: the lease may run out, and the fence in each write stops us then
        this.ctx.rt.log.warn({ err: e }, 'scanner lease could not be renewed');
      } finally {
        this.beating = false;
      }
    };
    this.heartbeat = setInterval(() => void beat(), Math.max(200, (this.ctx.opts.leaseSeconds * 1000) / 3));
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  private loseLease(): void {
    if (!this.leader) return;
    this.leader = false;
    this.lostLease = true;
    this.stopHeartbeat();
    this.current?.abort(new ScanStopped('lease'));
    this.ctx.rt.log.warn('scanner: lease lost; another replica runs the scans now');
    this.kick();
  }

  /**
   * Fencing: every write of a scan checks, in its own transaction, that this replica still holds
   * the lease, and holds the lease row (FOR SHARE) until it commits, so a takeover waits for the
   * write and no write follows a takeover.
   */
  private async fence(trx: CTrx): Promise<void> {
    if (this.ctx.rt.mode === 'embedded') return;
    const r = await sql<{ owner: string }>`select owner from ${sql.table(`${SCHEMA}.leases`)} where name = 'scanner' for share`.execute(trx);
    if (r.rows[0]?.owner !== this.me) {
      this.loseLease();
      throw new ScanStopped('lease');
    }
  }

  private async run(): Promise<void> {
    // Embedded, every service shares this thread: the leader's start-up chores (conflict detection
    // over every file, covers left to render, the startup scans) would slow the gateway's own start
    // and a restarted server's first answers. They begin a moment later, or at once when kicked.
    if (this.ctx.rt.mode === 'embedded') await this.sleep(EMBEDDED_START_GRACE_MS);
    let lastTry = 0;
    // a replica without the lease tries for it twice per lease period (at most every 5 s)
    const retryMs = Math.min(5000, (this.ctx.opts.leaseSeconds * 1000) / 2);
    while (!this.stopping) {
      try {
        if (this.lostLease) {
          this.lostLease = false;
          await this.closeWatchers();
        }
        if (!this.leader && Date.now() - lastTry > retryMs) {
          lastTry = Date.now();
          if (await this.takeLease()) {
            this.leader = true;
            this.startHeartbeat();
            await this.becomeLeader();
          }
        }
        if (this.leader) {
          if (Date.now() - this.lastWatchSync > 5000) await this.syncWatchers();
          if (Date.now() - this.lastReconcile > this.ctx.opts.reconcileSeconds * 1000) await this.reconcile();
          const next = await nextQueued(this.ctx.db);
          if (next) {
            await this.runScan(next);
            continue;
          }
        }
      } catch (e) {
        this.ctx.rt.log.error({ err: e }, 'scanner step failed');
      }
      await this.sleep(1000);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.wake = done;
    });
  }

  private async becomeLeader(): Promise<void> {
    const db = this.ctx.db;
    this.ctx.rt.log.info('scanner: this replica runs the scans');
    // scans cut short by a stop or a crash run again; what they committed stays committed
    await this.ctx.tx((trx) => requeueRunning(this.ctx, trx));
    await this.ctx.tx((trx) => detectConflicts(this.ctx, trx));
    await this.ctx.tx((trx) => pruneScans(this.ctx, trx));
    const setting = await db.withSchema(SCHEMA).selectFrom('settings').select('value').where('key', '=', 'scan_on_startup').executeTakeFirst();
    const onStartup = this.ctx.opts.scanOnStartup && (setting ? setting.value !== false : true);
    if (onStartup) {
      for (const lib of await allLibraries(db)) {
        if (lib.folders.length > 0) await this.ctx.tx((trx) => requestScan(this.ctx, trx, lib.id, 'startup', null));
      }
    }
    this.lastReconcile = Date.now();
    await this.syncWatchers();
    this.renderCovers();
  }

  /** Renders missing covers, then missing locator indexes, in the background; a call while it runs makes it go round once more. */
  private renderCovers(): void {
    if (this.covers) {
      this.coversAgain = true;
      return;
    }
    this.covers = (async () => {
      do {
        this.coversAgain = false;
        const n = await renderMissingCovers(this.ctx, () => this.stopping);
        if (n > 0) this.ctx.rt.log.info({ covers: n }, 'covers rendered');
        // then the locator indexes the cover pass did not make (EPUBs without a cover, or with one already)
        const i = await indexMissingBooks(this.ctx, () => this.stopping);
        if (i > 0) this.ctx.rt.log.info({ indexes: i }, 'locator indexes built');
      } while (this.coversAgain && !this.stopping);
    })()
      .catch((e) => this.ctx.rt.log.warn({ err: e }, 'cover rendering failed'))
      .finally(() => {
        this.covers = null;
      });
  }

  private async reconcile(): Promise<void> {
    this.lastReconcile = Date.now();
    for (const lib of await allLibraries(this.ctx.db)) {
      if (lib.folders.length > 0) await this.ctx.tx((trx) => requestScan(this.ctx, trx, lib.id, 'reconcile', null));
    }
  }

  private async syncWatchers(): Promise<void> {
    this.lastWatchSync = Date.now();
    const mode = this.ctx.opts.watch;
    const libs = mode === 'off' ? [] : (await allLibraries(this.ctx.db)).filter((l) => l.watch && l.folders.length > 0);
    const pollMs = (await pollIntervalSeconds(this.ctx)) * 1000;
    const wanted = new Map(libs.map((l) => [l.id, l]));
    for (const [id, w] of this.watchers) {
      const lib = wanted.get(id);
      if (!lib || w.sig !== JSON.stringify(lib.folders)) {
        this.watchers.delete(id);
        await w.handle.close().catch(() => undefined);
      }
    }
    for (const lib of libs) {
      if (this.watchers.has(lib.id)) continue;
      const polling = mode === 'poll' || this.forcePolling.has(lib.id);
      const handle = this.watchFn(
        lib.folders,
        { polling, intervalMs: pollMs },
        () => this.changed(lib.id),
        (e) => {
          // native watching failed (inotify limits, an unsupported mount): poll this library instead
          this.ctx.rt.log.warn({ library: lib.id, err: e.message }, 'watching failed; polling instead');
          if (mode === 'auto' && !polling) {
            this.forcePolling.add(lib.id);
            const w = this.watchers.get(lib.id);
            if (w) this.watchers.set(lib.id, { ...w, sig: 'stale' });
            this.lastWatchSync = 0;
          }
        },
      );
      this.watchers.set(lib.id, { sig: JSON.stringify(lib.folders), handle, polling });
      // what changed before the watcher was in place is found by one more (cheap) scan
      await this.ctx.tx((trx) => requestScan(this.ctx, trx, lib.id, 'watch', null));
    }
  }

  private async closeWatchers(): Promise<void> {
    await Promise.all([...this.watchers.values()].map((w) => w.handle.close().catch(() => undefined)));
    this.watchers.clear();
  }

  /** Something changed under a library's folders: scan it once things settle. */
  private changed(libraryId: string): void {
    if (this.stopping) return;
    clearTimeout(this.debounce.get(libraryId));
    this.debounce.set(
      libraryId,
      setTimeout(() => {
        this.debounce.delete(libraryId);
        void this.ctx
          .tx((trx) => requestScan(this.ctx, trx, libraryId, 'watch', null))
          .then(() => this.kick())
          .catch((e) => this.ctx.rt.log.warn({ err: e, library: libraryId }, 'could not queue a scan'));
      }, DEBOUNCE_MS),
    );
  }

  /** Inside a scan's write: this replica still holds the lease, and the library still exists. */
  private async guard(trx: CTrx, libraryId: string): Promise<void> {
    await this.fence(trx);
    const lib = await trx.withSchema(SCHEMA).selectFrom('libraries').select('id').where('id', '=', libraryId).executeTakeFirst();
    if (!lib) throw new ScanStopped('deleted');
  }

  private async runScan(row: ScanRow): Promise<void> {
    const ctx = this.ctx;
    const t = ctx.db.withSchema(SCHEMA);
    const claimed = await ctx
      .tx(async (trx) => {
        await this.fence(trx);
        // still waiting (another replica may have taken it): the scan-started event makes it running
        const r = await trx.withSchema(SCHEMA).selectFrom('scans').select('id').where('id', '=', row.id).where('status', '=', 'queued').forUpdate().executeTakeFirst();
        if (!r) return false;
        await ctx.emit(trx, scanStream(row.id), [{ type: 'catalog.scan-started.v1', data: { scan_id: row.id, library_id: row.library_id, reason: row.reason } }]);
        return true;
      })
      .catch((e) => {
        if (e instanceof ScanStopped) return false; // the lease went elsewhere before the scan began
        throw e;
      });
    if (!claimed) return;
    const started = Date.now();
    let counts: ScanCounts = { files_seen: 0, added: 0, updated: 0, relinked: 0, removed: 0, unchanged: 0, errors: 0 };
    let error: string | null = null;
    const controller = new AbortController();
    this.current = controller;
    const watchdog = setInterval(() => {
      void t
        .selectFrom('libraries')
        .select('id')
        .where('id', '=', row.library_id)
        .executeTakeFirst()
        .then((lib) => {
          if (!lib) controller.abort(new ScanStopped('deleted'));
        })
        .catch(() => undefined);
    }, LIBRARY_CHECK_MS);
    let stopped: ScanStopped | null = null;
    try {
      counts = await scanLibrary(
        ctx,
        row,
        async (c) => {
          await t
            .updateTable('scans')
            .set({ counts: JSON.stringify(c) })
            .where('id', '=', row.id)
            .execute();
          // progress is transient: it goes to whoever listens now, never into the log
          ctx.rt.bus.notify(Catalog.ScanProgressSubject, { scan_id: row.id, library_id: row.library_id, ...c } satisfies Catalog.ScanProgress);
        },
        { signal: controller.signal, check: (trx) => this.guard(trx, row.library_id) },
      );
    } catch (e) {
      if (e instanceof ScanStopped) stopped = e;
      else {
        error = (e as Error).message;
        ctx.rt.log.error({ err: e, library: row.library_id }, 'scan failed');
      }
    } finally {
      clearInterval(watchdog);
      this.current = null;
    }
    if (stopped) return this.scanStopped(row, stopped, started);
    const status = error ? 'failed' : 'completed';
    const recorded = await ctx
      .tx(async (trx): Promise<ScanStopped | null> => {
        await this.fence(trx);
        const lib = await trx.withSchema(SCHEMA).selectFrom('libraries').select('id').where('id', '=', row.library_id).executeTakeFirst();
        if (!lib) return new ScanStopped('deleted'); // deleted as the scan ended: its scan rows went with it
        if (!error) await changeLibrary(ctx, trx, row.library_id, null, { last_scan_at: await ctx.now(trx) });
        // the scan-finished event ends the scan's row (status, time, counts, error)
        await ctx.emit(trx, scanStream(row.id), [
          {
            type: 'catalog.scan-finished.v1',
            data: { scan_id: row.id, library_id: row.library_id, status, error, duration_ms: Date.now() - started, ...counts },
          },
        ]);
        return null;
      })
      .catch((e) => {
        // the lease went elsewhere as the scan ended: the new holder runs it again, finding it all done
        if (e instanceof ScanStopped) return e;
        throw e;
      });
    if (recorded) return this.scanStopped(row, Object.assign(recorded, { counts: { ...counts } }), started);
    ctx.rt.bus.notify(Catalog.ScanProgressSubject, { scan_id: row.id, library_id: row.library_id, ...counts } satisfies Catalog.ScanProgress);
    ctx.rt.log.info({ scan: publicScan({ ...row, status, counts: { ...counts }, error }), ms: Date.now() - started }, 'scan finished');
    this.scanFinished(status, (Date.now() - started) / 1000, counts);
    if (counts.added + counts.updated + counts.relinked > 0) this.renderCovers();
  }

  /**
   * A scan cut short writes nothing more. Its library deleted: the scan ends 'cancelled' (its row
   * went with the library). The lease lost or the process stopping: the row stays 'running' and
   * the next leader queues it again.
   */
  private async scanStopped(row: ScanRow, stopped: ScanStopped, started: number): Promise<void> {
    const log = this.ctx.rt.log;
    if (stopped.reason !== 'deleted') {
      log.warn({ scan: row.id, library: row.library_id, reason: stopped.reason }, 'scan stopped; it runs again on the replica that holds the scanner lease');
      return;
    }
    const counts: ScanCounts = { files_seen: 0, added: 0, updated: 0, relinked: 0, removed: 0, unchanged: 0, errors: 0, ...stopped.counts };
    await this.ctx
      .tx((trx) =>
        this.ctx.emit(trx, scanStream(row.id), [
          {
            type: 'catalog.scan-finished.v1',
            data: { scan_id: row.id, library_id: row.library_id, status: 'cancelled', error: stopped.message, duration_ms: Date.now() - started, ...counts },
          },
        ]),
      )
      .catch((e) => log.warn({ err: e, scan: row.id }, 'could not record the cancelled scan'));
    log.info({ scan: row.id, library: row.library_id, ms: Date.now() - started }, 'scan cancelled: library deleted');
  }
}
