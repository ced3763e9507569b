// Reactions to identity: each account's role and device limit; a deleted account's devices go
// (their credentials stop working), with their shelves and queues.
import { Identity } from '@bindery/contracts';
import { type DecodedEvent, eventSchemas, react, type Bus, type Subscription } from '@bindery/platform';
import type { Trx } from '../store/db';
import { lockRows, t, type Ctx } from './context';

export const IDENTITY_CONSUMER = 'device-sync-identity';
const TYPES = ['identity.user-registered.v1', 'identity.role-changed.v1', 'identity.max-devices-changed.v1', 'identity.user-deleted.v1'] as const;
const identityEvents = eventSchemas(Identity.IdentityEvents);

export function consumeIdentity(ctx: Ctx, bus: Bus): Promise<Subscription> {
  return react(bus, ctx.site, {
    source: 'identity',
    durable: IDENTITY_CONSUMER,
    types: TYPES,
    effect: async (trx, ev) => {
      const e = identityEvents.decode(ev);
      if (e) await apply(ctx, trx, e);
    },
    after: () => ctx.store.notify(),
  });
}

async function apply(ctx: Ctx, trx: Trx, e: DecodedEvent<typeof Identity.IdentityEvents>): Promise<void> {
  const users = t(trx);
  switch (e.type) {
    case 'identity.user-registered.v1':
      await users
        .insertInto('users')
        .values({ id: e.data.user_id, role: e.data.role, max_devices: e.data.max_devices })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      break;
    case 'identity.role-changed.v1':
      await users.updateTable('users').set({ role: e.data.role }).where('id', '=', e.data.user_id).execute();
      break;
    case 'identity.max-devices-changed.v1':
      await users.updateTable('users').set({ max_devices: e.data.max_devices }).where('id', '=', e.data.user_id).execute();
      break;
    case 'identity.user-deleted.v1': {
      const user = e.data.user_id;
      // what the event removes (devices, their shelves and queues, the account's registrations) is
      // locked before the append (see `lockRows`)
      const devices = (await users.selectFrom('devices').select('id').where('user_id', '=', user).forUpdate().execute()).map((d) => d.id);
      await lockRows(trx, 'shelves', devices);
      await lockRows(trx, 'queue', devices);
      await users.selectFrom('pending').select('id').where('user_id', '=', user).forUpdate().execute();
      await ctx.emit(trx, user, [{ type: 'device-sync.user-devices-removed.v1', data: { user_id: user, device_ids: devices } }]);
      await users.deleteFrom('users').where('id', '=', user).execute();
      break;
    }
    default:
      break;
  }
}
