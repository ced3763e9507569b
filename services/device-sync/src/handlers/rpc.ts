// The request/reply endpoints: device-sync's operations (contracts' DeviceSyncOperations), each
// request checked once against its schema, then who may call it (a user session, a device, or
// either), then handled by the operation's handler, typed to its result.
import { DeviceSync, err, fail, Messages, type RpcHandlers } from '@bindery/contracts';
import { operationEndpoints, type RpcHandler } from '@bindery/platform';
import type { Ctx } from './context';
import * as registration from './registration';
import * as devices from './devices';
import * as shelves from './shelves';
import * as queue from './queue';
import * as kobo from './kobo';
import { M, type Answer, type ByDevice, type ByUser, type Req, type Who } from './util';

type Op = DeviceSync.DeviceSyncOp;

/** A user session's operation: `caller` and no `device`, else unauthorized. */
const user =
  <K extends Op>(h: (ctx: Ctx, req: ByUser<K>) => Answer<K>) =>
  (ctx: Ctx, req: Req<K>): Answer<K> => {
    const who: Who = req;
    return who.caller && !who.device ? h(ctx, { ...req, caller: who.caller }) : Promise.resolve(err(fail('unauthorized', Messages.unauthorized)));
  };

/** A device's operation: `device` and no `caller`, else unauthorized (a device credential is required). */
const device =
  <K extends Op>(h: (ctx: Ctx, req: ByDevice<K>) => Answer<K>) =>
  (ctx: Ctx, req: Req<K>): Answer<K> => {
    const who: Who = req;
    return who.device && !who.caller ? h(ctx, { ...req, device: who.device }) : Promise.resolve(err(fail('unauthorized', M.deviceCredentialRequired)));
  };

/** An operation of a user session or a device: exactly one of them. */
const either =
  <K extends Op>(h: (ctx: Ctx, req: Req<K>) => Answer<K>) =>
  (ctx: Ctx, req: Req<K>): Answer<K> => {
    const who: Who = req;
    return !!who.caller !== !!who.device ? h(ctx, req) : Promise.resolve(err(fail('unauthorized', Messages.unauthorized)));
  };

export const handlers: RpcHandlers<DeviceSync.DeviceSyncOperations, Ctx> = {
  register: registration.register,
  'register-status': registration.status,
  'pending-get': user(registration.getPending),
  'pending-approve': user(registration.approve),
  'pending-reject': user(registration.reject),
  'device-update': user(devices.updateDevice),
  'device-delete': user(devices.deleteDevice),
  'sync-key-issue': user(devices.issueSyncKey),
  'shelf-add': user(shelves.addShelf),
  'shelf-remove': user(shelves.removeShelf),
  'shelves-clear': user(shelves.clearShelves),
  'queue-stats': user(queue.stats),
  'queue-list': either(queue.list),
  'queue-all': user(queue.listAll),
  'queue-retry': user(queue.retry),
  'queue-delete': user(queue.remove),
  'queue-clear': user(queue.clear),
  'queue-ack': device(queue.ack),
  'kobo-create': user(kobo.createKobo),
  'kobo-token-issue': user(kobo.reissueKoboToken),
  'kobo-settings': user(kobo.koboSettings),
  'kobo-book-remove': device(kobo.koboBookRemove),
  'kobo-sync-confirm': device(kobo.koboSyncConfirm),
  'kobo-sync-sent': device(kobo.koboSyncSent),
  'kobo-state-known': device(kobo.koboStateKnown),
};

export function endpoints(ctx: Ctx): Record<string, RpcHandler> {
  return operationEndpoints(DeviceSync.DeviceSyncOperations, handlers, ctx);
}
