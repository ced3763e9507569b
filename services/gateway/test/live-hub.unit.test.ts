// The live hub's delivery rules: topic and user scoping, and a slow socket closed instead of
// buffering without bound; the routing of services' events to topics and users. The socket is a
// stand-in with the few members the hub reads.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DeviceSync } from '@bindery/contracts';
import { CLOSE_SLOW, LiveHub, MAX_BUFFERED_BYTES, watchLive, type Member } from '../src/live/hub';
import { deliver, eventName, recipientsOf, topicOf } from '../src/live/user-feed';

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
    hub.publish('progress', { n: 1 }, ['u1']);
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

  it('shows its sockets by kind, drops, deliveries by topic and buffered bytes on the registry', async () => {
    const hub = new LiveHub();
    const registry = new Registry();
    watchLive(registry, hub);
    // a second app on the same registry does not register the metrics twice
    watchLive(registry, new LiveHub());
    const value = async (name: string, labels: Record<string, string> = {}) => {
      const m = (await registry.getSingleMetric(name)!.get()).values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x));
      return m?.value;
    };
    const slow = fakeSocket(MAX_BUFFERED_BYTES);
    const busy = fakeSocket(300);
    const device = fakeSocket(20);
    hub.add(member(slow, 'u1', new Set(['scanner'])));
    hub.add(member(busy, 'u2', new Set(['scanner', 'progress'])));
    hub.add({ ...member(device, 'u2', new Set(['queue'])), deviceId: 'd1' });
    expect(await value('bindery_ws_sockets', { kind: 'user' })).toBe(2);
    expect(await value('bindery_ws_sockets', { kind: 'device' })).toBe(1);
    expect(await value('bindery_ws_buffered_bytes')).toBe(MAX_BUFFERED_BYTES + 320);
    expect(await value('bindery_ws_buffered_bytes_max')).toBe(MAX_BUFFERED_BYTES);
    hub.publish('scanner', { x: 1 });
    hub.publish('progress', { x: 2 }, ['u2']);
    hub.publish('queue', { x: 3 }, ['u1']);
    expect(await value('bindery_ws_slow_dropped_total')).toBe(1);
    // the slow socket was dropped, not delivered to
    expect(await value('bindery_ws_events_delivered_total', { topic: 'scanner' })).toBe(1);
    expect(await value('bindery_ws_events_delivered_total', { topic: 'progress' })).toBe(1);
    expect(await value('bindery_ws_events_delivered_total', { topic: 'queue' })).toBe(0);
    // scraped twice, a counter does not count twice
    expect(await value('bindery_ws_slow_dropped_total')).toBe(1);
    hub.remove([...hub.of('u2')].find((m) => m.deviceId === 'd1')!);
    expect(await value('bindery_ws_sockets', { kind: 'device' })).toBe(0);
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

