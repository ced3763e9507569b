// KEPUB conversion on a worker thread (kepub-worker.ts): a book of a few megabytes takes tens to
// hundreds of milliseconds of CPU, which on the answering thread would hold every other request (and,
// in embedded mode, the database) for that long; on its own thread it uses the machine's other core.
// One thread, started on the first conversion and stopped after a minute without one; conversions
// queue on it. Where no thread can be started, books are converted on this thread as before.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Catalog } from '@bindery/contracts';
import { convertToKepub, type Kepub } from './kepub';

const IDLE_MS = 60_000;

type Reply = { id: number; data?: Uint8Array; spans?: Catalog.SpanMap; error?: string } | { ready: true };
let worker: Worker | null = null;
/** the thread has loaded its code and takes books */
let ready = false;
let broken = false;
let next = 0;
let idle: NodeJS.Timeout | undefined;
const waiting = new Map<number, { resolve(k: Kepub): void; reject(e: Error): void }>();

/** The bundle's kepub-worker.js next to this code, else the TypeScript source with tsx registered in the thread. */
function launch(): Worker {
  const built = fileURLToPath(new URL('./kepub-worker.js', import.meta.url));
  if (existsSync(built)) return new Worker(built);
  const api = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href;
  const source = new URL('./kepub-worker.ts', import.meta.url).href;
  return new Worker(`import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); })`, { eval: true });
}

/** The thread itself failed (it could not load, or crashed): not the book's fault. */
class ThreadFailure extends Error {}

function failAll(e: Error): void {
  for (const w of waiting.values()) w.reject(e);
  waiting.clear();
}

function start(): Worker {
  const w = launch();
  w.on('message', (m: Reply) => {
    if ('ready' in m) {
      ready = true;
      idle = setTimeout(stopThread, IDLE_MS).unref();
      return;
    }
    const p = waiting.get(m.id);
    if (!p) return;
    waiting.delete(m.id);
    if (m.error !== undefined || !m.data || !m.spans) p.reject(new Error(m.error ?? 'no KEPUB'));
    else p.resolve({ data: Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength), spans: m.spans });
    if (waiting.size === 0) idle = setTimeout(stopThread, IDLE_MS).unref();
  });
  w.on('error', (e) => {
    // a thread that fails is given up for this process: books are converted on this thread instead
    broken = true;
    worker = null;
    ready = false;
    failAll(new ThreadFailure(e.message));
  });
  w.on('exit', (code) => {
    if (worker === w) {
      worker = null;
      ready = false;
    }
    if (waiting.size) failAll(new ThreadFailure(`the KEPUB thread stopped (${code})`));
  });
  w.unref();
  return w;
}

/**
 * Converts on the KEPUB thread. While the thread starts (loading its code takes longer than
 * converting a typical book), the book that started it is converted here; so is every book when no
 * thread can run.
 */
export async function convertOffThread(bytes: Buffer): Promise<Kepub> {
  if (broken) return convertToKepub(bytes);
  clearTimeout(idle);
  try {
    worker ??= start();
  } catch {
    broken = true;
    return convertToKepub(bytes);
  }
  if (!ready) return convertToKepub(bytes);
  const id = next++;
  const w = worker;
  return new Promise<Kepub>((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    w.postMessage({ id, bytes });
  }).catch((e: Error) => {
    if (e instanceof ThreadFailure) return convertToKepub(bytes);
    throw e;
  });
}

/** True while the KEPUB thread runs (it converted something in the last minute). */
export const threadRunning = (): boolean => worker !== null && ready && !broken;

/** Resolves once the KEPUB thread takes books (for tests), false if it cannot start. */
export async function threadReady(timeoutMs = 10_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  if (!worker && !broken) {
    try {
      worker = start();
    } catch {
      broken = true;
    }
  }
  while (!ready && !broken && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  return ready;
}

/** Stops the KEPUB thread (idle, or the service stopping). */
export function stopThread(): void {
  const w = worker;
  worker = null;
  ready = false;
  if (w) void w.terminate();
}
