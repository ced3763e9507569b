// Reactions to identity: a new account gets the five system collections; a deleted account's
// reading data goes with it. A second consumer (reading-access) keeps which libraries each user may
// see, for reactions that have no request to carry the caller's access (kosync documents linked
// when the catalog announces their book); started later than the first, it reads identity's log
// from its beginning.
import { Identity, type Reading } from '@bindery/contracts';
import { eventSchemas, react, type Bus, type Subscription } from '@bindery/platform';
import { collectionOut, systemCollectionsToMake } from '../store/collections';
import { t, type Ctx } from './context';

export const IDENTITY_CONSUMER = 'reading-identity';
const TYPES = ['identity.user-registered.v1', 'identity.user-deleted.v1'] as const;
const identityEvents = eventSchemas(Identity.IdentityEvents);

export async function consumeIdentity(ctx: Ctx, bus: Bus): Promise<Subscription> {
  return react(bus, ctx.site, {
    source: 'identity',
    durable: IDENTITY_CONSUMER,
    types: TYPES,
    effect: async (trx, ev) => {
      const e = identityEvents.decode(ev);
      if (e?.type === 'identity.user-registered.v1') {
        const user = e.data.user_id;
        await t(trx)
          .insertInto('users')
          .values({ id: user })
          .onConflict((oc) => oc.doNothing())
          .execute();
        const { made, renamed } = await systemCollectionsToMake(trx, user, ctx.now());
        const events: Reading.ReadingEvent[] = renamed.map((c) => ({ type: 'reading.collection-saved.v1', data: { user_id: user, collection: collectionOut(c) } }));
        if (made.length) events.push({ type: 'reading.system-collections-created.v1', data: { user_id: user, collections: made.map(collectionOut) } });
        if (events.length) await ctx.emit(trx, user, events);
      } else if (e?.type === 'identity.user-deleted.v1') {
        // the projection removes the user's reading data (its fold of user-data-removed); the user goes from reading's copy of identity's
        await ctx.emit(trx, e.data.user_id, [{ type: 'reading.user-data-removed.v1', data: { user_id: e.data.user_id } }]);
        await t(trx).deleteFrom('users').where('id', '=', e.data.user_id).execute();
      }
    },
    after: () => ctx.store.notify(),
  });
}

export const ACCESS_CONSUMER = 'reading-access';
const ACCESS_TYPES = [
  'identity.user-registered.v1',
  'identity.role-changed.v1',
  'identity.library-access-changed.v1',
  'identity.settings-changed.v1',
  'identity.user-deleted.v1',
] as const;
/** identity's setting that decided what a new account sees, for `user-registered` events from before they said it */
const NEW_USER_ACCESS_KEY = 'new_users_see_all_libraries';

export async function consumeAccess(ctx: Ctx, bus: Bus): Promise<Subscription> {
  return react(bus, ctx.site, {
    source: 'identity',
    durable: ACCESS_CONSUMER,
    types: ACCESS_TYPES,
    effect: async (trx, ev) => {
      const e = identityEvents.decode(ev);
      switch (e?.type) {
        case 'identity.user-registered.v1': {
          // identity states what a new account sees; events from before it did: the setting in force then
          const all =
            e.data.all_libraries ?? (await t(trx).selectFrom('identity_settings').select('value').where('key', '=', NEW_USER_ACCESS_KEY).executeTakeFirst())?.value !== false;
          await t(trx)
            .insertInto('user_access')
            .values({ user_id: e.data.user_id, role: e.data.role, all_libraries: all, library_ids: JSON.stringify(e.data.library_ids ?? []) })
            .onConflict((oc) => oc.doNothing())
            .execute();
          return;
        }
        case 'identity.role-changed.v1':
          await t(trx).updateTable('user_access').set({ role: e.data.role }).where('user_id', '=', e.data.user_id).execute();
          return;
        case 'identity.library-access-changed.v1':
          await t(trx)
            .updateTable('user_access')
            .set({ all_libraries: e.data.all_libraries, library_ids: JSON.stringify(e.data.library_ids) })
            .where('user_id', '=', e.data.user_id)
            .execute();
          return;
        case 'identity.settings-changed.v1':
          for (const [key, value] of Object.entries(e.data.changes)) {
            const v = JSON.stringify(value);
            await t(trx)
              .insertInto('identity_settings')
              .values({ key, value: v })
              .onConflict((oc) => oc.column('key').doUpdateSet({ value: v }))
              .execute();
          }
          return;
        case 'identity.user-deleted.v1':
          await t(trx).deleteFrom('user_access').where('user_id', '=', e.data.user_id).execute();
          return;
        default:
          return;
      }
    },
  });
}
