import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, realpath, rm, stat, unlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { DEFAULT_CACHE_CONTROL, sendFile } from '../src/files/send';
import { asUnprivileged } from '../../../platform/test/support/unprivileged';

let dir: string;
let app: FastifyInstance;
const content = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
let etag: string;
let lastModified: string;

beforeAll(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'bindery-send-')));
  await chmod(dir, 0o755);
  await writeFile(path.join(dir, 'book.epub'), content);
  await writeFile(path.join(dir, 'empty.txt'), '');
  await writeFile(path.join(dir, 'cover.svg'), '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
  await writeFile(path.join(dir, 'big.cbz'), Buffer.alloc(16 * 1024 * 1024, 7));
  await mkdir(path.join(dir, 'folder.epub'));
  app = Fastify();
  app.get<{ Params: { name: string }; Querystring: { dl?: string; cc?: string } }>('/f/:name', (req, reply) =>
    sendFile(req, reply, path.join(dir, req.params.name), { ...(req.query.dl ? { downloadName: req.query.dl } : {}), ...(req.query.cc ? { cacheControl: req.query.cc } : {}) }),
  );
  await app.ready();
  const first = await app.inject({ url: '/f/book.epub' });
  etag = first.headers.etag as string;
  lastModified = first.headers['last-modified'] as string;
});

afterAll(async () => {
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

const get = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') => app.inject({ method, url, headers });

describe('sendFile: whole file', () => {
  it('sends the bytes with type, length, validators and caching headers', async () => {
    const r = await get('/f/book.epub');
    expect(r.statusCode).toBe(200);
    expect(r.rawPayload.equals(content)).toBe(true);
    expect(r.headers['content-type']).toBe('application/epub+zip');
    expect(r.headers['content-length']).toBe('1000');
    expect(r.headers['accept-ranges']).toBe('bytes');
    expect(r.headers['cache-control']).toBe(DEFAULT_CACHE_CONTROL);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['content-disposition']).toBeUndefined();
    expect(r.headers['content-security-policy']).toBeUndefined();
    expect(r.headers.etag).toMatch(/^"[0-9a-z]+-[0-9a-z]+-[0-9a-z]+"$/);
    const st = await stat(path.join(dir, 'book.epub'));
    expect(r.headers['last-modified']).toBe(new Date(Math.floor(st.mtimeMs / 1000) * 1000).toUTCString());
  });

  it('takes a cache policy and a download name, which also picks the type', async () => {
    const r = await get(`/f/book.epub?cc=${encodeURIComponent('private, max-age=3600')}&dl=${encodeURIComponent('Mon Livre é.kepub.epub')}`);
    expect(r.headers['cache-control']).toBe('private, max-age=3600');
    expect(r.headers['content-type']).toBe('application/kepub+zip');
    expect(r.headers['content-disposition']).toBe(`inline; filename="Mon Livre e.kepub.epub"; filename*=UTF-8''Mon%20Livre%20%C3%A9.kepub.epub`);
  });

  it('sandboxes content a browser would run', async () => {
    const r = await get('/f/cover.svg');
    expect(r.headers['content-type']).toBe('image/svg+xml');
    expect(r.headers['content-security-policy']).toContain('sandbox');
  });

  it('sends an empty file, and refuses any range of it', async () => {
    const r = await get('/f/empty.txt');
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-length']).toBe('0');
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.body).toBe('');
    const ranged = await get('/f/empty.txt', { range: 'bytes=0-' });
    expect(ranged.statusCode).toBe(416);
    expect(ranged.headers['content-range']).toBe('bytes */0');
  });
});

