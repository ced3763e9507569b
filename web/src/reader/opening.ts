// An EPUB's opening: its first 64 KiB (the zip's first entries: mimetype, container, most often the
// package document) and its last 64 KiB (the zip's directory, which zip.js reads first), asked for
// at once with two range requests, so the first page waits for one round trip, not two. Asked for by
// the reader's boot script (boot.ts) before the reader's bundle has arrived; read by remote-epub.ts.
// Imports nothing: the boot script stays a few hundred bytes.

/** the size of the pieces a book file is read in, and of the opening's two parts */
export const PIECE = 64 * 1024;

/** A range answer's bytes and the file's size, or null when the server answered no range. */
export async function ranged(url: string, range: string): Promise<{ bytes: Uint8Array; start: number; size: number } | null> {
  const r = await fetch(url, { headers: { Range: range }, credentials: 'same-origin', cache: 'no-store' });
  if (r.status !== 206) return null;
  const m = /^bytes (\d+)-\d+\/(\d+)$/.exec(r.headers.get('Content-Range') ?? '');
  const size = Number(m?.[2]);
  if (!m || !Number.isSafeInteger(size) || size <= 0) return null;
  return { bytes: new Uint8Array(await r.arrayBuffer()), start: Number(m[1]), size };
}

/** The file's size, its first piece and (when the answer fits the file) its last bytes. */
export type Opening = { size: number; first: Uint8Array; tail: { start: number; bytes: Uint8Array } | null };
export async function opening(url: string): Promise<Opening | null> {
  const [head, tail] = await Promise.all([ranged(url, `bytes=0-${PIECE - 1}`), ranged(url, `bytes=-${PIECE}`).catch(() => null)]);
  if (!head) return null;
  const fits = tail && tail.size === head.size && tail.start + tail.bytes.length === head.size;
  return { size: head.size, first: head.bytes, tail: fits ? { start: tail.start, bytes: tail.bytes } : null };
}
