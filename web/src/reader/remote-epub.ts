// An EPUB opened where it lies: the file is read with HTTP range requests (the gateway's file route
// answers them) in 64 KiB pieces kept once read, so the first page needs the zip's directory, the
// package document and the sections shown, not the whole file. foliate-js reads the zip through
// zip.js, given here a reader of its own kind over those requests. Null when the server answers no
// range (the caller then downloads the file). The browser's cache is not asked: a partial entry of
// it turns a range into a conditional request that may come back whole.
import type { Book } from 'foliate-js/view.js';
import type { Loader } from 'foliate-js/epub.js';
import type { Reader } from 'foliate-js/vendor/zip.js';
import { type Opening, opening, PIECE, ranged } from './opening';

/** The span of the file an entry lies in: its local header, name, extra field and data. */
type Extent = { start: number; end: number };
/** the local header's fixed part, and room for its name and extra field (read with it; pieces round it up) */
const HEADER_ROOM = 30 + 1024;
/** the most one read asks for ahead of what zip.js wants (an entry's data is read whole anyway) */
const AHEAD_MAX = 16 * 1024 * 1024;

/**
 * A zip.js reader over range requests: pieces asked for once (a piece already on its way is waited
 * for, not asked again), several adjacent in one request. Once the directory is read (`extents`),
 * a read inside an entry asks for the whole entry at once: zip.js reads an entry's header, then its
 * data in chunks, each of which would otherwise be a round trip of its own.
 * `Reader` is zip.js's own base class (it streams an entry's data from readUint8Array).
 */
function rangeReader(Base: typeof Reader, url: string, open: Opening): Reader & { extents(e: Extent[]): void } {
  const { size, tail } = open;
  const pieces = new Map<number, Uint8Array>([[0, open.first]]);
  const pending = new Map<number, Promise<void>>();
  /** the entries' spans, by start */
  let spans: Extent[] = [];
  const fetchPieces = (from: number, to: number): Promise<void> => {
    const start = from * PIECE;
    const end = Math.min(size, (to + 1) * PIECE) - 1;
    const got = (async () => {
      const answer = await ranged(url, `bytes=${start}-${end}`);
      if (!answer || answer.start !== start) throw new Error('the book file could not be read (no range answered)');
      const { bytes } = answer;
      for (let p = from; p <= to; p++) pieces.set(p, bytes.subarray((p - from) * PIECE, (p - from + 1) * PIECE));
    })();
    for (let p = from; p <= to; p++) pending.set(p, got);
    return got.finally(() => {
      for (let p = from; p <= to; p++) if (pending.get(p) === got) pending.delete(p);
    });
  };
  /** the last byte a read at `offset` should bring: the end of the entry it falls in, when known */
  const reach = (offset: number, length: number): number => {
    let lo = 0;
    let hi = spans.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = spans[mid] as Extent;
      if (s.end <= offset) lo = mid + 1;
      else if (s.start > offset) hi = mid - 1;
      else return Math.max(offset + length, Math.min(s.end, size, offset + AHEAD_MAX));
    }
    return offset + length;
  };
  return new (class extends Base {
    constructor() {
      super();
      this.size = size;
    }
    /** the entries' spans, sorted by start and not overlapping */
    extents(e: Extent[]) {
      spans = e;
    }
    override async readUint8Array(offset: number, length: number) {
      // the directory and what lies beside it, from the opening's last bytes
      if (tail && offset >= tail.start && offset + length <= tail.start + tail.bytes.length) return tail.bytes.slice(offset - tail.start, offset - tail.start + length);
      const first = Math.floor(offset / PIECE);
      const last = Math.floor((offset + length - 1) / PIECE);
      const wanted = Math.floor((reach(offset, length) - 1) / PIECE);
      // the missing pieces, in runs of adjacent ones (one request each); those on their way, waited for
      let run: [number, number] | null = null;
      const runs: [number, number][] = [];
      const waits = new Set<Promise<void>>();
      for (let p = first; p <= wanted; p++) {
        const coming = pending.get(p);
        if (pieces.has(p) || coming) {
          if (coming && p <= last) waits.add(coming);
          run = null;
        } else if (run) run[1] = p;
        else {
          run = [p, p];
          runs.push(run);
        }
      }
      await Promise.all([...runs.map(([a, b]) => fetchPieces(a, b)), ...waits]);
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

/**
 * foliate's EPUB over range requests, or null when the server does not answer ranges. `early` is
 * the file's opening when the page asked for it already (main.ts asks before it looks for a kept copy).
 */
export async function remoteEpub(url: string, early?: Promise<Opening | null>): Promise<Book | null> {
  const open = await (early ?? opening(url));
  if (!open) return null;
  const { configure, ZipReader, BlobReader, TextWriter, BlobWriter } = await import('foliate-js/vendor/zip.js');
  configure({ useWebWorkers: false });
  // the vendored zip.js exports no Reader: it is BlobReader's parent class
  const ranges = rangeReader(Object.getPrototypeOf(BlobReader), url, open);
  const reader = new ZipReader(ranges);
  const entries = await reader.getEntries();
  // an entry's span ends where the next one starts (its extra field's length is not known here)
  const byStart = [...entries].sort((a, b) => a.offset - b.offset);
  ranges.extents(byStart.map((e, i) => ({ start: e.offset, end: Math.min(byStart[i + 1]?.offset ?? open.size, e.offset + HEADER_ROOM + e.filename.length + e.compressedSize) })));
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
