// Operations surface of every process (issue 8): the ops listener's /healthz, /readyz and /metrics,
// request ids carried from the gateway across the bus into the services' log lines, and the admin
// routes over parked events. Each process gets its own OPS_PORT, so this file starts its own set.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, resolveBackends, startNatsServer } from '../support/backends';
import { availableModes, spawnBindery, type Mode, type Proc } from '../support/bindery';
import { client } from '../support/http';
import { freePort, sample } from '../support/ops';
import { eventually, expectError, register, type Call } from './helpers';
import { createLibrary, emptyDir, scan } from './catalog-helpers';

const SECRET = 'test-secret-test-secret-test-secret-0123456789';
type Role = 'identity' | 'catalog' | 'reading' | 'device-sync' | 'gateway';

interface Running {
  url: string;
  /** the ops listener of the process that runs each service (one and the same in embedded mode) */
  ops: Record<Role, string>;
  /** the output of the process that runs each service */
  output: Record<Role, () => string>;
  databaseUrl?: string;
  stop(): Promise<void>;
}

// library folders of this file are temporary directories
process.env.LIBRARY_ROOTS = tmpdir();

async function start(mode: Mode): Promise<Running> {
  const common = { HOST: '127.0.0.1', PORT: '0', OPS_HOST: '127.0.0.1', LOG_LEVEL: 'debug', SCAN_WATCH: 'off' };
  if (mode === 'embedded') {
    const dataDir = mkdtempSync(join(tmpdir(), 'bindery-ops-'));
    const port = await freePort();
    const { proc, match } = await spawnBindery('main', { ...common, DATA_DIR: dataDir, OPS_PORT: String(port) }, /Bindery is running at (http:\/\/\S+)/);
    const ops = `http://127.0.0.1:${port}`;
    return {
      url: match[1]!,
      ops: { identity: ops, catalog: ops, reading: ops, 'device-sync': ops, gateway: ops },
      output: { identity: proc.output, catalog: proc.output, reading: proc.output, 'device-sync': proc.output, gateway: proc.output },
      async stop() {
        await proc.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const backends = await resolveBackends();
  const db = await createTestDatabase(backends.postgresUrl!);
  const nats = await startNatsServer();
  const env = { ...common, DATABASE_URL: db.url, NATS_URL: nats.url, JWT_SECRET: SECRET, DATA_DIR: mkdtempSync(join(tmpdir(), 'bindery-ops-')) };
  const ports = { identity: await freePort(), catalog: await freePort(), reading: await freePort(), 'device-sync': await freePort(), gateway: await freePort() };
  const procs: Proc[] = [];
  const one = async (role: Role, ready: RegExp) => {
    const r = await spawnBindery('service', { ...env, BINDERY_SERVICES: role, OPS_PORT: String(ports[role]) }, ready);
    procs.push(r.proc);
    return r;
  };
  const stop = async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await nats.stop();
    await db.drop();
    rmSync(env.DATA_DIR, { recursive: true, force: true });
  };
  try {
    const [identity, catalog, reading, deviceSync] = await Promise.all([
      one('identity', /bindery identity started/),
      one('catalog', /bindery catalog started/),
      one('reading', /bindery reading started/),
      one('device-sync', /bindery device-sync started/),
    ]);
    const gateway = await one('gateway', /bindery gateway started \(distributed\) at (http:\/\/\S+)/);
    const at = (role: Role) => `http://127.0.0.1:${ports[role]}`;
    return {
      url: gateway.match[1]!,
      ops: { identity: at('identity'), catalog: at('catalog'), reading: at('reading'), 'device-sync': at('device-sync'), gateway: at('gateway') },
      output: {
        identity: identity.proc.output,
        catalog: catalog.proc.output,
        reading: reading.proc.output,
        'device-sync': deviceSync.proc.output,
        gateway: gateway.proc.output,
      },
      databaseUrl: db.url,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

const METRIC_NAMES = [
  'process_resident_memory_bytes',
  'nodejs_heap_size_used_bytes',
  'bindery_http_request_duration_seconds',
  'bindery_rpc_duration_seconds',
  'bindery_outbox_relay_lag_events',
  'bindery_consumer_lag_events',
  'bindery_parked_events',
  'bindery_events_parked_total',
  'bindery_read_your_writes_wait_seconds',
  'bindery_outbox_relay_pass_seconds',
  'bindery_outbox_relay_pass_events',
  'bindery_consumer_delivery_seconds',
  'bindery_group_commit_batch_seconds',
  'bindery_group_commit_batch_jobs',
];
/** the scanner's own metrics: in the catalog's process (embedded: the one process) */
const SCAN_METRIC_NAMES = ['bindery_scans_total', 'bindery_scan_duration_seconds'];

const logLines = (out: string) =>
  out.split('\n').flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });

for (const mode of await availableModes()) {
  describe(`ops surface (${mode})`, () => {
    let b: Running;
    let call: Call;
    let adminToken: string;
    const roles: Role[] = mode === 'embedded' ? ['gateway'] : ['identity', 'catalog', 'gateway'];
    const metrics = async (role: Role) => {
      const r = await client(b.ops[role])('GET', '/metrics');
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      return r.text;
    };

    beforeAll(async () => {
      b = await start(mode);
      call = client(b.url);
      adminToken = (await register(call)).token; // the first account is the administrator
    });
    afterAll(async () => {
      await b?.stop();
    });

    it('answers /healthz, /readyz and /metrics on the ops port of every process', async () => {
      for (const role of roles) {
        const ops = client(b.ops[role]);
        const live = await ops('GET', '/healthz');
        expect(live.status).toBe(200);
        expect(live.json).toEqual({ status: 'ok' });
        const ready = await eventually(async () => {
          const r = await ops('GET', '/readyz');
          expect(r.status, `${role}: ${r.text}`).toBe(200);
          return r;
        }, 10_000);
        expect(ready.json).toEqual({ status: 'ready', checks: { database: 'ok', bus: 'ok', services: 'ok', consumers: 'ok' } });
        const text = await metrics(role);
        for (const name of METRIC_NAMES) expect(text, `${role} /metrics lacks ${name}`).toContain(`# TYPE ${name} `);
        const scanning = mode === 'embedded' || role === 'catalog';
        for (const name of SCAN_METRIC_NAMES) expect(text.includes(`# TYPE ${name} `), `${role} /metrics and ${name}`).toBe(scanning);
        expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
        const other = await ops('GET', '/nope');
        expect(other.status).toBe(404);
        expect(other.json).toEqual({ error: 'not found' });
      }
      // the gateway keeps its probes on the main port, with the same readiness
      expect((await call('GET', '/healthz')).json).toEqual({ status: 'ok' });
      const ready = await call('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.json).toEqual({ status: 'ready' });
    });

    it('measures HTTP by route, RPC on both sides, relay and consumer lag, and scans', async () => {
      const lib = await createLibrary(call, adminToken, { name: 'Ops shelf', folders: [emptyDir()], watch: false });
      const finished = await scan(call, adminToken, lib.id);
      expect(finished.status).toBe('completed');
      expect((await call('GET', `/api/libraries/${lib.id}`, { token: adminToken })).status).toBe(200);
      expect((await call('GET', '/api/no-such-route-q7z')).status).toBe(404);

      const gw = await metrics('gateway');
      expect(sample(gw, 'bindery_http_request_duration_seconds_count', { method: 'POST', route: '/api/auth/register', status: '201' })).toBeGreaterThanOrEqual(1);
      // labelled by route pattern, never by the raw URL
      expect(sample(gw, 'bindery_http_request_duration_seconds_count', { method: 'GET', route: '/api/libraries/:id', status: '200' })).toBeGreaterThanOrEqual(1);
      expect(gw).not.toContain(lib.id);
      expect(sample(gw, 'bindery_http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
      expect(gw).not.toContain('no-such-route-q7z');
      expect(sample(gw, 'bindery_rpc_duration_seconds_count', { side: 'client', subject: 'bindery.rpc.identity.register', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
      // the account's answer waited until the gateway's read models had it
      expect(sample(gw, 'bindery_read_your_writes_wait_seconds_count', { source: 'identity', outcome: 'reached' })).toBeGreaterThanOrEqual(1);
      if (mode === 'distributed') {
        // the relay published identity's events, and the gateway's durable consumer applied and acknowledged them
        expect(sample(await metrics('identity'), 'bindery_outbox_relay_pass_events_sum', { source: 'identity' })).toBeGreaterThanOrEqual(1);
        expect(sample(gw, 'bindery_consumer_delivery_seconds_count', { consumer: 'gateway-auth-view', step: 'apply' })).toBeGreaterThanOrEqual(1);
        expect(sample(gw, 'bindery_consumer_delivery_seconds_count', { consumer: 'gateway-auth-view', step: 'ack' })).toBeGreaterThanOrEqual(1);
      }

      const id = await metrics('identity');
      expect(sample(id, 'bindery_rpc_duration_seconds_count', { side: 'server', subject: 'bindery.rpc.identity.register', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
      await eventually(async () => expect(sample(await metrics('identity'), 'bindery_outbox_relay_lag_events', { source: 'identity' })).toBe(0), 10_000);

      const cat = await metrics('catalog');
      expect(sample(cat, 'bindery_scans_total', { status: 'completed' })).toBeGreaterThanOrEqual(1);
      expect(sample(cat, 'bindery_scan_duration_seconds_count', { status: 'completed' })).toBeGreaterThanOrEqual(1);
      expect(sample(cat, 'bindery_rpc_duration_seconds_count', { side: 'server', subject: 'bindery.rpc.catalog.library-create', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
      await eventually(async () => {
        expect(sample(await metrics('catalog'), 'bindery_consumer_lag_events', { consumer: 'catalog-identity', source: 'identity' })).toBe(0);
        expect(sample(await metrics('gateway'), 'bindery_consumer_lag_events', { consumer: 'gateway-auth-view', source: 'identity' })).toBe(0);
      }, 10_000);
    });

    it("folds a position write's own events into the read model from its answer (decision 96)", async () => {
      const lib = await createLibrary(call, adminToken, { name: 'Ops progress', folders: [emptyDir()], watch: false });
      const item = await call('POST', '/api/media-items', { token: adminToken, body: { library_id: lib.id, title: 'Folded at once' } });
      expect(item.status, item.text).toBe(201);
      const offered = async () => {
        const gw = await metrics('gateway');
        const n = (outcome: string) => sample(gw, 'bindery_read_model_offered_events_total', { source: 'reading', outcome }) ?? 0;
        return { folded: n('folded'), all: n('folded') + n('left') };
      };
      const before = await offered();
      // one write at a time: each follows what the read model holds once the one before was folded
      for (const percentage of [0.1, 0.2, 0.3, 0.4]) {
        const r = await call('PUT', `/api/media-items/${item.json.id}/progress`, { token: adminToken, body: { percentage } });
        expect(r.status, r.text).toBe(200);
        expect(r.json.status).toBe('saved');
      }
      // every answer carried its event (one a write), folded from it or applied as the bus brought it;
      // in distributed mode the bus is slower than the answer, so folded from it (embedded: the
      // in-process bus most often applies them first)
      await eventually(async () => expect((await offered()).all - before.all).toBe(4), 10_000);
      if (mode === 'distributed') expect((await offered()).folded).toBeGreaterThan(before.folded);
      // read your writes from the gateway's read model, right after each answer
      const titles = async (status: string) => {
        const r = await call('GET', `/api/media-items?library_id=${lib.id}&read_status=${status}`, { token: adminToken });
        expect(r.status, r.text).toBe(200);
        return r.json.data.map((i: { title: string }) => i.title);
      };
      expect(await titles('reading')).toEqual(['Folded at once']);
      expect((await call('PUT', `/api/media-items/${item.json.id}/progress`, { token: adminToken, body: { percentage: 1 } })).status).toBe(200);
      expect(await titles('finished')).toEqual(['Folded at once']);
      expect(await titles('reading')).toEqual([]);
    });

    it("folds a device-sync write's own events into the devices read model from its answer (decision 116)", async () => {
      const offered = async () => {
        const gw = await metrics('gateway');
        const n = (outcome: string) => sample(gw, 'bindery_read_model_offered_events_total', { source: 'device_sync', outcome }) ?? 0;
        return { folded: n('folded'), all: n('folded') + n('left') };
      };
      const before = await offered();
      for (const name of ['Carried Libra', 'Carried Clara']) {
        const r = await call('POST', '/api/devices/kobo', { token: adminToken, body: { name } });
        expect(r.status, r.text).toBe(201);
      }
      // each registration's answer carried its events (folded from it, or applied as the bus brought them)
      await eventually(async () => expect((await offered()).all - before.all).toBeGreaterThanOrEqual(2), 10_000);
      if (mode === 'distributed') expect((await offered()).folded).toBeGreaterThan(before.folded);
      // read your writes: the devices list has both right after their answers
      const list = await call('GET', '/api/devices', { token: adminToken });
      expect(list.status, list.text).toBe(200);
      const names = list.json.devices.map((d: { name: string }) => d.name);
      expect(names).toEqual(expect.arrayContaining(['Carried Libra', 'Carried Clara']));
    });

    it("carries the caller's request id across the bus into the service's log lines, and echoes it", async () => {
      const rid = `ops-e2e-${Math.random().toString(36).slice(2, 10)}`;
      const r = await call('POST', '/api/auth/login', { body: { login: 'nobody-here', password: 'wrong-passw0rd' }, headers: { 'x-request-id': rid } });
      expect(r.status).toBe(401);
      expect(r.headers.get('x-request-id')).toBe(rid);
      const line = await eventually(async () => {
        const found = logLines(b.output.identity()).find((l) => l.requestId === rid && l.subject === 'bindery.rpc.identity.login');
        expect(found, 'identity logged the login with the request id').toBeDefined();
        return found!;
      }, 5_000);
      expect(line.msg).toBe('rpc handled');

      // none given, or one not fit to log: a fresh id
      const fresh = await call('GET', '/api/setup/status');
      expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      const odd = await call('GET', '/api/setup/status', { headers: { 'x-request-id': 'a b\tc' } });
      expect(odd.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect((await call('GET', '/api/setup/status', { headers: { 'x-request-id': 'x'.repeat(200) } })).headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('lists and replays parked events for admins only', async () => {
      const user = await register(call, { role: 'user', caller: adminToken });
      expectError(await call('GET', '/api/admin/parked-events', { token: user.token }), 403, 'admin access required');
      expectError(await call('POST', '/api/admin/parked-events/catalog-1/replay', { token: user.token }), 403, 'admin access required');
      expectError(await call('GET', '/api/admin/parked-events'), 401, 'authentication required');

      const empty = await call('GET', '/api/admin/parked-events', { token: adminToken });
      expect(empty.status).toBe(200);
      expect(empty.json).toEqual({ parked_events: [], services_unavailable: [] });
      expectError(await call('POST', '/api/admin/parked-events/catalog-999999/replay', { token: adminToken }), 404, 'parked event not found');
      expectError(await call('POST', '/api/admin/parked-events/gateway-999999/replay', { token: adminToken }), 404, 'parked event not found');
      expectError(await call('POST', '/api/admin/parked-events/elsewhere-1/replay', { token: adminToken }), 404, 'parked event not found');
      expectError(await call('POST', '/api/admin/parked-events/not-an-id/replay', { token: adminToken }), 400, 'invalid parked event id');

      if (!b.databaseUrl) return; // embedded: the database is inside the process; the bus contract parks for real
      // Park a real identity event for the catalog's consumer, as the bus does after the last try.
      const put = await call('PUT', '/api/system/settings', { token: adminToken, body: { scan_poll_interval_seconds: 77 } });
      expect(put.status, put.text).toBe(200);
      const db = new pg.Client({ connectionString: b.databaseUrl });
      await db.connect();
      try {
        const row = await eventually(async () => {
          const r = await db.query(`select * from identity.events where type = 'identity.settings-changed.v1' order by global_position desc limit 1`);
          expect(r.rows).toHaveLength(1);
          return r.rows[0];
        });
        const event = {
          id: row.event_id,
          type: row.type,
          source: 'identity',
          streamId: row.stream_id,
          version: Number(row.stream_version),
          position: Number(row.global_position),
          data: row.data,
          metadata: row.metadata,
          recordedAt: new Date(row.recorded_at).toISOString(),
        };
        await db.query(`delete from catalog.settings where key = 'scan_poll_interval_seconds'`);
        const ins = await db.query(
          `insert into catalog.parked_events (consumer, source, position, event_id, event_type, event, error, attempts) values ('catalog-identity', 'identity', $1, $2, $3, $4, 'injected by the test', 8) returning id`,
          [event.position, event.id, event.type, JSON.stringify(event)],
        );
        const id = `catalog-${ins.rows[0].id}`;
        const listed = await call('GET', '/api/admin/parked-events', { token: adminToken });
        expect(listed.status).toBe(200);
        expect(listed.json.parked_events).toEqual([
          {
            id,
            service: 'catalog',
            consumer: 'catalog-identity',
            source: 'identity',
            position: event.position,
            event_id: event.id,
            event_type: 'identity.settings-changed.v1',
            error: 'injected by the test',
            attempts: 8,
            parked_at: expect.any(String),
          },
        ]);
        expect(sample(await metrics('catalog'), 'bindery_parked_events', { consumer: 'catalog-identity' })).toBe(1);

        const replayed = await call('POST', `/api/admin/parked-events/${id}/replay`, { token: adminToken });
        expect(replayed.status, replayed.text).toBe(200);
        expect(replayed.json).toEqual({ id, replayed: true });
        const setting = await db.query(`select value from catalog.settings where key = 'scan_poll_interval_seconds'`);
        expect(setting.rows.map((r) => r.value)).toEqual([77]);
        expect((await call('GET', '/api/admin/parked-events', { token: adminToken })).json.parked_events).toEqual([]);
        expectError(await call('POST', `/api/admin/parked-events/${id}/replay`, { token: adminToken }), 409, 'parked event already replayed');
      } finally {
        await db.end();
      }
    });
  });
}

/** A non-loopback IPv4 address of this machine, or null when it has none. */
function outsideAddress(): string | null {
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return null;
}

/** Whether a TCP connection to host:port is accepted (false: refused, or nothing within 3 s). */
function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolveP) => {
    const s = connect({ host, port });
    const done = (v: boolean) => {
      s.destroy();
      resolveP(v);
    };
    s.setTimeout(3000, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

// Issue 18, item 12: the ops listener (metrics, health; no auth) answers on loopback unless OPS_HOST says otherwise.
const outside = outsideAddress();
if (!outside) describe.skip('ops listener address (this machine has no non-loopback IPv4 address to try)', () => it('needs one', () => undefined));
else
  for (const mode of await availableModes()) {
    describe(`ops listener address (${mode})`, () => {
      const stops: (() => Promise<void>)[] = [];
      afterAll(async () => {
        await Promise.all(stops.map((s) => s()));
      });
      /** one process with OPS_HOST as given ('' is unset: the default); its ops port */
      const startWith = async (opsHost: string): Promise<number> => {
        const port = await freePort();
        const base = { HOST: '127.0.0.1', PORT: '0', SCAN_WATCH: 'off', OPS_PORT: String(port), OPS_HOST: opsHost };
        if (mode === 'embedded') {
          const dataDir = mkdtempSync(join(tmpdir(), 'bindery-ops-host-'));
          const { proc } = await spawnBindery('main', { ...base, DATA_DIR: dataDir }, /Bindery is running at (http:\/\/\S+)/);
          stops.push(async () => {
            await proc.stop();
            rmSync(dataDir, { recursive: true, force: true });
          });
        } else {
          const db = await createTestDatabase((await resolveBackends()).postgresUrl!);
          const nats = await startNatsServer();
          stops.push(async () => {
            await nats.stop();
            await db.drop();
          });
          const env = { ...base, DATABASE_URL: db.url, NATS_URL: nats.url, JWT_SECRET: SECRET, BINDERY_SERVICES: 'identity' };
          const { proc } = await spawnBindery('service', env, /bindery identity started/);
          stops.unshift(async () => void (await proc.stop()));
        }
        return port;
      };

      it('listens on 127.0.0.1 only by default, and on every address when OPS_HOST says 0.0.0.0', async () => {
        const port = await startWith('');
        expect(await connects('127.0.0.1', port)).toBe(true);
        expect((await client(`http://127.0.0.1:${port}`)('GET', '/healthz')).json).toEqual({ status: 'ok' });
        expect(await connects(outside, port), `ops port reachable at ${outside}`).toBe(false);
        const open = await startWith('0.0.0.0');
        expect(await connects(outside, open)).toBe(true);
        expect((await client(`http://${outside}:${open}`)('GET', '/healthz')).json).toEqual({ status: 'ok' });
      }, 240_000);
    });
  }
