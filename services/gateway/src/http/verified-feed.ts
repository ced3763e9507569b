// Every replica drops the sign-ins it took on trust for a user as soon as identity says their
// credentials changed: a password change or reset, a reader key created, replaced or revoked, an
// account deleted. The replica that handled the change has already dropped them (no wait for this).
import { Identity } from '@bindery/contracts';
import { type Bus, eventSchemas, type Logger, type Subscription } from '@bindery/platform';
import type { VerifiedCache } from './verified-cache';

const identityEvents = eventSchemas(Identity.IdentityEvents);
const TYPES = ['identity.password-changed.v1', 'identity.reader-key-changed.v1', 'identity.user-deleted.v1', 'identity.role-changed.v1'] as const;

export function followCredentialChanges(bus: Bus, verified: VerifiedCache, log: Logger): Promise<Subscription> {
  return bus.follow({
    source: 'identity',
    types: TYPES,
    from: 'now',
    handler: async (ev) => {
      const e = identityEvents.decode(ev);
      const id = e && 'user_id' in e.data ? e.data.user_id : undefined;
      if (typeof id === 'string') verified.forgetUser(id);
      else log.warn({ event: ev.id, type: ev.type }, 'credential change without a user id');
    },
  });
}
