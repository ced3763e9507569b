// Reactions to identity: a new account gets the five system collections; a deleted account's
// reading data goes with it.
import type { Identity, StoredEvent } from '@bindery/contracts';
import { applyOnce, consumerCheckpoint, type Bus, type Subscription } from '@bindery/platform';
import { SCHEMA } from '../store/migrations';
import { collectionOut, createSystemCollections } from '../store/collections';
import { logged, t, type Ctx } from './context';

export const IDENTITY_CONSUMER = 'reading-identity';
const TYPES = ['identity.user-registered.v1', 'identity.user-deleted.v1'] as const;

export async function consumeIdentity(ctx: Ctx, bus: Bus): Promise<Subscription> {
  return bus.consume({
    source: 'identity',
    durable: IDENTITY_CONSUMER,
    types: TYPES,
    checkpoint: () => consumerCheckpoint(ctx.rt.db, SCHEMA, IDENTITY_CONSUMER, 'identity'),
    handler: async (ev: StoredEvent) => {
      await logged(ctx, ev, () =>
        applyOnce(ctx.rt.db, SCHEMA, IDENTITY_CONSUMER, ev, async (trx) => {
          const e = ev as unknown as Identity.IdentityEvent;
          if (e.type === 'identity.user-registered.v1') {
            const user = e.data.user_id;
            await t(trx)
              .insertInto('users')
              .values({ id: user })
              .onConflict((oc) => oc.doNothing())
              .execute();
            const made = await createSystemCollections(trx, user, ctx.now());
            if (made.length) await ctx.emit(trx, user, [{ type: 'reading.system-collections-created.v1', data: { user_id: user, collections: made.map(collectionOut) } }]);
          } else if (e.type === 'identity.user-deleted.v1') {
            await removeUser(trx, e.data.user_id);
            await ctx.emit(trx, e.data.user_id, [{ type: 'reading.user-data-removed.v1', data: { user_id: e.data.user_id } }]);
          }
        }),
      );
      ctx.store.notify();
    },
  });
}

async function removeUser(trx: Parameters<typeof t>[0], user: string): Promise<void> {
  for (const table of [
    'progress',
    'progress_history',
    'progress_devices',
    'conflicts',
    'annotations',
    'ratings',
    'collections',
    'saved_filters',
    'dashboard_prefs',
    'kosync_documents',
  ]) {
    await t(trx).deleteFrom(table).where('user_id', '=', user).execute();
  }
  await t(trx).deleteFrom('users').where('id', '=', user).execute();
}
