// Hashing throughput: the catalog's own hashFile (SHA-256 over the whole file plus KOReader's
// partial MD5) against coreutils sha256sum over the same files, each run several times so the
// later runs read from a warm page cache for both.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashFile } from '../../services/catalog/src/formats/index';
import { median } from './lib';

export interface HashRun {
  seconds: number;
  /** user + system CPU seconds (the process itself for hashFile, the waited-for children for sha256sum) */
  cpuSeconds: number;
}

export interface HashVariant {
  what: string;
  runs: HashRun[];
  /** median of the runs after the first */
  warmSeconds: number;
  warmCpuSeconds: number;
  mbPerSecond: number;
}

export const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** utime, stime, cutime, cstime of this process, in seconds. */
export function selfTimes(): { self: number; children: number } {
  const s = readFileSync('/proc/self/stat', 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return { self: (Number(f[11]) + Number(f[12])) / CLK_TCK, children: (Number(f[13]) + Number(f[14])) / CLK_TCK };
}

async function timed(fn: () => Promise<void>, cpu: 'self' | 'children'): Promise<HashRun> {
  const a = selfTimes();
  const t0 = performance.now();
  await fn();
  const seconds = (performance.now() - t0) / 1000;
  const b = selfTimes();
  return { seconds, cpuSeconds: Math.round((b[cpu] - a[cpu]) * 100) / 100 };
}

async function hashAll(paths: string[], concurrency: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < paths.length) await hashFile(paths[next++]!);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** `xargs -0 sha256sum`: one sha256sum process at a time over the whole list (as many as the argument limit needs). */
function sha256sum(listFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('xargs', ['-0', '-a', listFile, 'sha256sum'], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`xargs sha256sum exited ${code}`))));
  });
}

/**
 * Runs sha256sum, hashFile one file at a time, and hashFile with `concurrency` files in flight
 * (the scanner's SCAN_CONCURRENCY), interleaved, `runs` times each.
 */
export async function compareHashing(paths: string[], bytes: number, tmp: string, runs: number, concurrency: number): Promise<HashVariant[]> {
  const listFile = join(tmp, 'files.nul');
  writeFileSync(listFile, paths.join('\0'));
  const variants = [
    { what: 'sha256sum (xargs -0, one process at a time)', run: () => timed(() => sha256sum(listFile), 'children') },
    { what: 'hashFile, one file at a time', run: () => timed(() => hashAll(paths, 1), 'self') },
    { what: `hashFile, ${concurrency} files in flight`, run: () => timed(() => hashAll(paths, concurrency), 'self') },
  ];
  const results = variants.map(() => [] as HashRun[]);
  for (let r = 0; r < runs; r++) {
    for (const [i, v] of variants.entries()) results[i]!.push(await v.run());
  }
  return variants.map((v, i) => {
    const warm = results[i]!.slice(runs > 1 ? 1 : 0);
    const warmSeconds = median(warm.map((x) => x.seconds));
    return {
      what: v.what,
      runs: results[i]!.map((x) => ({ seconds: Math.round(x.seconds * 1000) / 1000, cpuSeconds: x.cpuSeconds })),
      warmSeconds: Math.round(warmSeconds * 1000) / 1000,
      warmCpuSeconds: median(warm.map((x) => x.cpuSeconds)),
      mbPerSecond: Math.round((bytes / 1e6 / warmSeconds) * 10) / 10,
    };
  });
}
