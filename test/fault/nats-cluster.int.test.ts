// A JetStream cluster of three nats-servers on loopback ports (infra/nats/nats-cluster.conf), Bindery's
// streams kept in 3 copies: under steady writes, the server leading the reading service's stream is
// killed (SIGKILL). Every write Bindery acknowledged must reach the read model exactly once, and
// writes must go on being acknowledged after the kill.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStreamName } from '@bindery/contracts';
import { availableModes, startBindery, type Bindery } from '../support/bindery';
import { client } from '../support/http';
import { clusterNodes, NATS_CLUSTER_CONF, NATS_SERVER } from '../support/nats-cluster';

const distributed = (await availableModes()).includes('distributed');

interface Node {
  name: string;
  url: string;
  monitor: string;
  proc: ChildProcess;
}

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface Jsz {
  meta_cluster?: { leader?: string; cluster_size?: number };
  account_details?: { stream_detail?: { name: string; cluster?: { leader?: string; replicas?: { name: string; current: boolean }[] }; state: { messages: number } }[] }[];
}
const jsz = async (n: Node, query = ''): Promise<Jsz> => (await fetch(`${n.monitor}/jsz${query}`)).json() as Promise<Jsz>;

describe.skipIf(!distributed)('a 3-server JetStream cluster loses a server under writes (distributed)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bindery-nats-cluster-'));
  let nodes: Node[] = [];
  let b: Bindery;
  let token: string;

  beforeAll(async () => {
    nodes = (await clusterNodes(dir)).map((n) => ({
      name: n.name,
      url: n.url,
      monitor: n.monitor,
      proc: spawn(NATS_SERVER, ['-c', NATS_CLUSTER_CONF], { env: { ...process.env, ...n.env }, stdio: 'ignore' }),
    }));
    await until('a JetStream meta leader', async () => ((await jsz(nodes[0]!)).meta_cluster?.leader ? true : undefined));
    b = await startBindery('distributed', { NATS_URL: nodes.map((n) => n.url).join(','), NATS_STREAM_REPLICAS: '3' });
    const r = await client(b.url)('POST', '/api/auth/register', { body: { email: 'cluster@example.com', username: 'cluster', password: 'passw0rd-cluster' } });
    expect(r.status).toBe(201);
    token = r.json.access_token;
  }, 120_000);

  afterAll(async () => {
    await b?.stop();
    for (const n of nodes) n.proc.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every acknowledged write, applies each once, and goes on taking writes', async () => {
    const http = client(b.url);
    const stream = eventStreamName('reading');
    const acked: string[] = [];
    let ackedAfterKill = 0;
    let failed = 0;
    let killed = false;
    let seq = 0;
    let running = true;
    const worker = async () => {
      while (running) {
        const name = `c-${seq++}`;
        const r = await http('POST', '/api/collections', { token, body: { name } }).catch(() => null);
        if (r?.status === 201) {
          acked.push(r.json.id as string);
          if (killed) ackedAfterKill++;
        } else failed++;
      }
    };
    const workers = [worker(), worker(), worker()];
    await until('writes under way', async () => (acked.length >= 20 ? true : undefined));
    // the server that leads the reading stream's copies goes, without a goodbye
    const leader = await until('the reading stream on all three servers', async () => {
      const s = (await jsz(nodes[0]!, '?accounts=true&streams=true')).account_details?.flatMap((a) => a.stream_detail ?? []).find((d) => d.name === stream);
      return s?.cluster?.leader && (s.cluster.replicas ?? []).length === 2 ? s.cluster.leader : undefined;
    });
    const victim = nodes.find((n) => n.name === leader)!;
    victim.proc.kill('SIGKILL');
    killed = true;
    await until('writes acknowledged after the kill', async () => (ackedAfterKill >= 30 ? true : undefined), 45_000);
    running = false;
    await Promise.all(workers);

    // every acknowledged collection reaches the gateway's read model, once
    const names = await until(
      'the read model to hold every acknowledged write',
      async () => {
        const r = await http('GET', '/api/collections', { token });
        const mine = (r.json.data as { id: string; name: string }[]).filter((c) => c.name.startsWith('c-'));
        const ids = new Set(mine.map((c) => c.id));
        return acked.every((id) => ids.has(id)) ? mine : undefined;
      },
      60_000,
    );
    const ids = names.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => !acked.includes(id)).length).toBeLessThanOrEqual(failed);
    expect(ackedAfterKill).toBeGreaterThanOrEqual(30);

    // the survivors hold the stream with a new leader
    const survivor = nodes.find((n) => n !== victim)!;
    const s = (await jsz(survivor, '?accounts=true&streams=true')).account_details?.flatMap((a) => a.stream_detail ?? []).find((d) => d.name === stream);
    expect(s?.cluster?.leader).toBeDefined();
    expect(s?.cluster?.leader).not.toBe(victim.name);
    // (a message holds a run of events; every acknowledged write came through it to the read model above)
    expect(s!.state.messages).toBeGreaterThan(0);
  }, 180_000);
});
