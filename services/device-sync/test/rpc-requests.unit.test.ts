// Device-sync's operations: a request is checked once against its operation's schema at the
// service, and a malformed one is refused there (invalid_request) before any handler or store is
// reached; then who calls is checked (a user session, a device, or either: unauthorized otherwise).
import { describe, expect, it } from 'vitest';
import { DeviceSync, Messages } from '@bindery/contracts';
import { requestChecks } from '@bindery/platform';
import { endpoints, handlers } from '../src/handlers/rpc';
import type { Ctx } from '../src/handlers/context';

// A context with nothing in it: a refused request must never reach a handler (one that did would
// fail on it, and the answer would not be the refusal).
const refusedOnly = endpoints({} as Ctx);
const caller = { user_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7', role: 'user' as const };
const device = { device_id: '0f8fad5b-d9cb-469f-a165-70867728950e', user_id: caller.user_id };
const invalid = { ok: false, error: { code: 'invalid_request', message: Messages.invalidRequest } };

describe("device-sync's operations", () => {
  it('every operation has a request schema, a result schema, a handler and an endpoint', () => {
    const names = Object.keys(DeviceSync.DeviceSyncOperations).sort();
    expect(names.length).toBe(25);
    expect(Object.keys(handlers).sort()).toEqual(names);
    expect(Object.keys(refusedOnly).sort()).toEqual(names);
    for (const name of names) {
      const op = DeviceSync.DeviceSyncOperations[name as DeviceSync.DeviceSyncOp];
      expect(op.request, name).toBeTypeOf('object');
      expect(op.result, name).toBeTypeOf('object');
    }
  });

  it.each([
    ['register', { input: 'name=Kobo' }],
    ['register', null],
    ['pending-get', { caller }],
    ['pending-approve', { caller, id: device.device_id, input: ['sync_key'] }],
    ['device-update', { caller, id: 42, input: { name: 'n' } }],
    ['queue-list', { device, query: { status: 1 } }],
    ['queue-stats', { caller: { user_id: caller.user_id, role: 'root' } }],
    ['queue-ack', { device: { device_id: device.device_id }, input: { done: [] } }],
    ['kobo-sync-sent', { device, input: 'entries' }],
    ['kobo-token-issue', { caller }],
  ] as const)('%s refuses a malformed request with invalid_request: %j', async (op, body) => {
    expect(await refusedOnly[op]!(body)).toEqual(invalid);
  });

  it.each([
    ['pending-get', { id: device.device_id }, Messages.unauthorized],
    ['queue-stats', { device }, Messages.unauthorized],
    ['queue-list', { caller, device, id: device.device_id }, Messages.unauthorized],
    ['queue-ack', { caller, input: { done: [] } }, DeviceSync.DeviceSyncMessages.deviceCredentialRequired],
  ] as const)('%s from the wrong caller is unauthorized: %j', async (op, body, message) => {
    expect(await refusedOnly[op]!(body)).toEqual({ ok: false, error: { code: 'unauthorized', message } });
  });

  it('a well-formed request passes the schema', () => {
    const checks = requestChecks(DeviceSync.DeviceSyncOperations);
    expect(checks.register({ input: { name: 'Kobo', client: 'kobo' } })).toBeNull();
    expect(checks['queue-list']({ device, id: device.device_id, query: { status: 'pending' } })).toBeNull();
    expect(checks['queue-stats']({ caller })).toBeNull();
    expect(checks['pending-get']({ caller })).toEqual(invalid.error);
  });
});
