// Pending registrations live in a table every replica reads, yet must not outlive a restart of
// the service. Each running replica marks itself alive here; a replica that starts and finds no
// other one alive is a (re)start of the service as a whole and drops what was pending. A rolling
// restart (one replica at a time) keeps them; a crashed replica's mark goes stale after STALE_MS.
// What is dropped is told in the log (`registrations-dropped`), and the projection deletes it, as
// every other change of the table. The marks themselves are not in the log: they say which
// processes run now.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { EventStore } from '@bindery/platform';
import type { Db, DeviceSyncDb, Trx } from './db';
import { SCHEMA } from './migrations';
import { appendProjected } from './projection';

const STREAM = 'registrations';

export const BEAT_MS = 5_000;
export const STALE_MS = 20_000;

export class ReplicaMark {
  readonly id = randomUUID();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private db: Db,
    private store: EventStore<DeviceSyncDb>,
  ) {}

  /** Drops these registrations (locked by the caller): the event, and the projection deletes them. */
  private async drop(trx: Trx, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await appendProjected(this.store, trx, STREAM, 'any', [{ type: 'device-sync.registrations-dropped.v1', data: { registration_ids: ids } }]);
  }

  /** Marks this replica alive; clears pending registrations when it is the only one. Returns how many were dropped. */
  async start(): Promise<number> {
    const dropped = await this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext('bindery.device-sync.replicas'))`.execute(trx);
      const s = trx.withSchema(SCHEMA);
      await s
        .deleteFrom('replicas')
        .where('seen_at', '<', sql<Date>`now() - make_interval(secs => ${STALE_MS / 1000})`)
        .execute();
      const alive = await s.selectFrom('replicas').select('id').executeTakeFirst();
      const gone = alive ? [] : (await s.selectFrom('pending').select('id').forUpdate().execute()).map((r) => r.id);
      await this.drop(trx, gone);
      await s.insertInto('replicas').values({ id: this.id, seen_at: sql`now()` }).execute();
      return gone.length;
    });
    if (dropped) this.store.notify();
    this.timer = setInterval(() => void this.beat(), BEAT_MS);
    this.timer.unref();
    return dropped;
  }

  private async beat(): Promise<void> {
    try {
      const s = this.db.withSchema(SCHEMA);
      await s
        .insertInto('replicas')
        .values({ id: this.id, seen_at: sql`now()` })
        .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: sql`now()` }))
        .execute();
      // registrations finished or expired an hour ago are of no use to anyone
      const gone = await this.db.transaction().execute(async (trx) => {
        // locked, so two replicas' beats do not both drop the same registrations
        const old = await trx.withSchema(SCHEMA).selectFrom('pending').select('id').where('expires_at', '<', sql<Date>`now() - interval '1 hour'`).forUpdate().execute();
        const ids = old.map((r) => r.id);
        await this.drop(trx, ids);
        return ids.length;
      });
      if (gone) this.store.notify();
    } catch {
      // the next beat tries again; a database outage shows in readiness, not here
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.db.withSchema(SCHEMA).deleteFrom('replicas').where('id', '=', this.id).execute();
  }
}
