// The reading projection's tables: what the dashboard joins with the catalog projection — each
// user's positions, ratings, collections with their members, dashboard preferences and reader settings.
import { execScript } from '@bindery/platform';
import { SCHEMA } from './migrations';
import type { Suffix } from './database';
import type { Projection } from './tables';
import { createStatisticsTables, statisticsTables } from './statistics-tables';

export const readingTables = <S extends Suffix = ''>(suffix = '' as S) =>
  ({
    progress: `rv_progress${suffix}`,
    ratings: `rv_ratings${suffix}`,
    collections: `rv_collections${suffix}`,
    members: `rv_members${suffix}`,
    prefs: `rv_prefs${suffix}`,
    conflicts: `rv_conflicts${suffix}`,
    readerSettings: `rv_reader_settings${suffix}`,
  }) as const;

export const READING: Projection = {
  name: 'reading',
  source: 'reading',
  consumer: 'gateway-reading-view',
  // 2: rv_progress.spot, the canonical place of a position (a Kobo's reading state needs it)
  // 3: rv_conflicts, each user's open progress conflicts (the book page offers to settle them)
  // 4: rv_reader_settings, each user's web reader settings (for all books: item_id '', or one book)
  // 5: rv_reads, every saved position, for the reading statistics (statistics-tables.ts, decision 120)
  version: 5,
  tables: [...Object.values(readingTables()), ...Object.values(statisticsTables())],
  async create(trx, x) {
    const t = readingTables(x);
    await execScript(
      trx,
      `
      create table ${SCHEMA}.${t.progress} (
        user_id uuid not null,
        item_id uuid not null,
        percentage double precision not null,
        updated_at timestamptz not null,
        spot jsonb,
        primary key (user_id, item_id)
      );
      create index on ${SCHEMA}.${t.progress} (user_id, updated_at);
      create table ${SCHEMA}.${t.ratings} (
        user_id uuid not null,
        item_id uuid not null,
        rating double precision not null,
        primary key (user_id, item_id)
      );
      create table ${SCHEMA}.${t.collections} (
        id uuid primary key,
        user_id uuid not null,
        name text not null,
        query_type text,
        is_system boolean not null,
        priority integer not null,
        color text,
        icon text,
        show_on_dashboard boolean not null,
        rules jsonb,
        doc jsonb not null
      );
      create index on ${SCHEMA}.${t.collections} (user_id);
      create table ${SCHEMA}.${t.members} (
        collection_id uuid not null,
        item_id uuid not null,
        added_at timestamptz not null,
        primary key (collection_id, item_id)
      );
      create table ${SCHEMA}.${t.prefs} (
        user_id uuid primary key,
        hidden_collections jsonb not null,
        collection_order jsonb not null
      );
      create table ${SCHEMA}.${t.conflicts} (
        id uuid primary key,
        user_id uuid not null,
        item_id uuid not null,
        doc jsonb not null
      );
      create index on ${SCHEMA}.${t.conflicts} (user_id, item_id);
      create table ${SCHEMA}.${t.readerSettings} (
        user_id uuid not null,
        item_id text not null,
        settings jsonb not null,
        updated_at timestamptz not null,
        primary key (user_id, item_id)
      );
      ${createStatisticsTables(x)}
    `,
    );
  },
};
