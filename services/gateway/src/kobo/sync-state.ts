// What a Kobo has, and what it should have now. The books a Kobo gets (EPUBs of the libraries its
// owner sees, or only the members of collections shelved on it, less the ones it removed itself and
// that have not changed since) and its tags (the owner's hand-picked collections, or the shelved ones)
// are compared with `dv_kobo_sent` — what earlier answers sent and the device confirmed by presenting their
// sync token. Each answer records what it sends as pending under a new generation and names that
// generation in its token; the device's next request confirms it (a lost answer is sent again, since
// its token never comes back). Keys are ordered, so paging neither repeats nor loses a book: what a
// page sent is confirmed before the next page is worked out, and anything still different stays in
// the difference until it is sent.
// That state is device-sync's (decision 116): each answer asks it to record what it sends
// (`kobo-sync-sent`), and the device's token confirms it (`kobo-sync-confirmed`, or
// `kobo-sync-reset` for a token that is none of ours); device-sync's projection and the gateway's
// devices read model fold the same events, and the difference is worked out here from the read model
// (sync-log.ts makes those requests).
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '@bindery/platform';
import { SCHEMA } from '../read-model/migrations';
import { visible, type Access } from '../read-model/access';
import { deviceTables } from '../read-model/device-tables';
import { readingTables } from '../read-model/reading-tables';
import { catalogTables } from '../read-model/tables';
import type { Kobo } from './auth';
import type { SyncCursor } from './sync-token';
import type { GatewayDb } from '../read-model/database';

export interface Difference {
  /** `i:<item id>` or `t:<collection id>` */
  key: string;
  /** the version the device should have (null: it should not have it) */
  ever: string | null;
  sver: string | null;
  /** the version it has (null: it has none) */
  hever: string | null;
  hsver: string | null;
}

const C = catalogTables();
const R = readingTables();
const D = deviceTables();
const tbl = (name: string) => sql.table(`${SCHEMA}.${name}`);

/** how many books one step of `differences` compares: a range of the book ids on both sides */
const WINDOW = 1000;

/** The condition for a book (`i`) of a library the owner sees (and, for a Kobo of shelves, on one of its shelves). */
function offeredBook(kobo: Kobo, access: Access) {
  const shelved =
    kobo.books === 'shelves'
      ? sql`and exists (select 1 from ${tbl(D.shelves)} sh join ${tbl(R.members)} m on m.collection_id = sh.collection_id where sh.device_id = ${kobo.device_id} and m.item_id = i.id)`
      : sql``;
  return sql`i.formats @> '["epub"]'::jsonb and ${visible(access, 'i.library_id')} ${shelved}`;
}

/** A book the device removed itself and that has not changed since (`i` its item). */
const removedBy = (kobo: Kobo) => sql`exists (select 1 from ${tbl(D.koboRemoved)} r where r.device_id = ${kobo.device_id} and r.item_id = i.id and r.removed_at >= i.updated_at)`;

/** The condition for a book (`i`) this Kobo should have. */
const sentBook = (kobo: Kobo, access: Access) => sql`${offeredBook(kobo, access)} and not ${removedBy(kobo)}`;

/** What the device was sent of one kind (`i` books, `t` tags) past `after`, by id (its index by device, kind and id). */
function sentOf(kobo: Kobo, kind: 'i' | 't', after: string | null) {
  return sql`select substr(key, 3)::uuid as id, ever, sver from ${tbl(D.koboSent)}
    where device_id = ${kobo.device_id} and left(key, 1) = ${kind} ${after ? sql`and substr(key, 3)::uuid > ${after}::uuid` : sql``}`;
}

/**
 * Pairs what the device should have (`cur`) with what it has (`has`), both by id. A book's version is
 * its update time: a newer one the device already has (a replica whose read models lag behind)
 * counts as the same, never as older. A tag's version is a digest, compared as it is.
 */
const paired = (kind: 'i' | 't') => {
  const ever = kind === 'i' ? sql`case when c.ever is not null and h.ever is not null and c.ever::timestamptz < h.ever::timestamptz then h.ever else c.ever end` : sql`c.ever`;
  return sql`
  pair as (
    select coalesce(c.id, h.id) as id, c.id is not null as present, ${ever} as ever,
      case when c.sver is not null and h.sver is not null and c.sver::timestamptz < split_part(h.sver, '~', 1)::timestamptz then h.sver else c.sver end as sver,
      h.ever as hever, h.sver as hsver
    from cur c full join has h on h.id = c.id
  )`;
};
const differs = sql`ever is distinct from hever or (present and sver is distinct from hsver)`;

export class KoboSyncState {
  /** `window`: books compared per step (WINDOW; tests make it small to cross many windows) */
  constructor(
    private db: Db<GatewayDb>,
    private window = WINDOW,
  ) {}

