// The live channel's sockets in this gateway process and what each subscribed to. Every gateway
// replica holds its own hub and hears the bus itself, so an event reaches the sockets of every
// replica. A socket that does not drain (its send buffer past a bound) is closed, never allowed
// to grow the process's memory.
import type { WebSocket } from '@fastify/websocket';
import { Counter, Gauge, type Registry } from 'prom-client';

export const TOPICS = ['progress', 'conflicts', 'scanner', 'devices', 'queue'] as const;
export type Topic = (typeof TOPICS)[number];
/** topics only admins may subscribe to */
export const ADMIN_TOPICS: ReadonlySet<Topic> = new Set(['scanner']);
/** past this many unsent bytes a socket counts as slow and is closed */
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** close code for a dropped slow socket (RFC 6455 "try again later") */
export const CLOSE_SLOW = 1013;
/** a dropped socket that does not finish the closing handshake within this is cut */
const TERMINATE_AFTER_MS = 1000;

export interface Member {
  socket: WebSocket;
  userId: string;
  role: 'user' | 'admin';
  topics: Set<Topic>;
  /** set when the socket authenticated with a device credential (device-sync) */
  deviceId?: string;
  /** the access token's id, when it authenticated with one (a revoked session closes its sockets) */
  jti?: string;
}

export class LiveHub {
  private members = new Set<Member>();
  private byUser = new Map<string, Set<Member>>();
  /** sockets closed for not draining, since the start */
  dropped = 0;
  /** events handed to sockets by topic (not counting those a closed or too slow socket did not take), since the start */
  deliveredBy: Record<Topic, number> = { progress: 0, conflicts: 0, scanner: 0, devices: 0, queue: 0 };

  add(m: Member): void {
    this.members.add(m);
    const mine = this.byUser.get(m.userId) ?? new Set<Member>();
    this.byUser.set(m.userId, mine);
    mine.add(m);
  }

  remove(m: Member): void {
    this.members.delete(m);
    const mine = this.byUser.get(m.userId);
    mine?.delete(m);
    if (mine?.size === 0) this.byUser.delete(m.userId);
  }

  /** A user's open sockets (devices' included). */
  count(userId: string): number {
    return this.byUser.get(userId)?.size ?? 0;
  }

  get size(): number {
    return this.members.size;
  }

  /** Open sockets by kind (a device credential's, or a user's) and their unsent bytes, read at scrape time. */
  census(): { user: number; device: number; bufferedSum: number; bufferedMax: number } {
    const out = { user: 0, device: 0, bufferedSum: 0, bufferedMax: 0 };
    for (const m of this.members) {
      if (m.deviceId) out.device += 1;
      else out.user += 1;
      const b = m.socket.bufferedAmount;
      out.bufferedSum += b;
      if (b > out.bufferedMax) out.bufferedMax = b;
    }
    return out;
  }

  /** A user's sockets (that `match`), e.g. to close them when the account or session ends. */
  of(userId: string, match: (m: Member) => boolean = () => true): Member[] {
    return [...(this.byUser.get(userId) ?? [])].filter(match);
  }

  /** Sends `message` to every subscriber of `topic`; `userIds` limits it to those users' sockets. */
  publish(topic: Topic, message: unknown, userIds?: readonly string[]): void {
    let text: string | null = null;
    const to = (m: Member) => {
      if (!m.topics.has(topic)) return;
      text ??= JSON.stringify(message);
      if (!send(m, text, this)) return;
      this.deliveredBy[topic] += 1;
    };
    if (userIds === undefined) this.members.forEach(to);
    else for (const u of new Set(userIds)) this.byUser.get(u)?.forEach(to);
  }
}

/** Sends `text` to the member's socket; false when it was not sent (closed, or dropped as too slow). */
export function send(m: Member, text: string, hub?: LiveHub): boolean {
  if (m.socket.readyState !== m.socket.OPEN) return false;
  if (m.socket.bufferedAmount + Buffer.byteLength(text) > MAX_BUFFERED_BYTES) {
    if (hub) hub.dropped += 1;
    m.socket.close(CLOSE_SLOW, 'too slow');
    // a peer that stopped reading may never complete the closing handshake
    setTimeout(() => m.socket.terminate(), TERMINATE_AFTER_MS).unref();
    return false;
  }
  m.socket.send(text);
  return true;
}

/**
 * The hub's numbers on the process's /metrics, all read when scraped (nothing is counted twice on
 * the delivery path): open sockets by kind, slow sockets dropped, events delivered by topic, and
 * the bytes waiting in sockets' send buffers (sum and largest).
 */
export function watchLive(registry: Registry, hub: LiveHub): void {
  // one hub per gateway process; a second app built on the same registry (tests) keeps the first's
  if (registry.getSingleMetric('bindery_ws_sockets')) return;
  const registers = [registry];
  new Gauge({
    name: 'bindery_ws_sockets',
    help: 'Authenticated live-channel sockets open in this gateway process, by kind (user or device credential)',
    labelNames: ['kind'],
    registers,
    collect() {
      const c = hub.census();
      this.set({ kind: 'user' }, c.user);
      this.set({ kind: 'device' }, c.device);
    },
  });
  new Counter({
    name: 'bindery_ws_slow_dropped_total',
    help: 'Live-channel sockets closed because their unsent bytes passed the bound (1013 too slow)',
    registers,
    collect() {
      this.reset();
      this.inc(hub.dropped);
    },
  });
  new Counter({
    name: 'bindery_ws_events_delivered_total',
    help: 'Events handed to live-channel sockets, by topic',
    labelNames: ['topic'],
    registers,
    collect() {
      this.reset();
      for (const t of TOPICS) this.inc({ topic: t }, hub.deliveredBy[t]);
    },
  });
  new Gauge({
    name: 'bindery_ws_buffered_bytes',
    help: 'Bytes waiting in the send buffers of all live-channel sockets',
    registers,
    collect() {
      this.set(hub.census().bufferedSum);
    },
  });
  new Gauge({
    name: 'bindery_ws_buffered_bytes_max',
    help: 'Bytes waiting in the send buffer of the most backed-up live-channel socket',
    registers,
    collect() {
      this.set(hub.census().bufferedMax);
    },
  });
}
