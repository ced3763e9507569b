// The request/reply endpoints: each request is checked against its contract schema, then handled.
import { Compile } from 'typebox/compile';
import { DeviceSync, err, fail, Messages, type Result } from '@bindery/contracts';
import type { RpcHandler } from '@bindery/platform';
import type { Ctx } from './context';
import * as registration from './registration';
import * as devices from './devices';
import * as shelves from './shelves';
import * as queue from './queue';
import * as kobo from './kobo';
import { M, type Req } from './util';

type Handler = (ctx: Ctx, req: Req) => Promise<Result<unknown>>;
type Who = 'public' | 'user' | 'device' | 'either';

const handlers: Record<DeviceSync.DeviceSyncOp, [Who, Handler]> = {
  register: ['public', registration.register],
  'register-status': ['public', registration.status],
  'pending-get': ['user', registration.getPending],
  'pending-approve': ['user', registration.approve],
  'pending-reject': ['user', registration.reject],
  'device-update': ['user', devices.updateDevice],
  'device-delete': ['user', devices.deleteDevice],
  'sync-key-issue': ['user', devices.issueSyncKey],
  'shelf-add': ['user', shelves.addShelf],
  'shelf-remove': ['user', shelves.removeShelf],
  'shelves-clear': ['user', shelves.clearShelves],
  'queue-stats': ['user', queue.stats],
  'queue-list': ['either', queue.list],
  'queue-all': ['user', queue.listAll],
  'queue-retry': ['user', queue.retry],
  'queue-delete': ['user', queue.remove],
  'queue-clear': ['user', queue.clear],
  'queue-ack': ['device', queue.ack],
  'kobo-create': ['user', kobo.createKobo],
  'kobo-token-issue': ['user', kobo.reissueKoboToken],
  'kobo-settings': ['user', kobo.koboSettings],
  'kobo-book-remove': ['device', kobo.koboBookRemove],
  'kobo-sync-confirm': ['device', kobo.koboSyncConfirm],
  'kobo-sync-sent': ['device', kobo.koboSyncSent],
  'kobo-state-known': ['device', kobo.koboStateKnown],
};

/** Who may call: a user session op needs `caller` and no `device`; a device op the reverse. */
function allowed(who: Who, req: Req): boolean {
  if (who === 'public') return true;
  if (who === 'user') return !!req.caller && !req.device;
  if (who === 'device') return !!req.device && !req.caller;
  return !!req.caller !== !!req.device;
}

export function endpoints(ctx: Ctx): Record<string, RpcHandler> {
  const out: Record<string, RpcHandler> = {};
  const check = Compile(DeviceSync.DeviceSyncRequest);
  for (const [op, [who, h]] of Object.entries(handlers)) {
    out[op] = async (body) => {
      if (!check.Check(body)) return err(fail('invalid_request', Messages.invalidRequest));
      const req = body as Req;
      if (!allowed(who, req)) return err(fail('unauthorized', who === 'device' ? M.deviceCredentialRequired : Messages.unauthorized));
      return h(ctx, req);
    };
  }
  return out;
}
