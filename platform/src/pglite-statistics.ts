// PGlite runs no autovacuum, so nothing ever ANALYZEs an embedded database: tables filled after
// start keep the planner's guesses for empty ones, and a lookup that has an index reads every row
// instead (a scan's per-item hash checks grew with the library). This keeps the statistics fresh,
// and on PostgreSQL stands in for an autovacuum that is off or behind a large scan.
import { sql } from 'kysely';
import type { Logger } from './logger';
import type { Db, NoTables } from './db';

/** rows sampled per table: 300 × this (PostgreSQL's default 100 reads 30,000 rows of a big table) */
const SAMPLE_TARGET = 10;

/**
 * Every `everyMs`, sums the heads of the event logs (every change in Bindery is an event) and runs
 * ANALYZE when they moved by at least max(`minEvents`, a tenth of where they stood at the last
 * ANALYZE). ANALYZE samples a bounded number of rows per table, so it stays short as tables grow.
 * Returns a function that stops it (and waits for a running ANALYZE).
 */
export function keepStatistics(db: Db<NoTables>, log: Logger, opts: { everyMs?: number; minEvents?: number } = {}): () => Promise<void> {
  const everyMs = opts.everyMs ?? 5000;
  const minEvents = opts.minEvents ?? 500;
  let at: number | null = null;
  let stopped = false;
  const heads = async (): Promise<number> => {
    const { rows: logs } = await sql<{ s: string }>`select table_schema as s from information_schema.tables where table_name = 'events'`.execute(db);
    if (logs.length === 0) return 0;
    const parts = logs.map((l) => sql`select coalesce(max(global_position), 0) as p from ${sql.table(`${l.s}.events`)}`);
    const { rows } = await sql<{ n: string }>`select coalesce(sum(p), 0)::text as n from (${sql.join(parts, sql` union all `)}) h`.execute(db);
    return Number(rows[0]?.n ?? 0);
  };
  const tick = async () => {
    const now = await heads();
    if (at === null || now - at >= Math.max(minEvents, Math.floor(at / 10))) {
      const t0 = performance.now();
      // a table at a time with a turn of the event loop between (PGlite works on the thread every
      // request needs), each from a small sample: enough for the planner's choices here
      const { rows: tables } = await sql<{ s: string; t: string }>`select schemaname as s, relname as t from pg_stat_user_tables order by 1, 2`.execute(db);
      await sql`set default_statistics_target = ${sql.lit(SAMPLE_TARGET)}`.execute(db);
      try {
        for (const { s, t } of tables) {
          if (stopped) return;
          await sql`analyze ${sql.table(`${s}.${t}`)}`.execute(db);
          await new Promise((r) => setTimeout(r, 1));
        }
      } finally {
        await sql`reset default_statistics_target`.execute(db);
      }
      log.debug({ events: now, tables: tables.length, ms: Math.round(performance.now() - t0) }, 'statistics refreshed');
      at = now;
    }
  };
  return every(everyMs, tick, log, () => {
    stopped = true;
  });
}

/** PostgreSQL's autovacuum analyzes a table once 50 + 10 % of its rows changed; this steps in at 1,000 + 20 % */
const PG_MIN_ROWS = 1000;
const PG_SHARE = 0.2;

/**
 * On PostgreSQL (distributed mode): every `everyMs`, ANALYZE each table of the database whose rows
 * changed since its last ANALYZE by at least 1,000 + a fifth of its rows (PostgreSQL's own counters):
 * twice autovacuum's threshold, so where autovacuum runs it is nearly always first, and this only
 * acts where it is off or behind a large scan. SKIP_LOCKED: a table another process is analyzing is
 * left to it; a table this role does not own is left alone. Returns a function that stops it (and
 * waits for a running ANALYZE).
 */
export function keepPostgresStatistics(db: Db<NoTables>, log: Logger, opts: { everyMs?: number; minRows?: number } = {}): () => Promise<void> {
  const everyMs = opts.everyMs ?? 5000;
  const minRows = opts.minRows ?? PG_MIN_ROWS;
  let stopped = false;
  const tick = async () => {
    // only tables this role may analyze (it owns them, or is a superuser): another would be skipped
    // with a warning in PostgreSQL's log every time
    const { rows: tables } = await sql<{ s: string; t: string }>`select st.schemaname as s, st.relname as t
      from pg_stat_user_tables st join pg_class c on c.oid = st.relid
      where pg_has_role(c.relowner, 'USAGE') and st.n_mod_since_analyze >= ${minRows}::float8 + ${PG_SHARE}::float8 * greatest(st.n_live_tup, 0)
      order by 1, 2`.execute(db);
    for (const { s, t } of tables) {
      if (stopped) return;
      const t0 = performance.now();
      await sql`analyze (skip_locked) ${sql.table(`${s}.${t}`)}`.execute(db);
      log.debug({ table: `${s}.${t}`, ms: Math.round(performance.now() - t0) }, 'statistics refreshed');
    }
  };
  return every(everyMs, tick, log, () => {
    stopped = true;
  });
}

/** Runs `tick` every `ms`, one at a time. The function returned calls `stop` (a running tick ends early), stops the timer and waits for that tick. */
function every(ms: number, tick: () => Promise<void>, log: Logger, stop: () => void): () => Promise<void> {
  let running: Promise<void> | null = null;
  let stopped = false;
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = tick()
      .catch((e: Error) => log.warn({ err: e.message }, 'statistics not refreshed'))
      .finally(() => {
        running = null;
      });
  }, ms);
  timer.unref();
  return async () => {
    stopped = true;
    stop();
    clearInterval(timer);
    await running;
  };
}