describe('sendFile: ranges', () => {
  it.each([
    ['bytes=0-99', 0, 99],
    ['bytes=-100', 900, 999],
    ['bytes=-5000', 0, 999],
    ['bytes=990-', 990, 999],
    ['bytes=995-2000', 995, 999],
    ['bytes=0-0', 0, 0],
    ['BYTES = 10-19', 10, 19],
    ['bytes=10-19,', 10, 19],
  ])('%s → %i-%i', async (range, start, end) => {
    const r = await get('/f/book.epub', { range });
    expect(r.statusCode).toBe(206);
    expect(r.headers['content-range']).toBe(`bytes ${start}-${end}/1000`);
    expect(r.headers['content-length']).toBe(String(end - start + 1));
    expect(r.rawPayload.equals(content.subarray(start, end + 1))).toBe(true);
    expect(r.headers['content-type']).toBe('application/epub+zip');
  });

  it.each(['bytes=1000-', 'bytes=5000-6000', 'bytes=-0'])('%s is not satisfiable', async (range) => {
    const r = await get('/f/book.epub', { range });
    expect(r.statusCode).toBe(416);
    expect(r.headers['content-range']).toBe('bytes */1000');
    expect(r.json()).toEqual({ error: 'range not satisfiable' });
  });

  it.each(['bytes=0-1,5-6', 'bytes=0-1, -5', 'bytes=abc', 'bytes=5-1', 'bytes=', 'bytes=-', 'items=0-5', '0-5', 'bytes=1.5-2'])(
    '%s gets the whole file (several ranges, or a header to ignore)',
    async (range) => {
      const r = await get('/f/book.epub', { range });
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-range']).toBeUndefined();
      expect(r.rawPayload.equals(content)).toBe(true);
    },
  );
});

describe('sendFile: conditional requests', () => {
  it('answers 304 to a matching If-None-Match, weakly compared, listed, or *', async () => {
    for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const r = await get('/f/book.epub', { 'if-none-match': inm });
      expect(r.statusCode, inm).toBe(304);
      expect(r.body).toBe('');
      expect(r.headers.etag).toBe(etag);
      expect(r.headers['cache-control']).toBe(DEFAULT_CACHE_CONTROL);
      expect(r.headers['content-length']).toBeUndefined();
    }
    expect((await get('/f/book.epub', { 'if-none-match': '"nope"' })).statusCode).toBe(200);
  });

  it('answers 304 to If-Modified-Since when unchanged, but only without If-None-Match', async () => {
    expect((await get('/f/book.epub', { 'if-modified-since': lastModified })).statusCode).toBe(304);
    expect((await get('/f/book.epub', { 'if-modified-since': new Date(Date.now() + 3600_000).toUTCString() })).statusCode).toBe(304);
    expect((await get('/f/book.epub', { 'if-modified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' })).statusCode).toBe(200);
    expect((await get('/f/book.epub', { 'if-modified-since': 'not a date' })).statusCode).toBe(200);
    expect((await get('/f/book.epub', { 'if-modified-since': lastModified, 'if-none-match': '"nope"' })).statusCode).toBe(200);
  });

  it('puts a 304 before a Range', async () => {
    expect((await get('/f/book.epub', { 'if-none-match': etag, range: 'bytes=0-9' })).statusCode).toBe(304);
  });

  it('honours a Range under If-Range only while the validator still matches', async () => {
    const range = 'bytes=0-9';
    expect((await get('/f/book.epub', { range, 'if-range': etag })).statusCode).toBe(206);
    expect((await get('/f/book.epub', { range, 'if-range': lastModified })).statusCode).toBe(206);
    for (const ifRange of ['"other"', `W/${etag}`, 'Thu, 01 Jan 1970 00:00:00 GMT', 'garbage']) {
      const r = await get('/f/book.epub', { range, 'if-range': ifRange });
      expect(r.statusCode, ifRange).toBe(200);
      expect(r.headers['content-length']).toBe('1000');
    }
  });
});

