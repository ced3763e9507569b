// Bounded whole-file and positioned reads, for the formats whose libraries need bytes in memory.
import { open, type FileHandle } from 'node:fs/promises';
import { BookError, toBookError } from './book-error';

/** The whole file in a fresh (unpooled) buffer; an empty file or one over `max` bytes is a BookError. */
export async function readWholeFile(path: string, max: number, label: string): Promise<Uint8Array> {
  return withFile(path, label, async (fh) => {
    const { size } = await fh.stat();
    if (size === 0) throw new BookError(`not a valid ${label}: empty file`);
    if (size > max) throw new BookError(`${label} too large to read (${Math.round(size / 2 ** 20)} MiB, limit ${Math.round(max / 2 ** 20)} MiB)`);
    const bytes = new Uint8Array(size);
    const n = await readAt(fh, bytes, 0);
    return n === size ? bytes : bytes.slice(0, n);
  });
}

/** The first bytes of a file (fewer when it is shorter). */
export async function readHead(path: string, length: number, label: string): Promise<Uint8Array> {
  return withFile(path, label, async (fh) => {
    const buf = new Uint8Array(length);
    return buf.subarray(0, await readAt(fh, buf, 0));
  });
}

export async function withFile<T>(path: string, label: string, use: (fh: FileHandle) => Promise<T>): Promise<T> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    throw toBookError(e, label);
  }
  try {
    return await use(fh);
  } catch (e) {
    throw toBookError(e, label);
  } finally {
    await fh.close().catch(() => {});
  }
}

/** Fills `buf` from `position` until full or end of file; returns the bytes read. */
export async function readAt(fh: FileHandle, buf: Uint8Array, position: number): Promise<number> {
  let filled = 0;
  while (filled < buf.length) {
    const { bytesRead } = await fh.read(buf, filled, buf.length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled;
}