describe('live routing (event type prefix → topic, user_id → recipients)', () => {
  const U1 = '00000000-0000-4000-8000-000000000001';
  const U2 = '00000000-0000-4000-8000-000000000002';

  it("maps each owning service's event types to a topic, the longest prefix first", () => {
    expect(topicOf('reading.progress-saved.v1')).toBe('progress');
    expect(topicOf('reading.progress-deleted.v1')).toBe('progress');
    expect(topicOf('reading.progress-conflict-opened.v1')).toBe('conflicts');
    expect(topicOf('reading.progress-conflict-closed.v1')).toBe('conflicts');
    expect(topicOf('reading.progress-conflict-deleted.v1')).toBe('conflicts');
    expect(topicOf('reading.annotation-saved.v1')).toBeNull();
    // what a device was given is no change anyone sees (decision 102): the reader would offer it
    expect(topicOf('reading.progress-delivered.v1')).toBeNull();
    expect(topicOf('reading.collection-saved.v1')).toBeNull();
    // device-sync's events: devices (with shelves) and queue; a credential's hash, a sync key's verifier, a Kobo token's hash
    // and a Kobo's sync state (decision 116) go nowhere
    const hidden = [
      'device-sync.device-credential-issued.v1',
      'device-sync.sync-key-issued.v1',
      'device-sync.kobo-token-issued.v1',
      'device-sync.kobo-sync-sent.v1',
      'device-sync.kobo-sync-confirmed.v1',
      'device-sync.kobo-sync-reset.v1',
      'device-sync.kobo-state-known.v1',
    ];
    for (const t of Object.keys(DeviceSync.DeviceSyncEvents)) {
      // a registration's own events are the log's bookkeeping: the device it makes arrives as `device-registered`
      const want = t.startsWith('device-sync.queue-') ? 'queue' : hidden.includes(t) || t.startsWith('device-sync.registration') ? null : 'devices';
      expect(topicOf(t), t).toBe(want);
    }
    expect(topicOf('device-sync.something-else.v1')).toBeNull();
    expect(topicOf('catalog.scan-started.v1')).toBeNull();
  });

  it('names recipients from user_id or user_ids, and nobody otherwise', () => {
    expect(recipientsOf({ user_id: U1 })).toEqual([U1]);
    expect(recipientsOf({ user_ids: [U1, U2, 7] })).toEqual([U1, U2]);
    expect(recipientsOf({ user: U1 })).toEqual([]);
    expect(recipientsOf(null)).toEqual([]);
    expect(recipientsOf('x')).toEqual([]);
  });

  it('names events without their service and version', () => {
    expect(eventName({ type: 'reading.progress-saved.v1' })).toBe('progress-saved');
    expect(eventName({ type: 'device-sync.queue-entry-saved.v2' })).toBe('queue-entry-saved');
  });

  it("delivers a user's event to that user's subscribed sockets only, and an event naming nobody to none", () => {
    const hub = new LiveHub();
    const mine = fakeSocket();
    const mineOther = fakeSocket();
    const theirs = fakeSocket();
    const admin = fakeSocket();
    hub.add(member(mine, U1, new Set(['progress', 'devices', 'queue'])));
    hub.add(member(mineOther, U1, new Set(['conflicts'])));
    hub.add(member(theirs, U2, new Set(['progress', 'devices', 'queue', 'conflicts'])));
    hub.add({ ...member(admin, '00000000-0000-4000-8000-0000000000aa', new Set(['progress', 'devices', 'queue'])), role: 'admin' });
    const data = { user_id: U1, media_item_id: U2, progress: { percentage: 0.5 } };
    // the hashes and the history line kept for reading's own replay are not the client's
    const history = { position: {}, percentage: 0.5, client: 'web', device: 'web', reason: 'saved', recorded_at: '2026-01-01T00:00:00.000Z' };
    expect(deliver(hub, { type: 'reading.progress-saved.v1', data: { ...data, sha256: ['ab'.repeat(32)], history } })).toBe(true);
    expect(deliver(hub, { type: 'device-sync.device-approved.v1', data: { user_id: U1, device: { id: 'd' } } })).toBe(true);
    expect(deliver(hub, { type: 'device-sync.queue-entry-saved.v1', data: { user_id: U2, item: {} } })).toBe(true);
    expect(deliver(hub, { type: 'reading.progress-conflict-opened.v1', data: { user_id: U1, conflict: { id: 'c' } } })).toBe(true);
    expect(deliver(hub, { type: 'reading.progress-saved.v1', data: { media_item_id: U2 } })).toBe(false);
    expect(deliver(hub, { type: 'reading.rating-set.v1', data: { user_id: U1 } })).toBe(false);
    expect(mine.sent.map((t) => JSON.parse(t))).toEqual([
      { type: 'event', topic: 'progress', event: 'progress-saved', data },
      { type: 'event', topic: 'devices', event: 'device-approved', data: { user_id: U1, device: { id: 'd' } } },
    ]);
    expect(mineOther.sent.map((t) => JSON.parse(t))).toEqual([
      { type: 'event', topic: 'conflicts', event: 'progress-conflict-opened', data: { user_id: U1, conflict: { id: 'c' } } },
    ]);
    expect(theirs.sent.map((t) => JSON.parse(t))).toEqual([{ type: 'event', topic: 'queue', event: 'queue-entry-saved', data: { user_id: U2, item: {} } }]);
    // an admin is no exception: another user's progress is not theirs
    expect(admin.sent).toEqual([]);
  });
});
