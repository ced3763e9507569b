// The catalog's book thread (book-worker.ts): a scan's hashing and reading of each file, and KEPUB
// conversion, take tens to hundreds of milliseconds of CPU per book; on the answering thread that
// would hold every other request (and, in embedded mode, the database) for that long, and leave the
// machine's other core idle during a scan. One thread, started on first use and stopped after a
// minute without work; jobs queue on it. While it loads, and wherever no thread can be started, the
// work is done on this thread as before: a caller never waits for the thread to start.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Catalog } from '@bindery/contracts';
import { convertToKepub, type Kepub } from './kepub';
import { readBook, type BookRead, type BookToRead } from './read-book';
import { type CalibreAsk, type CalibreOutcome, readCalibreOutcome } from '../calibre/read-library';

const IDLE_MS = 60_000;

/** What each job takes and gives, and how it is done here when the thread cannot. */
interface Ops {
  kepub: { input: Buffer; value: Kepub };
  read: { input: BookToRead; value: BookRead };
  calibre: { input: CalibreAsk; value: CalibreOutcome };
}
const HERE: { [K in keyof Ops]: (input: Ops[K]['input']) => Promise<Ops[K]['value']> } = { kepub: convertToKepub, read: readBook, calibre: readCalibreOutcome };
/** a thread's answer back into this thread's types (a Buffer arrives as a plain Uint8Array) */
const RECEIVE: { [K in keyof Ops]: (value: unknown) => Ops[K]['value'] } = {
  kepub: (v) => {
    const { data, spans } = v as { data: Uint8Array; spans: Catalog.SpanMap };
    return { data: Buffer.from(data.buffer, data.byteOffset, data.byteLength), spans };
  },
  read: (v) => v as BookRead,
  calibre: (v) => v as CalibreOutcome,
};

type Reply = { id: number; value?: unknown; error?: string } | { ready: true };
let worker: Worker | null = null;
/** the thread has loaded its code and takes jobs */
let ready = false;
let broken = false;
let next = 0;
let idle: NodeJS.Timeout | undefined;
const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

/** The bundle's book-worker.js next to this code, else the TypeScript source with tsx registered in the thread. */
function launch(): Worker {
  const built = fileURLToPath(new URL('./book-worker.js', import.meta.url));
  if (existsSync(built)) return new Worker(built);
  const api = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href;
  const source = new URL('./book-worker.ts', import.meta.url).href;
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
    if (m.error !== undefined) p.reject(new Error(m.error));
    else p.resolve(m.value);
    if (waiting.size === 0) idle = setTimeout(stopThread, IDLE_MS).unref();
  });
  w.on('error', (e) => {
    // a thread that fails is given up for this process: the work is done on this thread instead
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
    if (waiting.size) failAll(new ThreadFailure(`the book thread stopped (${code})`));
  });
  w.unref();
  return w;
}

async function onThread<K extends keyof Ops>(op: K, input: Ops[K]['input']): Promise<Ops[K]['value']> {
  const here = HERE[op] as (input: Ops[K]['input']) => Promise<Ops[K]['value']>;
  if (broken) return here(input);
  clearTimeout(idle);
  try {
    worker ??= start();
  } catch {
    broken = true;
    return here(input);
  }
  if (!ready) return here(input);
  const id = next++;
  const w = worker;
  return new Promise<unknown>((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    w.postMessage({ id, op, input });
  }).then(RECEIVE[op], (e: Error) => {
    if (e instanceof ThreadFailure) return here(input);
    throw e;
  });
}

/** An EPUB's KEPUB and span map, converted on the book thread; a book the converter refuses rejects with its message. */
export const convertOffThread = (bytes: Buffer): Promise<Kepub> => onThread('kepub', bytes);

/** A scan's read of one file (read-book.ts) on the book thread; never rejects for the file's sake. */
export const readOffThread = (book: BookToRead): Promise<BookRead> => onThread('read', book);

/** A calibre library's records (metadata.db read in one transaction: about a second of CPU for 10,000 books) on the book thread. */
export const readCalibreOffThread = (ask: CalibreAsk): Promise<CalibreOutcome> => onThread('calibre', ask);

/** True while the book thread runs (it had work in the last minute). */
export const threadRunning = (): boolean => worker !== null && ready && !broken;

/** Resolves once the book thread takes jobs (for tests), false if it cannot start. */
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

/** Stops the book thread (idle, or the service stopping). */
export function stopThread(): void {
  const w = worker;
  worker = null;
  ready = false;
  if (w) void w.terminate();
}
