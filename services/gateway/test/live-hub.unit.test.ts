// The live hub's delivery rules: topic and user scoping, and a slow socket closed instead of
// buffering without bound. The socket is a stand-in with the few members the hub reads.
import { describe, expect, it } from 'vitest';
import { CLOSE_SLOW, LiveHub, MAX_BUFFERED_BYTES, type Member } from '../src/live/hub';

function fakeSocket(buffered = 0) {
  const sent: string[] = [];
  const closed: [number, string][] = [];
  const socket = {
    OPEN: 1,
    readyState: 1,
    bufferedAmount: buffered,
    send: (t: string) => sent.push(t),
    close: (code: number, reason: string) => closed.push([code, reason]),
    terminate: () => undefined,
  };
  return { socket, sent, closed };
}

const member = (s: ReturnType<typeof fakeSocket>, userId: string, topics: Member['topics']): Member => ({
  socket: s.socket as unknown as Member['socket'],
  userId,
  role: 'user',
  topics,
});

describe('LiveHub', () => {
  it('delivers a topic to its subscribers only, and a user-scoped message to that user only', () => {
    const hub = new LiveHub();
    const a = fakeSocket();
    const b = fakeSocket();
    const c = fakeSocket();
    hub.add(member(a, 'u1', new Set(['progress'])));
    hub.add(member(b, 'u2', new Set(['progress'])));
    hub.add(member(c, 'u1', new Set(['queue'])));
    hub.publish('progress', { n: 1 }, 'u1');
    hub.publish('progress', { n: 2 });
    expect(a.sent).toEqual(['{"n":1}', '{"n":2}']);
    expect(b.sent).toEqual(['{"n":2}']);
    expect(c.sent).toEqual([]);
  });

  it('closes a socket whose unsent bytes pass the bound, and sends it nothing more', () => {
    const hub = new LiveHub();
    const slow = fakeSocket(MAX_BUFFERED_BYTES);
    const fast = fakeSocket();
    hub.add(member(slow, 'u1', new Set(['scanner'])));
    hub.add(member(fast, 'u2', new Set(['scanner'])));
    hub.publish('scanner', { x: 'y' });
    expect(slow.sent).toEqual([]);
    expect(slow.closed).toEqual([[CLOSE_SLOW, 'too slow']]);
    expect(hub.dropped).toBe(1);
    expect(fast.sent).toEqual(['{"x":"y"}']);
  });

  it('forgets removed sockets', () => {
    const hub = new LiveHub();
    const s = fakeSocket();
    const m = member(s, 'u1', new Set(['progress']));
    hub.add(m);
    hub.remove(m);
    hub.publish('progress', {});
    expect(s.sent).toEqual([]);
    expect(hub.size).toBe(0);
  });
});
