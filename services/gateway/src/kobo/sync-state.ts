// What a Kobo has, and what it should have now. The books a Kobo gets (EPUBs of the libraries its
// owner sees, or only the members of collections shelved on it, less the ones it removed itself and
// that have not changed since) and its tags (the owner's hand-picked collections, or the shelved ones)
// are compared with `kobo_sent` — what earlier answers sent and the device confirmed by presenting their
// sync token. Each answer records what it sends as pending under a new generation and names that
// generation in its token; the device's next request confirms it (a lost answer is sent again, since
// its token never comes back). Keys are ordered, so paging neither repeats nor loses a book: what a
// page sent is confirmed before the next page is worked out, and anything still different stays in
// the difference until it is sent.
import { sql } from 'kysely';
import type { Db } from '@bindery/platform';
import { SCHEMA } from '../projections/migrations';
import { visible, type Access } from '../read-model/access';
import { deviceTables } from '../read-model/device-tables';
import { readingTables } from '../read-model/reading-tables';
import { catalogTables } from '../read-model/tables';
import type { Kobo } from './auth';
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

/** The books this Kobo should have: id, version of the book, version of its reading state. */
function books(kobo: Kobo, access: Access) {
  const shelved =
    kobo.books === 'shelves'
      ? sql`and exists (select 1 from ${tbl(D.shelves)} sh join ${tbl(R.members)} m on m.collection_id = sh.collection_id where sh.device_id = ${kobo.device_id} and m.item_id = i.id)`
      : sql``;
  return sql`
    select i.id, i.updated_at::text as ever, p.updated_at::text as sver
    from ${tbl(C.items)} i
    left join ${tbl(R.progress)} p on p.user_id = ${kobo.user_id} and p.item_id = i.id
    left join ${tbl(D.koboRemoved)} r on r.device_id = ${kobo.device_id} and r.item_id = i.id
    where i.formats @> '["epub"]'::jsonb and ${visible(access, 'i.library_id')}
      and (r.item_id is null or r.removed_at < i.updated_at) ${shelved}`;
}

/** The tags this Kobo should have: hand-picked collections (all the owner's, or the shelved ones), versioned by name and members. */
function tags(kobo: Kobo) {
  const shelved = kobo.books === 'shelves' ? sql`and exists (select 1 from ${tbl(D.shelves)} sh where sh.device_id = ${kobo.device_id} and sh.collection_id = c.id)` : sql``;
  return sql`
    select c.id, md5(c.name || ':' || coalesce((
      select string_agg(m.item_id::text, ',' order by m.item_id) from ${tbl(R.members)} m join b on b.id = m.item_id where m.collection_id = c.id
    ), '')) as ever
    from ${tbl(R.collections)} c
    where c.user_id = ${kobo.user_id} and not c.is_system and c.rules is null ${shelved}`;
}

export class KoboSyncState {
  constructor(private db: Db<GatewayDb>) {}

  /**
   * Confirms what the answer of generation `gen` (and earlier ones) sent; what later answers sent never
   * arrived (the device would present their token) and is forgotten, to be sent again.
   */
  async confirm(device: string, gen: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${`bindery.kobo.${device}`}))`.execute(trx);
      await sql`
        delete from ${tbl('kobo_sent')} s using (select distinct key from ${tbl('kobo_pending')} where device_id = ${device} and gen <= ${gen}) p
        where s.device_id = ${device} and s.key = p.key`.execute(trx);
      await sql`
        insert into ${tbl('kobo_sent')} (device_id, key, ever, sver)
        select device_id, key, ever, sver from (
          select distinct on (key) device_id, key, ever, sver from ${tbl('kobo_pending')}
          where device_id = ${device} and gen <= ${gen} order by key, gen desc
        ) last where ever is not null`.execute(trx);
      await sql`delete from ${tbl('kobo_pending')} where device_id = ${device}`.execute(trx);
    });
  }

  /** Up to `limit` differences, in key order (books before tags). */
  async differences(kobo: Kobo, access: Access, limit: number): Promise<Difference[]> {
    const { rows } = await sql<Difference>`
      with b as (${books(kobo, access)}),
      cur as (
        select 'i:' || id::text as key, ever, sver from b
        union all
        select 't:' || id::text as key, ever, null as sver from (${tags(kobo)}) t
      ),
      has as (select key, ever, sver from ${tbl('kobo_sent')} where device_id = ${kobo.device_id}),
      -- a replica whose read models lag behind what the device already has never sends it back older
      -- versions: a book's or a state's version is its update time, and an older one counts as the same
      pair as (
        select coalesce(c.key, h.key) as key, c.key is not null as present,
          case when c.key like 'i:%' and c.ever is not null and h.ever is not null and c.ever::timestamptz < h.ever::timestamptz then h.ever else c.ever end as ever,
          case when c.sver is not null and h.sver is not null and c.sver::timestamptz < split_part(h.sver, '~', 1)::timestamptz then h.sver else c.sver end as sver,
          h.ever as hever, h.sver as hsver
        from cur c full join has h on h.key = c.key
      )
      select key, ever, sver, hever, hsver from pair
      where ever is distinct from hever or (present and sver is distinct from hsver)
      order by 1
      limit ${limit}`.execute(this.db);
    return rows;
  }

  /** Records what an answer sends under a new generation; returns that generation. */
  async record(device: string, sent: Difference[]): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${`bindery.kobo.${device}`}))`.execute(trx);
      const { rows } = await sql<{ gen: number }>`
        insert into ${tbl('kobo_gen')} (device_id, gen) values (${device}, 1)
        on conflict (device_id) do update set gen = ${tbl('kobo_gen')}.gen + 1
        returning gen`.execute(trx);
      const gen = Number(rows[0]!.gen);
      if (sent.length) {
        await trx
          .withSchema(SCHEMA)
          .insertInto('kobo_pending')
          .values(sent.map((d) => ({ device_id: device, gen, key: d.key, ever: d.ever, sver: d.sver })))
          .execute();
      }
      return gen;
    });
  }

  /** The device wrote this state itself: it has it, and is not sent it back. */
  async stateKnown(device: string, item: string, sver: string): Promise<void> {
    await sql`update ${tbl('kobo_sent')} set sver = ${sver} where device_id = ${device} and key = ${`i:${item}`}`.execute(this.db);
  }

  /** The device removed a book itself: it no longer has it. */
  async forget(device: string, key: string): Promise<void> {
    await sql`delete from ${tbl('kobo_sent')} where device_id = ${device} and key = ${key}`.execute(this.db);
  }
}
