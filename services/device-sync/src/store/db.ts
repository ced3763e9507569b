// The device-sync service's tables, as its migrations make them (store/migrations.ts): the one place
// their columns are named for the compiler.
import type { ColumnType } from 'kysely';
import type { DeviceSync } from '@bindery/contracts';
import type { Db as AnyDb, Trx as AnyTrx } from '@bindery/platform';

/** A timestamptz column: read as a Date, written as a Date, an ISO string or SQL (`now()`). */
type Time = ColumnType<Date, Date | string, Date | string>;

/** What identity says about each account: the role and the device limit. */
export interface UsersTable {
  id: string;
  role: string;
  max_devices: number;
}

export interface DevicesTable {
  id: string;
  user_id: string;
  name: string;
  client: string;
  model: string;
  credential_hash: string | null;
  created_at: Time;
  updated_at: Time;
  sync_key_verifier: ColumnType<string | null, string | null | undefined, string | null>;
  sync_key_issued_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  kobo_token_hash: ColumnType<string | null, string | null | undefined, string | null>;
  kobo_books: ColumnType<'all' | 'shelves', 'all' | 'shelves' | undefined, 'all' | 'shelves'>;
}

export type RegistrationStatus = 'pending' | 'approved' | 'claimed' | 'rejected';

export interface PendingTable {
  id: string;
  device_code_hash: string;
  name: string;
  client: string;
  model: string;
  status: RegistrationStatus;
  user_id: ColumnType<string | null, string | null | undefined, string | null>;
  device_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Time;
  expires_at: Time;
}

export interface ReplicasTable {
  id: string;
  seen_at: Time;
}

export interface ShelvesTable {
  device_id: string;
  collection_id: string;
  user_id: string;
  added_at: Time;
  /** the collection's name when the shelf was made (null: made before it was kept) */
  collection_name: string | null;
}

/** The reading service's hand-picked collection members, followed from its events. */
export interface CollectionItemsTable {
  collection_id: string;
  item_id: string;
}

export interface QueueTable {
  id: string;
  device_id: string;
  user_id: string;
  media_item_id: string | null;
  action: DeviceSync.QueueEntry['action'];
  reason: string;
  status: DeviceSync.QueueEntry['status'];
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  created_at: Time;
  updated_at: Time;
}

/** What Kobo sync answers sent and the device confirmed by presenting their token (decision 116). */
export interface KoboSentTable {
  device_id: string;
  /** `i:<item id>` or `t:<collection id>` */
  key: string;
  ever: string;
  sver: string | null;
}

/** What answers sent that the device has not confirmed yet, by generation. */
export interface KoboPendingTable {
  device_id: string;
  gen: number;
  key: string;
  ever: string | null;
  sver: string | null;
}

/** Each Kobo's last generation, and the log position of its last sync event (what a replica waits for). */
export interface KoboGenTable {
  device_id: string;
  gen: number;
  position: number;
}

export interface DeviceSyncDb {
  users: UsersTable;
  devices: DevicesTable;
  pending: PendingTable;
  replicas: ReplicasTable;
  shelves: ShelvesTable;
  collection_items: CollectionItemsTable;
  queue: QueueTable;
  kobo_sent: KoboSentTable;
  kobo_pending: KoboPendingTable;
  kobo_gen: KoboGenTable;
}

export type Db = AnyDb<DeviceSyncDb>;
export type Trx = AnyTrx<DeviceSyncDb>;
