// The gateway's read models: each projection folds one service's whole log into gateway tables
// through a durable consumer shared by the replicas. This module keeps them running, tells how far
// each has got (for read-your-writes and cache keys), and rebuilds one from the log on demand or
// when its definition changed, while the old tables keep serving until the switch.
import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { StoredEvent } from '@bindery/contracts';
import {
  applyFollowing,
  applyFollowingInOne,
  applyOnce,
  applyOnceInOne,
  consumerCheckpoint,
  type Bus,
  type Db,
  type Logger,
  type Metrics,
  type Subscription,
  type Trx,
} from '@bindery/platform';
import type { Counter } from 'prom-client';
import { SCHEMA } from './migrations';
import { foldableRun, projectCatalog, projectCatalogInOne, projectItemsInOne } from './catalog-projector';
import { projectIdentity } from './identity-projector';
import { projectReading, projectReadingInOne, projectReadingMany } from './reading-projector';
import { READING } from './reading-tables';
import { DEVICES } from './device-tables';
import { projectDevices } from './device-projector';
import { CATALOG, dropTables, ensureStateTable, IDENTITY, type Projection } from './tables';
import type { GatewayDb, Suffix } from './database';

const NEXT = '_next';
/** how often a replica reads the shared checkpoints (distributed mode), to see other replicas' progress */
const POLL_MS = 50;
/** how often, while a request waits for a position, a replica reads them (distributed mode) */
const WAIT_POLL_MS = 10;
/**
 * A write's own position is most often applied by this replica's consumer, which wakes its waiter
 * without a query: the shared checkpoints are read for a waiter only once it has waited this long.
 */
const WAIT_GRACE_MS = 10;
const FOLD_IN_ONE: Partial<Record<Projection['name'], (ev: StoredEvent) => ((isNew: RawBuilder<boolean>) => RawBuilder<unknown> | RawBuilder<unknown>[]) | null>> = {
  reading: projectReadingInOne,
  catalog: projectCatalogInOne,
};
/** runs of events that fold together in one statement (a bus that hands several at once) */
const FOLD_MANY: Partial<Record<Projection['name'], (evs: StoredEvent[]) => ((isNew: RawBuilder<boolean>) => RawBuilder<unknown>[]) & { count: number }>> = {
  catalog: (evs) => {
    const run = foldableRun(evs);
    return Object.assign(projectItemsInOne(run.facts), { count: run.count });
  },
  reading: projectReadingMany,
};
/**
 * Projections that fold a write's own events from its answer, before the bus brings them (decision
 * 96): the events a run of which folds in one statement. The reading service carries them
 * (`trackingWrites`' `carry` in embedded/src/boot.ts).
 */
const FOLD_OFFERED: Partial<Record<Projection['name'], (evs: StoredEvent[]) => ((isNew: RawBuilder<boolean>) => RawBuilder<unknown>[]) & { count: number }>> = {
  reading: projectReadingMany,
};
/**
 * Projections that fold a write's own events from its answer event by event, in one transaction
 * (device-sync carries them: a Kobo sync's record and confirmation, decision 116).
 */
const FOLD_OFFERED_EACH: ReadonlySet<Projection['name']> = new Set(['devices']);
const foldsOffered = (p: Projection) => FOLD_OFFERED[p.name] !== undefined || FOLD_OFFERED_EACH.has(p.name);
/** the most offered events held, per source, while an event before them has not come */
const OFFERED_MAX = 4096;
/** the most positions folded from answers that the consumer has yet to pass, per source */
const FOLDED_EARLY_MAX = 4096;
const FOLD: Record<Projection['name'], (trx: Trx<GatewayDb>, ev: StoredEvent, suffix?: Suffix) => Promise<void>> = {
  catalog: projectCatalog,
  identity: projectIdentity,
  reading: projectReading,
  devices: projectDevices,
};

export interface ProjectionStatus {
  name: string;
  source: string;
  version: number;
  position: number;
  rebuilding: boolean;
  rebuild_position: number | null;
  rebuilt_at: string | null;
}