describe('sendFile: HEAD', () => {
  it('sends the GET headers and no body', async () => {
    const r = await get('/f/book.epub', {}, 'HEAD');
    expect(r.statusCode).toBe(200);
    expect(r.rawPayload.length).toBe(0);
    expect(r.headers['content-length']).toBe('1000');
    expect(r.headers['content-type']).toBe('application/epub+zip');
    expect(r.headers.etag).toBe(etag);
  });

  it('mirrors a ranged GET', async () => {
    const r = await get('/f/book.epub', { range: 'bytes=-10' }, 'HEAD');
    expect(r.statusCode).toBe(206);
    expect(r.rawPayload.length).toBe(0);
    expect(r.headers['content-length']).toBe('10');
    expect(r.headers['content-range']).toBe('bytes 990-999/1000');
  });

  it('answers 304 and 404 without a body', async () => {
    const nm = await get('/f/book.epub', { 'if-none-match': etag }, 'HEAD');
    expect(nm.statusCode).toBe(304);
    expect(nm.rawPayload.length).toBe(0);
    const missing = await get('/f/missing.epub', {}, 'HEAD');
    expect(missing.statusCode).toBe(404);
    expect(missing.rawPayload.length).toBe(0);
  });
});

describe('sendFile: what is not a servable file', () => {
  it('answers 404 for a missing file or a directory', async () => {
    for (const name of ['missing.epub', 'folder.epub']) {
      const r = await get(`/f/${name}`);
      expect(r.statusCode, name).toBe(404);
      expect(r.json()).toEqual({ error: 'file not found' });
    }
  });

  it('answers 404 for a FIFO at once, rather than blocking on it', async () => {
    const fifo = path.join(dir, 'pipe.epub');
    try {
      execFileSync('mkfifo', [fifo]);
    } catch {
      return; // no mkfifo here: nothing to test
    }
    expect((await get('/f/pipe.epub')).statusCode).toBe(404);
  });

  it('answers 404 when the file cannot be opened after stat found it', async () => {
    const locked = path.join(dir, 'locked.epub');
    await writeFile(locked, 'x');
    await chmod(locked, 0o000);
    const r = await asUnprivileged(() => get('/f/locked.epub'));
    expect(r.statusCode).toBe(404);
    expect(r.json()).toEqual({ error: 'file not found' });
  });
});

describe('sendFile over a socket', () => {
  let base: string;
  beforeAll(async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });

  /** One request on its own connection, read to the end, so no pooled socket holds an fd. */
  const statusOf = (url: string, headers: Record<string, string> = {}, method = 'GET') =>
    new Promise<number>((resolve, reject) => {
      http
        .request(`${base}${url}`, { method, headers, agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        })
        .on('error', reject)
        .end();
    });
  const openFds = () => readdirSync('/proc/self/fd').length;
  const settle = async (limit: number) => {
    for (let i = 0; i < 100 && openFds() > limit; i++) await new Promise((r) => setTimeout(r, 20));
    return openFds();
  };

  it('closes the file when clients go away mid-download', async () => {
    const before = openFds();
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve, reject) => {
        const req = http.get(`${base}/f/big.cbz`, { agent: false }, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve() : reject(e)));
      });
    }
    expect(await settle(before)).toBeLessThanOrEqual(before);
  });

  it('leaves no file open after HEAD, 304, 416 and 404', async () => {
    const before = openFds();
    for (let i = 0; i < 20; i++) {
      expect(await statusOf('/f/book.epub', {}, 'HEAD')).toBe(200);
      expect(await statusOf('/f/book.epub', { 'if-none-match': etag })).toBe(304);
      expect(await statusOf('/f/book.epub', { range: 'bytes=5000-' })).toBe(416);
      expect(await statusOf('/f/missing.epub')).toBe(404);
      expect(await statusOf('/f/book.epub', { range: 'bytes=0-9' })).toBe(206);
    }
    expect(await settle(before)).toBeLessThanOrEqual(before);
  });

  it('finishes a download whose file is deleted once it has started', async () => {
    const doomed = path.join(dir, 'doomed.cbz');
    await writeFile(doomed, Buffer.alloc(4 * 1024 * 1024, 3));
    const got = await new Promise<number>((resolve, reject) => {
      http
        .get(`${base}/f/doomed.cbz`, { agent: false }, (res) => {
          let n = 0;
          res.once('data', () => void unlink(doomed));
          res.on('data', (c: Buffer) => (n += c.length));
          res.on('end', () => resolve(n));
          res.on('error', reject);
        })
        .on('error', reject);
    });
    expect(got).toBe(4 * 1024 * 1024);
  });
});
