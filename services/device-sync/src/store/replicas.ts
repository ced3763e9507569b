// Pending registrations live in a table every replica reads, yet must not outlive a restart of
// the service. Each running replica marks itself alive here; a replica that starts and finds no
// other one alive is a (re)start of the service as a whole and drops what was pending. A rolling
// restart (one replica at a time) keeps them; a crashed replica's mark goes stale after STALE_MS.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '@bindery/platform';
import { SCHEMA } from './migrations';

export const BEAT_MS = 5_000;
export const STALE_MS = 20_000;

export class ReplicaMark {
  readonly id = randomUUID();
  private timer: NodeJS.Timeout | null = null;

  constructor(private db: Db) {}

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
      let n = 0;
      if (!alive) n = Number((await s.deleteFrom('pending').executeTakeFirst()).numDeletedRows);
      await s.insertInto('replicas').values({ id: this.id, seen_at: sql`now()` }).execute();
      return n;
    });
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
      await s.deleteFrom('pending').where('expires_at', '<', sql<Date>`now() - interval '1 hour'`).execute();
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