export class ReadModels {
  private subs = new Map<string, Subscription>();
  /** positions this process knows to be applied (the truth in embedded mode: one consumer, here) */
  private known = new Map<string, number>();
  /** requests waiting for positions: each is looked at when a position moves, none polls on its own */
  private waiters = new Set<{ done: () => boolean; settle: (ok: boolean) => void; since: number }>();
  /** distributed mode: reads the shared checkpoints every WAIT_POLL_MS while anyone waits */
  private waitPoll: NodeJS.Timeout | null = null;
  private rebuilding = new Map<string, { position: number }>();
  /** per source, the highest token position a read waited for in vain (not waited for again) */
  private givenUp = new Map<string, number>();
  private poll: NodeJS.Timeout | null = null;
  private changeListeners = new Set<(source: string) => void>();
  /** per source: events offered with writes' answers, by position, not folded yet */
  private offered = new Map<string, Map<number, StoredEvent>>();
  /** per source: positions folded from answers that this process's consumer has yet to pass */
  private foldedEarly = new Map<string, Set<number>>();
  /** sources whose offered events are being folded (one fold at a time each) */
  private foldingOffered = new Set<string>();

  constructor(
    private db: Db<GatewayDb>,
    private bus: Bus,
    private log: Logger,
    /** true when this process holds the only consumer of each projection (embedded mode) */
    private soleConsumer: boolean,
    readonly projections: readonly Projection[] = [CATALOG, IDENTITY, READING, DEVICES],
    metrics?: Metrics,
  ) {
    this.offeredCount = metrics?.counter(
      'bindery_read_model_offered_events_total',
      "Events a write's answer carried to the gateway (decision 96), by source: outcome folded (at once, from the answer) or left (the bus brought them first, or an event before them had not come)",
      ['source', 'outcome'],
    );
  }

  private readonly offeredCount?: Counter<'source' | 'outcome'>;

  async start(): Promise<void> {
    await ensureStateTable(this.db);
    for (const p of this.projections) {
      await this.prepare(p);
      this.known.set(p.source, await consumerCheckpoint(this.db, SCHEMA, p.consumer, p.source));
      await this.startConsumer(p);
      if (!this.soleConsumer && FOLD_OFFERED[p.name]) await this.startLookout(p);
    }
    if (!this.soleConsumer) this.startPolling();
  }

  /**
   * Replicas share one durable consumer per projection, and it hands out one run at a time: a run
   * delivered to a replica that dies is handed on only when its ack wait runs out, and the source's
   * later events wait behind it. A write's answer would wait that long for its own events (they no
   * longer follow what the projection holds). So this process also follows the source from now, as
   * the live channel does, and holds what it sees beside the events answers carry: while a write
   * waits, the run from the projection's position on folds from them (one statement, the checkpoint
   * moving only from the position right before), and the stuck run passes unseen when it comes.
   */
  private async startLookout(p: Projection): Promise<void> {
    this.subs.set(
      `${p.name}:lookout`,
      await this.bus.follow({
        source: p.source,
        from: 'now',
        handler: async (ev) => {
          if (ev.position <= this.position(p.source)) return;
          const held = this.offered.get(p.source) ?? new Map<number, StoredEvent>();
          this.offered.set(p.source, held);
          if (held.size >= OFFERED_MAX) return;
          held.set(ev.position, ev);
          if (this.waiters.size > 0) this.foldOffered(p);
        },
      }),
    );
  }

  async stop(): Promise<void> {
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    if (this.waitPoll) clearInterval(this.waitPoll);
    this.waitPoll = null;
    await Promise.all([...this.subs.values()].map((s) => s.stop()));
    this.subs.clear();
    for (const w of [...this.waiters]) w.settle(w.done());
  }

  /** Called after a projection changed (its source's position moved). */
  onChange(fn: (source: string) => void): void {
    this.changeListeners.add(fn);
  }

