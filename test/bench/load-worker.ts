// The load generator in its own process: runs one autocannon job per IPC message and answers with a summary.
import autocannon from 'autocannon';

export interface Job {
  url: string;
  method: 'GET' | 'POST' | 'PUT';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  /** seconds */
  duration: number;
  /** requests taken in turn (path, headers, body each replacing the job's), e.g. one per user */
  variants?: { path?: string; headers?: Record<string, string>; body?: string }[];
}

export interface Measured {
  /** successful (2xx) responses per second over the measured window */
  rps: number;
  p50: number;
  p99: number;
  avg: number;
  max: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
  statusCodes: Record<string, number>;
}

/** autocannon's per-request hook: the next variant of the job's request. */
function turn(job: Job) {
  let i = 0;
  const variants = job.variants!;
  return (req: Record<string, unknown>) => {
    const v = variants[i++ % variants.length]!;
    return {
      ...req,
      ...(v.path ? { path: v.path } : {}),
      ...(v.headers ? { headers: { ...(req.headers as object), ...v.headers } } : {}),
      ...(v.body !== undefined ? { body: v.body } : {}),
    };
  };
}

async function run(job: Job): Promise<Measured> {
  const r = await autocannon({
    url: job.url,
    method: job.method,
    connections: job.connections,
    pipelining: 1,
    duration: job.duration,
    timeout: 10,
    ...(job.headers ? { headers: job.headers } : {}),
    ...(job.body !== undefined ? { body: job.body } : {}),
    ...(job.variants?.length ? { requests: [{ setupRequest: turn(job) }] } : {}),
  });
  const codes: Record<string, number> = {};
  for (const [c, s] of Object.entries(r.statusCodeStats ?? {})) codes[c] = s.count;
  return {
    rps: r['2xx'] / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    avg: r.latency.average,
    max: r.latency.max,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    seconds: r.duration,
    statusCodes: codes,
  };
}

process.on('message', (m: { id: number; job: Job }) => {
  run(m.job).then(
    (result) => process.send!({ id: m.id, result }),
    (e: unknown) => process.send!({ id: m.id, error: e instanceof Error ? e.message : String(e) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send!({ ready: true });
