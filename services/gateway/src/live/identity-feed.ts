// What identity's events change for sockets already open: a demoted admin loses `scanner` at once,
// a deleted account, a revoked session or an admin's password reset closes the sockets they opened
// (1008, as a bad token does at the start); so does a deleted device (device-sync) for its own.
// Followed by each gateway replica from the moment it starts.
import { Identity, Messages } from '@bindery/contracts';
import { type Bus, eventSchemas, type Logger, type Subscription } from '@bindery/platform';
import { ADMIN_TOPICS, send, type LiveHub, type Member } from './hub';

export const CLOSE_POLICY = 1008;
const identityEvents = eventSchemas(Identity.IdentityEvents);
const TYPES = ['identity.role-changed.v1', 'identity.user-deleted.v1', 'identity.session-revoked.v1', 'identity.password-changed.v1'] as const;

type Data = { user_id?: string; role?: 'user' | 'admin'; jti?: string | null; sessions_revoked_before?: string | null; session_kept?: string | null };

export function applyIdentity(hub: LiveHub, type: string, data: Data): void {
  if (typeof data.user_id !== 'string') return;
  const shut = (ms: Member[]) => ms.forEach((m) => m.socket.close(CLOSE_POLICY, Messages.invalidToken));
  switch (type) {
    case 'identity.role-changed.v1':
      for (const m of hub.of(data.user_id, (m) => m.deviceId === undefined)) {
        m.role = data.role === 'admin' ? 'admin' : 'user';
        if (m.role === 'admin' || ![...m.topics].some((t) => ADMIN_TOPICS.has(t))) continue;
        for (const t of ADMIN_TOPICS) m.topics.delete(t);
        send(m, JSON.stringify({ type: 'subscribed', topics: [...m.topics].sort() }), hub);
      }
      return;
    case 'identity.user-deleted.v1':
      shut(hub.of(data.user_id));
      return;
    case 'identity.session-revoked.v1':
      if (data.jti) shut(hub.of(data.user_id, (m) => m.jti === data.jti));
      return;
    case 'identity.password-changed.v1':
      // a password change ends every session issued before it (every socket open now) but the changing one's
      if (data.sessions_revoked_before) shut(hub.of(data.user_id, (m) => m.deviceId === undefined && (!data.session_kept || m.jti !== data.session_kept)));
      return;
  }
}

/** A deleted device's sockets close (device-sync's `device-deleted`, and all of a deleted account's devices). */
export function applyDeviceRemoval(hub: LiveHub, type: string, data: { user_id?: unknown; device_id?: unknown; device_ids?: unknown }): void {
  if (typeof data.user_id !== 'string') return;
  const gone = new Set<unknown>(
    type === 'device-sync.device-deleted.v1' ? [data.device_id] : type === 'device-sync.user-devices-removed.v1' && Array.isArray(data.device_ids) ? data.device_ids : [],
  );
  if (gone.size === 0) return;
  for (const m of hub.of(data.user_id, (m) => gone.has(m.deviceId))) m.socket.close(CLOSE_POLICY, Messages.invalidToken);
}

export function followIdentity(bus: Bus, hub: LiveHub, log: Logger): Promise<Subscription> {
  return bus.follow({
    source: 'identity',
    types: TYPES,
    from: 'now',
    handler: async (ev) => {
      try {
        const e = identityEvents.decode(ev);
        if (e && 'user_id' in e.data) applyIdentity(hub, e.type, e.data);
      } catch (e) {
        log.warn({ err: e, event: ev.id }, 'live channel: identity event not applied');
      }
    },
  });
}
