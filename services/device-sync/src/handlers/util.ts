// Small pieces every device-sync handler uses: id checks, record shapes, failures.
import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import { DeviceSync, err, fail, type Failure, type Identity, type Result } from '@bindery/contracts';
import type { DevicesTable, PendingTable, QueueTable } from '../store/db';

export const M = DeviceSync.DeviceSyncMessages;
type Op = DeviceSync.DeviceSyncOp;
/** An operation's request, as its schema (contracts' DeviceSyncOperations) states it and the service checked it. */
export type Req<K extends Op> = DeviceSync.DeviceSyncRequest<K>;
/** What an operation's handler answers: its result, or a failure. */
export type Answer<K extends Op> = Promise<Result<DeviceSync.DeviceSyncResult<K>>>;
/** A request of a signed-in user (the service checked: `caller`, no `device`). */
export type ByUser<K extends Op> = Req<K> & { caller: Identity.Caller };
/** A request of a device by its credential (the service checked: `device`, no `caller`). */
export type ByDevice<K extends Op> = Req<K> & { device: DeviceSync.DeviceCaller };
/** Who a request comes from: a signed-in user or a device. */
export type Who = Pick<Req<Op>, 'caller' | 'device'>;

export { isUuid } from '@bindery/contracts';
export const newId = () => randomUUID();

export const bad = (message: string): Failure => fail('validation', message);
export const notFound = (message: string): Failure => fail('not_found', message);
export const no = <T = never>(f: Failure): Result<T> => err(f);

export const iso = (v: unknown): string => (v instanceof Date ? v : new Date(String(v))).toISOString();

export type DeviceRow = Pick<Selectable<DevicesTable>, 'id' | 'user_id' | 'name' | 'client' | 'model' | 'created_at' | 'updated_at'>;
export type QueueRow = Selectable<QueueTable>;
export type PendingRow = Selectable<PendingTable>;

export function deviceOut(r: DeviceRow): DeviceSync.Device {
  return { id: r.id, user_id: r.user_id, name: r.name, client: r.client, model: r.model, created_at: iso(r.created_at), updated_at: iso(r.updated_at) };
}

export function entryOut(r: QueueRow): DeviceSync.QueueEntry {
  return {
    id: r.id,
    device_id: r.device_id,
    user_id: r.user_id,
    media_item_id: r.media_item_id ?? null,
    action: r.action,
    reason: r.reason,
    status: r.status,
    attempts: Number(r.attempts),
    last_error: r.last_error ?? null,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/** The user a request acts for: the signed-in user, or the authenticated device's owner. */
export const userOf = (req: Who): string | null => req.caller?.user_id ?? req.device?.user_id ?? null;

/** A short text field: undefined when absent, null when of the wrong type or too long. */
export function text(input: Record<string, unknown>, key: string, max: number): string | undefined | null {
  const v = input[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length > max) return null;
  return v;
}
