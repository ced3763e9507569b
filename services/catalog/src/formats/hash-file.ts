// Content identity of a book file: SHA-256 for the catalog, and KOReader's partial MD5 so
// KOReader sync (which names documents by it) can find the book.
import { createHash } from 'node:crypto';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { readAt } from './file-bytes';

export interface FileHashes {
  sha256: string;
  partial_md5: string;
  size: number;
}

const READ_CHUNK = 1024 * 1024;
const SAMPLE = 1024;
/** Files up to this size are read in one go: per-file stream overhead dominates for small books. */
const WHOLE_FILE_MAX = 4 * 1024 * 1024;
/** Read buffers kept for the next file: a fresh 4 MiB allocation per small book costs more than its hash. */
const spare: Buffer[] = [];
const SPARE_MAX = 8;

/** File-system errors (ENOENT, EACCES, …) are thrown as they are: they say nothing about the book. */
export async function hashFile(path: string): Promise<FileHashes> {
  // Opening a FIFO would block for ever, and a device could be read without end.
  const st = await stat(path);
  if (!st.isFile()) throw Object.assign(new Error(`not a regular file: ${path}`), { code: 'ENOTFILE' });
  const fh = await open(path, 'r');
  try {
    if (st.size <= WHOLE_FILE_MAX) {
      const buf = spare.pop() ?? Buffer.allocUnsafe(WHOLE_FILE_MAX + 1);
      try {
        const n = await readAt(fh, buf.subarray(0, st.size + 1), 0);
        // the file grew since stat: hash it the streamed way
        if (n <= st.size) {
          const bytes = buf.subarray(0, n);
          return { sha256: createHash('sha256').update(bytes).digest('hex'), partial_md5: partialMd5Of(bytes), size: n };
        }
      } finally {
        if (spare.length < SPARE_MAX) spare.push(buf);
      }
    }
    const partial_md5 = await partialMd5(fh);
    const sha = createHash('sha256');
    let size = 0;
    for await (const chunk of fh.createReadStream({ start: 0, highWaterMark: READ_CHUNK, autoClose: false })) {
      sha.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    return { sha256: sha.digest('hex'), partial_md5, size };
  } finally {
    await fh.close();
  }
}

/** KOReader's util.partialMD5: 1 KiB samples at 1024 << (2*i) for i = -1..10, stopping at the first
 * empty read. For i = -1 LuaJIT's bit.lshift(1024, -2) masks the shift to 30 and wraps to 0. */
export async function partialMd5(fh: FileHandle): Promise<string> {
  const md5 = createHash('md5');
  const buf = Buffer.allocUnsafe(SAMPLE);
  for (let i = -1; i <= 10; i++) {
    const offset = i < 0 ? 0 : SAMPLE * 4 ** i;
    const n = await readAt(fh, buf, offset);
    if (n === 0) break;
    md5.update(buf.subarray(0, n));
  }
  return md5.digest('hex');
}

/** Both ids of a file already in memory. */
export function hashBytes(bytes: Buffer): FileHashes {
  return { sha256: createHash('sha256').update(bytes).digest('hex'), partial_md5: partialMd5Of(bytes), size: bytes.length };
}

/** The same samples, taken from bytes already in memory. */
export function partialMd5Of(bytes: Buffer): string {
  const md5 = createHash('md5');
  for (let i = -1; i <= 10; i++) {
    const offset = i < 0 ? 0 : SAMPLE * 4 ** i;
    if (offset >= bytes.length) break;
    md5.update(bytes.subarray(offset, offset + SAMPLE));
  }
  return md5.digest('hex');
}
