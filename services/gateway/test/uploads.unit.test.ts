// The /uploads route on its own: a stub requireUser stands in for the real authenticator, which
// the end-to-end suite covers; the files and folders are real.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { uploadsRoutes, UPLOADS_CACHE_CONTROL } from '../src/web-api/uploads';

const A = '3f2b8c1e-5d4a-4b6f-9e7d-1a2b3c4d5e6f';
const B = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const EMPTY = '00000000-0000-4000-8000-000000000000';
const UNKNOWN = '11111111-2222-4333-8444-555555555555';

const NFD_DIR = 'U\u0308nic\u0327ode'; // "Üniçode" decomposed, as macOS leaves names
const NFD_FILE = 'Cafe\u0301 Cre\u0300me.epub';
const SPACED = 'with space & plus+.pdf';

let base: string;
let app: FastifyInstance;
const asked: string[] = [];
const auth = { 'x-user': 'ok' };

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'bindery-uploads-')));
  const lib = path.join(base, 'lib');
  const lib2 = path.join(base, 'lib2');
  await mkdir(path.join(lib, NFD_DIR), { recursive: true });
  await mkdir(lib2);
  await writeFile(path.join(lib, 'book.epub'), 'epub bytes');
  await writeFile(path.join(lib, 'cover.jpg'), 'jpeg bytes');
  await writeFile(path.join(lib, NFD_DIR, NFD_FILE), 'nfd bytes');
  await writeFile(path.join(lib, SPACED), 'pdf bytes');
  await writeFile(path.join(lib, '%2e%2e'), 'a file really named %2e%2e');
  await symlink('/etc/passwd', path.join(lib, 'escape.epub'));
  await symlink('/etc', path.join(lib, 'etc'));
  await symlink('book.epub', path.join(lib, 'alias.epub'));
  await writeFile(path.join(lib2, 'secret.epub'), 'secret of lib2');
  await writeFile(path.join(base, 'secret.txt'), 'secret outside');
  await writeFile(path.join(lib, 'uncatalogued.epub'), 'not in the catalogue');

  const libraries = new Map<string, string[]>([
    [A, [lib]],
    [B, [path.join(base, 'gone'), lib2]],
    [EMPTY, []],
  ]);
  app = Fastify();
  const requireUser = async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.headers['x-user'] !== 'ok') return reply.code(401).send({ error: 'authentication required' });
  };
  uploadsRoutes(app, {
    requireUser,
    folders: async (_req, id) => {
      asked.push(id);
      return libraries.get(id) ?? null;
    },
    // the catalogue check answers yes except for one name: the path rules below are the second line
    catalogued: async (_req, _id, rel) => rel !== 'uncatalogued.epub',
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app.close();
  await rm(base, { recursive: true, force: true });
});

const get = (url: string, headers: Record<string, string> = auth, method: 'GET' | 'HEAD' = 'GET') => app.inject({ method, url, headers });
const fileNotFound = { error: 'file not found' };

