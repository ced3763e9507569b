import { execScript, type Migration } from '@bindery/platform';

export const SCHEMA = 'reading';

export const migrations: Migration[] = [
  {
    name: 'reading-001',
    async up(trx, s) {
      await execScript(
        trx,
        `
        create table ${s}.users (id uuid primary key, created_at timestamptz not null default now());
        -- the catalog facts reading needs: rules of system and smart collections, hashes to find a book again
        create table ${s}.items (
          id uuid primary key,
          library_id uuid not null,
          title text not null,
          sort_title text not null,
          authors jsonb not null default '[]',
          tags jsonb not null default '[]',
          series text,
          series_index double precision,
          language text,
          publisher text,
          year integer,
          page_count integer,
          formats jsonb not null default '[]',
          sha256 jsonb not null default '[]',
          created_at timestamptz not null,
          removed_at timestamptz
        );
        create index on ${s}.items (library_id);
        create index on ${s}.items (created_at);
        create table ${s}.progress (
          id uuid primary key,
          user_id uuid not null,
          item_id uuid not null,
          percentage double precision not null,
          position jsonb not null,
          client text not null,
          device text not null,
          version integer not null,
          sha256 jsonb not null default '[]',
          created_at timestamptz not null,
          updated_at timestamptz not null,
          unique (user_id, item_id)
        );
        create index on ${s}.progress (item_id);
        create index on ${s}.progress (user_id, updated_at);
        create table ${s}.progress_history (
          seq bigserial primary key,
          user_id uuid not null,
          item_id uuid not null,
          percentage double precision not null,
          position jsonb not null,
          client text not null,
          device text not null,
          reason text not null,
          recorded_at timestamptz not null
        );
        create index on ${s}.progress_history (user_id, item_id, seq);
        create table ${s}.progress_devices (
          user_id uuid not null,
          item_id uuid not null,
          device text not null,
          primary key (user_id, item_id, device)
        );
        create table ${s}.conflicts (
          id uuid primary key,
          user_id uuid not null,
          item_id uuid not null,
          status text not null,
          reason text not null,
          current jsonb not null,
          incoming jsonb not null,
          resolution text,
          created_at timestamptz not null,
          closed_at timestamptz
        );
        create index on ${s}.conflicts (user_id, status, created_at);
        create table ${s}.annotations (
          id uuid primary key,
          user_id uuid not null,
          item_id uuid not null,
          kind text not null,
          position jsonb not null,
          text text not null default '',
          note text not null default '',
          color text,
          dedup_key text,
          created_at timestamptz not null,
          updated_at timestamptz not null,
          deleted_at timestamptz
        );
        create index on ${s}.annotations (user_id, item_id, kind);
        create index on ${s}.annotations (item_id);
        create table ${s}.ratings (
          user_id uuid not null,
          item_id uuid not null,
          rating double precision not null,
          review text not null default '',
          created_at timestamptz not null,
          updated_at timestamptz not null,
          primary key (user_id, item_id)
        );
        create index on ${s}.ratings (item_id);
        create table ${s}.collections (
          id uuid primary key,
          user_id uuid not null,
          name text not null,
          description text not null default '',
          query_type text,
          is_system boolean not null,
          priority integer not null,
          color text,
          icon text,
          show_on_dashboard boolean not null,
          rules jsonb,
          auto_assign jsonb,
          created_at timestamptz not null,
          updated_at timestamptz not null
        );
        create index on ${s}.collections (user_id);
        create unique index on ${s}.collections (user_id, lower(name));
        create table ${s}.collection_items (
          collection_id uuid not null references ${s}.collections(id) on delete cascade,
          item_id uuid not null,
          added_at timestamptz not null,
          primary key (collection_id, item_id)
        );
        create index on ${s}.collection_items (item_id);
        create table ${s}.saved_filters (
          id uuid primary key,
          user_id uuid not null,
          name text not null,
          resource_type text not null,
          filter jsonb not null,
          created_at timestamptz not null,
          updated_at timestamptz not null
        );
        create index on ${s}.saved_filters (user_id, resource_type);
        create table ${s}.dashboard_prefs (
          user_id uuid primary key,
          hidden_collections jsonb not null default '[]',
          collection_order jsonb not null default '[]'
        );
      `,
      );
    },
  },
  {
    name: 'reading-002-epub-sha256',
    async up(trx, s) {
      // the SHA-256 of the item's EPUB: the name of its locator index at the catalog
      await execScript(trx, `alter table ${s}.items add column epub_sha256 text`);
    },
  },
  {
    name: 'reading-kosync-001',
    async up(trx, s) {
      // KOReader's stock Progress sync names a book by a document id (docs/decisions.md, "KOReader
      // sync"): its last push per user and id, linked to a media item when one is known
      await execScript(
        trx,
        `
        create table ${s}.kosync_documents (
          user_id uuid not null,
          document text not null,
          item_id uuid,
          linked_by text,
          percentage double precision not null,
          progress text not null,
          device text not null,
          device_id text not null,
          -- the item position this push became (its version), to answer it verbatim while it is current
          progress_version integer,
          pushed_at timestamptz not null,
          created_at timestamptz not null,
          primary key (user_id, document)
        );
        create index on ${s}.kosync_documents (user_id, item_id);
      `,
      );
    },
  },
  {
    name: 'reading-003-annotation-anchors',
    async up(trx, s) {
      // an annotation's place in the canonical form of positions (docs/decisions.md, "Reading:
      // annotation positions"): the span's start and end as {spine, offset} of the EPUB whose locator
      // index they were read against. Rows without them (written before, or while the catalog did not
      // answer) are placed from their stored notations when they are read.
      await execScript(
        trx,
        `
        alter table ${s}.annotations
          add column start_spine integer,
          add column start_offset integer,
          add column end_spine integer,
          add column end_offset integer,
          add column anchor_sha256 text;
      `,
      );
    },
  },
  {
    name: 'reading-kosync-002-devices-and-access',
    async up(trx, s) {
      await execScript(
        trx,
        `
        -- a push signed in with a Bindery device's sync key: that device, and the name its positions carry
        alter table ${s}.kosync_documents add column bindery_device_id uuid, add column label text;
        create index on ${s}.kosync_documents (document) where item_id is null;
        -- which libraries each user may see (identity's events, folded by the consumer reading-access):
        -- a document is linked when the catalog announces its book only for a user who may see it
        create table ${s}.user_access (
          user_id uuid primary key,
          role text not null,
          all_libraries boolean not null,
          library_ids jsonb not null default '[]'
        );
        create table ${s}.identity_settings (key text primary key, value jsonb not null);
      `,
      );
    },
  },
  {
    // an added item looks for the reading data of its hashes among removed items and orphaned
    // positions (restoreByHash): without these, each added item read every item and position row
    name: 'reading-kosync-003-hash-lookups',
    async up(trx, s) {
      await execScript(
        trx,
        `
        create index on ${s}.items using gin (sha256 jsonb_path_ops) where removed_at is not null;
        create index on ${s}.progress using gin (sha256 jsonb_path_ops);
      `,
      );
    },
  },
  {
    // what each device was last given of a book's position (reading.progress-delivered.v1): its
    // next push follows that version (docs/decisions.md, "Devices follow the position they were given")
    name: 'reading-004-progress-receipts',
    async up(trx, s) {
      await execScript(
        trx,
        `
        create table ${s}.progress_receipts (
          user_id uuid not null,
          item_id uuid not null,
          device text not null,
          progress_id uuid not null,
          version bigint not null,
          percentage double precision not null,
          received_at timestamptz not null,
          primary key (user_id, item_id, device)
        );
      `,
      );
    },
  },
];
