// The live channel (docs/decisions.md, "OPDS and the live channel", "Live channel topics"): /api/ws
// authenticates by cookie, Bearer header or a first `auth` message; `ping`, `subscribe`; `scanner` is
// for admins and carries the catalog's scan events; `progress` and `conflicts` carry the reading
// service's events to their owner only, on every gateway replica; a socket that stops reading is dropped.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes, spawnBindery, startBindery, type Bindery } from '../support/bindery';
import { WsClient, wsUrl } from '../support/ws-client';
import { api, eventually, instances, register, type Account, type Call } from './helpers';
import { client } from '../support/http';
import { freePort, sample } from '../support/ops';
import { createLibrary, FIXTURE, settled } from './catalog-helpers';
import { put, shelf } from './reading-helpers';
import { enroll } from './device-helpers';

const modes = await availableModes();
const get = instances(modes);

/** A socket with a queue of what it received, and a way to wait for the next matching message. */
async function open(url: string, headers: Record<string, string> = {}, autoPong = true) {
  const s = new WsClient(url, { headers, autoPong });
  const got: Record<string, any>[] = [];
  const waiters: (() => void)[] = [];
  let closed: { code: number; reason: string } | null = null;
  s.on('message', (d: Buffer) => {
    got.push(JSON.parse(d.toString()));
    waiters.splice(0).forEach((w) => w());
  });
  s.on('close', (code: number, reason: Buffer) => {
    closed = { code, reason: reason.toString() };
    waiters.splice(0).forEach((w) => w());
  });
  // after the server cut the connection, a write may fail: the close above tells the rest
  s.on('error', () => undefined);
  await new Promise<void>((res, rej) => {
    s.on('open', () => res());
    s.on('error', rej);
  });
  const next = async (match: (m: Record<string, any>) => boolean = () => true, timeoutMs = 20_000): Promise<Record<string, any>> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const i = got.findIndex(match);
      if (i >= 0) return got.splice(i, 1)[0]!;
      if (closed) throw new Error(`socket closed ${JSON.stringify(closed)} while waiting`);
      if (Date.now() > until) throw new Error(`no matching message; got ${JSON.stringify(got)}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 200);
      });
    }
  };
  const send = (m: unknown) => s.send(JSON.stringify(m));
  const closedWith = async () => {
    for (let i = 0; i < 100 && !closed; i++) await new Promise((r) => setTimeout(r, 100));
    return closed;
  };
  return { s, next, send, closedWith, got, isClosed: () => closed !== null };
}

/** Opens a socket for `token`, waits for `ready`, subscribes to `topics`. */
async function subscribed(url: string, token: string, topics: string[]) {
  const c = await open(url, { authorization: `Bearer ${token}` });
  await c.next((m) => m.type === 'ready');
  c.send({ type: 'subscribe', topics });
  expect(await c.next((m) => m.type === 'subscribed')).toEqual({ type: 'subscribed', topics: [...topics].sort() });
  return c;
}

/** Nothing was queued for `c` before now: its next message answers this ping. */
async function nothingPending(c: Awaited<ReturnType<typeof open>>) {
  c.send({ type: 'ping' });
  const m = await c.next();
  expect(m.type, JSON.stringify(m)).toBe('pong');
}

describe.each(modes)('live channel /api/ws (%s)', (mode) => {
  let b: Bindery;
  let call: Call;
  let admin: Account;
  let reader: Account;
  let url: string;
  /** a second gateway replica on the same database and bus (distributed), else the same one */
  let otherUrl: string;
  const dirs: string[] = [];

  beforeAll(async () => {
    b = await get(mode);
    call = api(b);
    admin = await register(call);
    reader = await register(call);
    url = wsUrl(b.url);
    otherUrl = url;
    if (mode === 'distributed') {
      const g = await spawnBindery('service', { ...b.env, BINDERY_SERVICES: 'gateway' }, /bindery gateway started \(distributed\) at (http:\/\/\S+)/);
      b.procs.push(g.proc);
      otherUrl = wsUrl(g.match[1]!);
    }
  }, 240_000);
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('authenticates by Bearer header and answers ping', async () => {
    const c = await open(url, { authorization: `Bearer ${reader.token}` });
    const ready = await c.next();
    expect(ready).toEqual({ type: 'ready', user_id: reader.id, role: 'user', topics: ['progress', 'conflicts', 'scanner', 'devices', 'queue'], heartbeat_ms: 30_000 });
    c.send({ type: 'ping' });
    const pong = await c.next();
    expect(pong.type).toBe('pong');
    expect(Number.isNaN(Date.parse(pong.at))).toBe(false);
    c.s.close();
  });

  it('authenticates by a first auth message, and refuses a bad token by closing', async () => {
    const c = await open(url);
    c.send({ type: 'subscribe', topics: ['progress'] });
    expect(await c.next()).toEqual({ type: 'error', error: 'authentication required' });
    c.send({ type: 'auth', token: reader.token });
    expect((await c.next()).type).toBe('ready');
    c.send({ type: 'auth', token: reader.token });
    expect(await c.next()).toEqual({ type: 'error', error: 'already authenticated' });
    c.s.close();

    const bad = await open(url);
    bad.send({ type: 'auth', token: 'not-a-jwt' });
    expect(await bad.next()).toEqual({ type: 'error', error: 'invalid or expired token' });
    expect(await bad.closedWith()).toEqual({ code: 1008, reason: 'invalid or expired token' });
  });

  it('keeps scanner for admins and checks topics', async () => {
    const c = await open(url, { cookie: `token=${reader.token}` });
    await c.next((m) => m.type === 'ready');
    c.send({ type: 'subscribe', topics: ['scanner'] });
    expect(await c.next()).toEqual({ type: 'error', error: 'admin access required' });
    c.send({ type: 'subscribe', topics: ['progress', 'queue'] });
    expect(await c.next()).toEqual({ type: 'subscribed', topics: ['progress', 'queue'] });
    c.send({ type: 'unsubscribe', topics: ['queue'] });
    expect(await c.next()).toEqual({ type: 'subscribed', topics: ['progress'] });
    c.send({ type: 'subscribe', topics: ['weather'] });
    expect(await c.next()).toEqual({ type: 'error', error: 'topics must be a list of: progress, conflicts, scanner, devices, queue' });
    c.s.send('{not json');
    expect(await c.next()).toEqual({ type: 'error', error: 'invalid message' });
    c.send({ type: 'dance' });
    expect(await c.next()).toEqual({ type: 'error', error: 'unknown message type' });
    c.s.close();
  });

  it('delivers a scan live to a subscribed admin on every replica, and nothing to a user', async () => {
    // the scan is started through one gateway; the socket is held by another (distributed)
    const watcher = await open(otherUrl, { authorization: `Bearer ${admin.token}` });
    await watcher.next((m) => m.type === 'ready');
    watcher.send({ type: 'subscribe', topics: ['scanner'] });
    expect(await watcher.next()).toEqual({ type: 'subscribed', topics: ['scanner'] });
    const user = await open(url, { authorization: `Bearer ${reader.token}` });
    await user.next((m) => m.type === 'ready');
    user.send({ type: 'subscribe', topics: ['progress'] });
    await user.next((m) => m.type === 'subscribed');

    const dir = mkdtempSync(join(tmpdir(), 'bindery-ws-'));
    dirs.push(dir);
    cpSync(join(FIXTURE, 'Grace Holloway'), join(dir, 'Grace Holloway'), { recursive: true, preserveTimestamps: true });
    const lib = await createLibrary(call, admin.token, { name: 'Live', folders: [dir], watch: false });
    const started = await watcher.next((m) => m.type === 'event' && m.event === 'scan-started' && m.data.library_id === lib.id);
    expect(started.topic).toBe('scanner');
    const finished = await watcher.next((m) => m.type === 'event' && m.event === 'scan-finished' && m.data.library_id === lib.id);
    expect(finished.data.scan_id).toBe(started.data.scan_id);
    expect(finished.data.status).toBe('completed');
    expect(finished.data.added).toBe(1);
    // progress comes on the catalog's transient subject, at least once with the final counts
    const progress = await watcher.next((m) => m.type === 'event' && m.event === 'scan-progress' && m.data.scan_id === started.data.scan_id);
    expect(progress).toMatchObject({ topic: 'scanner', data: { library_id: lib.id } });
    await settled(call, admin.token, lib.id);
    user.send({ type: 'ping' });
    // the user's next message is the pong: no scan event was queued before it
    expect((await user.next()).type).toBe('pong');
    watcher.s.close();
    user.s.close();
  });

  it("delivers a user's progress and conflicts to that user's sockets on every replica, and to nobody else", async () => {
    const owner = await register(call);
    const stranger = await register(call);
    const { items } = await shelf(call, `Live ${mode}`, ['Live One'], admin);
    const book = items[0]!.id as string;
    // the write goes through one gateway; the owner's sockets are on the other (distributed) and on it
    const far = await subscribed(otherUrl, owner.token, ['progress', 'conflicts']);
    const nearConflictsOnly = await subscribed(url, owner.token, ['conflicts']);
    const strangerSocket = await subscribed(otherUrl, stranger.token, ['progress', 'conflicts']);
    // (not `scanner`: any library's scan, a reconcile of another test's included, may land there meanwhile)
    const adminSocket = await subscribed(url, admin.token, ['progress', 'conflicts']);

    const saved = await put(call, owner.token, book, { percentage: 0.4, client: 'web', device: 'laptop' });
    expect(saved.json.status).toBe('saved');
    const p = await far.next((m) => m.type === 'event');
    expect(p).toEqual({
      type: 'event',
      topic: 'progress',
      event: 'progress-saved',
      data: { user_id: owner.id, media_item_id: book, progress: saved.json.progress },
    });

    const c = await put(call, owner.token, book, { percentage: 0.7, client: 'koreader', device: 'kobo' });
    expect(c.json.status).toBe('conflict');
    const opened = { type: 'event', topic: 'conflicts', event: 'progress-conflict-opened', data: { user_id: owner.id, conflict: c.json.conflict } };
    expect(await far.next((m) => m.type === 'event')).toEqual(opened);
    expect(await nearConflictsOnly.next((m) => m.type === 'event')).toEqual(opened);

    const resolved = await call('POST', `/api/progress-conflicts/${c.json.conflict.id}/resolve`, { token: owner.token, body: { keep: 'incoming' } });
    expect(resolved.status, resolved.text).toBe(200);
    // keeping the incoming position saves it, and closes the conflict
    const after = [await far.next((m) => m.type === 'event'), await far.next((m) => m.type === 'event')];
    expect(after.map((m) => `${m.topic}/${m.event}`).sort()).toEqual(['conflicts/progress-conflict-closed', 'progress/progress-saved']);
    expect(after.find((m) => m.event === 'progress-saved')!.data.progress.percentage).toBe(0.7);
    expect(after.find((m) => m.event === 'progress-conflict-closed')!.data.conflict).toMatchObject({ id: c.json.conflict.id, status: 'resolved' });
    expect((await nearConflictsOnly.next((m) => m.type === 'event')).event).toBe('progress-conflict-closed');

    const del = await call('DELETE', `/api/media-items/${book}/progress`, { token: owner.token });
    expect(del.status, del.text).toBe(200);
    expect(await far.next((m) => m.type === 'event')).toEqual({ type: 'event', topic: 'progress', event: 'progress-deleted', data: { user_id: owner.id, media_item_id: book } });

    // the stranger's write reaches the stranger only
    expect((await put(call, stranger.token, book, { percentage: 0.2 })).json.status).toBe('saved');
    expect((await strangerSocket.next((m) => m.type === 'event')).data.user_id).toBe(stranger.id);
    // nobody saw anything else: a user never gets another user's events, an admin neither
    await nothingPending(far);
    await nothingPending(nearConflictsOnly);
    await nothingPending(strangerSocket);
    await nothingPending(adminSocket);
    for (const x of [far, nearConflictsOnly, strangerSocket, adminSocket]) x.s.close();
  });

  it("delivers a user's devices and queue (device-sync) to that user, and lets a device in with its credential", async () => {
    const owner = await register(call);
    const stranger = await register(call);
    const { items } = await shelf(call, `Devices ${mode}`, ['On the shelf'], admin);
    const watch = await subscribed(otherUrl, owner.token, ['devices', 'queue']);
    const strangerSocket = await subscribed(url, stranger.token, ['devices', 'queue']);

    const dev = await enroll(call, owner, 'Kobo');
    const approved = await watch.next((m) => m.event === 'device-approved');
    expect(approved).toMatchObject({ topic: 'devices', event: 'device-approved', data: { user_id: owner.id, device: { id: dev.device_id, name: 'Kobo' } } });

    // the device itself: by its credential on the upgrade, or in the first message; never scanner
    const bad = await open(url);
    bad.send({ type: 'auth', device: 'bdt_not-a-credential' });
    expect(await bad.next()).toEqual({ type: 'error', error: 'invalid or expired token' });
    expect(await bad.closedWith()).toEqual({ code: 1008, reason: 'invalid or expired token' });
    const byHeader = await open(otherUrl, { authorization: `Device ${dev.token}` });
    expect(await byHeader.next()).toEqual({
      type: 'ready',
      user_id: owner.id,
      role: 'user',
      device_id: dev.device_id,
      topics: ['progress', 'conflicts', 'scanner', 'devices', 'queue'],
      heartbeat_ms: 30_000,
    });
    byHeader.send({ type: 'subscribe', topics: ['scanner'] });
    expect(await byHeader.next()).toEqual({ type: 'error', error: 'admin access required' });
    byHeader.send({ type: 'subscribe', topics: ['queue'] });
    expect(await byHeader.next()).toEqual({ type: 'subscribed', topics: ['queue'] });
    const byMessage = await open(url);
    byMessage.send({ type: 'auth', device: dev.token });
    expect(await byMessage.next()).toMatchObject({ type: 'ready', user_id: owner.id, device_id: dev.device_id });

    // a shelf on the device queues the collection's book
    const coll = await call('POST', '/api/collections', { token: owner.token, body: { name: 'To the Kobo' } });
    expect(coll.status, coll.text).toBe(201);
    expect((await call('POST', `/api/collections/${coll.json.id}/items`, { token: owner.token, body: { media_item_ids: [items[0]!.id] } })).status).toBe(200);
    const sh = await call('POST', `/api/devices/${dev.device_id}/shelves`, { token: owner.token, body: { collection_id: coll.json.id } });
    expect(sh.status, sh.text).toBe(201);
    expect(await watch.next((m) => m.topic === 'devices')).toMatchObject({
      event: 'shelf-added',
      data: { user_id: owner.id, device_id: dev.device_id, collection_id: coll.json.id },
    });
    const queued = {
      topic: 'queue',
      event: 'queue-entry-saved',
      data: { user_id: owner.id, device_id: dev.device_id, entry: { media_item_id: items[0]!.id, action: 'download', status: 'pending' } },
    };
    expect(await watch.next((m) => m.event === 'queue-entry-saved')).toMatchObject(queued);
    expect(await byHeader.next((m) => m.event === 'queue-entry-saved')).toMatchObject(queued);

    // removing the device tells its owner and closes the device's own sockets
    const del = await call('DELETE', `/api/devices/${dev.device_id}`, { token: owner.token });
    expect(del.status, del.text).toBe(200);
    expect(await watch.next((m) => m.event === 'device-deleted')).toMatchObject({ topic: 'devices', data: { user_id: owner.id, device_id: dev.device_id } });
    expect(await byHeader.closedWith()).toEqual({ code: 1008, reason: 'invalid or expired token' });
    expect(await byMessage.closedWith()).toEqual({ code: 1008, reason: 'invalid or expired token' });
    // the credential's hash never went out, and the stranger saw none of it
    expect(watch.got.some((m) => m.event === 'device-credential-issued')).toBe(false);
    await nothingPending(strangerSocket);
    watch.s.close();
    strangerSocket.s.close();
  });

  it('follows the account: a demoted admin loses scanner at once; logout and deletion close the sockets', async () => {
    const second = await register(call, { role: 'admin', caller: admin.token });
    const adminWatch = await subscribed(otherUrl, second.token, ['progress', 'scanner']);
    const r = await call('PUT', `/api/auth/profile/${second.id}`, { token: admin.token, body: { role: 'user' } });
    expect(r.status, r.text).toBe(200);
    expect(await adminWatch.next((m) => m.type === 'subscribed')).toEqual({ type: 'subscribed', topics: ['progress'] });
    adminWatch.send({ type: 'subscribe', topics: ['scanner'] });
    expect(await adminWatch.next()).toEqual({ type: 'error', error: 'admin access required' });

    // logging out revokes that session: its socket closes, another session's stays
    const other = await call('POST', '/api/auth/login', { body: { login: second.username, password: second.password } });
    expect(other.status, other.text).toBe(200);
    const keep = await subscribed(url, other.json.access_token, ['progress']);
    expect((await call('POST', '/api/auth/logout', { token: second.token })).status).toBe(200);
    expect(await adminWatch.closedWith()).toEqual({ code: 1008, reason: 'invalid or expired token' });
    await nothingPending(keep);

    // a deleted account's sockets close
    const gone = await register(call);
    const goneSocket = await subscribed(otherUrl, gone.token, ['progress']);
    const d = await call('DELETE', `/api/auth/profile/${gone.id}`, { token: admin.token });
    expect(d.status, d.text).toBe(200);
    expect(await goneSocket.closedWith()).toEqual({ code: 1008, reason: 'invalid or expired token' });
    keep.s.close();
  });

  // the bound is the gateway's own and the same in both modes (no bus on the way): checked once
  it.runIf(mode === 'embedded')(
    'drops a socket that stops reading instead of buffering for it, and keeps one that reads',
    async () => {
      const who = await register(call);
      // a client that stops reading and keeps sending pings: every pong waits in the server's buffer
      const slow = await subscribed(url, who.token, ['progress']);
      slow.s.pause();
      const BATCH = 20_000;
      const CAP = 2_000_000; // ~100 MB of pongs: far past the kernel's buffers and the 1 MiB bound
      let sent = 0;
      const ping = JSON.stringify({ type: 'ping' });
      while (slow.s.readyState === 1 && sent < CAP) {
        for (let i = 0; i < BATCH; i++) slow.s.send(ping);
        sent += BATCH;
        // let the writes go out, and a refused write surface
        await new Promise<void>((r) => slow.s.send(ping, () => r()));
        sent += 1;
      }
      slow.s.resume();
      const closed = await slow.closedWith();
      // cut (1006) or, if it read the close frame in time, closed as too slow (1013)
      expect([1006, 1013]).toContain(closed?.code);
      const pongs = slow.got.filter((m) => m.type === 'pong').length;
      expect(pongs).toBeLessThan(sent);

      // the same pings from a client that reads as it goes: every one answered, the socket stays
      const reader = await subscribed(url, who.token, ['progress']);
      const STEP = 10_000; // at most ~500 KB of pongs in flight, below the 1 MiB bound
      let answered = 0;
      for (let done = 0; done < sent; done += STEP) {
        const n = Math.min(STEP, sent - done);
        for (let i = 0; i < n; i++) reader.s.send(ping);
        while (reader.got.length < n) await new Promise((r) => setTimeout(r, 5));
        answered += reader.got.splice(0).filter((m) => m.type === 'pong').length;
      }
      expect(answered).toBe(sent);
      expect(reader.isClosed()).toBe(false);
      reader.s.close();
    },
    120_000,
  );
});

// also the ops listener's /metrics: the socket numbers are this gateway process's own (no bus),
// the same in both modes, so they are read once, here
describe('live channel heartbeat and metrics (embedded, 300 ms)', () => {
  let b: Bindery;
  let token: string;
  let ops: string;
  const dirs: string[] = [];
  beforeAll(async () => {
    const port = await freePort();
    ops = `http://127.0.0.1:${port}`;
    b = await startBindery('embedded', { WS_HEARTBEAT_MS: '300', OPS_PORT: String(port), OPS_HOST: '127.0.0.1' });
    token = (await register(api(b))).token; // the first account: an administrator
  }, 240_000);
  afterAll(async () => {
    await b?.stop();
    dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
  });

  it('shows open sockets by kind, events delivered, dropped sockets and buffered bytes on /metrics', async () => {
    const metrics = async () => {
      const r = await client(ops)('GET', '/metrics');
      expect(r.status).toBe(200);
      return r.text;
    };
    // no socket is open yet
    await eventually(async () => expect(sample(await metrics(), 'bindery_ws_sockets', { kind: 'user' })).toBe(0), 10_000);
    const before = await metrics();
    expect(sample(before, 'bindery_ws_sockets', { kind: 'device' })).toBe(0);
    expect(sample(before, 'bindery_ws_slow_dropped_total')).toBe(0);
    expect(sample(before, 'bindery_ws_buffered_bytes')).toBe(0);
    expect(sample(before, 'bindery_ws_buffered_bytes_max')).toBe(0);
    const delivered0 = sample(before, 'bindery_ws_events_delivered_total', { topic: 'scanner' });
    expect(delivered0).toBe(0);

    const c = await subscribed(wsUrl(b.url), token, ['scanner']);
    const two = await subscribed(wsUrl(b.url), token, ['progress']);
    expect(sample(await metrics(), 'bindery_ws_sockets', { kind: 'user' })).toBe(2);
    two.s.close();
    await eventually(async () => expect(sample(await metrics(), 'bindery_ws_sockets', { kind: 'user' })).toBe(1), 10_000);

    // a scan's events reach the subscribed socket, and are counted under their topic
    const dir = mkdtempSync(join(tmpdir(), 'bindery-ws-metrics-'));
    dirs.push(dir);
    const lib = await createLibrary(api(b), token, { name: 'Metrics', folders: [dir], watch: false });
    await c.next((m) => m.type === 'event' && m.event === 'scan-started' && m.data.library_id === lib.id);
    await c.next((m) => m.type === 'event' && m.event === 'scan-finished' && m.data.library_id === lib.id);
    const after = await metrics();
    expect(sample(after, 'bindery_ws_events_delivered_total', { topic: 'scanner' })).toBeGreaterThanOrEqual(2);
    expect(sample(after, 'bindery_ws_events_delivered_total', { topic: 'progress' })).toBe(0);
    expect(sample(after, 'bindery_ws_slow_dropped_total')).toBe(0);
    c.s.close();
    await eventually(async () => expect(sample(await metrics(), 'bindery_ws_sockets', { kind: 'user' })).toBe(0), 10_000);
  });

  it('closes a socket that stops answering pings, and keeps one that answers', async () => {
    const url = wsUrl(b.url);
    const deaf = await open(url, { authorization: `Bearer ${token}` }, false);
    const live = await open(url, { authorization: `Bearer ${token}` });
    expect((await deaf.next()).type).toBe('ready');
    expect((await live.next()).type).toBe('ready');
    // unanswered ping at the first tick, terminated at the second (1006: no close frame)
    expect((await deaf.closedWith())?.code).toBe(1006);
    live.send({ type: 'ping' });
    expect((await live.next()).type).toBe('pong');
    expect(live.s.readyState).toBe(1);
    live.s.close();
  });
});
