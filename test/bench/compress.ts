// Compressed answers: the 50-item list page (`GET /api/media-items?limit=50`) as sent with no
// compression, with gzip and with brotli, in each mode — bytes per answer and req/s — and the bare
// fastify route of the reference server measured in the same run for the ratio.
//   pnpm bench:compress
// Knobs: BENCH_COMPRESS_ITEMS (2000 generated books), BENCH_COMPRESS_MODES (embedded,distributed),
// BENCH_DURATION (10 s), BENCH_CONNECTIONS (16), BENCH_QUIET_WAIT (5 s).
import { mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { settled } from '../e2e/catalog-helpers';
import { startBindery, type Mode } from '../support/bindery';
import { client } from '../support/http';
import { ensureGenerated } from './gen-library';
import { BENCH, envNumber, fmt, machine, prepare, runWithDeadline, startLoadGen, startRef, table } from './lib';
import { getJobs, loadCfgFromEnv, measure, refJob, type ReadGen } from './read-load';
import type { ReadJob, ReadMeasured } from './read-load-worker';

const ITEMS = envNumber('BENCH_COMPRESS_ITEMS', 2000);
const MODES = (process.env.BENCH_COMPRESS_MODES ?? 'embedded,distributed').split(',') as Mode[];
const DIR = join(BENCH, '../.tmp/bench-compress');
const PATH = '/api/media-items?limit=50';

/** The answer's size on the wire for one Accept-Encoding (none: identity). */
function wireBytes(base: string, token: string, encoding: string | null): Promise<{ bytes: number; encoding: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (encoding) headers['accept-encoding'] = encoding;
    const req = request(new URL(PATH, base), { headers }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ bytes, encoding: String(res.headers['content-encoding'] ?? 'identity') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

await runWithDeadline('bench:compress', 30 * 60_000, async () => {
  mkdirSync(DIR, { recursive: true });
  const gen = ensureGenerated(join(DIR, 'books'), 7, 0, ITEMS, true);
  console.log(`${machine()}\nlibrary: ${gen.files} generated books in ${join(DIR, 'books')}`);
  process.env.LIBRARY_ROOTS ??= DIR;
  const cfg = loadCfgFromEnv(false);
  const load: ReadGen = await startLoadGen<ReadJob, ReadMeasured>(join(BENCH, 'read-load-worker.ts'));
  const ref = await startRef();
  const rows: string[][] = [['mode', 'encoding', 'bytes per answer', 'vs none', 'req/s', 'p99 ms', 'bare route req/s', 'ratio to bare']];
  try {
    for (const mode of MODES) {
      const b = await startBindery(mode, { SCAN_ON_STARTUP: 'false', SCAN_WATCH: 'off' });
      try {
        const p = await prepare(b);
        const http = client(b.url);
        const lib = await http('POST', '/api/libraries', { token: p.token, body: { name: 'Compression', folders: [join(DIR, 'books')], watch: false } });
        if (lib.status !== 201) throw new Error(`library: ${lib.status} ${lib.text}`);
        await settled(http, p.token, lib.json.id, undefined, 20 * 60_000);
        const none = await wireBytes(b.url, p.token, null);
        for (const encoding of [null, 'gzip', 'br']) {
          const wire = await wireBytes(b.url, p.token, encoding);
          const headers: Record<string, string> = { authorization: `Bearer ${p.token}` };
          if (encoding) headers['accept-encoding'] = encoding;
          const bare = await measure(load, cfg, p.roles, refJob(ref, cfg), 'bare fastify route');
          const m = await measure(load, cfg, p.roles, getJobs(cfg, headers)(`${b.url}${PATH}`), `list, ${encoding ?? 'no compression'}`);
          rows.push([mode, wire.encoding, String(wire.bytes), fmt(wire.bytes / none.bytes, 3), fmt(m.rps, 0), fmt(m.p99, 1), fmt(bare.rps, 0), fmt(m.rps / bare.rps, 3)]);
        }
      } finally {
        await b.stop();
      }
    }
  } finally {
    await load.stop();
    await ref.stop();
  }
  console.log(`\n${table(rows)}`);
});