describe('GET /uploads/library-<id>/<path>', () => {
  it('asks for a session before anything else', async () => {
    for (const url of [`/uploads/library-${A}/book.epub`, `/uploads/library-${UNKNOWN}/book.epub`, '/uploads/library-nope/x', `/uploads/library-${A}/..%2f..%2fsecret.txt`]) {
      const r = await get(url, {});
      expect(r.statusCode, url).toBe(401);
      expect(r.json()).toEqual({ error: 'authentication required' });
    }
  });

  it('serves nothing the catalogue does not list, even when the file is there', async () => {
    const r = await get(`/uploads/library-${A}/uncatalogued.epub`);
    expect(r.statusCode).toBe(404);
    expect(r.json()).toEqual(fileNotFound);
  });

  it('serves a file with its type and the uploads cache policy', async () => {
    const r = await get(`/uploads/library-${A}/book.epub`);
    expect(r.statusCode).toBe(200);
    expect(r.body).toBe('epub bytes');
    expect(r.headers['content-type']).toBe('application/epub+zip');
    expect(r.headers['cache-control']).toBe(UPLOADS_CACHE_CONTROL);
    expect(r.headers['cache-control']).toBe('private, max-age=3600');
    expect((await get(`/uploads/library-${A}/cover.jpg`)).headers['content-type']).toBe('image/jpeg');
  });

  it('takes the library id in any case and asks for it in lower case', async () => {
    asked.length = 0;
    expect((await get(`/uploads/library-${A.toUpperCase()}/book.epub`)).statusCode).toBe(200);
    expect(asked).toEqual([A]);
  });

  it('looks through every folder of the library', async () => {
    const r = await get(`/uploads/library-${B}/secret.epub`);
    expect(r.statusCode).toBe(200);
    expect(r.body).toBe('secret of lib2');
  });

  it('finds names with spaces, reserved characters and decomposed accents', async () => {
    const enc = (p: string) => p.split('/').map(encodeURIComponent).join('/');
    expect((await get(`/uploads/library-${A}/${enc(SPACED)}`)).body).toBe('pdf bytes');
    expect((await get(`/uploads/library-${A}/${enc(`${NFD_DIR}/${NFD_FILE}`)}`)).body).toBe('nfd bytes');
    // a client that normalised the URL to NFC still gets the file
    expect((await get(`/uploads/library-${A}/${enc(`${NFD_DIR}/${NFD_FILE}`.normalize('NFC'))}`)).body).toBe('nfd bytes');
    // '+' in a path is a plus, not a space
    expect((await get(`/uploads/library-${A}/with%20space%20%26%20plus+.pdf`)).body).toBe('pdf bytes');
  });

  it('answers HEAD and Range like sendFile does', async () => {
    const head = await get(`/uploads/library-${A}/book.epub`, auth, 'HEAD');
    expect(head.statusCode).toBe(200);
    expect(head.rawPayload.length).toBe(0);
    expect(head.headers['content-length']).toBe('10');
    const ranged = await app.inject({ url: `/uploads/library-${A}/book.epub`, headers: { ...auth, range: 'bytes=0-3' } });
    expect(ranged.statusCode).toBe(206);
    expect(ranged.body).toBe('epub');
  });

  it('tells an unknown library from a missing file', async () => {
    expect((await get(`/uploads/library-${UNKNOWN}/book.epub`)).json()).toEqual({ error: 'library not found' });
    expect((await get(`/uploads/library-${UNKNOWN}/book.epub`)).statusCode).toBe(404);
    for (const url of [
      `/uploads/library-${A}/nope.epub`,
      `/uploads/library-${A}/`,
      `/uploads/library-${EMPTY}/book.epub`,
      `/uploads/library-${A}/${encodeURIComponent(NFD_DIR)}`,
    ]) {
      const r = await get(url);
      expect(r.statusCode, url).toBe(404);
      expect(r.json()).toEqual(fileNotFound);
    }
  });

  it('answers a malformed library id as a missing file', async () => {
    for (const id of ['nope', `${A}x`, A.replace(/-/g, ''), `${A.slice(0, -1)}g`]) {
      const r = await get(`/uploads/library-${id}/book.epub`);
      expect(r.statusCode, id).toBe(404);
      expect(r.json()).toEqual(fileNotFound);
    }
  });

  it.each([
    ['encoded slashes', '..%2f..%2fsecret.txt'],
    ['encoded dots and slash', '%2e%2e%2fsecret.txt'],
    ['into a sibling folder', '..%2flib2%2fsecret.epub'],
    ['absolute, encoded', '%2fetc%2fpasswd'],
    ['encoded NUL', 'book.epub%00.jpg'],
    ['encoded backslashes', '..%5c..%5csecret.txt'],
    ['backslash inside', 'etc%5cpasswd'],
    ['Windows drive', 'C:%5cWindows%5cwin.ini'],
    ['double-encoded dots', '%252e%252e%252fsecret.txt'],
    ['dot segment', '.%2fbook.epub'],
    ['symlink out of the folder', 'escape.epub'],
    ['through a symlinked directory out of the folder', 'etc/passwd'],
  ])('refuses %s', async (_why, rel) => {
    const r = await get(`/uploads/library-${A}/${rel}`);
    expect(r.statusCode).toBe(404);
    expect(r.json()).toEqual(fileNotFound);
  });

  it('does not decode twice: %2e%2e may be a real file name', async () => {
    expect((await get(`/uploads/library-${A}/%252e%252e`)).body).toBe('a file really named %2e%2e');
  });

  it('follows a symlink that stays inside the folder', async () => {
    expect((await get(`/uploads/library-${A}/alias.epub`)).body).toBe('epub bytes');
  });

  it('refuses traversal sent raw, past any client-side URL normalisation', async () => {
    for (const rel of ['../../secret.txt', '%2e%2e/%2e%2e/secret.txt', '.%2e/secret.txt', '../lib2/secret.epub', 'a/../../secret.txt', '..\\..\\secret.txt']) {
      const res = await rawGet(`/uploads/library-${A}/${rel}`);
      expect(res.status, rel).toBe(404);
      expect(res.body, rel).not.toContain('secret');
    }
    const ok = await rawGet(`/uploads/library-${A}/book.epub`);
    expect(ok.status).toBe(200);
  });
});

/** Sends the request line byte for byte, as curl --path-as-is would. */
function rawGet(target: string): Promise<{ status: number; body: string }> {
  const { port } = app.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => {
      sock.write(`GET ${target} HTTP/1.1\r\nHost: localhost\r\nX-User: ok\r\nConnection: close\r\n\r\n`);
    });
    let data = '';
    sock.setEncoding('utf8');
    sock.on('data', (c: string) => (data += c));
    sock.on('error', reject);
    sock.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, body: data.slice(data.indexOf('\r\n\r\n') + 4) });
    });
  });
}
