// The live channel (docs/decisions.md, "OPDS and the live channel"): /api/ws authenticates by
// cookie, Bearer header or a first `auth` message; `ping`, `subscribe`; `scanner` is for admins and
// carries the catalog's scan events.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes, ROOT, spawnBindery, startBindery, type Bindery } from '../support/bindery';
import { api, instances, register, type Account, type Call } from './helpers';
import { createLibrary, FIXTURE, settled } from './catalog-helpers';

// `ws` comes with @fastify/websocket (Node 20 has no WebSocket client of its own)
type Socket = {
  on(ev: string, fn: (...a: any[]) => void): void;
  send(s: string): void;
  close(): void;
  readyState: number;
};
const WS = createRequire(join(ROOT, 'services/gateway/node_modules/@fastify/websocket/package.json'))('ws') as new (
  url: string,
  o?: { headers?: Record<string, string>; autoPong?: boolean },
) => Socket;

const modes = await availableModes();
const get = instances(modes);

/** A socket with a queue of what it received, and a way to wait for the next matching message. */
async function open(url: string, headers: Record<string, string> = {}, autoPong = true) {
  const s = new WS(url, { headers, autoPong });
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
  return { s, next, send, closedWith };
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
    url = `${b.url.replace(/^http/, 'ws')}/api/ws`;
    otherUrl = url;
    if (mode === 'distributed') {
      const g = await spawnBindery('service', { ...b.env, BINDERY_SERVICES: 'gateway' }, /bindery gateway started \(distributed\) at (http:\/\/\S+)/);
      b.procs.push(g.proc);
      otherUrl = `${g.match[1]!.replace(/^http/, 'ws')}/api/ws`;
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
    await settled(call, admin.token, lib.id);
    user.send({ type: 'ping' });
    // the user's next message is the pong: no scan event was queued before it
    expect((await user.next()).type).toBe('pong');
    watcher.s.close();
    user.s.close();
  });
});

describe('live channel heartbeat (embedded, 300 ms)', () => {
  let b: Bindery;
  let token: string;
  beforeAll(async () => {
    b = await startBindery('embedded', { WS_HEARTBEAT_MS: '300' });
    token = (await register(api(b))).token;
  }, 240_000);
  afterAll(async () => b?.stop());

  it('closes a socket that stops answering pings, and keeps one that answers', async () => {
    const url = `${b.url.replace(/^http/, 'ws')}/api/ws`;
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
