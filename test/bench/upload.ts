// `pnpm bench:upload`: uploading a book (issue 43, upload: "a 200 MB file at ≥ 50 MB/s on loopback
// with server RSS growth < 50 MB"). Per mode (embedded, then distributed), a CBZ of BENCH_UPLOAD_MB
// (200) MB of stored page pictures (random bytes: nothing compresses) is sent with
// POST /api/libraries/<id>/uploads over loopback, BENCH_UPLOAD_RUNS times (each a new file: its
// pages differ, so it is no duplicate), and measured:
//   - sent: the bytes over the time until the request's last byte was written (the streaming to disk,
//     hashed and counted, which backpressure holds to the server's pace);
//   - answered: the bytes over the time until the answer came (the stream, the content check that
//     reads the archive again, the fsync and the link, and the scanner cataloguing the file);
//   - the server's RSS growth: the highest RSS sampled every 50 ms while the body is sent, and until
//     the answer (the check and the cataloguing too), less its RSS before; each mode first uploads
//     one small (8 MB) book, whose growth is shown apart: what any first upload loads once (embedded: the one process; distributed: the gateway's);
// beside two references measured in the same run on the same file: `cat` of the file to /dev/null
// (reading it), and a bare fastify route that streams a request body to disk with SHA-256 (the same
// work without Bindery's checks). A benchmark, not a test: it prints a table with the load average
// and never fails on its figures. Figures go to docs/benchmarks.md.
//
// Knobs: BENCH_UPLOAD_MB (200), BENCH_UPLOAD_RUNS (3), BENCH_UPLOAD_MODES (embedded,distributed),
// BENCH_DEADLINE_MINUTES (20).
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Fastify from 'fastify';
import { buildZip } from '../../services/catalog/test/fixtures/zip-writer';
import { createLibrary, settled } from '../e2e/catalog-helpers';
import { api, register } from '../e2e/helpers';
import { startBindery, type Mode } from '../support/bindery';
import { envNumber, fmt, machine, runWithDeadline, table } from './lib';

const MB = envNumber('BENCH_UPLOAD_MB', 200);
const RUNS = Math.max(1, envNumber('BENCH_UPLOAD_RUNS', 3));
const MODES = (process.env.BENCH_UPLOAD_MODES ?? 'embedded,distributed').split(',').map((m) => m.trim()) as Mode[];
const PAGE_BYTES = 1024 * 1024;
const WARM_MB = 8;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rate = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000);
const cleanup: string[] = [];

function rssKiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : Number.NaN;
}

/** A CBZ of stored page pictures, `mb` MB in all; `seed` makes its bytes its own. */
function comic(path: string, mb: number, seed: number): number {
  const pages = Math.max(1, Math.round((mb * 1e6) / PAGE_BYTES));
  const jpegHead = Buffer.from([0xff, 0xd8, 0xff, 0xe0]);
  const entries = [{ name: 'ComicInfo.xml', data: `<?xml version="1.0"?><ComicInfo><Title>Upload bench ${seed}</Title></ComicInfo>` }];
  const data = Array.from({ length: pages }, (_, i) => ({ name: `${String(i + 1).padStart(4, '0')}.jpg`, data: Buffer.concat([jpegHead, randomBytes(PAGE_BYTES - 4)]) }));
  writeFileSync(path, buildZip([...entries, ...data]));
  return statSync(path).size;
}

interface Sent {
  sentMs: number;
  answeredMs: number;
  status: number;
  body: string;
  peakRssKiB: number;
  /** the highest RSS until the request's last byte was written (the streaming to disk alone) */
  peakSentRssKiB: number;
}

/** Streams `file` as the body of a POST; samples `pid`'s RSS every 50 ms meanwhile. */
function send(url: string, path: string, file: string, headers: Record<string, string>, pid: number | null): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const size = statSync(file).size;
    let peak = 0;
    const sample = () => {
      if (pid) peak = Math.max(peak, rssKiB(pid));
    };
    sample();
    const timer = setInterval(sample, 50);
    const t0 = performance.now();
    let sentMs = Number.NaN;
    let peakSent = Number.NaN;
    const req = request(
      { host: u.hostname, port: u.port, method: 'POST', path, headers: { ...headers, 'content-type': 'application/octet-stream', 'content-length': String(size) } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          clearInterval(timer);
          sample();
          resolve({ sentMs, answeredMs: performance.now() - t0, status: res.statusCode ?? 0, body, peakRssKiB: peak, peakSentRssKiB: Number.isNaN(peakSent) ? peak : peakSent });
        });
      },
    );
    req.on('finish', () => {
      sentMs = performance.now() - t0;
      sample();
      peakSent = peak;
    });
    req.on('error', (e) => {
      clearInterval(timer);
      reject(e);
    });
    createReadStream(file, { highWaterMark: 1024 * 1024 }).pipe(req);
  });
}

