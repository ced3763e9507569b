// The reference for a full scan: `calibredb add -r` of the same corpus into an empty calibre
// library, through ../shared/peers/calibre.sh (which times calibredb add alone).
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PEERS } from './scan-corpus';
import { selfTimes } from './scan-hash';

export interface CalibreImport {
  /** calibredb add, as calibre.sh times it */
  seconds: number;
  /** books in the calibre library afterwards (it skips same title + author as duplicates) */
  books: number;
  /** user + system CPU of calibre.sh and everything it waited for (the count afterwards included) */
  cpuSeconds: number;
  wallSeconds: number;
  version: string;
  log: string;
}

export async function calibreImport(corpusDir: string, tmp: string): Promise<CalibreImport> {
  const lib = join(tmp, 'calibre-lib');
  const config = join(tmp, 'calibre-config');
  mkdirSync(config, { recursive: true });
  const a = selfTimes();
  const t0 = performance.now();
  const out = await run(join(PEERS, 'calibre.sh'), ['import', corpusDir, lib], { CALIBRE_CONFIG_DIRECTORY: config });
  const wallSeconds = (performance.now() - t0) / 1000;
  const cpuSeconds = Math.round((selfTimes().children - a.children) * 100) / 100;
  const m = /import_seconds=([\d.]+) books_in_library=(\d+) log=(\S+)/.exec(out);
  if (!m) throw new Error(`calibre.sh import printed no result:\n${out}`);
  const version = (await run('calibredb', ['--version'], {})).trim();
  return { seconds: Number(m[1]), books: Number(m[2]), cpuSeconds, wallSeconds: Math.round(wallSeconds * 100) / 100, version, log: m[3]! };
}

function run(cmd: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}:\n${out}`))));
  });
}
