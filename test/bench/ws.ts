// `pnpm bench:ws`: the live channel under load (issue 11). Per mode, 1,000 sockets open on the
// gateway (BENCH_WS_USERS users with BENCH_WS_SOCKETS / users sockets each, subscribed to
// `progress`), then progress PUTs at BENCH_WS_RATE writes/s, open loop, for BENCH_WS_SECONDS: the
// time from sending a PUT to each of the writer's sockets receiving its `progress-saved` event,
// the PUT's own answer time, the gateway's memory per socket (VmRSS before and after opening the
// sockets), CPU per process and the load average. Reference in the same run (distributed): bare
// NATS publish → subscriber delivery at the same rate on the same nats-server, and a bare
// JetStream publish → ordered-consumer delivery, the hop the events take. First, the memory per
// socket of the channel alone (ws-memory-server.ts: the gateway's route and hub in a process of
// their own, garbage collected before each sample), since a whole gateway's RSS moves by more than
// 1,000 sockets weigh. A benchmark, not a test: it prints verdicts and never fails on them.
//
// Knobs: BENCH_MODES (embedded,distributed), BENCH_WS_SOCKETS (1000), BENCH_WS_USERS (100),
// BENCH_WS_RATE (200), BENCH_WS_SECONDS (20), BENCH_WS_WARMUP (3), BENCH_QUIET_WAIT (20 s at most
// waiting for other processes to calm down), BENCH_DEADLINE_MINUTES (30), BENCH_WS_PROFILE (a folder: CPU profiles of
// every Bindery process over the measured writes, `<folder>/<mode>/<pid>.cpuprofile`).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, DeliverPolicy } from '@nats-io/jetstream';
import pLimit from 'p-limit';
import pg from 'pg';
import { eventStreamName } from '@bindery/contracts';
import { ROOT, type Mode } from '../support/bindery';
import { WsClient, wsUrl } from '../support/ws-client';
import { BENCH, coresUsed, fmt, machine, PASSWORD, runWithDeadline, snapshot, spawnTs, table, waitForQuiet } from './lib';
import { startInstance, statusKiB, type Instance } from './scan-bindery';

