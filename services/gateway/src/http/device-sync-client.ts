// Request/reply to the device-sync service, with read-your-writes like the other clients.
import { DeviceSync, type RpcCall } from '@bindery/contracts';
import type { Bus, Logger } from '@bindery/platform';
import { client, type AfterWrite } from './rpc';

/** Device-sync's client, typed from its operations: `call(op, request)` answers that operation's result. */
export type CallDeviceSync = RpcCall<DeviceSync.DeviceSyncOperations>;

/**
 * Device-sync's client. The one cast of its answers is here: device-sync's handlers are typed to
 * answer each operation's result schema (contracts' DeviceSyncOperations), so the bus carries that shape.
 */
export function deviceSyncClient(bus: Bus, log: Logger, timeoutMs: number, afterWrite?: AfterWrite): CallDeviceSync {
  // the bus names the serving service (`device-sync`); its log is the source `device_sync`; its
  // answers carry their events (a Kobo sync's record and confirmation fold at once, decision 116)
  const wait: AfterWrite | undefined = afterWrite && ((_service, position, events) => afterWrite(DeviceSync.SOURCE, position, events));
  return client(bus, log, timeoutMs, DeviceSync.SERVICE, wait) as CallDeviceSync;
}
