import { Catalog } from '@bindery/contracts';
import { assertIdent, execScript, type Migration } from '@bindery/platform';

export const SCHEMA = 'catalog';

export const migrations: Migration[] = [
  {
    name: 'catalog-001',
    async up(trx, s) {
      // fuzzy search; a trusted extension since PostgreSQL 13 (the database owner may create it)
      await execScript(trx, 'create extension if not exists pg_trgm');
      await execScript(
        trx,
        `
        create table ${s}.libraries (
          id uuid primary key,
          name text not null,
          folders jsonb not null default '[]',
          watch boolean not null default true,
          created_by_admin uuid,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now(),
          last_scan_at timestamptz,
          version integer not null default 0
        );
        create unique index libraries_name_key on ${s}.libraries (lower(name));
        create table ${s}.media_items (
          id uuid primary key,
          library_id uuid not null references ${s}.libraries(id) on delete cascade,
          state text not null default 'active' check (state in ('active','missing')),
          source text not null check (source in ('scan','api')),
          file_path text,
          group_dir text,
          group_title text,
          title text not null,
          sort_title text not null,
          contributors jsonb not null default '[]',
          authors jsonb not null default '[]',
          series text,
          series_index double precision,
          language text,
          publisher text,
          description text,
          isbn text,
          identifiers jsonb not null default '{}',
          tags jsonb not null default '[]',
          year integer,
          page_count integer,
          reading_direction text,
          cover_key text,
          added_by_admin uuid,
          version integer not null default 0,
          missing_since timestamptz,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now()
        );
        create index media_items_library_idx on ${s}.media_items (library_id, state, sort_title);
        create index media_items_group_idx on ${s}.media_items (library_id, group_dir, group_title);
        create index media_items_title_trgm on ${s}.media_items using gin (lower(title) gin_trgm_ops);
        create table ${s}.media_formats (
          id bigserial primary key,
          item_id uuid not null references ${s}.media_items(id) on delete cascade,
          library_id uuid not null,
          rel_path text not null,
          format text not null,
          size bigint not null,
          mtime_ms bigint not null,
          sha256 text,
          partial_md5 text,
          present boolean not null default true,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now(),
          constraint media_formats_path_key unique (library_id, rel_path)
        );
        create index media_formats_item_idx on ${s}.media_formats (item_id);
        create index media_formats_sha_idx on ${s}.media_formats (sha256);
        create index media_formats_md5_idx on ${s}.media_formats (partial_md5);
        create table ${s}.format_hashes (
          item_id uuid not null references ${s}.media_items(id) on delete cascade,
          sha256 text not null,
          partial_md5 text,
          format text not null,
          first_seen timestamptz not null default now(),
          last_seen timestamptz not null default now(),
          primary key (item_id, sha256)
        );
        create index format_hashes_sha_idx on ${s}.format_hashes (sha256);
        create table ${s}.excluded_files (
          library_id uuid not null references ${s}.libraries(id) on delete cascade,
          rel_path text not null,
          sha256 text,
          size bigint not null,
          mtime_ms bigint not null,
          excluded_at timestamptz not null default now(),
          primary key (library_id, rel_path)
        );
        create table ${s}.file_issues (
          library_id uuid not null references ${s}.libraries(id) on delete cascade,
          rel_path text not null,
          format text,
          size bigint not null,
          mtime_ms bigint not null,
          error text not null,
          seen_at timestamptz not null default now(),
          primary key (library_id, rel_path)
        );
        create table ${s}.hash_conflicts (
          id uuid primary key,
          sha256 text not null,
          status text not null check (status in ('pending','resolved','dismissed')),
          item_ids jsonb not null,
          kept_item_id uuid,
          resolved_by uuid,
          created_at timestamptz not null default now(),
          resolved_at timestamptz
        );
        create unique index hash_conflicts_pending_key on ${s}.hash_conflicts (sha256) where status = 'pending';
        create index hash_conflicts_sha_idx on ${s}.hash_conflicts (sha256, status);
        create table ${s}.scans (
          id uuid primary key,
          library_id uuid not null references ${s}.libraries(id) on delete cascade,
          reason text not null,
          status text not null check (status in ('queued','running','completed','failed')),
          full_rehash boolean not null default false,
          requested_by uuid,
          requested_at timestamptz not null default now(),
          started_at timestamptz,
          finished_at timestamptz,
          counts jsonb not null default '{}',
          error text
        );
        create index scans_status_idx on ${s}.scans (status, requested_at);
        create index scans_library_idx on ${s}.scans (library_id, requested_at);
        create table ${s}.leases (name text primary key, owner text not null, expires_at timestamptz not null);
        create table ${s}.settings (key text primary key, value jsonb not null);
      `,
      );
    },
  },
  {
    name: 'catalog-002',
    async up(trx, s) {
      // covers are made after the scan (or on first request); this marks the ones on disk
      await execScript(trx, `alter table ${s}.media_items add column cover_ready boolean not null default false`);
      await execScript(trx, `create index media_items_cover_todo_idx on ${s}.media_items (updated_at) where cover_key is not null and not cover_ready`);
    },
  },
  {
    name: 'catalog-003-locator-indexes',
    async up(trx, s) {
      // the EPUB locator index, content-addressed: one row per file content, whatever items share it
      await execScript(
        trx,
        `create table ${s}.locator_indexes (sha256 text primary key, data bytea not null, bytes integer not null, created_at timestamptz not null default now())`,
      );
    },
  },
  {
    name: 'catalog-004-page-lists',
    async up(trx, s) {
      // the page images of CBZ, CBR and image-only EPUB files in reading order (null: none);
      // pages_read false marks files catalogued before, which the next scan reads again for them
      await execScript(trx, `alter table ${s}.media_formats add column pages jsonb, add column pages_read boolean not null default false`);
    },
  },
  {
    name: 'catalog-005-locator-index-version',
    async up(trx, s) {
      // the index's format version: rows older than the code's are made again from the file when asked for
      await execScript(trx, `alter table ${s}.locator_indexes add column v smallint not null default 1`);
    },
  },
  {
    name: 'catalog-006-kepubs',
    async up(trx, s) {
      // KEPUBs made for Kobos, content-addressed by the source EPUB's SHA-256 (a changed file is a new
      // key), with the span map that turns a Kobo Location into a position (gzipped JSON)
      await execScript(
        trx,
        `create table ${s}.kepubs (sha256 text primary key, data bytea not null, spans bytea not null, bytes integer not null, v smallint not null, created_at timestamptz not null default now())`,
      );
    },
  },
  {
    name: 'catalog-007-library-stream-version',
    async up(trx, s) {
      // a library's version is now its stream's last version (it counted an admin's changes only)
      await execScript(trx, `update ${s}.libraries l set version = coalesce((select max(e.stream_version) from ${s}.events e where e.stream_id = 'library-' || l.id::text), 0)`);
    },
  },
  {
    name: 'catalog-008-locked-fields',
    async up(trx, s) {
      // the fields a person set (a rescan leaves them), and the file's own values of them as last read
      await execScript(trx, `alter table ${s}.media_items add column locked_fields jsonb not null default '[]'::jsonb, add column file_fields jsonb`);
    },
  },
  {
    name: 'catalog-009-calibre-data',
    async up(trx, s) {
      // a calibre book's id, rating, read mark and custom columns (issue 44; null: not a calibre book),
      // and each library's calibre migration report as its last scan read it
      await execScript(
        trx,
        `alter table ${s}.media_items add column calibre jsonb;
        create table ${s}.calibre_reports (
          library_id uuid primary key references ${s}.libraries(id) on delete cascade,
          report jsonb not null,
          recorded_at timestamptz not null
        );`,
      );
    },
  },
  // a column for each of the item's text details, as they are declared (publisher and isbn were
  // made by catalog-001: theirs add nothing); a detail taken out of the list keeps its migration here
  ...Catalog.TEXT_FIELD_NAMES.map(
    (name): Migration => ({
      name: `catalog-text-${name}`,
      async up(trx, s) {
        await execScript(trx, `alter table ${s}.media_items add column if not exists ${assertIdent(name)} text`);
      },
    }),
  ),
];
