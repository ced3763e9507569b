// The read benchmark's load generator, in its own process: autocannon, with each connection going
// round a list of paths (several search queries, so one cached answer cannot stand for all), and
// every response's latency kept so p95 is exact (autocannon's own summary has p90 and p97.5, no p95).
import type { EventEmitter } from 'node:events';
import autocannon from 'autocannon';
import type { Job, Measured } from './load-worker';

export interface ReadJob extends Job {
  /** paths (with query) under `url`'s origin, taken in turn by every connection; `url` alone when absent */
  paths?: string[];
  /** whole requests taken in turn (each its own headers and body: several accounts); overrides `paths` */
  requests?: { method: Job['method']; path: string; headers?: Record<string, string>; body?: string }[];
  /** each connection takes one of `requests` only (connection k the k-th, round the list): one account per connection, as many devices look */
  perConnection?: boolean;
}

export interface ReadMeasured extends Measured {
  p95: number;
  /** responses whose latency was recorded */
  recorded: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function run(job: ReadJob): Promise<ReadMeasured> {
  const latencies: number[] = [];
  let connection = 0;
  const own = job.perConnection && job.requests && job.requests.length > 0 ? job.requests : null;
  const instance = autocannon({
    ...(own ? { setupClient: (c: { setRequests(r: NonNullable<ReadJob['requests']>): void }) => c.setRequests([own[connection++ % own.length]!]) } : {}),
    url: job.url,
    method: job.method,
    connections: job.connections,
    pipelining: 1,
    duration: job.duration,
    timeout: 10,
    ...(job.headers ? { headers: job.headers } : {}),
    ...(job.body !== undefined ? { body: job.body } : {}),
    ...(job.requests && job.requests.length > 0
      ? { requests: job.requests }
      : job.paths && job.paths.length > 0
        ? { requests: job.paths.map((path) => ({ method: job.method, path })) }
        : {}),
  });
  // the instance is an EventEmitter; autocannon.d.ts leaves that out
  (instance as unknown as EventEmitter).on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => latencies.push(ms));
  const r = await instance;
  const sorted = Float64Array.from(latencies).sort();
  const codes: Record<string, number> = {};
  for (const [c, s] of Object.entries(r.statusCodeStats ?? {})) codes[c] = s.count;
  return {
    rps: r['2xx'] / r.duration,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    avg: sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : NaN,
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
    recorded: sorted.length,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    seconds: r.duration,
    statusCodes: codes,
  };
}

process.on('message', (m: { id: number; job: ReadJob }) => {
  run(m.job).then(
    (result) => process.send!({ id: m.id, result }),
    (e: unknown) => process.send!({ id: m.id, error: e instanceof Error ? e.message : String(e) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send!({ ready: true });
