// Readiness is more than `select 1`: a stopped or stuck consumer, a closed bus or a database that
// does not answer each make /readyz say 503 and why. Real PGlite, a real in-memory bus.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger';
import { openPGlite, type Database, type NoTables } from '../src/db';
import { migrate } from '../src/migrate';
import { EventStore, eventStoreMigrations } from '../src/event-store';
import { MemoryBus } from '../src/bus/memory-bus';
import { Metrics } from '../src/metrics';
import { Probes, startOpsServer, stuckAfterMs, type OpsServer } from '../src/ops-server';

const log = createLogger('ops-test', 'silent');
const get = async (url: string) => {
  const r = await fetch(url);
  return { status: r.status, type: r.headers.get('content-type'), text: await r.text() };
};

describe('ops listener and readiness', () => {
  let database: Database;
  let bus: MemoryBus;
  let store: EventStore<NoTables>;
  let probes: Probes;
  let ops: OpsServer;
  let release!: () => void;

  beforeAll(async () => {
    database = await openPGlite('memory://');
    await migrate(database.db, 'src', eventStoreMigrations);
    store = new EventStore(database.db, 'src');
    bus = new MemoryBus({ logger: log });
    await bus.attachSource(store);
    const metrics = new Metrics();
    metrics.watchBus(() => bus.status());
    probes = new Probes(database.db, bus, 300);
    ops = await startOpsServer({ port: 0, host: '127.0.0.1', probes, metrics, log });
  });
  afterAll(async () => {
    release?.();
    await ops?.close();
    await bus?.close();
    await database?.close();
  });

  it('is not ready before the services are tracked, ready once they run', async () => {
    expect(await probes.check()).toEqual({ ready: false, checks: { database: 'ok', bus: 'ok', services: 'starting', consumers: 'ok' } });
    let up = true;
    probes.track([{ name: 'svc', ready: () => up, stop: async () => undefined }]);
    const r = await get(`${ops.url}/readyz`);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual({ status: 'ready', checks: { database: 'ok', bus: 'ok', services: 'ok', consumers: 'ok' } });
    up = false;
    expect((await probes.check()).checks.services).toBe('not ready: svc');
    up = true;
  });

  it('reports a consumer stuck on one event past the threshold, and recovers when it moves on', async () => {
    const hang = new Promise<void>((r) => (release = r));
    await bus.consume({ source: 'src', durable: 'slow', checkpoint: async () => 0, handler: () => hang });
    await database.db.transaction().execute((trx) => store.append(trx, 's-1', 'any', [{ type: 't.a.v1', data: {} }]));
    store.notify();
    await new Promise((r) => setTimeout(r, 600));
    const r = await get(`${ops.url}/readyz`);
    expect(r.status).toBe(503);
    const body = JSON.parse(r.text);
    expect(body.status).toBe('not ready');
    expect(body.checks.consumers).toMatch(/^slow stuck for \d+ s$/);
    const m = await get(`${ops.url}/metrics`);
    expect(m.text).toContain('bindery_consumer_lag_events{consumer="slow",source="src"} 1');
    release();
    await new Promise((r) => setTimeout(r, 100));
    expect((await probes.check()).checks.consumers).toBe('ok');
  });

  it('answers /healthz while not ready, and 404 elsewhere', async () => {
    expect(await get(`${ops.url}/healthz`)).toMatchObject({ status: 200, text: '{"status":"ok"}' });
    expect(await get(`${ops.url}/elsewhere`)).toMatchObject({ status: 404, text: '{"error":"not found"}' });
  });

  it('is not ready once the bus is closed', async () => {
    await bus.close();
    expect((await probes.check()).checks.bus).toBe('disconnected');
  });

  it('puts the stuck threshold past the whole retry budget', () => {
    expect(stuckAfterMs({ attempts: 3, baseMs: 10, maxMs: 100 })).toBe(120_000);
    expect(stuckAfterMs({ attempts: 10, baseMs: 1000, maxMs: 60_000 })).toBe((1 + 2 + 4 + 8 + 16 + 32 + 60 + 60 + 60) * 1000 + 60_000);
  });
});
