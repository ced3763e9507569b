// The per-user topics' source: events of the owning services, routed by type prefix to a topic and
// by the event's `user_id` (or `user_ids`) to that user's sockets only. Each gateway replica follows
// the sources itself from the moment it starts (an ephemeral follower, never a shared durable
// consumer), so every replica delivers to the sockets it holds. docs/decisions.md, "Live channel topics".
import { DeviceSync, Reading, type StoredEvent } from '@bindery/contracts';
import type { Bus, Logger, Subscription } from '@bindery/platform';
import type { LiveHub, Topic } from './hub';
import { applyDeviceRemoval } from './identity-feed';

export interface LiveRoute {
  /** the event store (log) these events come from */
  source: string;
  /** event types starting with this go to `topic` (the longest matching prefix wins) */
  prefix: string;
  /** null: never sent (a longer prefix carving an event out of a topic) */
  topic: Topic | null;
}

const DS = DeviceSync.SOURCE; // `device_sync`: its log, whose events are typed `device-sync.*`

/** Which events feed which topic; device-sync's events (`device-sync.*.v1`) each carry `user_id`. */
export const USER_ROUTES: readonly LiveRoute[] = [
  { source: 'reading', prefix: 'reading.progress-conflict-', topic: 'conflicts' },
  { source: 'reading', prefix: 'reading.progress-saved.', topic: 'progress' },
  { source: 'reading', prefix: 'reading.progress-deleted.', topic: 'progress' },
  { source: DS, prefix: 'device-sync.device-', topic: 'devices' },
  // a credential's hash is for the gateway's check, not for any client
  { source: DS, prefix: 'device-sync.device-credential-', topic: null },
  // so is a sync key's verifier
  { source: DS, prefix: 'device-sync.sync-key-', topic: null },
  { source: DS, prefix: 'device-sync.user-devices-removed.', topic: 'devices' },
  { source: DS, prefix: 'device-sync.shelf-', topic: 'devices' },
  { source: DS, prefix: 'device-sync.shelves-', topic: 'devices' },
  { source: DS, prefix: 'device-sync.queue-', topic: 'queue' },
  // a Kobo token's hash is for the gateway's check; a Kobo's setting and the books it removed are the user's
  { source: DS, prefix: 'device-sync.kobo-token-', topic: null },
  { source: DS, prefix: 'device-sync.kobo-settings-', topic: 'devices' },
  { source: DS, prefix: 'device-sync.kobo-book-', topic: 'devices' },
  // a Kobo's sync state (decision 116) is the protocol's, for no client
  { source: DS, prefix: 'device-sync.kobo-sync-', topic: null },
  { source: DS, prefix: 'device-sync.kobo-state-', topic: null },
];

/** The topic an event type goes to, or null. */
export function topicOf(type: string, routes: readonly LiveRoute[] = USER_ROUTES): Topic | null {
  let best: LiveRoute | null = null;
  for (const r of routes) if (type.startsWith(r.prefix) && (!best || r.prefix.length > best.prefix.length)) best = r;
  return best?.topic ?? null;
}

/** The users an event concerns: its `user_id`, or its `user_ids`; none when it names nobody. */
export function recipientsOf(data: unknown): string[] {
  if (typeof data !== 'object' || data === null) return [];
  const d = data as { user_id?: unknown; user_ids?: unknown };
  if (typeof d.user_id === 'string') return [d.user_id];
  if (Array.isArray(d.user_ids)) return d.user_ids.filter((u): u is string => typeof u === 'string');
  return [];
}

/** The event's data as a client sees it: without the facts reading keeps for its own replay. */
function publicData(ev: Pick<StoredEvent, 'type' | 'data'>): unknown {
  if (!ev.type.startsWith('reading.') || ev.data === null || typeof ev.data !== 'object') return ev.data;
  const out: Record<string, unknown> = { ...(ev.data as Record<string, unknown>) };
  for (const f of Reading.REPLAY_ONLY_FIELDS) delete out[f];
  return out;
}

/** `reading.progress-saved.v1` → `progress-saved`: the name a client sees in `event`. */
export function eventName(ev: Pick<StoredEvent, 'type'>): string {
  return ev.type.replace(/^[^.]+\./, '').replace(/\.v\d+$/, '');
}

/** Routes one event to its topic's subscribers among the users it names; an event naming nobody goes nowhere. */
export function deliver(hub: LiveHub, ev: Pick<StoredEvent, 'type' | 'data'>, routes: readonly LiveRoute[] = USER_ROUTES): boolean {
  const topic = topicOf(ev.type, routes);
  if (!topic) return false;
  const to = recipientsOf(ev.data);
  if (to.length === 0) return false;
  hub.publish(topic, { type: 'event', topic, event: eventName(ev), data: publicData(ev) }, to);
  return true;
}

/** Follows every source the routes name, from now, on this replica. */
export async function followUserTopics(bus: Bus, hub: LiveHub, log: Logger, routes: readonly LiveRoute[] = USER_ROUTES): Promise<Subscription[]> {
  const sources = [...new Set(routes.map((r) => r.source))];
  return Promise.all(
    sources.map((source) =>
      bus.follow({
        source,
        from: 'now',
        handler: async (ev) => {
          try {
            deliver(hub, ev, routes);
            applyDeviceRemoval(hub, ev.type, ev.data as Record<string, unknown>);
          } catch (e) {
            // a live message is never worth stalling the follower for
            log.warn({ err: e, event: ev.id }, 'live channel: event not delivered');
          }
        },
      }),
    ),
  );
}