const num = (name: string, dflt: number) => {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a non-negative number`);
  return v;
};
const CFG = {
  modes: (process.env.BENCH_MODES ?? 'embedded,distributed').split(',').map((m) => m.trim()) as Mode[],
  sockets: Math.max(1, num('BENCH_WS_SOCKETS', 1000)),
  users: Math.max(1, num('BENCH_WS_USERS', 100)),
  rate: Math.max(1, num('BENCH_WS_RATE', 200)),
  seconds: Math.max(1, num('BENCH_WS_SECONDS', 20)),
  warmup: num('BENCH_WS_WARMUP', 3),
  quietWait: num('BENCH_QUIET_WAIT', 20),
  deadlineMinutes: num('BENCH_DEADLINE_MINUTES', 30),
  /** a folder: every Bindery process is CPU-profiled over the measured writes (cpu-profiler.mjs) */
  profileDir: process.env.BENCH_WS_PROFILE || null,
};
const TARGET_P99_MS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function pct(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! : NaN;
}
const summary = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: pct(s, 0.5), p95: pct(s, 0.95), p99: pct(s, 0.99), max: s.length ? s[s.length - 1]! : NaN };
};
type Summary = ReturnType<typeof summary>;

/** Calls `send` `n` times at CFG.rate per second, open loop (never waiting for what it started); answers the seconds taken. */
async function paced(n: number, send: (i: number) => void): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const wait = start + (i * 1000) / CFG.rate - performance.now();
    if (wait > 1) await sleep(wait);
    send(i);
  }
  return (performance.now() - start) / 1000;
}

/** The least VmRSS (KiB) of `pid` over 20 samples 250 ms apart: close to its size right after a collection. */
async function quietRss(pid: number): Promise<number> {
  let least = Infinity;
  for (let i = 0; i < 20; i++) {
    least = Math.min(least, statusKiB(pid, 'VmRSS'));
    await sleep(250);
  }
  return least;
}

/** Runs `n` tasks with at most `c` at a time. */
function pool<T>(n: number, c: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const limit = pLimit(c);
  return Promise.all(Array.from({ length: n }, (_, i) => limit(() => task(i))));
}

interface User {
  id: string;
  token: string;
}

/** An open socket subscribed to `progress`, reporting each progress-saved it receives. */
function openSocket(url: string, user: User, onSaved: (seq: number, at: number) => void, onClose: (code: number) => void = () => undefined): Promise<WsClient> {
  return new Promise((resolve, reject) => {
    const s = new WsClient(url, { headers: { authorization: `Bearer ${user.token}` } });
    const timer = setTimeout(() => reject(new Error('socket not subscribed within 30 s')), 30_000);
    s.on('error', reject);
    s.on('close', (code: number) => onClose(code));
    s.on('message', (d: Buffer) => {
      const at = performance.now();
      const m = JSON.parse(d.toString()) as { type: string; event?: string; data?: { progress?: { context_text?: string } } };
      if (m.type === 'ready') s.send(JSON.stringify({ type: 'subscribe', topics: ['progress'] }));
      else if (m.type === 'subscribed') {
        clearTimeout(timer);
        resolve(s);
      } else if (m.type === 'event' && m.event === 'progress-saved') {
        const seq = /^w(\d+)$/.exec(m.data?.progress?.context_text ?? '');
        if (seq) onSaved(Number(seq[1]), at);
      }
    });
  });
}

interface ModeResult {
  mode: Mode;
  sockets: number;
  users: number;
  rate: number;
  seconds: number;
  writes: number;
  writeErrors: number;
  errorKinds: Record<string, number>;
  /** socket arrival minus the PUT's answer: what the live channel adds to the write itself */
  afterAnswer: Summary;
  /** PUT sent → each of the writer's sockets received the event */
  delivery: Summary;
  /** deliveries expected but not seen within 10 s of the last write */
  missing: number;
  /** the first writes not seen on every socket of their user: which, and on how many */
  short: { seq: number; user: number; got: number; answer: string | null; onBus?: number | null; inLog?: unknown }[];
  /** sockets the server closed during the run, by close code */
  socketsClosed: Record<string, number>;
  /** the PUT's answer time */
  put: Summary;
  achievedRate: number;
  /** PUTs answered 200 per second of the measurement */
  answeredRate: number;
  rssBeforeMiB: number;
  rssAfterSocketsMiB: number;
  rssAfterLoadMiB: number;
  kibPerSocket: number;
  cores: Record<string, number>;
  loadBefore: number[];
  loadAfter: number[];
  otherCoresBefore: number;
  reference?: { natsCore: Summary; jetstream: Summary };
}

async function measureMode(mode: Mode): Promise<ModeResult> {
  const inst: Instance = await startInstance(mode, CFG.profileDir && join(CFG.profileDir, mode));
  const profileSignal = () => {
    if (CFG.profileDir) for (const pid of inst.roles.pids.keys()) process.kill(pid, 'SIGUSR2');
  };
  const libDir = mkdtempSync(join(tmpdir(), 'bindery-bench-ws-'));
  try {
    const gatewayPid = [...inst.roles.pids].find(([, role]) => role === 'gateway' || role === 'bindery')![0];
    const call = inst.call;
    // a library with one item per user (made through the API, no scan)
    const lib = await call('POST', '/api/libraries', { token: inst.token, body: { name: 'Live bench', folders: [libDir], watch: false } });
    if (lib.status !== 201) throw new Error(`library: ${lib.status} ${lib.text}`);
    const users: User[] = await pool(CFG.users, 4, async (i) => {
      const r = await call('POST', '/api/auth/register', { body: { email: `ws-${mode}-${i}@example.com`, username: `ws_${mode}_${i}`, password: PASSWORD } });
      if (r.status !== 201) throw new Error(`register: ${r.status} ${r.text}`);
      return { id: r.json.user.id as string, token: r.json.access_token as string };
    });
    const items: string[] = await pool(CFG.users, 4, async (i) => {
      const r = await call('POST', '/api/media-items', { token: inst.token, body: { library_id: lib.json.id, title: `Live ${i}`, authors: ['A. Writer'] } });
      if (r.status !== 201) throw new Error(`item: ${r.status} ${r.text}`);
      return r.json.id as string;
    });

    // sockets: user i holds every socket j with j % users === i
    const sent = new Map<number, { at: number; user: number }>();
    const delivery: number[] = [];
    const arrivals: { seq: number; at: number }[] = [];
    const got = new Map<number, number>();
    const onSaved = (seq: number, at: number) => {
      const w = sent.get(seq);
      if (!w) return;
      got.set(seq, (got.get(seq) ?? 0) + 1);
      if (seq >= firstMeasured) {
        delivery.push(at - w.at);
        arrivals.push({ seq, at });
      }
    };
    let firstMeasured = Number.MAX_SAFE_INTEGER;
    // every user's book answers a write (the read models have the items) before anything is measured
    await pool(CFG.users, 4, async (u) => {
      for (let i = 0; ; i++) {
        const r = await call('PUT', `/api/media-items/${items[u]}/progress`, { token: users[u]!.token, body: { percentage: 0.01, client: 'bench', device: 'bench', force: true } });
        if (r.status === 200) return;
        // the reading service learns of new items from the catalog's events: on a busy machine that lags
        if (i >= 300) throw new Error(`warm-up write: ${r.status} ${r.text}`);
        await sleep(1_000);
      }
    });
    const rssBefore = await quietRss(gatewayPid);
    const url = wsUrl(inst.b.url);
    const closedBy = new Map<number, number>();
    let closing = false;
    const onClose = (code: number) => void (closing || closedBy.set(code, (closedBy.get(code) ?? 0) + 1));
    const sockets = await pool(CFG.sockets, 50, (j) => openSocket(url, users[j % CFG.users]!, onSaved, onClose));
    const rssAfterSockets = await quietRss(gatewayPid);
    const perUser = (u: number) => Math.floor(CFG.sockets / CFG.users) + (u < CFG.sockets % CFG.users ? 1 : 0);

    const quiet = await waitForQuiet(inst.roles, CFG.quietWait * 1000);
    const loadBefore = loadavg();
    // open loop: one PUT every 1/rate s, whatever the answers do
    let seq = 0;
    let errors = 0;
    const errorKinds = new Map<string, number>();
    const fail = (k: string) => {
      errors++;
      errorKinds.set(k, (errorKinds.get(k) ?? 0) + 1);
    };
    const putLat: number[] = [];
    /** each measured write's answer in short: status, version and the text it stored */
    const answers = new Map<number, string>();
    const answeredAt = new Map<number, number>();
    const inflight = new Set<Promise<void>>();
    const write = (measured: boolean) => {
      const s = seq++;
      const u = s % CFG.users;
      const t0 = performance.now();
      sent.set(s, { at: t0, user: u });
      const p = call('PUT', `/api/media-items/${items[u]}/progress`, {
        token: users[u]!.token,
        body: { percentage: 0.01 + ((s % 97) + 1) / 100, client: 'bench', device: 'bench', force: true, context_text: `w${s}` },
      }).then(
        (r) => {
          if (r.status !== 200) fail(`${r.status} ${r.text.slice(0, 80)}`);
          else if (measured) {
            putLat.push(performance.now() - t0);
            answeredAt.set(s, performance.now());
            const j = r.json as { status?: string; progress?: { version?: number; context_text?: string } } | undefined;
            answers.set(s, `${j?.status} v${j?.progress?.version} ${j?.progress?.context_text}`);
          }
        },
        (e: unknown) => fail(e instanceof Error ? e.message : String(e)),
      );
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
    };
    const run = (seconds: number, measured: boolean) => paced(Math.round(seconds * CFG.rate), () => write(measured));
    await run(CFG.warmup, false);
    await Promise.all([...inflight]);
    firstMeasured = seq;
    const snapA = snapshot();
    profileSignal();
    const took = await run(CFG.seconds, true);
    await Promise.all([...inflight]);
    profileSignal();
    const snapB = snapshot();
    const loadAfter = loadavg();
    // let late deliveries arrive
    const expected = (s: number) => perUser(s % CFG.users);
    for (let i = 0; i < 100; i++) {
      let short = 0;
      for (let s = firstMeasured; s < seq; s++) short += expected(s) - (got.get(s) ?? 0);
      if (short === 0) break;
      await sleep(100);
    }
    let missing = 0;
    const short: { seq: number; user: number; got: number; answer: string | null; onBus?: number | null; inLog?: unknown }[] = [];
    for (let s = firstMeasured; s < seq; s++) {
      const lost = Math.max(0, expected(s) - (got.get(s) ?? 0));
      missing += lost;
      if (lost && short.length < 100) short.push({ seq: s, user: s % CFG.users, got: got.get(s) ?? 0, answer: answers.get(s) ?? null });
    }
    const rssAfterLoad = statusKiB(gatewayPid, 'VmRSS');
    // the live channel's own share: arrival on the socket minus the PUT's answer (negative: the event came first)
    const afterAnswer = arrivals.flatMap((a) => (answeredAt.has(a.seq) ? [a.at - answeredAt.get(a.seq)!] : []));
    closing = true;
    for (const s of sockets) s.terminate();

    // where an undelivered write's event went: is it on the bus at all?
    if (mode === 'distributed' && short.length) {
      const onBus = await eventsOnBus(inst.b.env.NATS_URL!, 'reading');
      const pgc = new pg.Client({ connectionString: inst.b.env.DATABASE_URL });
      await pgc.connect();
      try {
        for (const x of short) {
          x.onBus = onBus.get(`w${x.seq}`) ?? null;
          const r = await pgc.query(
            `select global_position as p, tx_id::text as tx, (select count(*) from reading.events) as n, (select position from reading.relay_checkpoints) as cp from reading.events where data->'progress'->>'context_text' = $1`,
            [`w${x.seq}`],
          );
          x.inLog = r.rows[0] ?? null;
        }
      } finally {
        await pgc.end();
      }
      console.error(`bench:ws: ${onBus.size} writes on the bus`);
    }
    const reference = mode === 'distributed' ? await natsReference(inst.b.env.NATS_URL!) : undefined;
    return {
      mode,
      sockets: CFG.sockets,
      users: CFG.users,
      rate: CFG.rate,
      seconds: CFG.seconds,
      writes: seq - firstMeasured,
      writeErrors: errors,
      errorKinds: Object.fromEntries(errorKinds),
      afterAnswer: summary(afterAnswer),
      delivery: summary(delivery),
      missing,
      short,
      socketsClosed: Object.fromEntries(closedBy),
      put: summary(putLat),
      achievedRate: (seq - firstMeasured) / took,
      answeredRate: putLat.length / took,
      rssBeforeMiB: rssBefore / 1024,
      rssAfterSocketsMiB: rssAfterSockets / 1024,
      rssAfterLoadMiB: rssAfterLoad / 1024,
      kibPerSocket: (rssAfterSockets - rssBefore) / CFG.sockets,
      cores: coresUsed(snapA, snapB, took, inst.roles),
      loadBefore,
      loadAfter,
      otherCoresBefore: quiet.other,
      ...(reference ? { reference } : {}),
    };
  } finally {
    // each process's own output (warnings and errors), for a run that shows something odd
    const logs = join(ROOT, 'test/.tmp/bench-ws');
    mkdirSync(logs, { recursive: true });
    for (const p of inst.b.procs) writeFileSync(join(logs, `${mode}-${inst.roles.pids.get(p.child.pid!) ?? p.child.pid}.log`), p.output());
    await inst.stop();
    rmSync(libDir, { recursive: true, force: true });
  }
}

/** The stream sequence of each progress write's event on the source's stream, by the text the bench wrote (`w<seq>`). */
async function eventsOnBus(url: string, source: string): Promise<Map<string, number>> {
  const nc = await connect({ servers: url });
  const out = new Map<string, number>();
  try {
    const consumer = await jetstream(nc).consumers.get(eventStreamName(source), { deliver_policy: DeliverPolicy.All });
    const pending = (await consumer.info()).num_pending;
    const messages = await consumer.consume({ max_messages: 512 });
    let seen = 0;
    for await (const m of messages) {
      const text = (m.json() as { data?: { progress?: { context_text?: string } } }).data?.progress?.context_text;
      if (text) out.set(text, m.seq);
      if (++seen >= pending) break;
    }
  } finally {
    await nc.close();
  }
  return out;
}

/** Bare NATS at the same rate: core publish → subscriber, and JetStream publish → ordered consumer. */
async function natsReference(url: string): Promise<{ natsCore: Summary; jetstream: Summary }> {
  const pub = await connect({ servers: url });
  const sub = await connect({ servers: url });
  const n = Math.round(CFG.seconds * CFG.rate);
  const pace = (send: (i: number) => void) => paced(n, send);
  const waitFor = async (xs: unknown[]) => {
    for (let i = 0; i < 100 && xs.length < n; i++) await sleep(100);
  };
  // core NATS
  const core: number[] = [];
  sub.subscribe('bench.ws.ref', { callback: (_e, m) => void core.push(performance.now() - Number(m.string())) });
  await sub.flush();
  await pace(() => pub.publish('bench.ws.ref', String(performance.now())));
  await waitFor(core);
  // JetStream: a stream like an event stream, followed by an ordered consumer from now
  const jsm = await jetstreamManager(pub);
  await jsm.streams.add({ name: 'BENCH_WS_REF', subjects: ['bench.ws.js.>'] });
  const js = jetstream(pub);
  const consumer = await jetstream(sub).consumers.get('BENCH_WS_REF', { deliver_policy: DeliverPolicy.New });
  const jsLat: number[] = [];
  const messages = await consumer.consume({ max_messages: 256 });
  void (async () => {
    for await (const m of messages) jsLat.push(performance.now() - Number(m.string()));
  })();
  await sleep(500);
  const acks: Promise<unknown>[] = [];
  await pace((i) => acks.push(js.publish(`bench.ws.js.${i % 10}`, String(performance.now()))));
  await Promise.all(acks);
  await waitFor(jsLat);
  await messages.close();
  await jsm.streams.delete('BENCH_WS_REF');
  await pub.close();
  await sub.close();
  return { natsCore: summary(core), jetstream: summary(jsLat) };
}

interface Sample {
  sockets: number;
  heapUsed: number;
  external: number;
  rss: number;
}

/**
 * Memory per socket of the live channel alone (ws-memory-server.ts: the gateway's route and hub,
 * nothing else, garbage collected before each sample), the clients in this process.
 */
async function isolatedMemory(): Promise<{ sockets: number; jsKiB: number; rssKiB: number }> {
  const srv = await spawnTs(join(BENCH, 'ws-memory-server.ts'), [], /ws-memory listening at (http:\/\/\S+)/, {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --expose-gc`.trim(),
  });
  const samples: Sample[] = [];
  let rest = '';
  srv.child.stdout!.on('data', (d: Buffer) => {
    const lines = (rest + d.toString()).split('\n');
    rest = lines.pop()!;
    for (const l of lines) if (l.startsWith('{')) samples.push(JSON.parse(l) as Sample);
  });
  // the median of 5 samples taken once `n` sockets are held and 2 more have passed
  const settle = async (n: number): Promise<Sample> => {
    for (let i = 0; i < 600 && samples.at(-1)?.sockets !== n; i++) await sleep(100);
    const from = samples.length + 2;
    while (samples.length < from + 5) await sleep(100);
    const pick = samples.slice(from, from + 5);
    const med = (f: (x: Sample) => number) => pick.map(f).sort((a, b) => a - b)[2]!;
    return { sockets: n, heapUsed: med((x) => x.heapUsed), external: med((x) => x.external), rss: med((x) => x.rss) };
  };
  try {
    const before = await settle(0);
    const user = { id: '00000000-0000-4000-8000-000000000001', token: 'unused' };
    const sockets = await pool(CFG.sockets, 50, () => openSocket(wsUrl(srv.url), user, () => undefined));
    const after = await settle(CFG.sockets);
    for (const s of sockets) s.terminate();
    return {
      sockets: CFG.sockets,
      jsKiB: (after.heapUsed + after.external - before.heapUsed - before.external) / 1024 / CFG.sockets,
      rssKiB: (after.rss - before.rss) / 1024 / CFG.sockets,
    };
  } finally {
    await srv.stop();
  }
}

