// Request/reply to the device-sync service, with read-your-writes like the other clients.
import { DeviceSync, fail, Messages, rpcSubject, type Result } from '@bindery/contracts';
import { RpcUnavailableError, type Bus, type Logger, type Written } from '@bindery/platform';
import type { AfterWrite } from './rpc';

export type CallDeviceSync = (op: DeviceSync.DeviceSyncOp, body: DeviceSync.DeviceSyncRequest) => Promise<Result<unknown>>;

export function deviceSyncClient(bus: Bus, log: Logger, timeoutMs: number, afterWrite?: AfterWrite): CallDeviceSync {
  return async (op, body) => {
    try {
      const r = (await bus.request(rpcSubject(DeviceSync.SERVICE, op), body, timeoutMs)) as (Result<unknown> & { written?: Written }) | null;
      if (!r || typeof r !== 'object' || typeof (r as { ok?: unknown }).ok !== 'boolean') return { ok: false, error: fail('internal', Messages.internal) };
      // the bus names the serving service (`device-sync`); its log is the source `device_sync`
      if (r.written && afterWrite) await afterWrite(DeviceSync.SOURCE, r.written.position);
      return r;
    } catch (e) {
      if (e instanceof RpcUnavailableError) {
        log.warn({ op, err: e.message }, 'device-sync unavailable');
        return { ok: false, error: fail('service_unavailable', Messages.serviceUnavailable) };
      }
      throw e;
    }
  };
}
