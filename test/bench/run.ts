// `pnpm bench`: request rate and p99 of GET /api/auth/profile (embedded and distributed) against a
// bare fastify route, plus the login rate, all in one run. Load comes from autocannon in its own
// process; the reference server and every Bindery process run in their own processes too. Rounds
// interleave the targets (bare, embedded, distributed, bare, …) and the medians are reported.
//
// Knobs (environment): BENCH_ROUNDS (3), BENCH_DURATION seconds (10), BENCH_WARMUP seconds (2),
// BENCH_CONNECTIONS (50), BENCH_LOGIN_DURATION (5), BENCH_LOGIN_CONNECTIONS (16),
// BENCH_MODES ("embedded,distributed"), BENCH_QUIET_WAIT seconds per measurement (5).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableModes, startBindery, type Mode } from '../support/bindery';
import type { Job, Measured } from './load-worker';
import { BENCH, children, coresUsed, fmt, machine, median, prepare, runWithDeadline, snapshot, startLoadGen, startRef, table, waitForQuiet, type LoadGen, type Roles } from './lib';

const num = (name: string, dflt: number) => {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a non-negative number`);
  return v;
};
const CFG = {
  rounds: Math.max(1, num('BENCH_ROUNDS', 3)),
  duration: Math.max(1, num('BENCH_DURATION', 10)),
  warmup: num('BENCH_WARMUP', 2),
  connections: Math.max(1, num('BENCH_CONNECTIONS', 50)),
  loginDuration: Math.max(1, num('BENCH_LOGIN_DURATION', 5)),
  loginWarmup: 1,
  loginConnections: Math.max(1, num('BENCH_LOGIN_CONNECTIONS', 16)),
  /** per measurement, and at most 4× that over the whole run */
  quietWait: num('BENCH_QUIET_WAIT', 5),
  /** a measurement during which other processes used more than this many cores is marked noisy */
  noisyCores: 0.25,
  target: 0.25,
};
/** Everything is bounded: the whole run is abandoned after this long. */
const RUN_DEADLINE_MS = 8 * 60_000;

interface Target {
  name: string;
  key: string;
  profile: Job;
  login?: Job;
  roles: Roles;
}

interface Row extends Measured {
  cores: Record<string, number>;
  /** cores used by processes outside this run during the measurement */
  other: number;
  noisy: boolean;
}

let quietBudgetMs = CFG.quietWait * 4 * 1000;

async function measure(gen: LoadGen, t: Target, job: Job, warmup: number, label: string): Promise<Row> {
  const roles: Roles = { pids: new Map([...t.roles.pids, [gen.pid, 'loadgen']]), databases: t.roles.databases };
  if (quietBudgetMs > 0 && CFG.quietWait > 0) {
    const q = await waitForQuiet(roles, Math.min(CFG.quietWait * 1000, quietBudgetMs));
    quietBudgetMs -= q.waitedMs;
    if (q.other >= 0.15) console.log(`  (other processes still use ${q.other} cores: measuring anyway)`);
  }
  if (warmup > 0) await gen.run({ ...job, duration: warmup });
  const a = snapshot();
  const t0 = performance.now();
  const m = await gen.run(job);
  const seconds = (performance.now() - t0) / 1000;
  const cores = coresUsed(a, snapshot(), seconds, roles);
  const other = cores.other ?? 0;
  const noisy = other > CFG.noisyCores;
  const bad = m.non2xx + m.errors + m.timeouts;
  const ownCores = Object.entries(cores)
    .filter(([k, v]) => k !== 'other' && k !== 'orchestrator' && v > 0)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  console.log(
    `  ${label.padEnd(24)} ${fmt(m.rps, 0).padStart(7)} req/s  p50 ${fmt(m.p50, 1).padStart(6)} ms  p99 ${fmt(m.p99, 1).padStart(6)} ms` +
      `${bad ? `  FAILED non-2xx ${m.non2xx} errors ${m.errors} timeouts ${m.timeouts}` : ''}  cores: ${ownCores}; outside ${other}${noisy ? ' NOISY' : ''}`,
  );
  return { ...m, cores, other, noisy };
}

async function main(): Promise<void> {
  const started = new Date();
  const m = machine();
  console.log(`bench: ${m.nproc} × ${m.cpu}, ${m.memoryGiB} GiB, node ${m.node}, git ${m.git}`);
  console.log(
    `bench: ${CFG.rounds} round(s) × ${CFG.duration} s per profile target (${CFG.warmup} s warm-up first), ${CFG.connections} connections; ` +
      `login ${CFG.loginDuration} s, ${CFG.loginConnections} connections`,
  );
  const wanted = (process.env.BENCH_MODES ?? 'embedded,distributed').split(',').map((s) => s.trim()) as Mode[];
  const modes = (await availableModes()).filter((x) => wanted.includes(x));
  for (const w of wanted) if (!modes.includes(w)) console.log(`bench: ${w} mode is not available here: skipped`);

  const stops: (() => Promise<void>)[] = [];
  try {
    const gen = await startLoadGen();
    stops.push(() => gen.stop());
    const ref = await startRef();
    stops.push(() => ref.stop());
    const targets: Target[] = [
      {
        name: 'bare fastify GET /ref',
        key: 'bare',
        roles: { pids: new Map([[ref.child.pid!, 'ref']]), databases: [] },
        profile: { url: `${ref.url}/ref`, method: 'GET', connections: CFG.connections, duration: CFG.duration },
      },
    ];
    // Both modes stay up (idle) while the others are measured, so the rounds can interleave.
    for (const mode of modes) {
      const t0 = Date.now();
      const b = await startBindery(mode, { LOG_LEVEL: 'warn' });
      stops.push(() => b.stop());
      b.procs.forEach((p) => children.add(p.child)); // SIGKILLed if the run is abandoned
      const p = await prepare(b);
      targets.push({
        name: `profile (${mode})`,
        key: `profile_${mode}`,
        roles: p.roles,
        profile: { url: `${p.url}/api/auth/profile`, method: 'GET', headers: { authorization: `Bearer ${p.token}` }, connections: CFG.connections, duration: CFG.duration },
        login: {
          url: `${p.url}/api/auth/login`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: p.loginBody,
          connections: CFG.loginConnections,
          duration: CFG.loginDuration,
        },
      });
      console.log(`bench: ${mode} mode up at ${b.url} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }

    const profile = new Map<string, Row[]>();
    for (let r = 0; r < CFG.rounds; r++) {
      console.log(`round ${r + 1}/${CFG.rounds}`);
      for (const t of targets) {
        const row = await measure(gen, t, t.profile, r === 0 ? CFG.warmup : 0, t.name);
        profile.set(t.key, [...(profile.get(t.key) ?? []), row]);
      }
    }
    console.log('login');
    const login = new Map<string, Row>();
    for (const t of targets) if (t.login) login.set(t.key.replace('profile_', 'login_'), await measure(gen, t, t.login, CFG.loginWarmup, t.name.replace('profile', 'login')));

    // ---- summary. Rounds interleave the targets, so a round compares like with like: the figures
    // are medians over the rounds in which no target was disturbed by processes outside this run
    // (over all rounds when there is none), and each ratio is the median of the per-round ratios.
    const rounds = [...Array(CFG.rounds).keys()];
    const quiet = rounds.filter((r) => targets.every((t) => !profile.get(t.key)![r]!.noisy));
    const use = quiet.length > 0 ? quiet : rounds;
    const summarise = (rows: Row[], picked: number[]) => {
      const u = picked.map((i) => rows[i]!);
      // CPU time per request by process, less sensitive to other load than the rate itself
      const perReq = (x: Row) =>
        Object.fromEntries(
          Object.entries(x.cores)
            .filter(([k, v]) => !['other', 'orchestrator'].includes(k) && v > 0)
            .map(([k, v]) => [k, (v / x.rps) * 1e6]),
        );
      const roles = [...new Set(u.flatMap((x) => Object.keys(perReq(x))))];
      const cpuUsPerRequest = Object.fromEntries(roles.map((k) => [k, Math.round(median(u.map((x) => perReq(x)[k] ?? 0)))]));
      const serverCpuUs = Math.round(
        median(
          u.map((x) =>
            Object.entries(perReq(x))
              .filter(([k]) => k !== 'loadgen')
              .reduce((n, [, v]) => n + v, 0),
          ),
        ),
      );
      return {
        serverCpuUs,
        cpuUsPerRequest,
        rps: median(u.map((x) => x.rps)),
        p50: median(u.map((x) => x.p50)),
        p99: median(u.map((x) => x.p99)),
        cores: Object.fromEntries([...new Set(u.flatMap((x) => Object.keys(x.cores)))].map((k) => [k, median(u.map((x) => x.cores[k] ?? 0))])),
        roundsRps: rows.map((x) => Math.round(x.rps)),
        failures: rows.reduce((n, x) => n + x.non2xx + x.errors + x.timeouts, 0),
      };
    };
    const bareRows = profile.get('bare')!;
    const summary: Record<string, ReturnType<typeof summarise> & { ratio?: number; roundRatios?: number[] }> = {};
    const lines: string[][] = [['measurement', 'req/s', 'p50 ms', 'p99 ms', 'vs bare', 'server CPU µs/req', 'per round req/s', 'failed']];
    for (const t of targets) {
      const rows = profile.get(t.key)!;
      const s = summarise(rows, use);
      if (t.key === 'bare') {
        summary[t.key] = s;
        lines.push([t.name, fmt(s.rps, 0), fmt(s.p50, 1), fmt(s.p99, 1), '100%', String(s.serverCpuUs), s.roundsRps.join(' / '), String(s.failures)]);
        continue;
      }
      const roundRatios = rows.map((x, i) => x.rps / bareRows[i]!.rps);
      const ratio = median(use.map((i) => roundRatios[i]!));
      summary[t.key] = { ...s, ratio, roundRatios };
      lines.push([t.name, fmt(s.rps, 0), fmt(s.p50, 1), fmt(s.p99, 1), `${fmt(ratio * 100, 1)}%`, String(s.serverCpuUs), s.roundsRps.join(' / '), String(s.failures)]);
    }
    for (const [key, row] of login) {
      const s = summarise([row], [0]);
      summary[key] = s;
      lines.push([
        key.replace('login_', 'login (') + ')',
        fmt(row.rps, 1),
        fmt(row.p50, 1),
        fmt(row.p99, 1),
        '',
        String(s.serverCpuUs),
        row.noisy ? '(noisy)' : '',
        String(s.failures),
      ]);
    }
    const breakdown = targets
      .filter((t) => t.key !== 'bare')
      .map(
        (t) =>
          `${t.name}: ${Object.entries(summary[t.key]!.cpuUsPerRequest)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}`,
      );
    console.log(`\nCPU µs per request by process — ${breakdown.join('; ')}`);
    console.log(
      `${use === quiet ? `medians over the ${quiet.length} undisturbed round(s): ${quiet.map((r) => r + 1).join(', ')}` : 'every round was disturbed by other processes: medians over all rounds'}`,
    );
    console.log('\n' + table(lines));

    const dist = summary.profile_distributed;
    const verdict =
      dist?.ratio !== undefined
        ? `distributed profile reaches ${fmt(dist.ratio * 100, 1)}% of the bare route's rate (target ≥ ${CFG.target * 100}%): ${dist.ratio >= CFG.target ? 'MET' : 'MISSED'}`
        : 'distributed mode not measured';
    console.log(`\n${verdict}`);

    const outDir = join(BENCH, 'results');
    mkdirSync(outDir, { recursive: true });
    const file = join(outDir, `${started.toISOString().replace(/[:.]/g, '-')}.json`);
    const wallSeconds = Math.round((Date.now() - started.getTime()) / 1000);
    writeFileSync(
      file,
      JSON.stringify(
        {
          started: started.toISOString(),
          wallSeconds,
          machine: m,
          config: CFG,
          roundsUsed: use.map((r) => r + 1),
          summary,
          verdict,
          raw: { profile: Object.fromEntries(profile), login: Object.fromEntries(login) },
        },
        null,
        2,
      ) + '\n',
    );
    console.log(`results: ${file}`);
    console.log(`wall time ${wallSeconds} s`);
  } finally {
    for (const s of stops.reverse()) await s().catch((e: unknown) => console.error('bench: stop failed:', e));
  }
}

await runWithDeadline('bench', RUN_DEADLINE_MS, main);
