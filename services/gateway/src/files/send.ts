// Sends one file from disk over HTTP. @fastify/send makes the answer: 200 or 206 with its
// Content-Range and Content-Length, HEAD without a body, and the stream of exactly those bytes.
// What it is asked stays ours: the validators (validators.ts: a strong ETag, so If-Range can name
// the exact bytes a client holds, where the library's tag is weak; the 304 rules) and which range,
// if any (range.ts: RFC 9110's reading, where the library refuses `bytes=5-1` with a 416 and reads
// `bytes=-5000` of a shorter file differently). The library is then given that one range only.
import { constants } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { send } from '@fastify/send';
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

/** Whether this process can open the file (as it runs now: `access` would ask for the real user). */
async function readable(abs: string): Promise<boolean> {
  try {
    await (await open(abs, constants.O_RDONLY | constants.O_NONBLOCK)).close();
    return true;
  } catch (e) {
    if (GONE.has(errnoOf(e) ?? '')) return false;
    throw e;
  }
}

/** Open errors that mean the file is not there to serve; anything else is a server fault. */
const GONE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES', 'EPERM', 'EISDIR', 'ENXIO', 'ENAMETOOLONG']);

/** A file system path as the library takes it: a URL path, which it decodes (a file may be named `%2e`). */
const asUrlPath = (abs: string) => abs.split('/').map(encodeURIComponent).join('/');

/** What the library sees of the request: its method, and the one range we chose (else none). */
const forSend = (req: FastifyRequest, range: { start: number; end: number } | null) => ({
  method: req.method,
  headers: range ? { range: `bytes=${range.start}-${range.end}` } : {},
});

export function sendFile(req: FastifyRequest, reply: FastifyReply, abs: string, opts: SendFileOptions = {}): Promise<FastifyReply> {
  return sendOnce(req, reply, abs, opts, 3);
}

async function sendOnce(req: FastifyRequest, reply: FastifyReply, abs: string, opts: SendFileOptions, tries: number): Promise<FastifyReply> {
  // a regular file this process may read: a FIFO or a device would block the stream, a directory
  // is no file, and one that cannot be opened is as absent as a missing one
  const st = await stat(abs, { bigint: true }).catch(() => null);
  if (!st?.isFile() || !(await readable(abs))) return reply.code(404).send({ error: Messages.fileNotFound });
  const etag = etagOf(st);
  const mtime = mtimeSecondsOf(st);
  reply
    .header('ETag', etag)
    .header('Last-Modified', httpDate(mtime))
    .header('Cache-Control', opts.cacheControl ?? DEFAULT_CACHE_CONTROL);
  if (notModified(req.headers, etag, mtime)) return reply.code(304).send(nothing());

  const size = Number(st.size);
  const ranged = ifRangeHolds(single(req.headers['if-range']), etag, mtime) ? parseRange(single(req.headers.range), size) : null;
  if (ranged === 'unsatisfiable') return reply.code(416).header('Content-Range', `bytes */${size}`).send({ error: rangeNotSatisfiable });
  // dot-files are allowed here: a library folder may sit under one, and what is served is judged
  // before (catalogued files only); the validators and the caching policy are the ones above
  const r = await send(forSend(req, ranged) as never, asUrlPath(abs), {
    dotfiles: 'allow',
    etag: false,
    lastModified: false,
    cacheControl: false,
    contentType: false,
    index: false,
  });
  if (r.type === 'error') {
    r.stream.destroy();
    // the file changed between our look and the library's (shorter now, or gone)
    if (r.statusCode === 416) return reply.code(416).header('Content-Range', String(r.headers['Content-Range'])).send({ error: rangeNotSatisfiable });
    if (r.statusCode === 404) return reply.code(404).send({ error: Messages.fileNotFound });
    throw (r.metadata as { error: Error }).error;
  }
  if (r.type !== 'file') {
    r.stream.destroy();
    return reply.code(404).send({ error: Messages.fileNotFound });
  }
  // rewritten between our look and the library's: the validators above would not name these bytes
  const now = r.metadata.stat;
  if ((now.size !== size || BigInt(Math.trunc(now.mtimeMs)) !== st.mtimeMs) && tries > 1) {
    r.stream.destroy();
    return sendOnce(req, reply, abs, opts, tries - 1);
  }

  const type = mimeOf(opts.downloadName ?? path.basename(abs));
  reply.header('Content-Type', type).header('X-Content-Type-Options', 'nosniff');
  if (isActiveContent(type)) reply.header('Content-Security-Policy', SANDBOX);
  if (opts.downloadName !== undefined) reply.header('Content-Disposition', contentDisposition(opts.downloadName));
  for (const [name, value] of Object.entries(r.headers)) reply.header(name, String(value));
  return reply.code(r.statusCode).send(r.stream);
}
