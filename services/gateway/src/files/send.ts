// Sends one file from disk over HTTP: validators, conditional requests, a single byte range,
// HEAD without a body. The file is opened before its metadata is read, so the headers describe
// exactly the bytes that are streamed, and a file that vanishes first is a 404, not a crash.
import { constants } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Messages } from '@bindery/contracts';
import { errnoOf } from '@bindery/platform';
import { contentDisposition } from './disposition';
import { isActiveContent, mimeOf } from './mime';
import { parseRange } from './range';
import { etagOf, httpDate, ifRangeHolds, mtimeSecondsOf, notModified } from './validators';

export const DEFAULT_CACHE_CONTROL = 'private, max-age=0, must-revalidate';
export const rangeNotSatisfiable = 'range not satisfiable';

/** Served inline but never run: HTML, SVG and XML from a library folder get no script and no origin. */
const SANDBOX = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox";

/** Open errors that mean the file is not there to serve; anything else is a server fault. */
const GONE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES', 'EPERM', 'EISDIR', 'ENXIO', 'ENAMETOOLONG']);

export interface SendFileOptions {
  cacheControl?: string;
  /** Adds Content-Disposition: inline with this name; also picks the Content-Type. */
  downloadName?: string;
}

/**
 * Bodiless replies send an empty stream rather than nothing: for a GET route's implicit HEAD,
 * fastify would otherwise overwrite Content-Length with 0, and an empty stream is drained at once.
 */
const nothing = (): Readable => Readable.from([]);

const single = (h: string | string[] | undefined): string | undefined => (Array.isArray(h) ? h[0] : h);

/** Opens a regular file only: a FIFO or device is refused by stat before open could block on it. */
async function openRegular(abs: string): Promise<FileHandle | null> {
  const st = await stat(abs).catch(() => null);
  if (!st?.isFile()) return null;
  try {
    return await open(abs, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    if (GONE.has(errnoOf(e) ?? '')) return null;
    throw e;
  }
}

export async function sendFile(req: FastifyRequest, reply: FastifyReply, abs: string, opts: SendFileOptions = {}): Promise<FastifyReply> {
  const handle = await openRegular(abs);
  if (!handle) return reply.code(404).send({ error: Messages.fileNotFound });
  let streaming = false;
  try {
    const st = await handle.stat({ bigint: true });
    if (!st.isFile()) return reply.code(404).send({ error: Messages.fileNotFound });
    const size = Number(st.size);
    const etag = etagOf(st);
    const mtime = mtimeSecondsOf(st);
    reply
      .header('ETag', etag)
      .header('Last-Modified', httpDate(mtime))
      .header('Cache-Control', opts.cacheControl ?? DEFAULT_CACHE_CONTROL);

    if (notModified(req.headers, etag, mtime)) return reply.code(304).send(nothing());

    const ranged = ifRangeHolds(single(req.headers['if-range']), etag, mtime) ? parseRange(req.headers.range, size) : null;
    if (ranged === 'unsatisfiable') {
      return reply.code(416).header('Content-Range', `bytes */${size}`).send({ error: rangeNotSatisfiable });
    }

    const type = mimeOf(opts.downloadName ?? path.basename(abs));
    reply.header('Content-Type', type).header('Accept-Ranges', 'bytes').header('X-Content-Type-Options', 'nosniff');
    if (isActiveContent(type)) reply.header('Content-Security-Policy', SANDBOX);
    if (opts.downloadName !== undefined) reply.header('Content-Disposition', contentDisposition(opts.downloadName));

    const start = ranged?.start ?? 0;
    const end = ranged?.end ?? size - 1;
    const length = end - start + 1;
    if (ranged) reply.code(206).header('Content-Range', `bytes ${start}-${end}/${size}`);
    reply.header('Content-Length', String(length));
    // HEAD is answered like GET, a range included (RFC 9110 §9.3.2), minus the body
    if (req.method === 'HEAD' || length === 0) return reply.send(nothing());

    // The stream owns the handle from here: it closes it on end, on error, and when fastify
    // destroys it because the client went away.
    const body = handle.createReadStream({ start, end, autoClose: true });
    streaming = true;
    return reply.send(body);
  } finally {
    if (!streaming) await handle.close().catch(() => undefined);
  }
}
