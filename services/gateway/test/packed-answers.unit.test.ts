import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { chooseEncoding, sendPacked } from '../src/http/packed-answers';

describe('compressed copies of kept answers', () => {
  it('chooses brotli, then gzip, and honours q=0', () => {
    expect(chooseEncoding('gzip, deflate, br, zstd')).toBe('br');
    expect(chooseEncoding('gzip')).toBe('gzip');
    expect(chooseEncoding('br;q=0, gzip;q=0.5')).toBe('gzip');
    expect(chooseEncoding('identity')).toBeNull();
    expect(chooseEncoding('*;q=0')).toBeNull();
    expect(chooseEncoding('*')).toBe('br');
    expect(chooseEncoding(undefined)).toBeNull();
  });

  it('sends a kept answer compressed by what the client accepts, the same bytes each time, and leaves strings, small and non-JSON answers alone', async () => {
    const kept = Buffer.from(JSON.stringify({ data: Array.from({ length: 200 }, (_, i) => ({ id: i, title: `Book ${i}` })) }));
    const app = Fastify();
    let made = 0;
    app.addHook('onSend', async (req, reply, payload) => {
      const out = await sendPacked(req, reply, payload);
      if (out !== payload) made++;
      return out;
    });
    app.get('/kept', async (_req, reply) => reply.type('application/json; charset=utf-8').send(kept));
    app.get('/string', async (_req, reply) => reply.type('application/json').send(kept.toString()));
    app.get('/small', async (_req, reply) => reply.type('application/json').send(Buffer.from('{"a":1}')));
    app.get('/picture', async (_req, reply) => reply.type('image/jpeg').send(kept));
    const br1 = await app.inject({ url: '/kept', headers: { 'accept-encoding': 'br' } });
    const br2 = await app.inject({ url: '/kept', headers: { 'accept-encoding': 'br' } });
    const gz = await app.inject({ url: '/kept', headers: { 'accept-encoding': 'gzip' } });
    const plain = await app.inject({ url: '/kept' });
    expect(br1.headers['content-encoding']).toBe('br');
    expect(br1.headers.vary).toBe('accept-encoding');
    expect(brotliDecompressSync(br1.rawPayload).equals(kept)).toBe(true);
    expect(br2.rawPayload.equals(br1.rawPayload)).toBe(true);
    expect(gunzipSync(gz.rawPayload).equals(kept)).toBe(true);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.equals(kept)).toBe(true);
    expect(made).toBe(3);
    for (const url of ['/string', '/small', '/picture']) {
      const r = await app.inject({ url, headers: { 'accept-encoding': 'br, gzip' } });
      expect(r.headers['content-encoding'], url).toBeUndefined();
    }
    expect(made).toBe(3);
    await app.close();
  });
});
