// Compressed answers: brotli or gzip when the client accepts them, for compressible bodies of 1 KiB
// or more; book files never (devices need their length and byte ranges).
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, instances, register, type Account, type Call } from './helpers';
import { copyOf, createLibrary, FIXTURE, items, settled, uploadUrl } from './catalog-helpers';

const modes = await availableModes();
const get = instances(modes);

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}
function raw(base: string, path: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, base), { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each(modes)('compressed answers (%s)', (mode) => {
  let base: string;
  let call: Call;
  let admin: Account;
  let lib: Record<string, any>;
  beforeAll(async () => {
    const b = await get(mode);
    base = b.url;
    call = api(b);
    admin = await register(call);
    const dir = copyOf(FIXTURE);
    // an FB2 is XML, a type compression would take: the file route must still leave it alone
    const body = Array.from({ length: 80 }, (_, i) => `<p>Paragraph ${i} of a book that is plain XML text.</p>`).join('');
    writeFileSync(
      join(dir, 'plain.fb2'),
      `<?xml version="1.0" encoding="utf-8"?><FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0"><description><title-info><author><first-name>Plain</first-name><last-name>Text</last-name></author><book-title>Plain XML</book-title><lang>en</lang></title-info></description><body><section>${body}</section></body></FictionBook>`,
    );
    lib = await createLibrary(call, admin.token, { name: `Compression ${mode}`, folders: [dir], watch: false });
    await settled(call, admin.token, lib.id);
  });

  it('sends the list as brotli or gzip when asked, and the same JSON either way', async () => {
    const path = `/api/media-items?library_id=${lib.id}&limit=50`;
    const auth = { authorization: `Bearer ${admin.token}` };
    const plain = await raw(base, path, auth);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(1024);
    const json = JSON.parse(plain.body.toString('utf8'));
    expect(json.data.length).toBeGreaterThan(10);

    const br = await raw(base, path, { ...auth, 'accept-encoding': 'br, gzip' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(br.body.length).toBeLessThan(plain.body.length / 3);
    expect(JSON.parse(brotliDecompressSync(br.body).toString('utf8'))).toEqual(json);

    const gz = await raw(base, path, { ...auth, 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(gz.body).toString('utf8'))).toEqual(json);
  });

  it('leaves small answers as they are', async () => {
    const r = await raw(base, '/api/auth/profile', { authorization: `Bearer ${admin.token}`, 'accept-encoding': 'br, gzip' });
    expect(r.status).toBe(200);
    expect(r.body.length).toBeLessThan(1024);
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(r.body.toString('utf8')).username).toBe(admin.username);
  });

  it('never compresses a book file: its length and byte ranges stay', async () => {
    const list = await items(call, admin.token, lib.id);
    const fb2 = list.flatMap((i) => i.formats).find((f: { format: string }) => f.format === 'fb2');
    expect(fb2).toBeDefined();
    const url = uploadUrl(lib.id, fb2.file_path);
    const whole = await raw(base, url, { authorization: `Bearer ${admin.token}`, 'accept-encoding': 'br, gzip' });
    expect(whole.status).toBe(200);
    expect(whole.headers['content-encoding']).toBeUndefined();
    expect(Number(whole.headers['content-length'])).toBe(fb2.size);
    expect(whole.body.length).toBe(fb2.size);
    const part = await raw(base, url, { authorization: `Bearer ${admin.token}`, 'accept-encoding': 'gzip', range: 'bytes=0-99' });
    expect(part.status).toBe(206);
    expect(part.headers['content-encoding']).toBeUndefined();
    expect(Buffer.compare(part.body, whole.body.subarray(0, 100))).toBe(0);
  });
});
