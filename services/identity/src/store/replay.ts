// Identity's tables rebuilt from its log alone: every event through the projection the live appends
// use, into a schema made by identity's migrations (a fresh one beside the live tables, so a
// comparison or a rebuild never touches the credentials that are not in the log).
import type { Db, EventStore } from '@bindery/platform';
import type { IdentityDb } from './database';
import { identityEvents, project } from './projection';

export async function replayLog(db: Db<IdentityDb>, store: EventStore<IdentityDb>, schema: string, page = 500): Promise<number> {
  let after = 0;
  let applied = 0;
  for (;;) {
    const events = await store.readAll(after, page);
    if (events.length === 0) return applied;
    await db.transaction().execute(async (trx) => {
      for (const ev of events) {
        const e = identityEvents.decode(ev);
        if (e) await project(trx, e, schema);
      }
    });
    applied += events.length;
    after = events[events.length - 1]?.position ?? after;
  }
}