  /**
   * Up to `limit` differences past `after` (from the start without it), books by id, then tags by
   * id. Books are compared a window of WINDOW ids at a time, each window a range of both sides'
   * indexes, so a page costs about the same at 1,000 books as at 100,000. A paged sync that reaches
   * the end looks once more at what lies behind its cursor: a book the read model received during
   * the sync goes in this sync, not the next.
   */
  async differences(kobo: Kobo, access: Access, limit: number, after: SyncCursor | null = null): Promise<Difference[]> {
    const out = await this.between(kobo, access, limit, after, null);
    if (after && out.length < limit) out.push(...(await this.between(kobo, access, limit - out.length, null, after)));
    return out;
  }

  /** Up to `limit` differences with keys after `from` and up to `to` (null: from the start, to the end). */
  private async between(kobo: Kobo, access: Access, limit: number, from: SyncCursor | null, to: SyncCursor | null): Promise<Difference[]> {
    const out: Difference[] = [];
    const booksTo = to?.phase === 'i' ? to.id : null;
    if (from?.phase !== 't') {
      let after = from?.id ?? null;
      const upTo = (col: RawBuilder<unknown>) => (booksTo ? sql`and ${col} <= ${booksTo}::uuid` : sql``);
      for (;;) {
        // The window is a range of ids: the next WINDOW books offered, then the positions and the
        // removals of that range read once each (a join to those tables for each book made the
        // planner rescan a table it knew as empty once per book: an lseek each, out of PGlite's
        // WebAssembly, half of a page's time; record 116).
        const { rows } = await sql<Difference & { filled: boolean; last: string | null }>`
          with w as materialized (
            select i.id, i.updated_at from ${tbl(C.items)} i
            where ${offeredBook(kobo, access)} ${after ? sql`and i.id > ${after}::uuid` : sql``} ${upTo(sql`i.id`)}
            order by i.id limit ${this.window}
          ),
          bound as (select count(*) = ${this.window} as filled, (select id from w order by id desc limit 1) as last from w),
          p as materialized (
            select item_id, updated_at from ${tbl(R.progress)}
            where user_id = ${kobo.user_id} ${after ? sql`and item_id > ${after}::uuid` : sql``} and item_id <= (select last from bound)
          ),
          r as materialized (select item_id, removed_at from ${tbl(D.koboRemoved)} where device_id = ${kobo.device_id}),
          cur as (
            select w.id, w.updated_at::text as ever, p.updated_at::text as sver from w left join p on p.item_id = w.id
            where not exists (select 1 from r where r.item_id = w.id and r.removed_at >= w.updated_at)
          ),
          has as (${sentOf(kobo, 'i', after)} ${upTo(sql`substr(key, 3)::uuid`)}
            and (not (select filled from bound) or substr(key, 3)::uuid <= (select last from bound))),
          ${paired('i')}
          select bound.filled, bound.last::text as last, d.key, d.ever, d.sver, d.hever, d.hsver from bound left join lateral (
            select 'i:' || id::text as key, ever, sver, hever, hsver from pair where ${differs} order by id limit ${limit - out.length}
          ) d on true`.execute(this.db);
        for (const r of rows) if (r.key) out.push({ key: r.key, ever: r.ever, sver: r.sver, hever: r.hever, hsver: r.hsver });
        if (out.length >= limit || !rows[0]?.filled) break;
        after = rows[0].last;
      }
    }
    // tags come after every book: none when the range ends among the books
    if (out.length >= limit || to?.phase === 'i') return out;
    const after = from?.phase === 't' ? from.id : null;
    const tagsTo = to?.phase === 't' ? to.id : null;
    const shelved = kobo.books === 'shelves' ? sql`and exists (select 1 from ${tbl(D.shelves)} sh where sh.device_id = ${kobo.device_id} and sh.collection_id = c.id)` : sql``;
    // a tag's version: its name and the members this Kobo gets
    const { rows } = await sql<Difference>`
      with cur as (
        select c.id, md5(c.name || ':' || coalesce((
          select string_agg(m.item_id::text, ',' order by m.item_id) from ${tbl(R.members)} m join ${tbl(C.items)} i on i.id = m.item_id
          where m.collection_id = c.id and ${sentBook(kobo, access)}
        ), '')) as ever, null::text as sver
        from ${tbl(R.collections)} c
        where c.user_id = ${kobo.user_id} and not c.is_system and c.rules is null ${shelved}
          ${after ? sql`and c.id > ${after}::uuid` : sql``} ${tagsTo ? sql`and c.id <= ${tagsTo}::uuid` : sql``}
      ),
      has as (${sentOf(kobo, 't', after)} ${tagsTo ? sql`and substr(key, 3)::uuid <= ${tagsTo}::uuid` : sql``}),
      ${paired('t')}
      select 't:' || id::text as key, ever, sver, hever, hsver from pair where ${differs} order by id limit ${limit - out.length}`.execute(this.db);
    return [...out, ...rows];
  }
}