  /** Creates a projection's tables on first start; a changed version starts it again from the log. */
  private async prepare(p: Projection): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${'bindery-projection-' + p.name}))`.execute(trx);
      const state = await trx.withSchema(SCHEMA).selectFrom('projection_state').selectAll().where('name', '=', p.name).executeTakeFirst();
      if (state && Number(state.version) === p.version) return;
      if (state) this.log.info({ projection: p.name, from: Number(state.version), to: p.version }, 'projection definition changed: rebuilding from the log');
      await dropTables(trx, p, '');
      await dropTables(trx, p, NEXT);
      await p.create(trx, '');
      await trx.withSchema(SCHEMA).deleteFrom('consumer_checkpoints').where('consumer', '=', p.consumer).execute();
      await trx
        .withSchema(SCHEMA)
        .insertInto('projection_state')
        .values({ name: p.name, version: p.version })
        .onConflict((oc) => oc.column('name').doUpdateSet({ version: p.version, rebuilt_at: sql`now()` }))
        .execute();
    });
  }

  private async startConsumer(p: Projection): Promise<void> {
    const fold = FOLD[p.name];
    this.subs.set(
      p.name,
      await this.bus.consume({
        source: p.source,
        durable: p.consumer,
        checkpoint: () => consumerCheckpoint(this.db, SCHEMA, p.consumer, p.source),
        handler: async (ev) => {
          // folded already, from the answer of the write that appended it: only the position moves here
          if (this.passEarly(p.source, ev.position)) return this.advanced(p.source, ev.position);
          // the most frequent events fold in one statement; the rest (and a parked one replayed) in a transaction
          const one = FOLD_IN_ONE[p.name]?.(ev);
          if (!(one && (await applyOnceInOne(this.db, SCHEMA, p.consumer, ev, one)))) {
            await applyOnce(this.db, SCHEMA, p.consumer, ev, (trx) => fold(trx, ev));
          }
          this.advanced(p.source, ev.position);
        },
        // a scan's thousands of item events, many at a time: every one new, or the handler takes them
        // one by one (only where runs fold: the JetStream bus reads ahead for a consumer that has it)
        ...(FOLD_MANY[p.name]
          ? {
              handleMany: async (evs: StoredEvent[]) => {
                let early = 0;
                while (early < evs.length && this.passEarly(p.source, evs[early]!.position)) early++;
                if (early > 0) {
                  this.advanced(p.source, evs[early - 1]!.position);
                  return early;
                }
                const many = FOLD_MANY[p.name]!(evs);
                if (many.count < 2) return 0;
                const last = evs[many.count - 1]!;
                if (!(await applyOnceInOne(this.db, SCHEMA, p.consumer, evs[0]!, many, undefined, last))) return 0;
                this.advanced(p.source, last.position);
                return many.count;
              },
            }
          : {}),
      }),
    );
  }

  /**
   * Events a write appended, carried by its answer (decision 96): folded at once when they follow
   * what the projection has applied, in one statement that moves the shared checkpoint only from
   * the position right before them. Otherwise they wait here for the events before them (the other
   * answers of the same batch come in the same moment), and the bus brings them as ever; a write
   * waiting for them is woken by whichever applies them first.
   */
  offer(source: string, events: readonly StoredEvent[]): void {
    const p = this.projections.find((x) => x.source === source);
    if (!p || !foldsOffered(p)) return;
    const known = this.position(source);
    const held = this.offered.get(source) ?? new Map<number, StoredEvent>();
    this.offered.set(source, held);
    let applied = 0;
    for (const ev of events) {
      if (ev?.source !== source || !Number.isSafeInteger(ev.position)) continue;
      if (ev.position > known) held.set(ev.position, ev);
      else applied++;
    }
    if (applied) this.offeredCount?.inc({ source, outcome: 'left' }, applied);
    // the oldest go first (the map keeps insertion order): the bus brings whatever is dropped
    let dropped = 0;
    for (const pos of held.keys()) {
      if (held.size <= OFFERED_MAX) break;
      held.delete(pos);
      dropped++;
    }
    if (dropped) this.offeredCount?.inc({ source, outcome: 'left' }, dropped);
    this.foldOffered(p);
  }

  /** Drops the offered events at or below `known`: applied by the bus, not from an answer. */
  private leave(source: string, held: Map<number, StoredEvent>, known: number): void {
    let left = 0;
    for (const pos of held.keys()) {
      if (pos > known) continue;
      held.delete(pos);
      left++;
    }
    if (left) this.offeredCount?.inc({ source, outcome: 'left' }, left);
  }

  /** One fold of offered events at a time per source, after a turn of the event loop (the batch's other answers join). */
  private foldOffered(p: Projection): void {
    if (this.foldingOffered.has(p.source)) return;
    this.foldingOffered.add(p.source);
    setImmediate(() => {
      void this.foldOfferedRun(p)
        .catch((e: unknown) => {
          this.log.warn({ err: e, projection: p.name }, 'folding events offered with an answer failed; the bus brings them');
          return false;
        })
        .then((again) => {
          this.foldingOffered.delete(p.source);
          if (again) this.foldOffered(p);
        });
    });
  }

  /** Folds the offered run that follows the known position; true when it folded and more may follow. */
  private async foldOfferedRun(p: Projection): Promise<boolean> {
    const held = this.offered.get(p.source);
    if (!held) return false;
    const known = this.position(p.source);
    this.leave(p.source, held, known);
    const run: StoredEvent[] = [];
    for (let pos = known + 1; held.has(pos); pos++) run.push(held.get(pos)!);
    if (run.length === 0) return false;
    const inOne = FOLD_OFFERED[p.name];
    const many = inOne ? inOne(run) : null;
    const count = many ? many.count : run.length;
    if (count === 0) return false;
    const last = run[count - 1]!;
    const fold = FOLD[p.name];
    const folded = many
      ? await applyFollowingInOne(this.db, SCHEMA, p.consumer, run[0]!, last, many)
      : await applyFollowing(this.db, SCHEMA, p.consumer, run[0]!, last, async (trx) => {
          for (const ev of run) await fold(trx, ev);
        });
    if (!folded) return false;
    const early = this.foldedEarly.get(p.source) ?? new Set<number>();
    this.foldedEarly.set(p.source, early);
    for (const ev of run.slice(0, count)) {
      held.delete(ev.position);
      early.add(ev.position);
    }
    for (const pos of early) {
      if (early.size <= FOLDED_EARLY_MAX) break;
      early.delete(pos);
    }
    this.offeredCount?.inc({ source: p.source, outcome: 'folded' }, count);
    this.advanced(p.source, last.position);
    return held.has(last.position + 1);
  }

  /** True (once) when the event at `position` was folded from an answer: the consumer passes it. */
  private passEarly(source: string, position: number): boolean {
    return this.foldedEarly.get(source)?.delete(position) ?? false;
  }

  private advanced(source: string, position: number): void {
    if (position > (this.known.get(source) ?? 0)) this.known.set(source, position);
    const held = this.offered.get(source);
    if (held?.size) this.leave(source, held, position);
    for (const fn of this.changeListeners) fn(source);
    this.wakeWaiters();
  }

  /** How far a source's projection has got, as this process knows it (see `current`). */
  position(source: string): number {
    return this.known.get(source) ?? 0;
  }

  /**
   * Positions of every source, for cache keys, from memory: no query per request. In embedded mode
   * they are the truth (this process applies every event). In distributed mode they are what this
   * replica's consumers applied, raised by polling the shared checkpoints every POLL_MS and by every
   * `refresh` (a write waiting for its position, a read presenting a position token), so another
   * replica's progress is seen within about POLL_MS, and at once by a client that shows its token.
   */
  current(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const p of this.projections) out[p.source] = this.known.get(p.source) ?? 0;
    return out;
  }

  /** True when every position of `wanted` (sources this gateway projects) is known to be applied. */
  reached(wanted: Readonly<Record<string, number>>): boolean {
    for (const p of this.projections) {
      const w = wanted[p.source];
      if (w !== undefined && w > (this.known.get(p.source) ?? 0) && w > (this.givenUp.get(p.source) ?? 0)) return false;
    }
    return true;
  }

  /**
   * Waits, bounded, until every position of `wanted` is applied (a read presenting a position token).
   * A position that was not reached in time is not waited for again: a token from an older database,
   * or ahead of a projection that lags far behind, costs one wait, not one per request.
   */
  async reach(wanted: Readonly<Record<string, number>>, timeoutMs: number): Promise<boolean> {
    // a token most often comes from a write another replica answered: its position may be applied already
    if (await this.until(() => this.reached(wanted), timeoutMs, true)) return true;
    for (const p of this.projections) {
      const w = wanted[p.source];
      if (w !== undefined && w > (this.givenUp.get(p.source) ?? 0)) this.givenUp.set(p.source, w);
    }
    return false;
  }

  /**
   * Waits, bounded, until `done()`; false on timeout. It is looked at again whenever this process
   * applies an event and, in distributed mode (another replica may be the one applying), whenever
   * the shared checkpoints show a move: read at once when `now` says so, then every WAIT_POLL_MS
   * while anyone has waited WAIT_GRACE_MS. A thousand waiting writes cost one timer each and one
   * query per tick between them, not a timer per tick each.
   */
  private async until(done: () => boolean, timeoutMs: number, now = false): Promise<boolean> {
    if (done()) return true;
    if (!this.soleConsumer && now) {
      await this.refresh().catch((e: unknown) => this.log.warn({ err: e }, 'reading the projections positions failed'));
      if (done()) return true;
    }
    return new Promise<boolean>((resolve) => {
      const w = {
        done,
        since: performance.now(),
        settle: (ok: boolean) => {
          clearTimeout(timer);
          this.waiters.delete(w);
          resolve(ok);
        },
      };
      const timer = setTimeout(() => w.settle(done()), timeoutMs);
      this.waiters.add(w);
      if (!this.soleConsumer) this.pollWhileWaiting();
    });
  }

  private wakeWaiters(): void {
    for (const w of [...this.waiters]) if (w.done()) w.settle(true);
  }

  private pollWhileWaiting(): void {
    if (this.waitPoll) return;
    this.waitPoll = this.refreshEvery(
      WAIT_POLL_MS,
      (e) => this.log.warn({ err: e }, 'reading the projections positions failed'),
      () => {
        if (this.waiters.size > 0) return false;
        this.waitPoll = null;
        return true;
      },
      // the set keeps arrival order: its first is the one waiting longest
      () => (this.waiters.values().next().value?.since ?? Infinity) <= performance.now() - WAIT_GRACE_MS,
    );
  }

  /** Every `ms`, one `refresh` at a time when `due()`, until `done()` says to stop. */
  private refreshEvery(ms: number, failed: (e: unknown) => void, done: () => boolean = () => false, due: () => boolean = () => true): NodeJS.Timeout {
    let busy = false;
    const timer = setInterval(() => {
      if (done()) return clearInterval(timer);
      if (busy || !due()) return;
      busy = true;
      this.refresh()
        .catch(failed)
        .finally(() => {
          busy = false;
        });
    }, ms);
    return timer;
  }

  private positionsQuery: CompiledQuery<{ source: string; position: number | string }> | null = null;
  private inFlight: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  /**
   * Raises the known positions to the shared checkpoints, by a query that starts after this call:
   * concurrent callers share the next query instead of each making one.
   */
  refresh(): Promise<void> {
    if (this.soleConsumer) return Promise.resolve();
    if (!this.inFlight) return this.startPositionsQuery();
    // the query in flight may have started before this call: wait for the one after it
    this.queued ??= this.inFlight
      .catch(() => undefined)
      .then(() => {
        this.queued = null;
        return this.startPositionsQuery();
      });
    return this.queued;
  }

  private startPositionsQuery(): Promise<void> {
    const q = this.readPositions().finally(() => {
      if (this.inFlight === q) this.inFlight = null;
    });
    this.inFlight = q;
    return q;
  }

  private async readPositions(): Promise<void> {
    // compiled once: it runs every POLL_MS
    this.positionsQuery ??= this.db
      .withSchema(SCHEMA)
      .selectFrom('consumer_checkpoints')
      .select(['source', 'position'])
      .where(
        'consumer',
        'in',
        this.projections.map((p) => p.consumer),
      )
      .compile();
    const { rows } = await this.db.executeQuery(this.positionsQuery);
    let moved = false;
    for (const r of rows) {
      const source = r.source;
      const pos = Number(r.position);
      if (pos > (this.known.get(source) ?? 0)) {
        this.known.set(source, pos);
        moved = true;
      }
    }
    if (moved) this.wakeWaiters();
  }

  private startPolling(): void {
    this.poll = this.refreshEvery(POLL_MS, (e) => this.log.debug({ err: e }, 'polling the projections positions failed'));
    this.poll.unref();
  }

  /** Waits, bounded, until the source's projection has applied `position`; false on timeout. */
  async waitFor(source: string, position: number, timeoutMs: number): Promise<boolean> {
    if (!this.projections.some((p) => p.source === source)) return true;
    return this.until(() => this.position(source) >= position, timeoutMs);
  }

  async status(): Promise<ProjectionStatus[]> {
    await this.refresh();
    const rows = await this.db.withSchema(SCHEMA).selectFrom('projection_state').selectAll().execute();
    const out: ProjectionStatus[] = [];
    for (const p of this.projections) {
      const r = rows.find((x) => x.name === p.name);
      out.push({
        name: p.name,
        source: p.source,
        version: r ? Number(r.version) : p.version,
        position: this.position(p.source),
        rebuilding: this.rebuilding.has(p.name),
        rebuild_position: this.rebuilding.get(p.name)?.position ?? null,
        rebuilt_at: r?.rebuilt_at ? new Date(r.rebuilt_at).toISOString() : null,
      });
    }
    return out;
  }

  /**
   * Rebuilds a projection from its source's whole log into a second set of tables while the live
   * set keeps serving, then switches in one transaction once the new set has caught up with the
   * live consumer's checkpoint. Resolves when the switch is done.
   */
  rebuild(name: string): { status: 'started' | 'busy' | 'unknown'; done: Promise<void> } {
    const p = this.projections.find((x) => x.name === name);
    if (!p) return { status: 'unknown', done: Promise.resolve() };
    if (this.rebuilding.has(p.name)) return { status: 'busy', done: Promise.resolve() };
    const state = { position: 0 };
    this.rebuilding.set(p.name, state);
    return { status: 'started', done: this.runRebuild(p, state) };
  }

  private async runRebuild(p: Projection, state: { position: number }): Promise<void> {
    try {
      await this.db.transaction().execute(async (trx) => {
        await dropTables(trx, p, NEXT);
        await p.create(trx, NEXT);
      });
      const fold = FOLD[p.name];
      let finished!: () => void;
      let failed!: (e: unknown) => void;
      const done = new Promise<void>((res, rej) => {
        finished = res;
        failed = rej;
      });
      let switched = false;
      const follower = await this.bus.follow({
        source: p.source,
        handler: async (ev) => {
          if (switched || ev.position <= state.position) return;
          try {
            await this.db.transaction().execute((trx) => fold(trx, ev, NEXT));
            state.position = ev.position;
            if (await this.trySwitch(p, state.position)) {
              switched = true;
              finished();
            }
          } catch (e) {
            failed(e);
            throw e;
          }
        },
      });
      // an empty log, or one whose end the follower reached before the live consumer moved
      const poll = setInterval(() => {
        if (switched) return;
        void this.trySwitch(p, state.position).then((ok) => {
          if (ok && !switched) {
            switched = true;
            finished();
          }
        }, failed);
      }, 200);
      try {
        await done;
      } finally {
        clearInterval(poll);
        await follower.stop();
      }
      this.advanced(p.source, state.position);
      this.log.info({ projection: p.name, position: state.position }, 'projection rebuilt from the log');
    } catch (e) {
      this.log.error({ err: e, projection: p.name }, 'projection rebuild failed; the live tables stay');
      throw e;
    } finally {
      this.rebuilding.delete(p.name);
    }
  }

  private switching = false;

  /** Swaps the rebuilt tables in when they hold at least what the live ones hold. */
  private async trySwitch(p: Projection, rebuiltTo: number): Promise<boolean> {
    if (this.switching) return false;
    this.switching = true;
    try {
      return await this.db.transaction().execute(async (trx) => {
        const s = trx.withSchema(SCHEMA);
        // the live consumer takes this row FOR UPDATE too: no event lands in the old tables after this
        const cp = await s.selectFrom('consumer_checkpoints').select('position').where('consumer', '=', p.consumer).where('source', '=', p.source).forUpdate().executeTakeFirst();
        const live = Number(cp?.position ?? 0);
        if (rebuiltTo < live) return false;
        await dropTables(trx, p, '');
        for (const t of p.tables) await sql`alter table ${sql.table(`${SCHEMA}.${t}${NEXT}`)} rename to ${sql.id(t)}`.execute(trx);
        await s
          .insertInto('consumer_checkpoints')
          .values({ consumer: p.consumer, source: p.source, position: rebuiltTo })
          .onConflict((oc) => oc.columns(['consumer', 'source']).doUpdateSet({ position: rebuiltTo, updated_at: sql`now()` }))
          .execute();
        await s.updateTable('projection_state').set({ version: p.version, rebuilt_at: sql`now()` }).where('name', '=', p.name).execute();
        return true;
      });
    } finally {
      this.switching = false;
    }
  }
}
