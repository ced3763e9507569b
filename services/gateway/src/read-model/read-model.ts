// The gateway's read models: each projection folds one service's whole log into gateway tables
// through a durable consumer shared by the replicas. This module keeps them running, tells how far
// each has got (for read-your-writes and cache keys), and rebuilds one from the log on demand or
// when its definition changed, while the old tables keep serving until the switch.
import { sql } from 'kysely';
import type { StoredEvent } from '@bindery/contracts';
import { applyOnce, consumerCheckpoint, type Bus, type Db, type Logger, type Subscription, type Trx } from '@bindery/platform';
import { SCHEMA } from '../projections/migrations';
import { projectCatalog } from './catalog-projector';
import { projectIdentity } from './identity-projector';
import { projectReading } from './reading-projector';
import { READING } from './reading-tables';
import { DEVICES } from './device-tables';
import { projectDevices } from './device-projector';
import { CATALOG, dropTables, ensureStateTable, IDENTITY, type Projection } from './tables';

const NEXT = '_next';
const FOLD: Record<Projection['name'], (trx: Trx, ev: StoredEvent, suffix?: string) => Promise<void>> = {
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
  private waiters = new Set<() => void>();
  private rebuilding = new Map<string, { position: number }>();
  private changeListeners = new Set<(source: string) => void>();

  constructor(
    private db: Db,
    private bus: Bus,
    private log: Logger,
    /** true when this process holds the only consumer of each projection (embedded mode) */
    private soleConsumer: boolean,
    readonly projections: readonly Projection[] = [CATALOG, IDENTITY, READING, DEVICES],
  ) {}

  async start(): Promise<void> {
    await ensureStateTable(this.db);
    for (const p of this.projections) {
      await this.prepare(p);
      this.known.set(p.source, await consumerCheckpoint(this.db, SCHEMA, p.consumer, p.source));
      await this.startConsumer(p);
    }
  }

  async stop(): Promise<void> {
    await Promise.all([...this.subs.values()].map((s) => s.stop()));
    this.subs.clear();
    for (const w of this.waiters) w();
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
          await applyOnce(this.db, SCHEMA, p.consumer, ev, (trx) => fold(trx, ev));
          this.advanced(p.source, ev.position);
        },
      }),
    );
  }

  private advanced(source: string, position: number): void {
    if (position > (this.known.get(source) ?? 0)) this.known.set(source, position);
    for (const fn of this.changeListeners) fn(source);
    for (const w of [...this.waiters]) w();
  }

  /** How far a source's projection has got: from memory when this process is its only writer. */
  async position(source: string): Promise<number> {
    if (this.soleConsumer) return this.known.get(source) ?? 0;
    const p = this.projections.find((x) => x.source === source);
    if (!p) return 0;
    const pos = await consumerCheckpoint(this.db, SCHEMA, p.consumer, source);
    if (pos > (this.known.get(source) ?? 0)) this.known.set(source, pos);
    return pos;
  }

  private inFlight: Promise<Record<string, number>> | null = null;
  private queued: Promise<Record<string, number>> | null = null;

  /**
   * Positions of every source, for cache keys. In distributed mode another replica may have moved
   * them, so they come from the database, by a query that starts after this call: concurrent
   * callers share the next query instead of each making one.
   */
  positions(): Promise<Record<string, number>> {
    if (this.soleConsumer) return Promise.resolve(Object.fromEntries(this.projections.map((p) => [p.source, this.known.get(p.source) ?? 0])));
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

  private startPositionsQuery(): Promise<Record<string, number>> {
    const q = this.readPositions().finally(() => {
      if (this.inFlight === q) this.inFlight = null;
    });
    this.inFlight = q;
    return q;
  }

  private async readPositions(): Promise<Record<string, number>> {
    const rows = await this.db
      .withSchema(SCHEMA)
      .selectFrom('consumer_checkpoints')
      .select(['source', 'position'])
      .where(
        'consumer',
        'in',
        this.projections.map((p) => p.consumer),
      )
      .execute();
    const out: Record<string, number> = Object.fromEntries(this.projections.map((p) => [p.source, 0]));
    for (const r of rows) out[r.source as string] = Number(r.position);
    return out;
  }

  /** Waits, bounded, until the source's projection has applied `position`; false on timeout. */
  async waitFor(source: string, position: number, timeoutMs: number): Promise<boolean> {
    if (!this.projections.some((p) => p.source === source)) return true;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if ((await this.position(source)) >= position) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      // another replica may be the one applying it: look again soon even if nothing wakes us here
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(left, this.soleConsumer ? 250 : 10));
        this.waiters.add(done);
      });
    }
  }

  async status(): Promise<ProjectionStatus[]> {
    const rows = await this.db.withSchema(SCHEMA).selectFrom('projection_state').selectAll().execute();
    const out: ProjectionStatus[] = [];
    for (const p of this.projections) {
      const r = rows.find((x) => x.name === p.name);
      out.push({
        name: p.name,
        source: p.source,
        version: r ? Number(r.version) : p.version,
        position: await this.position(p.source),
        rebuilding: this.rebuilding.has(p.name),
        rebuild_position: this.rebuilding.get(p.name)?.position ?? null,
        rebuilt_at: r?.rebuilt_at ? new Date(r.rebuilt_at as string).toISOString() : null,
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
