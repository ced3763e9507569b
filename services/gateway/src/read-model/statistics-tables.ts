// The reading statistics' table (decision 120): every saved position, one row per
// `reading.progress-saved.v1` event, folded by the reading projection beside its other tables, so a
// rebuild of that projection gives it back from the log. The figures (statistics-view.ts) are
// computed from it when asked, in the person's time zone.
import { sql, type RawBuilder } from 'kysely';
import type { Reading, StoredEvent } from '@bindery/contracts';
import { unnestRows } from '@bindery/platform';
import { SCHEMA } from './migrations';
import type { Suffix } from './database';

export const statisticsTables = <S extends Suffix = ''>(suffix = '' as S) => ({ reads: `rv_reads${suffix}` }) as const;

/** The table's definition, created with the reading projection's tables. */
export const createStatisticsTables = (x: Suffix): string => {
  const t = statisticsTables(x);
  return `
      create table ${SCHEMA}.${t.reads} (
        position bigint primary key,
        user_id uuid not null,
        item_id uuid not null,
        device text not null,
        client text not null,
        at timestamptz not null,
        percentage double precision not null,
        spent_seconds integer,
        active_seconds integer
      );
      create index on ${SCHEMA}.${t.reads} (user_id, at);
      create index on ${SCHEMA}.${t.reads} (at);
  `;
};

type Saved = Extract<Reading.ReadingEvent, { type: 'reading.progress-saved.v1' }>['data'];

/** A saved position's row: the event's position (its key: folding it twice changes nothing) and what the figures need. */
export function readRow(ev: Pick<StoredEvent, 'position'>, d: Saved): unknown[] {
  const p = d.progress;
  return [ev.position, d.user_id, d.media_item_id, p.device, p.client, p.updated_at, p.percentage, d.spent_seconds ?? null, d.active_seconds ?? null];
}

/** The insert of saved positions' rows, each once, where `isNew` holds (the fold in one statement). */
export function insertReads(rows: unknown[][], isNew: RawBuilder<boolean> | null, suffix: Suffix = ''): RawBuilder<unknown> {
  const table = sql.raw(`${SCHEMA}.${statisticsTables(suffix).reads}`);
  const v = unnestRows(
    'v',
    {
      position: 'bigint',
      user_id: 'uuid',
      item_id: 'uuid',
      device: 'text',
      client: 'text',
      at: 'timestamptz',
      percentage: 'double precision',
      spent_seconds: 'int',
      active_seconds: 'int',
    },
    rows,
  );
  return sql`
    insert into ${table} (position, user_id, item_id, device, client, at, percentage, spent_seconds, active_seconds)
    select v.position, v.user_id, v.item_id, v.device, v.client, v.at, v.percentage, v.spent_seconds, v.active_seconds
    from ${v}
    where ${isNew ?? sql`true`}
    on conflict (position) do nothing`;
}
