// The requests that make a Kobo's sync state (decision 116): device-sync owns it, decides, and
// appends the kobo-sync events; the gateway's devices read model folds them, and each answer waits
// (read your writes) until it has, so the difference worked out next (sync-state.ts) stands on them.
import type { Result } from '@bindery/contracts';
import type { CallDeviceSync } from '../http/device-sync-client';
import type { Kobo } from './auth';
import type { Difference } from './sync-state';
import { deviceDigest, type SyncToken } from './sync-token';

export type KoboSyncLog = ReturnType<typeof koboSyncLog>;

export function koboSyncLog(devices: CallDeviceSync) {
  const who = (kobo: Kobo) => ({ device_id: kobo.device_id, user_id: kobo.user_id });
  return {
    /**
     * A sync request's token: ours (`BINDERY.`), naming this Kobo (tokens made before they named one
     * pass), of a generation device-sync gave it, confirms what answers up to it sent. Anything else —
     * no token, the store's, Calibre-Web's, Komga's, another Kobo's or server's, unreadable — means
     * the device holds nothing we sent: everything it should have is sent again.
     */
    async begin(kobo: Kobo, token: SyncToken): Promise<Result<unknown>> {
      const mine = token.kind === 'bindery' && (!token.device || token.device === deviceDigest(kobo.device_id));
      return devices('kobo-sync-confirm', { device: who(kobo), input: { gen: mine ? token.gen : null } });
    },

    /** Records what an answer sends under a new generation (null when device-sync did not answer). */
    async record(kobo: Kobo, sent: Difference[]): Promise<number | null> {
      const entries = sent.map((d) => ({ key: d.key, ever: d.ever, sver: d.sver }));
      const r = await devices('kobo-sync-sent', { device: who(kobo), input: { entries } });
      if (!r.ok) return null;
      return r.value.gen;
    },

    /**
     * The device wrote this state itself: it has it, and is not sent it back — also when the answer
     * that sent it the book is not confirmed yet (its next sync confirms what that answer sent).
     */
    async stateKnown(kobo: Kobo, item: string, sver: string): Promise<Result<unknown>> {
      return devices('kobo-state-known', { device: who(kobo), input: { media_item_id: item, sver } });
    },
  };
}
