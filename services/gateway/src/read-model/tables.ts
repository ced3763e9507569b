// The read models' tables. Each projection's tables can exist twice: the live set, and a `_next`
// set that a rebuild fills from the log while the live one keeps serving; the switch renames them.
// Indexes are left unnamed so PostgreSQL picks names that never collide across the two sets.
import { sql } from 'kysely';
import { execScript, type DbOrTrx, type Trx } from '@bindery/platform';
import { SCHEMA } from './migrations';
import type { GatewayDb, Suffix } from './database';

export interface Projection {
  name: 'catalog' | 'identity' | 'reading' | 'devices';
  /** bus source whose whole log it folds */
  source: string;
  /** durable consumer name; also the key of its checkpoint */
  consumer: string;
  /** bump when the tables or the fold change: a start with another version rebuilds */
  version: number;
  tables: readonly string[];
  create(trx: Trx<GatewayDb>, suffix: Suffix): Promise<void>;
}

export const catalogTables = <S extends Suffix = ''>(suffix = '' as S) =>
  ({
    libraries: `cv_libraries${suffix}`,
    items: `cv_items${suffix}`,
    files: `cv_files${suffix}`,
    terms: `cv_terms${suffix}`,
    documents: `cv_documents${suffix}`,
  }) as const;
export const identityTables = <S extends Suffix = ''>(suffix = '' as S) =>
  ({ users: `iv_users${suffix}`, settings: `iv_settings${suffix}`, sessions: `iv_sessions${suffix}` }) as const;

export const CATALOG: Projection = {
  name: 'catalog',
  source: 'catalog',
  consumer: 'gateway-catalog-view',
  // 5: cv_files.pages, the page lists the catalog records for CBZ, CBR and image-only EPUB
  // 6: cv_items.search_text and its trigram index, so free-text search reads candidates by index
  version: 6,
  tables: Object.values(catalogTables()),
  async create(trx, x) {
    const t = catalogTables(x);
    await execScript(
      trx,
      `
      create table ${SCHEMA}.${t.libraries} (
        id uuid primary key,
        name text not null,
        doc jsonb not null
      );
      create table ${SCHEMA}.${t.items} (
        id uuid primary key,
        library_id uuid not null,
        sort_title text not null,
        title text not null,
        series text,
        series_index double precision,
        year integer,
        first_author text,
        authors jsonb not null,
        tags jsonb not null,
        language text,
        publisher text,
        isbn text,
        formats jsonb not null,
        has_cover boolean not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        doc text not null,
        -- what free-text search looks in, lower-cased: every title, author, series and tag match is a
        -- match here too, so a trigram index finds the candidates and the exact rules pick from them
        search_text text generated always as (lower(title || ' ' || coalesce(series, '') || ' ' || authors::text || ' ' || tags::text)) stored
      );
      create index on ${SCHEMA}.${t.items} using gin (search_text gin_trgm_ops);
      create index on ${SCHEMA}.${t.items} (isbn);
      create index on ${SCHEMA}.${t.items} (sort_title, id);
      create index on ${SCHEMA}.${t.items} (library_id, sort_title, id);
      create index on ${SCHEMA}.${t.items} (series, series_index, sort_title);
      create index on ${SCHEMA}.${t.items} (created_at);
      create index on ${SCHEMA}.${t.items} (updated_at);
      create table ${SCHEMA}.${t.files} (
        library_id uuid not null,
        rel_path text not null,
        item_id uuid not null,
        -- the file's page images in reading order, as the catalog read them (null: not streamed)
        pages jsonb,
        primary key (library_id, rel_path)
      );
      create index on ${SCHEMA}.${t.files} (item_id);
      -- every distinct author, tag, series, language and publisher ever seen: a fuzzy filter matches
      -- these few values first, then items by plain equality (stale values match no item)
      -- the ids devices know an item's files by (KOReader's partial MD5 and MD5 of the file name,
      -- SHA-256s), of every file it has had: kept when a file is rewritten, since a device keeps
      -- the id it computed first
      create table ${SCHEMA}.${t.documents} (
        document text not null,
        item_id uuid not null,
        kind text not null,
        current boolean not null,
        primary key (document, item_id)
      );
      create index on ${SCHEMA}.${t.documents} (item_id);
      create table ${SCHEMA}.${t.terms} (
        field text not null,
        value text not null,
        primary key (field, value)
      );
    `,
    );
  },
};

export const IDENTITY: Projection = {
  name: 'identity',
  source: 'identity',
  consumer: 'gateway-identity-view',
  // 2: iv_sessions, each user's signed-in sessions
  // 3: iv_users.timezone and .share_statistics, for the reading statistics (decision 120)
  version: 3,
  tables: Object.values(identityTables()),
  async create(trx, x) {
    const t = identityTables(x);
    await execScript(
      trx,
      `
      create table ${SCHEMA}.${t.users} (
        id uuid primary key,
        role text not null,
        profile jsonb not null,
        all_libraries boolean not null,
        library_ids jsonb not null default '[]',
        timezone text not null default 'UTC',
        share_statistics boolean not null default false
      );
      create table ${SCHEMA}.${t.settings} (key text primary key, value jsonb not null);
      -- a session: a sign-in's refresh family; last_used_at is when it last got a token (sign-in or
      -- refresh), every time from the event's own record, so a rebuild makes the same rows
      create table ${SCHEMA}.${t.sessions} (
        id uuid primary key,
        user_id uuid not null,
        client text not null,
        started_at timestamptz not null,
        last_used_at timestamptz not null,
        expires_at timestamptz not null,
        jti text not null,
        ended boolean not null default false
      );
      create index on ${SCHEMA}.${t.sessions} (user_id);
    `,
    );
  },
};

export const PROJECTIONS = [CATALOG, IDENTITY] as const;

/** Which version of each projection's tables is live (created on first start). */
export async function ensureStateTable(q: DbOrTrx<GatewayDb>): Promise<void> {
  await sql`create table if not exists ${sql.table(`${SCHEMA}.projection_state`)} (name text primary key, version integer not null, rebuilt_at timestamptz not null default now())`.execute(
    q,
  );
}

export async function dropTables(trx: Trx<GatewayDb>, p: Projection, suffix: Suffix): Promise<void> {
  for (const name of p.tables) await sql`drop table if exists ${sql.table(`${SCHEMA}.${name}${suffix}`)}`.execute(trx);
}