const ms = (v: number) => fmt(v, 1);

function report(results: ModeResult[], iso: Awaited<ReturnType<typeof isolatedMemory>> | null): string {
  const lines: string[][] = [['', ...results.map((r) => r.mode)]];
  const row = (label: string, f: (r: ModeResult) => string) => lines.push([label, ...results.map(f)]);
  row('sockets (users)', (r) => `${r.sockets} (${r.users})`);
  row('writes/s asked / sent / answered 200', (r) => `${r.rate} / ${fmt(r.achievedRate, 1)} / ${fmt(r.answeredRate, 1)}`);
  row('writes measured (errors)', (r) => `${r.writes} (${r.writeErrors})`);
  row('deliveries (missing)', (r) => `${r.delivery.n} (${r.missing})`);
  row('sockets closed by the server (by code)', (r) => JSON.stringify(r.socketsClosed));
  row('PUT → WS p50 ms', (r) => ms(r.delivery.p50));
  row('PUT → WS p95 ms', (r) => ms(r.delivery.p95));
  row('PUT → WS p99 ms', (r) => ms(r.delivery.p99));
  row('PUT → WS max ms', (r) => ms(r.delivery.max));
  row(`p99 < ${TARGET_P99_MS} ms`, (r) => (r.delivery.p99 < TARGET_P99_MS && r.missing === 0 ? 'yes' : 'NO'));
  row('PUT answer p50 / p99 ms', (r) => `${ms(r.put.p50)} / ${ms(r.put.p99)}`);
  row('WS arrival − PUT answer p50 / p99 ms', (r) => `${ms(r.afterAnswer.p50)} / ${ms(r.afterAnswer.p99)}`);
  row('ref: NATS core pub→sub p50 / p99 ms', (r) => (r.reference ? `${fmt(r.reference.natsCore.p50, 2)} / ${fmt(r.reference.natsCore.p99, 2)}` : '-'));
  row('ref: JetStream pub→ordered consumer p50 / p99 ms', (r) => (r.reference ? `${fmt(r.reference.jetstream.p50, 2)} / ${fmt(r.reference.jetstream.p99, 2)}` : '-'));
  row('gateway RSS before / with sockets / after load MiB', (r) => `${fmt(r.rssBeforeMiB, 0)} / ${fmt(r.rssAfterSocketsMiB, 0)} / ${fmt(r.rssAfterLoadMiB, 0)}`);
  row('memory per socket KiB (gateway RSS)', (r) => fmt(r.kibPerSocket, 1));
  row('memory per socket KiB, channel alone: JS heap+external / RSS', () => (iso ? `${fmt(iso.jsKiB, 1)} / ${fmt(iso.rssKiB, 1)}` : '-'));
  row('cores during load', (r) =>
    Object.entries(r.cores)
      .map(([k, v]) => `${k} ${fmt(v, 2)}`)
      .join(', '),
  );
  row('load average before / after (1 min)', (r) => `${fmt(r.loadBefore[0]!, 2)} / ${fmt(r.loadAfter[0]!, 2)}`);
  row('other processes before (cores)', (r) => fmt(r.otherCoresBefore, 2));
  return table(lines);
}

await runWithDeadline('bench:ws', CFG.deadlineMinutes * 60_000, async () => {
  const results: ModeResult[] = [];
  console.error('bench:ws: memory of the channel alone …');
  const iso = CFG.modes.length ? await isolatedMemory() : null;
  for (const mode of CFG.modes) {
    console.error(`bench:ws: ${mode} …`);
    results.push(await measureMode(mode));
  }
  const text = report(results, iso);
  const out = join(ROOT, 'test/.tmp/bench-ws');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'result.json'), JSON.stringify({ machine: machine(), config: CFG, isolatedMemory: iso, results }, null, 2));
  const errs = results.filter((r) => r.writeErrors > 0).map((r) => `${r.mode} write errors: ${JSON.stringify(r.errorKinds)}`);
  console.log(`\n${JSON.stringify(machine())}\n\n${text}\n${errs.length ? `\n${errs.join('\n')}\n` : ''}\n(full figures: test/.tmp/bench-ws/result.json)`);
});
