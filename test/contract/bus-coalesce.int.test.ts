// Requests made in one turn of the event loop, for a subject the JetStream bus coalesces, go to the
// serving process as one message (decision 99). Each caller must still get its own answer, as if its
// request had gone alone: its own body, its own request id in the handler, its own failure; a process
// that serves only one request a message (a rolling update) still answers them all; an answer too
// large for one message drops the events it carries rather than fail. A private nats-server.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { rpcSubject } from '@bindery/contracts';
import { connectNatsBus, type NatsBus } from '../../platform/src/bus/nats-bus';
import { createLogger, currentRequestId, withRequestId } from '../../platform/src/logger';
import { startNatsServer } from '../support/backends';

const NATS_SERVER = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
const quiet = () => createLogger('bus-coalesce', 'silent');

describe.skipIf(!existsSync(NATS_SERVER))(`JetStream bus: coalesced requests${existsSync(NATS_SERVER) ? '' : ` (no nats-server at ${NATS_SERVER})`}`, () => {
  let nats: { url: string; stop(): Promise<void> };
  const buses: NatsBus[] = [];
  const conns: NatsConnection[] = [];
  const subject = rpcSubject('co', 'echo');

  /** a client that coalesces `subject`, and a server of it */
  async function pair(handler: (body: unknown) => Promise<unknown>, service = 'co'): Promise<{ client: NatsBus; server: NatsBus }> {
    const server = await connectNatsBus(nats.url, { name: 'co-server', logger: quiet() });
    const client = await connectNatsBus(nats.url, { name: 'co-client', logger: quiet(), coalesce: [rpcSubject(service, 'echo')] });
    buses.push(server, client);
    await server.serve(service, { echo: handler });
    return { client, server };
  }

  /** counts the messages that reach `pattern` (a plain subscriber beside the serving queue group) */
  async function watch(pattern: string): Promise<{ count(): number }> {
    const nc = await connect({ servers: nats.url });
    conns.push(nc);
    let n = 0;
    nc.subscribe(pattern, { callback: () => void n++ });
    await nc.flush();
    return { count: () => n };
  }

  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await Promise.allSettled(buses.map((b) => b.close()));
    await Promise.allSettled(conns.map((c) => c.close()));
    await nats?.stop();
  });

  it('sends one turn’s requests as one message and answers each caller with its own answer and request id', async () => {
    const { client } = await pair(async (body) => ({ got: body, id: currentRequestId() ?? null }));
    const alone = await watch(subject);
    const many = await watch(`${subject}.many`);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => withRequestId(`req-${i}`, () => client.request(subject, { i }))));
    expect(answers).toEqual(Array.from({ length: 20 }, (_, i) => ({ got: { i }, id: `req-${i}` })));
    expect(many.count()).toBe(1);
    expect(alone.count()).toBe(0);
  });

  it('sends a request made alone in its turn as it is, and the next turn’s requests in a message of their own', async () => {
    const { client } = await pair(async (body) => ({ got: body }), 'co2');
    const s = rpcSubject('co2', 'echo');
    const alone = await watch(s);
    const many = await watch(`${s}.many`);
    expect(await client.request(s, 'first')).toEqual({ got: 'first' });
    const second = await Promise.all([client.request(s, 'a'), client.request(s, 'b')]);
    const third = await Promise.all([client.request(s, 'c'), client.request(s, 'd'), client.request(s, 'e')]);
    expect(second).toEqual([{ got: 'a' }, { got: 'b' }]);
    expect(third).toEqual([{ got: 'c' }, { got: 'd' }, { got: 'e' }]);
    expect(alone.count()).toBe(1);
    expect(many.count()).toBe(2);
  });

  it('fails only the request whose handler threw, with the internal failure it would have had alone', async () => {
    const { client } = await pair(async (body) => {
      if (body === 'boom') throw new Error('boom');
      return { got: body };
    }, 'co3');
    const s = rpcSubject('co3', 'echo');
    const answers = await Promise.all(['a', 'boom', 'c'].map((b) => client.request(s, b)));
    expect(answers).toEqual([{ got: 'a' }, { ok: false, error: { code: 'internal', message: 'boom' } }, { got: 'c' }]);
  });

  it('puts at most 32 requests in one message', async () => {
    const { client } = await pair(async (body) => body, 'co4');
    const s = rpcSubject('co4', 'echo');
    const many = await watch(`${s}.many`);
    const answers = await Promise.all(Array.from({ length: 70 }, (_, i) => client.request(s, i)));
    expect(answers).toEqual(Array.from({ length: 70 }, (_, i) => i));
    expect(many.count()).toBe(3);
  });

  it('answers every request, one by one, when the serving process takes no batches (a process of the release before)', async () => {
    const older = await connect({ servers: nats.url });
    conns.push(older);
    const s = rpcSubject('co5', 'echo');
    older.subscribe(s, { queue: 'co5', callback: (_e, m) => void m.respond(JSON.stringify({ alone: m.json() })) });
    await older.flush();
    const client = await connectNatsBus(nats.url, { name: 'co-client', logger: quiet(), coalesce: [s] });
    buses.push(client);
    const answers = await Promise.all(['x', 'y', 'z'].map((b) => client.request(s, b)));
    expect(answers).toEqual([{ alone: 'x' }, { alone: 'y' }, { alone: 'z' }]);
  });

  it('drops the carried events, never the answers, when a batch’s answer is too large for one message', async () => {
    const big = 'e'.repeat(100_000);
    const { client } = await pair(async (body) => ({ ok: true, value: body, written: { source: 'co6', position: 7, events: [{ big }] } }), 'co6');
    const s = rpcSubject('co6', 'echo');
    // 16 answers of ~100 kB are more than the server's 1 MB a message
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => client.request(s, i)));
    expect(answers).toEqual(Array.from({ length: 16 }, (_, i) => ({ ok: true, value: i, written: { source: 'co6', position: 7 } })));
    // a few together fit: they keep their events
    const few = await Promise.all([client.request(s, 'a'), client.request(s, 'b')]);
    expect(few).toEqual(['a', 'b'].map((v) => ({ ok: true, value: v, written: { source: 'co6', position: 7, events: [{ big }] } })));
  });

  it('refuses a batch that is not a list with one failure for each request in it', async () => {
    await pair(async (body) => body, 'co7');
    const nc = await connect({ servers: nats.url });
    conns.push(nc);
    const reply = await nc.request(`${rpcSubject('co7', 'echo')}.many`, '{"not":"a list"}', { timeout: 5_000 });
    expect(reply.json()).toEqual({ ok: false, error: { code: 'invalid_request', message: 'a batch of requests must be a list: not a list' } });
  });
});
