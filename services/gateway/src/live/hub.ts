// The live channel's sockets in this gateway process and what each subscribed to. Every gateway
// replica holds its own hub and hears the bus itself, so an event reaches the sockets of every
// replica. A socket that does not drain (its send buffer past a bound) is closed, never allowed
// to grow the process's memory.
import type { WebSocket } from '@fastify/websocket';

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
  /** events handed to sockets, since the start */
  delivered = 0;

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

  get size(): number {
    return this.members.size;
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
      send(m, text, this);
      this.delivered += 1;
    };
    if (userIds === undefined) this.members.forEach(to);
    else for (const u of new Set(userIds)) this.byUser.get(u)?.forEach(to);
  }
}

export function send(m: Member, text: string, hub?: LiveHub): void {
  if (m.socket.readyState !== m.socket.OPEN) return;
  if (m.socket.bufferedAmount + Buffer.byteLength(text) > MAX_BUFFERED_BYTES) {
    if (hub) hub.dropped += 1;
    m.socket.close(CLOSE_SLOW, 'too slow');
    // a peer that stopped reading may never complete the closing handshake
    setTimeout(() => m.socket.terminate(), TERMINATE_AFTER_MS).unref();
    return;
  }
  m.socket.send(text);
}
