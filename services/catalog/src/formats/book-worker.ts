// The book thread (embedded/dist/book-worker.js in the bundle): the CPU-heavy work on a book's bytes
// (a scan's hashing and reading of metadata, a calibre library's metadata.db, KEPUB conversion), off the thread that answers requests
// and, in embedded mode, runs the database. One message in ({id, op, input}), one out ({id, value}
// or {id, error}); `{ready: true}` once loaded. Messages are served as they come (a scan keeps a few
// in flight: their file reads overlap).
import { parentPort } from 'node:worker_threads';
import { convertToKepub } from './kepub';
import { readBook, type BookToRead } from './read-book';
import { type CalibreAsk, readCalibreOutcome } from '../calibre/read-library';

type Job = { id: number; op: 'kepub'; input: Uint8Array } | { id: number; op: 'read'; input: BookToRead } | { id: number; op: 'calibre'; input: CalibreAsk };

async function run(m: Job): Promise<unknown> {
  if (m.op === 'read') return readBook(m.input);
  if (m.op === 'calibre') return readCalibreOutcome(m.input);
  const k = await convertToKepub(Buffer.from(m.input.buffer, m.input.byteOffset, m.input.byteLength));
  return { data: k.data, spans: k.spans };
}

parentPort?.postMessage({ ready: true });

parentPort?.on('message', async (m: Job) => {
  try {
    parentPort!.postMessage({ id: m.id, value: await run(m) });
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) });
  }
});
