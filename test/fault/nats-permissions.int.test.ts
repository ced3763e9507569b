// Trust between services: the NATS accounts shipped in infra/k8s/nats give each service its own user,
// so a connection with wrong or another service's credentials can neither call the catalog nor
// write identity's events; and the whole distributed system still runs under those permissions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { eventSubject, rpcSubject, type StoredEvent } from '@bindery/contracts';
import { connectNatsBus, type NatsBus } from '../../platform/src/bus/nats-bus';
import { createLogger } from '../../platform/src/logger';
import { createTestDatabase, resolveBackends } from '../support/backends';
import { streamEventCount } from '../support/stream-events';
import { ROOT, spawnBindery, type Proc } from '../support/bindery';
import { client } from '../support/http';

const NATS_SERVER = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
const ACCOUNTS = join(ROOT, 'infra/k8s/nats/bindery-accounts.conf');
const SERVICES = ['identity', 'catalog', 'reading', 'device-sync', 'gateway'] as const;
type Service = (typeof SERVICES)[number];
const passwords = Object.fromEntries(SERVICES.map((s) => [s, `p${randomBytes(18).toString('base64url')}`])) as Record<Service, string>;
const log = createLogger('test', 'silent');
const backends = await resolveBackends();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** nats-server with the shipped accounts (users, permissions) on a random port and a private store. */
async function startConfiguredNats(): Promise<{ url: string; stderr(): string; stop(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'bindery-nats-auth-'));
  const config = join(dir, 'nats.conf');
  await writeFile(config, `jetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }\ninclude ${JSON.stringify(relative(dir, ACCOUNTS))}\n`);
  const env = {
    ...process.env,
    NATS_IDENTITY_PASSWORD: passwords.identity,
    NATS_CATALOG_PASSWORD: passwords.catalog,
    NATS_READING_PASSWORD: passwords.reading,
    NATS_DEVICE_SYNC_PASSWORD: passwords['device-sync'],
    NATS_GATEWAY_PASSWORD: passwords.gateway,
  };
  const child: ChildProcess = spawn(NATS_SERVER, ['-c', config, '-a', '127.0.0.1', '-p', '-1', '--ports_file_dir', dir], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nats-server exited: ${stderr}`);
    const ports = (await readdir(dir)).find((f) => f.endsWith('.ports'));
    const url = ports
      ? await readFile(join(dir, ports), 'utf8').then(
          (t) => (JSON.parse(t) as { nats?: string[] }).nats?.[0],
          () => undefined,
        )
      : undefined;
    if (url && (await listening(url))) return { url, stderr: () => stderr, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`nats-server did not start: ${stderr}`);
    }
    await sleep(50);
  }
}

function listening(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((r) => {
    const s = tcpConnect({ host: u.hostname, port: Number(u.port) }, () => (s.destroy(), r(true)));
    s.on('error', () => r(false));
  });
}

const storedEvent = (source: string, type: string, position: number): StoredEvent => ({
  id: randomUUID(),
  type,
  source,
  streamId: `user-${randomUUID()}`,
  version: 1,
  position,
  data: { forged: source !== 'identity' },
  metadata: {},
  recordedAt: new Date().toISOString(),
});

describe.skipIf(!existsSync(NATS_SERVER))(`NATS permissions per service (infra/k8s/nats; needs ${NATS_SERVER})`, () => {
  let nats: Awaited<ReturnType<typeof startConfiguredNats>>;
  const buses: NatsBus[] = [];
  const busAs = async (user: Service, password = passwords[user]) => {
    const bus = await connectNatsBus(nats.url, { name: `test-${user}`, logger: log, auth: { user, pass: password }, inboxPrefix: `_INBOX.${user}` });
    buses.push(bus);
    return bus;
  };

  beforeAll(async () => {
    nats = await startConfiguredNats();
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled(buses.map((b) => b.close()));
    await nats?.stop();
  });

  it('refuses a connection without credentials, with a wrong password or an unknown user', async () => {
    await expect(connect({ servers: nats.url, reconnect: false })).rejects.toThrow(/Authorization Violation/i);
    await expect(connect({ servers: nats.url, reconnect: false, user: 'catalog', pass: passwords.gateway })).rejects.toThrow(/Authorization Violation/i);
    await expect(connect({ servers: nats.url, reconnect: false, user: 'admin', pass: passwords.gateway })).rejects.toThrow(/Authorization Violation/i);
  });

  it('only the gateway calls rpc.catalog.*, and only the catalog answers it', async () => {
    const catalog = await busAs('catalog');
    let served = 0;
    await catalog.serve('catalog', { whoami: async () => (served++, 'catalog') });
    const gateway = await busAs('gateway');
    expect(await gateway.request(rpcSubject('catalog', 'whoami'), { role: 'admin' }, 2_000)).toBe('catalog');
    expect(served).toBe(1);

    // identity (or anyone holding identity's credentials) may not send requests at all
    const identity = await busAs('identity');
    await expect(identity.request(rpcSubject('catalog', 'whoami'), { role: 'admin' }, 1_000)).rejects.toThrow(/permission|no reply|no responders/i);
    expect(served).toBe(1);

    // nor can it pose as the catalog: its subscription is refused, so every request still reaches the real one
    await identity.serve('catalog', { whoami: async () => 'forged' });
    await sleep(200);
    const answers = new Set<unknown>();
    for (let i = 0; i < 20; i++) answers.add(await gateway.request(rpcSubject('catalog', 'whoami'), {}, 2_000));
    expect([...answers]).toEqual(['catalog']);
    expect(nats.stderr()).toMatch(/Subscription Violation.*bindery\.rpc\.catalog/);
  });

  it('reading asks the catalog for locator indexes and book text, and for nothing else', async () => {
    const catalog = await busAs('catalog');
    await catalog.serve('catalog', { 'locator-index': async () => 'index', 'locator-text': async () => 'text', 'item-delete': async () => 'deleted' });
    const reading = await busAs('reading');
    expect(await reading.request(rpcSubject('catalog', 'locator-index'), { sha256: 'x' }, 2_000)).toBe('index');
    expect(await reading.request(rpcSubject('catalog', 'locator-text'), { sha256: 'x' }, 2_000)).toBe('text');
    await expect(reading.request(rpcSubject('catalog', 'item-delete'), { id: 'x' }, 1_000)).rejects.toThrow(/permission|no reply|no responders/i);
  });

  it("nobody but identity writes identity's events, and nobody reads another service's replies", async () => {
    const identity = await busAs('identity');
    await identity.ensureStream('identity');
    await identity.publishBatch([storedEvent('identity', 'identity.user-registered.v1', 1)]);
    const count = async () => (await jetstreamManager(identity.nc)).streams.info('BINDERY_IDENTITY').then((i) => i.state.messages);
    expect(await count()).toBe(1);

    for (const user of ['catalog', 'gateway'] as const) {
      const nc = await connect({ servers: nats.url, reconnect: false, user, pass: passwords[user], inboxPrefix: `_INBOX.${user}` });
      try {
        const js = jetstream(nc, { timeout: 1_000 });
        const forged = storedEvent('identity', 'identity.user-role-changed.v1', 2);
        await expect(js.publish(eventSubject('identity', forged.type), JSON.stringify(forged), { msgID: forged.id })).rejects.toThrow(/permission|timeout|no responders/i);
        // a plain publish is dropped by the server as well
        nc.publish(eventSubject('identity', 'identity.user-role-changed.v1'), JSON.stringify(forged));
        await nc.flush();
        // nor may it create or delete identity's stream
        await expect((await jetstreamManager(nc, { timeout: 1_000 }).catch((e: Error) => Promise.reject(e))).streams.delete('BINDERY_IDENTITY')).rejects.toThrow(
          /permission|timeout/i,
        );
      } finally {
        await nc.close();
      }
    }
    await sleep(200);
    expect(await count()).toBe(1);
    expect(nats.stderr()).toMatch(/Publish Violation.*bindery\.evt\.identity/);

    // the gateway's replies (which carry session tokens) are out of the catalog's reach
    const spy = await connect({ servers: nats.url, reconnect: false, user: 'catalog', pass: passwords.catalog, inboxPrefix: '_INBOX.catalog' });
    try {
      let overheard = 0;
      spy.subscribe('_INBOX.gateway.>', { callback: (e) => void (e || overheard++) });
      await spy.flush();
      const catalog = await busAs('catalog');
      await catalog.serve('catalog', { token: async () => 'secret-token' });
      const gateway = await busAs('gateway');
      expect(await gateway.request(rpcSubject('catalog', 'token'), {}, 2_000)).toBe('secret-token');
      await sleep(100);
      expect(overheard).toBe(0);
      expect(nats.stderr()).toMatch(/Subscription Violation.*_INBOX\.gateway/);
    } finally {
      await spy.close();
    }
  });

  describe('the distributed system under these permissions', () => {
    const procs: Proc[] = [];
    let drop: (() => Promise<void>) | undefined;
    let url = '';
    beforeAll(async () => {
      if (!backends.postgresUrl) return;
      const db = await createTestDatabase(backends.postgresUrl);
      drop = db.drop;
      const env = { DATABASE_URL: db.url, NATS_URL: nats.url, JWT_SECRET: 'test-secret-test-secret-test-secret-0123456789', PORT: '0', HOST: '127.0.0.1' };
      const as = (s: Service) => ({ ...env, BINDERY_SERVICES: s, NATS_USER: s, NATS_PASSWORD: passwords[s] });
      const started = await Promise.all([
        spawnBindery('service', as('identity'), /bindery identity started/),
        spawnBindery('service', as('catalog'), /bindery catalog started/),
        spawnBindery('service', as('reading'), /bindery reading started/),
        spawnBindery('service', as('device-sync'), /bindery device-sync started/),
      ]);
      procs.push(...started.map((s) => s.proc));
      const gateway = await spawnBindery('service', as('gateway'), /bindery gateway started \(distributed\) at (http:\/\/\S+)/);
      procs.push(gateway.proc);
      url = gateway.match[1]!;
    }, 120_000);
    afterAll(async () => {
      await Promise.allSettled(procs.map((p) => p.stop()));
      await drop?.();
    });

    it.skipIf(!backends.postgresUrl)('registers, reads the profile and lists libraries with every service on its own NATS user (needs PostgreSQL)', async () => {
      const http = client(url);
      // the server logs each refused publish or subscription with the connection's name (bindery-<service>)
      const violations = () =>
        nats
          .stderr()
          .split('\n')
          .filter((l) => /Violation/.test(l) && /:bindery-/.test(l));
      const r = await http('POST', '/api/auth/register', { body: { email: 'perm@example.com', username: 'perm-admin', password: 'passw0rd-perm' } });
      expect(r.status).toBe(201);
      const token = r.json.access_token as string;
      expect((await http('GET', '/api/auth/profile', { token })).json.username).toBe('perm-admin');
      const libs = await http('GET', '/api/libraries', { token });
      expect(libs.status).toBe(200);
      // device-sync serves, publishes its events and the gateway follows them (the credential works)
      const reg = await http('POST', '/api/devices/register', { body: { name: 'Permission reader' } });
      expect(reg.status, reg.text).toBe(201);
      expect((await http('POST', `/api/devices/${reg.json.user_code}/approve`, { token })).status).toBe(200);
      const st = await http('POST', '/api/devices/register/status', { body: { device_code: reg.json.device_code } });
      expect(st.json.status).toBe('approved');
      expect((await http('GET', '/api/sync/device', { headers: { authorization: `Device ${st.json.device_token}` } })).status).toBe(200);
      // the events flowed: identity's stream holds the registration, consumed by the catalog and the gateway
      await sleep(1_000);
      const nc = await connect({ servers: nats.url, reconnect: false, user: 'identity', pass: passwords.identity, inboxPrefix: '_INBOX.identity' });
      try {
        expect(await streamEventCount(nc, 'BINDERY_IDENTITY')).toBeGreaterThanOrEqual(2);
      } finally {
        await nc.close();
      }
      expect(violations()).toEqual([]);
    });
  });
});