/** The reference: a bare fastify route streaming the body to disk while hashing it. */
async function refServer(dir: string) {
  const app = Fastify({ bodyLimit: 1024 * 1024 * 1024 });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
  let n = 0;
  app.post('/ref', async (req) => {
    const hash = createHash('sha256');
    const file = join(dir, `ref-${n++}`);
    await pipeline(
      req.raw,
      new Transform({
        transform(c: Buffer, _e, done) {
          hash.update(c);
          done(null, c);
        },
      }),
      createWriteStream(file),
    );
    rmSync(file);
    return { sha256: hash.digest('hex') };
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}

async function runMode(mode: Mode, files: string[], sizes: number[], warmFile: string) {
  // as `pnpm start` runs it (package.json): glibc's malloc arenas held to two
  const b = await startBindery(mode, { MALLOC_ARENA_MAX: '2' });
  try {
    const call = api(b);
    const admin = await register(call);
    const libDir = mkdtempSync(join(tmpdir(), 'bindery-bench-upload-lib-'));
    cleanup.push(libDir);
    const lib = await createLibrary(call, admin.token, { name: 'Uploads', folders: [libDir], watch: false });
    await settled(call, admin.token, lib.id);
    // the process that takes the upload: embedded, the one; distributed, the gateway (started last)
    const pid = b.procs[b.procs.length - 1]!.child.pid ?? null;
    // a first, small upload loads what any upload needs once (the archive reader, the book thread, the
    // heap's first growth): its growth is reported apart, so the 200 MB runs show what a file costs
    const warmBefore = pid ? rssKiB(pid) : Number.NaN;
    const w = await send(b.url, `/api/libraries/${lib.id}/uploads?name=${encodeURIComponent(`warm-up ${mode}.cbz`)}`, warmFile, { authorization: `Bearer ${admin.token}` }, pid);
    if (w.status !== 201) throw new Error(`the warm-up upload answered ${w.status}: ${w.body}`);
    const warmGrowthMiB = (w.peakRssKiB - warmBefore) / 1024;
    const runs: { sent: number; answered: number; rssGrowthMiB: number; sentGrowthMiB: number; status: string }[] = [];
    for (const [i, file] of files.entries()) {
      const before = pid ? rssKiB(pid) : Number.NaN;
      const r = await send(b.url, `/api/libraries/${lib.id}/uploads?name=${encodeURIComponent(`bench ${mode} ${i}.cbz`)}`, file, { authorization: `Bearer ${admin.token}` }, pid);
      if (r.status !== 201) throw new Error(`upload ${i} answered ${r.status}: ${r.body}`);
      runs.push({
        sent: rate(sizes[i]!, r.sentMs),
        answered: rate(sizes[i]!, r.answeredMs),
        rssGrowthMiB: (r.peakRssKiB - before) / 1024,
        sentGrowthMiB: (r.peakSentRssKiB - before) / 1024,
        status: (JSON.parse(r.body) as { status: string }).status,
      });
    }
    return { runs, warmGrowthMiB };
  } finally {
    await b.stop();
  }
}

async function main() {
  console.log('machine', machine());
  const dir = mkdtempSync(join(tmpdir(), 'bindery-bench-upload-'));
  cleanup.push(dir);
  const runsPerMode = RUNS;
  const files: string[] = [];
  const sizes: number[] = [];
  for (let i = 0; i < runsPerMode * MODES.length; i++) {
    const f = join(dir, `book-${i}.cbz`);
    sizes.push(comic(f, MB, i));
    files.push(f);
  }
  const warm = join(dir, 'warm-up.cbz');
  comic(warm, WARM_MB, 9999);
  console.log(`${files.length} CBZ files of ${fmt(sizes[0]! / 1e6, 1)} MB made in ${dir}`);

  // references, on the same file, in the same run
  const cat: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    execFileSync('sh', ['-c', `cat "${files[0]}" > /dev/null`]);
    cat.push(rate(sizes[0]!, performance.now() - t0));
  }
  const ref = await refServer(dir);
  const bare: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = await send(ref.url, '/ref', files[i % files.length]!, {}, null);
    if (r.status !== 200) throw new Error(`reference answered ${r.status}: ${r.body}`);
    bare.push(rate(sizes[0]!, r.answeredMs));
  }
  await ref.close();

  const rows: string[][] = [['measure', 'MB/s (median)', 'runs', 'RSS growth MiB (max)', 'target']];
  rows.push(['cat file > /dev/null', fmt(median(cat), 0), cat.map((x) => fmt(x, 0)).join(' '), '-', '-']);
  rows.push(['bare fastify stream to disk + SHA-256', fmt(median(bare), 0), bare.map((x) => fmt(x, 0)).join(' '), '-', '-']);
  for (const [m, mode] of MODES.entries()) {
    const mine = files.slice(m * RUNS, (m + 1) * RUNS);
    const { runs, warmGrowthMiB } = await runMode(mode, mine, sizes.slice(m * RUNS, (m + 1) * RUNS), warm);
    rows.push([`${mode}: first upload (${WARM_MB} MB, warm-up)`, '', '', fmt(warmGrowthMiB, 1), '']);
    const growth = Math.max(...runs.map((r) => r.rssGrowthMiB));
    const sentGrowth = Math.max(...runs.map((r) => r.sentGrowthMiB));
    rows.push([`${mode}: sent (stream to disk)`, fmt(median(runs.map((r) => r.sent)), 0), runs.map((r) => fmt(r.sent, 0)).join(' '), fmt(sentGrowth, 1), '≥ 50 MB/s, < 50 MB']);
    rows.push([
      `${mode}: answered (checked, catalogued)`,
      fmt(median(runs.map((r) => r.answered)), 0),
      runs.map((r) => `${fmt(r.answered, 0)} ${r.status}`).join(' '),
      fmt(growth, 1),
      '< 50 MB',
    ]);
  }
  console.log(
    `\nupload of a ${fmt(sizes[0]! / 1e6, 0)} MB CBZ on loopback; load average ${loadavg()
      .map((x) => fmt(x, 2))
      .join(' ')}\n`,
  );
  console.log(table(rows));
}

process.on('exit', () => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});
await runWithDeadline('bench:upload', envNumber('BENCH_DEADLINE_MINUTES', 20) * 60_000, main);
