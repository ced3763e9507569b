// An EPUB opened where it lies: the file is read with HTTP range requests (the gateway's file route
// answers them) in 64 KiB pieces kept once read, so the first page needs the zip's directory, the
// package document and the sections shown, not the whole file. foliate-js reads the zip through
// zip.js, given here a reader of its own kind over those requests. Null when the server answers no
// range (the caller then downloads the file). The browser's cache is not asked: a partial entry of
// it turns a range into a conditional request that may come back whole.
import type { Book } from 'foliate-js/view.js';
import type { Loader } from 'foliate-js/epub.js';
import type { Reader } from 'foliate-js/vendor/zip.js';

const PIECE = 64 * 1024;

/** The file's size from a one-byte range request, or null when ranges are not answered. */
async function sizeOf(url: string): Promise<number | null> {
  const r = await fetch(url, { headers: { Range: 'bytes=0-0' }, credentials: 'same-origin', cache: 'no-store' });
  if (r.status !== 206) return null;
  const size = Number(/\/(\d+)$/.exec(r.headers.get('Content-Range') ?? '')?.[1]);
  return Number.isSafeInteger(size) && size > 0 ? size : null;
}

/**
 * A zip.js reader over range requests: pieces asked for once, several adjacent in one request.
 * `Reader` is zip.js's own base class (it streams an entry's data from readUint8Array).
 */
function rangeReader(Base: typeof Reader, url: string, size: number): Reader {
  const pieces = new Map<number, Uint8Array>();
  const fetchPieces = async (from: number, to: number) => {
    const start = from * PIECE;
    const end = Math.min(size, (to + 1) * PIECE) - 1;
    const r = await fetch(url, { headers: { Range: `bytes=${start}-${end}` }, credentials: 'same-origin', cache: 'no-store' });
    if (r.status !== 206) throw new Error(`the book file could not be read (${r.status})`);
    const bytes = new Uint8Array(await r.arrayBuffer());
    for (let p = from; p <= to; p++) pieces.set(p, bytes.subarray((p - from) * PIECE, (p - from + 1) * PIECE));
  };
  return new (class extends Base {
    constructor() {
      super();
      this.size = size;
    }
    override async readUint8Array(offset: number, length: number) {
      const first = Math.floor(offset / PIECE);
      const last = Math.floor((offset + length - 1) / PIECE);
      // the missing pieces, in runs of adjacent ones (one request each)
      let run: [number, number] | null = null;
      const runs: [number, number][] = [];
      for (let p = first; p <= last; p++) {
        if (pieces.has(p)) run = null;
        else if (run) run[1] = p;
        else {
          run = [p, p];
          runs.push(run);
        }
      }
      await Promise.all(runs.map(([a, b]) => fetchPieces(a, b)));
      const out = new Uint8Array(length);
      for (let p = first; p <= last; p++) {
        const piece = pieces.get(p);
        if (!piece) throw new Error('the book file could not be read (a piece is missing)');
        const from = Math.max(offset, p * PIECE);
        const to = Math.min(offset + length, p * PIECE + piece.length);
        out.set(piece.subarray(from - p * PIECE, to - p * PIECE), from - offset);
      }
      return out;
    }
  })();
}

/** foliate's EPUB over range requests, or null when the server does not answer ranges. */
export async function remoteEpub(url: string): Promise<Book | null> {
  const size = await sizeOf(url);
  if (!size) return null;
  const { configure, ZipReader, BlobReader, TextWriter, BlobWriter } = await import('foliate-js/vendor/zip.js');
  configure({ useWebWorkers: false });
  // the vendored zip.js exports no Reader: it is BlobReader's parent class
  const reader = new ZipReader(rangeReader(Object.getPrototypeOf(BlobReader), url, size));
  const entries = await reader.getEntries();
  const map = new Map(entries.map((entry) => [entry.filename, entry]));
  const loader: Loader = {
    entries,
    loadText: (name) => map.get(name)?.getData(new TextWriter()) ?? null,
    loadBlob: (name, type) => map.get(name)?.getData(new BlobWriter(type)) ?? null,
    getSize: (name) => map.get(name)?.uncompressedSize ?? 0,
  };
  const { EPUB } = await import('foliate-js/epub.js');
  return new EPUB(loader).init();
}
