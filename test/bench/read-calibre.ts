// The reference for list reads: calibre-server's by-title OPDS acquisition feed (30 books a page,
// calibre's default), served from a calibre library of the benchmark's real books and loaded by
// ../shared/peers/calibre.sh bench (wrk, 2 threads, 16 connections, 10 s per run).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PEERS } from './scan-corpus';

export interface CalibreOpds {
  url: string;
  version: string;
  books: number;
  entriesOnPage: number;
  /** each wrk run */
  runs: { rps: number; p50: number; p99: number; errors: string }[];
  /** calibre.sh's median of the runs */
  rps: number;
  p50: number;
  p99: number;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function run(cmd: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${basename(cmd)} ${args[0] ?? ''} exited ${code}: ${out.trim().split('\n').slice(-3).join(' | ')}`)),
    );
  });
}

/** wrk's latency ("812.00us", "2.31ms", "1.02s") in milliseconds. */
function ms(s: string | undefined): number {
  const m = s ? /^([\d.]+)(us|ms|s|m)$/.exec(s) : null;
  if (!m) return NaN;
  return Number(m[1]) * ({ us: 0.001, ms: 1, s: 1000, m: 60_000 } as Record<string, number>)[m[2]!]!;
}

/** Why calibre cannot run here, or null when it can. */
export async function calibreAbsent(): Promise<string | null> {
  for (const tool of ['calibredb', 'calibre-server', 'wrk', 'curl']) {
    try {
      await run('sh', ['-c', `command -v ${tool}`], {});
    } catch {
      return `${tool} is not installed (apt-get install -y --no-install-recommends calibre wrk curl)`;
    }
  }
  return null;
}

/** Imports `booksDir` into a calibre library under `base` (once), serves it and benchmarks page 1 of the by-title feed. */
export async function calibreOpdsPage(base: string, booksDir: string, runs: number): Promise<CalibreOpds> {
  const lib = join(base, `calibre-${basename(join(booksDir, '..'))}`);
  const env = { CALIBRE_CONFIG_DIRECTORY: join(base, 'calibre-config') };
  mkdirSync(env.CALIBRE_CONFIG_DIRECTORY, { recursive: true });
  const sh = join(PEERS, 'calibre.sh');
  if (!existsSync(join(lib, 'metadata.db'))) {
    console.log(`calibre: importing ${booksDir} into ${lib} …`);
    console.log(`calibre: ${(await run(sh, ['import', booksDir, lib], env)).trim()}`);
  }
  const version = (await run('calibredb', ['--version'], env)).trim();
  // before serving: calibredb refuses to open a library that calibre-server has open
  const books = Number((await run('calibredb', ['list', '--library-path', lib, '--fields', 'id', '--for-machine'], env)).match(/"id"/g)?.length ?? 0);
  const port = await freePort();
  const pid = (await run(sh, ['serve', lib, String(port)], { ...env, MAX_OPDS_ITEMS: '30' })).trim().split('\n').pop()!;
  try {
    const url = `http://127.0.0.1:${port}/opds/navcatalog/${Buffer.from('Otitle').toString('hex')}?library_id=${encodeURIComponent(basename(lib))}`;
    const res = await fetch(url);
    const feed = await res.text();
    if (res.status !== 200) throw new Error(`calibre's feed answered ${res.status}: ${feed.slice(0, 200)}`);
    const entriesOnPage = (feed.match(/<entry[\s>]/g) ?? []).length;
    const out = await run(sh, ['bench', url, String(runs)], env);
    const median = /median req\/s: ([\d.]+)/.exec(out);
    if (!median) throw new Error(`calibre.sh bench printed no median:\n${out}`);
    const perRun = [...Array(runs).keys()].map((i) => {
      // calibre.sh keeps wrk's raw output in the system temp folder
      const txt = readFileSync(join(tmpdir(), `calibre-bench-${i + 1}.txt`), 'utf8');
      const line = new RegExp(`^run ${i + 1}: ([\\d.]+) req/s .*?\\) (.*)$`, 'm').exec(out);
      return { rps: Number(line?.[1] ?? NaN), p50: ms(/^\s+50%\s+(\S+)/m.exec(txt)?.[1]), p99: ms(/^\s+99%\s+(\S+)/m.exec(txt)?.[1]), errors: line?.[2] ?? '' };
    });
    const mid = [...perRun].sort((a, b) => a.rps - b.rps)[Math.floor((perRun.length - 1) / 2)]!;
    return { url, version, books, entriesOnPage, runs: perRun, rps: Number(median[1]), p50: mid.p50, p99: mid.p99 };
  } finally {
    await run(sh, ['stop', pid], env).catch(() => {});
  }
}
