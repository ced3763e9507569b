// The KEPUB conversion's thread (embedded/dist/kepub-worker.js in the bundle): books are converted
// here, off the thread that answers requests and (embedded) runs the database. One message in
// ({id, bytes}), one out ({id, data, spans} or {id, error}); `{ready: true}` once loaded.
import { parentPort } from 'node:worker_threads';
import { convertToKepub } from './kepub';

parentPort?.postMessage({ ready: true });

parentPort?.on('message', async (m: { id: number; bytes: Uint8Array }) => {
  try {
    const k = await convertToKepub(Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength));
    parentPort!.postMessage({ id: m.id, data: k.data, spans: k.spans });
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) });
  }
});
