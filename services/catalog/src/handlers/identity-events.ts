// Reactions to identity's events: a deleted admin's libraries and items go to the successor
// admin; the scan poll interval follows the system setting.
import { Identity } from '@bindery/contracts';
import { eventSchemas, react, type Bus, type Subscription } from '@bindery/platform';
import { SCHEMA } from '../store/migrations';
import type { Ctx } from './context';
import { emitItem } from '../scanner/scan-library';
import { loadItem } from '../store/item-state';
import { changeLibrary } from './libraries';

export const CONSUMER = 'catalog-identity';
const TYPES = ['identity.user-deleted.v1', 'identity.settings-changed.v1'] as const;
const identityEvents = eventSchemas(Identity.IdentityEvents);

export async function consumeIdentity(ctx: Ctx, bus: Bus, onSettings: () => void): Promise<Subscription> {
  return react(bus, ctx.site, {
    source: 'identity',
    durable: CONSUMER,
    types: TYPES,
    // the effect says whether the scan poll interval changed
    effect: async (trx, ev) => {
      let settingsChanged = false;
      const e = identityEvents.decode(ev);
      if (!e) return settingsChanged;
      const t = trx.withSchema(SCHEMA);
      if (e?.type === 'identity.user-deleted.v1') {
        const successor = e.data.successor_admin_id;
        const libs = await t.selectFrom('libraries').select('id').where('created_by_admin', '=', e.data.user_id).orderBy('id').execute();
        for (const l of libs) await changeLibrary(ctx, trx, l.id, null, { created_by_admin: successor });
        // the items any reader can see go to the successor; a missing item keeps its reference until
        // it is back (it is in no reader's view, and its events are the only writers of its row)
        const items = await t.selectFrom('media_items').select('id').where('added_by_admin', '=', e.data.user_id).where('state', '=', 'active').orderBy('id').execute();
        for (const i of items) {
          const s = await loadItem(trx, i.id);
          if (!s) continue;
          s.row = { ...s.row, added_by_admin: successor };
          await emitItem(ctx, trx, s, 'owner');
        }
      } else if (e.type === 'identity.settings-changed.v1') {
        for (const [key, value] of Object.entries(e.data.changes)) {
          await t
            .insertInto('settings')
            .values({ key, value: JSON.stringify(value) })
            .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify(value) }))
            .execute();
          settingsChanged ||= key === 'scan_poll_interval_seconds';
        }
      }
      return settingsChanged;
    },
    after: (_ev, settingsChanged) => {
      ctx.store.notify();
      if (settingsChanged) onSettings();
    },
  });
}

export const DEFAULT_POLL_SECONDS = 60;

export async function pollIntervalSeconds(ctx: Ctx): Promise<number> {
  const r = await ctx.db.withSchema(SCHEMA).selectFrom('settings').select('value').where('key', '=', 'scan_poll_interval_seconds').executeTakeFirst();
  const v = Number(r?.value);
  return Number.isInteger(v) && v >= 1 && v <= 3600 ? v : DEFAULT_POLL_SECONDS;
}
