// Compressed copies of answers the read models keep. A cached answer (`Reads.cached`) is the same
// Buffer on every hit, so its gzip or brotli copy is made once and kept beside it in a WeakMap: it
// goes when the answer leaves the cache, and nothing is invalidated by hand. Everything else
// (strings, streams, answers made per request) is left to @fastify/compress.
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

type Encoding = 'br' | 'gzip';
const packed = new WeakMap<Buffer, Partial<Record<Encoding, Buffer>>>();
const COMPRESSIBLE = /^(?:application\/(?:[\w.+-]+\+)?json|text\/[\w.+-]+|application\/(?:[\w.+-]+\+)?xml)(?:;|$)/i;
/** the same threshold and settings @fastify/compress is given in app.ts */
export const MIN_BYTES = 1024;
export const BROTLI_QUALITY = 4;
export const GZIP_LEVEL = 6;

/** The encoding to send for an Accept-Encoding header: brotli first, then gzip; none refused with q=0. */
export function chooseEncoding(header: string | undefined): Encoding | null {
  if (!header) return null;
  const accepted = new Map<string, number>();
  for (const part of header.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find(Boolean);
    if (name) accepted.set(name.trim(), q ? Number(q[1]) : 1);
  }
  const ok = (e: string) => (accepted.get(e) ?? accepted.get('*') ?? 0) > 0;
  return ok('br') ? 'br' : ok('gzip') ? 'gzip' : null;
}

/** onSend: a kept answer goes out compressed from its kept copy; others pass untouched. */
export async function sendPacked(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (!Buffer.isBuffer(payload) || payload.length < MIN_BYTES || reply.statusCode !== 200) return payload;
  if (reply.getHeader('content-encoding') !== undefined || !COMPRESSIBLE.test(String(reply.getHeader('content-type') ?? ''))) return payload;
  const encoding = chooseEncoding(req.headers['accept-encoding']);
  if (!encoding) return payload;
  let copies = packed.get(payload);
  if (!copies) {
    copies = {};
    packed.set(payload, copies);
  }
  let body = copies[encoding];
  if (!body) {
    body =
      encoding === 'br'
        ? brotliCompressSync(payload, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: payload.length } })
        : gzipSync(payload, { level: GZIP_LEVEL });
    copies[encoding] = body;
  }
  const vary = reply.getHeader('vary');
  reply.header('content-encoding', encoding).header('vary', vary ? `${String(vary)}, accept-encoding` : 'accept-encoding');
  reply.removeHeader('content-length');
  return body;
}
