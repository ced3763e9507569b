// NATS request/reply without Bindery's handlers or database, to measure the bus alone.
//   serve <url> bus|plain   answers bindery.rpc.echo.get with a profile-sized Result
//                           (bus: Bindery's NatsBus.serve, a NATS micro service; plain: a bare queue subscription)
//   load <url> <concurrency> <seconds> [bus|notraces]   requests from <concurrency> loops, prints JSON
//                           (bus: NatsBus.request as the gateway does; notraces: nc.request on a
//                           connection with noAsyncTraces, the same JSON in and out)
import { connect } from '@nats-io/transport-node';
import { connectNatsBus, createLogger } from '@bindery/platform';
import { rpcSubject } from '@bindery/contracts';

const [cmd, url, a, b] = process.argv.slice(2);
const SUBJECT = rpcSubject('echo', 'get');
const value = {
  ok: true,
  value: { id: '5f0c6b0e-6d1f-4e7a-9a53-2b1f0f7c9d11', email: 'bench@example.com', username: 'bench', first_name: '', last_name: '', role: 'user', theme: 'tokyo-night' },
};
const logger = createLogger('nats-echo', 'warn');

if (cmd === 'serve') {
  if (a === 'plain') {
    const nc = await connect({ servers: url! });
    nc.subscribe(SUBJECT, { queue: 'echo', callback: (_e, m) => void m.respond(JSON.stringify(value)) });
    await nc.flush();
  } else {
    const bus = await connectNatsBus(url!, { logger });
    await bus.serve('echo', { get: async () => value });
  }
  console.log('echo serving');
  process.once('SIGTERM', () => process.exit(0));
} else if (cmd === 'load') {
  const concurrency = Number(a);
  const seconds = Number(b);
  const variant = process.argv[6] ?? 'bus';
  const bus = await connectNatsBus(url!, { logger });
  const nc = variant === 'notraces' ? await connect({ servers: url!, noAsyncTraces: true }) : null;
  const request = nc
    ? async (body: unknown) => {
        const m = await nc.request(SUBJECT, JSON.stringify(body), { timeout: 5_000 });
        return m.data.length ? m.json() : null;
      }
    : (body: unknown) => bus.request(SUBJECT, body, 5_000);
  const lat: number[] = [];
  const end = performance.now() + seconds * 1000; // bounded: every loop stops at `end`
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const s = performance.now();
        await request({ caller: { user_id: value.value.id, role: 'user', jti: 'x', exp: 0 } });
        lat.push(performance.now() - s);
      }
    }),
  );
  const took = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  lat.sort((x, y) => x - y);
  const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor(lat.length * p))]!;
  console.log(JSON.stringify({ rps: lat.length / took, p50: pct(0.5), p99: pct(0.99), n: lat.length, cores: (c.user + c.system) / 1e6 / took }));
  await nc?.close();
  await bus.close();
  process.exit(0);
} else {
  console.error('usage: nats-echo.ts serve <url> bus|plain | load <url> <concurrency> <seconds>');
  process.exit(2);
}
