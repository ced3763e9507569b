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

export interface Member {
  socket: WebSocket;
  userId: string;
  role: 'user' | 'admin';
  topics: Set<Topic>;
}

export class LiveHub {
  private members = new Set<Member>();
  dropped = 0;

  add(m: Member): void {
    this.members.add(m);
  }

  remove(m: Member): void {
    this.members.delete(m);
  }

  get size(): number {
    return this.members.size;
  }

  /** Sends `message` to every subscriber of `topic`; `userId` limits it to that user's sockets. */
  publish(topic: Topic, message: unknown, userId?: string): void {
    let text: string | null = null;
    for (const m of this.members) {
      if (!m.topics.has(topic) || (userId !== undefined && m.userId !== userId)) continue;
      text ??= JSON.stringify(message);
      send(m, text, this);
    }
  }
}

export function send(m: Member, text: string, hub?: LiveHub): void {
  if (m.socket.readyState !== m.socket.OPEN) return;
  if (m.socket.bufferedAmount + text.length > MAX_BUFFERED_BYTES) {
    if (hub) hub.dropped += 1;
    m.socket.close(CLOSE_SLOW, 'too slow');
    // a peer that stopped reading may never complete the closing handshake
    setTimeout(() => m.socket.terminate(), 1000).unref();
    return;
  }
  m.socket.send(text);
}
