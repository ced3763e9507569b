// Page rendering outside the gateway's process: a picture is decoded and scaled by render-worker in
// a child process, a PDF page drawn by pdftoppm, each under a data-memory limit (prlimit
// RLIMIT_DATA) and a time limit, so a pixel bomb ends one child, never the process that holds
// every service in embedded mode (docs/decisions.md, "Page rendering limits").
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { findExecutable } from '@bindery/platform';
import { MAX_INPUT_PIXELS, MAX_SIDE, UNREADABLE_EXIT } from './render-limits';

export interface RenderLimits {
  /** RLIMIT_DATA of each render process, in MiB */
  memoryMb: number;
  timeoutMs: number;
}

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
  /** killed at the time limit */
  timedOut: boolean;
  /** killed for writing more than maxOutput */
  overflow: boolean;
}

/** A page the limits do not allow: too many pixels, or over the memory or time limit. */
export class RenderLimitError extends Error {}

let warned = false;

/**
 * Runs `cmd args` with its data memory limited to `memoryMb` (prlimit; without prlimit on PATH the
 * limit cannot be set and this says so once), killed after `timeoutMs` or past `maxOutput` bytes
 * of output. Its environment is `env` alone: no secret of this process reaches it.
 */
export async function runLimited(
  cmd: string,
  args: string[],
  o: { input?: Buffer; memoryMb: number; timeoutMs: number; maxOutput: number; env: NodeJS.ProcessEnv; warn?(msg: string): void },
): Promise<ChildResult> {
  const prlimit = await findExecutable('prlimit');
  if (!prlimit && !warned) {
    warned = true;
    o.warn?.('prlimit (util-linux) is not on PATH: page renders run without a memory limit');
  }
  const [exe, argv] = prlimit ? [prlimit, [`--data=${o.memoryMb * 1024 * 1024}`, '--', cmd, ...args]] : [cmd, args];
  return new Promise((resolve, reject) => {
    const child = spawn(exe, argv, { env: o.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let size = 0;
    let err = '';
    let timedOut = false;
    let overflow = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, o.timeoutMs);
    child.stdout.on('data', (c: Buffer) => {
      size += c.length;
      if (size > o.maxOutput) {
        overflow = true;
        child.kill('SIGKILL');
      } else out.push(c);
    });
    child.stderr.on('data', (c: Buffer) => {
      if (err.length < 4096) err += c.toString();
    });
    // a child that ends before reading all its input is answered by its exit, not by EPIPE
    child.stdin.on('error', () => {});
    child.stdin.end(o.input);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: err.trim(), timedOut, overflow });
    });
  });
}

/** How to start render-worker: the bundle's `render-worker.js` next to this code, else the TypeScript source through tsx. */
function workerCommand(): string[] {
  const built = fileURLToPath(new URL('./render-worker.js', import.meta.url));
  if (existsSync(built)) return [built];
  const source = fileURLToPath(new URL('./render-worker.ts', import.meta.url));
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return ['--import', tsx, source];
}

/** The environment of a render process: PATH, and allocator and thread settings that keep it small. */
export const childEnv = (): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  // glibc's per-thread arenas would reserve far more than one picture needs
  MALLOC_ARENA_MAX: '2',
  UV_THREADPOOL_SIZE: '2',
  VIPS_CONCURRENCY: '1',
});

/** A picture decoded and scaled in a child: a JPEG at most `width` wide, MAX_SIDE on its long side, never enlarged. */
export async function renderPicture(data: Buffer, width: number | null, limits: RenderLimits, warn?: (msg: string) => void): Promise<Buffer> {
  const job = JSON.stringify({ width, maxSide: MAX_SIDE, maxPixels: MAX_INPUT_PIXELS });
  const r = await runLimited(process.execPath, [...workerCommand(), job], {
    input: data,
    memoryMb: limits.memoryMb,
    timeoutMs: limits.timeoutMs,
    maxOutput: 64 * 1024 * 1024,
    env: childEnv(),
    ...(warn ? { warn } : {}),
  });
  if (r.code === 0 && r.stdout.length > 0) return r.stdout;
  // the child says when the picture itself is unreadable; any other end (a signal, a full address
  // space while loading or decoding, the time or output limit) is a limit hit
  if (r.code === UNREADABLE_EXIT && !r.timedOut && !r.overflow) throw new Error(`page picture unreadable: ${r.stderr || describe(r)}`);
  throw new RenderLimitError(`picture over the render limits (${describe(r)})`);
}

export const describe = (r: ChildResult) =>
  r.timedOut ? 'time limit' : r.overflow ? 'output limit' : r.signal ? `ended by ${r.signal}` : `exit ${r.code}${r.stderr ? `: ${r.stderr.slice(0, 200)}` : ''}`;
