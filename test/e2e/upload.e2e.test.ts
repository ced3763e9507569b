// Uploading books (issue 43, upload) against a real Bindery in both modes: POST
// /api/libraries/<id>/uploads streams one file (the raw body) into a folder of the library, and the
// scanner catalogues it as any other file. Three books appear catalogued; the same bytes again are a
// 409 with the existing book; a taken name gets " (1)"; over UPLOAD_MAX_BYTES is a 413 (declared or
// found while streaming); bad names, subfolders leaving the folder, the wrong type, truncated and
// corrupt archives and a zip bomb are refused with their messages; a client gone mid-body and a full
// disk leave nothing behind; a plain user is refused. After every refusal the folder holds exactly
// what it held before: no temporary file, no half-written book, no folder made for nothing.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildZip } from '../../services/catalog/test/fixtures/zip-writer';
import { availableModes, startBindery, type Bindery, type Mode } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, settled } from './catalog-helpers';
import { api, eventually, expectError, register, type Account, type Call } from './helpers';
import { buildEpub, upload, type UploadAnswer } from './upload-helpers';

const modes = await availableModes();
const LIMIT = 3_000_000;
const DEADLINE_S = 3;
const EPUB = join(FIXTURE, 'Thomas Whitfield/the lowercase title.epub');
const EPUB2 = join(FIXTURE, 'J. R. Hartley/The Hidden Crown (1864).epub');
const CBZ = join(FIXTURE, 'comics/Starlight Comics/Captain Nebula/Captain Nebula 002.cbz');
const MOBI = join(FIXTURE, 'Grace Holloway/Rock & Roll _Live_ at _The Cellar_.mobi');
const AZW3 = join(FIXTURE, 'Aleksandr Petrov/Straße der Ölmühle.azw3');
const CORRUPT = join(FIXTURE, 'corrupt');

/** Every file and folder under `dir`, relative, sorted (dot-files included: a temporary file shows). */
function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      out.push(e.isDirectory() ? `${r}/` : r);
      if (e.isDirectory() && !e.isSymbolicLink()) walk(r);
    }
  };
  walk('');
  return out.sort();
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A raw request: `chunks` written one by one (chunked when no length is declared); `abortAfter` cuts the connection after that many. */
function rawUpload(
  url: string,
  path: string,
  token: string,
  chunks: Buffer[],
  opts: { length?: number; abortAfter?: number; everyMs?: number } = {},
): Promise<UploadAnswer | 'aborted'> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const headers: Record<string, string> = { 'content-type': 'application/octet-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) };
    if (opts.length !== undefined) headers['content-length'] = String(opts.length);
    const req = request({ host: u.hostname, port: u.port, method: 'POST', path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', (e) => (opts.abortAfter !== undefined ? resolve('aborted') : reject(e)));
    let i = 0;
    const next = () => {
      if (opts.abortAfter !== undefined && i === opts.abortAfter) {
        setTimeout(() => {
          req.destroy();
          resolve('aborted');
        }, 300);
        return;
      }
      if (i === chunks.length) return void req.end();
      if (req.destroyed) return;
      const ok = req.write(chunks[i++]!);
      if (ok) setTimeout(next, opts.everyMs ?? 20);
      else req.once('drain', () => setTimeout(next, opts.everyMs ?? 0));
    };
    next();
  });
}

/** Mounts a 1 MiB tmpfs (root only); null where this machine does not allow it. */
function smallDisk(): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'bindery-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
}

for (const mode of modes) {
  describe(`uploading books (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let plain: Account;
    let dir: string;
    let lib: string;
    const ids: Record<string, string> = {};
    const post = (name: string, body: Buffer, q: Record<string, string> = {}, token = admin.token) => upload(b.url, token, lib, name, body, q);
    /** nothing but `expected` in the library folder */
    const holds = (expected: string[]) => expect(tree(dir)).toEqual(expected.sort());

    beforeAll(async () => {
      // a short whole-request deadline: an upload lifts it once its caller is judged, and keeps a pace
      b = await startBindery(mode as Mode, { UPLOAD_MAX_BYTES: String(LIMIT), HTTP_REQUEST_TIMEOUT_SECONDS: String(DEADLINE_S), HTTP_HEADERS_TIMEOUT_SECONDS: '2' });
      call = api(b);
      admin = await register(call);
      plain = await register(call);
      dir = emptyDir();
      const created = await createLibrary(call, admin.token, { name: 'Uploads', folders: [dir], watch: false });
      lib = created.id;
      await settled(call, admin.token, lib);
    }, 240_000);
    afterAll(async () => b?.stop());

    it('lists the folders an upload may go into, with the limit; a plain user is refused', async () => {
      const r = await call('GET', `/api/libraries/${lib}/upload-folders`, { token: admin.token });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ library_id: lib, max_bytes: LIMIT, folders: [{ index: 0, name: dir.split('/').pop(), path: dir }] });
      expectError(await call('GET', `/api/libraries/${lib}/upload-folders`, { token: plain.token }), 403, 'metadata editing access required');
      expectError(await call('GET', '/api/libraries/00000000-0000-4000-8000-000000000000/upload-folders', { token: admin.token }), 404, 'library not found');
    });

    it('three books uploaded are catalogued: each answer names its book, which the API shows', async () => {
      for (const [file, name, q] of [
        [EPUB, 'the lowercase title.epub', {}],
        [CBZ, 'Captain Nebula 002.cbz', { subfolder: 'Comics/Captain Nebula' }],
        [MOBI, 'Rock & Roll.mobi', {}],
      ] as const) {
        const bytes = readFileSync(file);
        const r = await post(name, bytes, q);
        expect(r.status, JSON.stringify(r.json)).toBe(201);
        const path = 'subfolder' in q ? `${q.subfolder}/${name}` : name;
        expect(r.json).toMatchObject({ status: 'catalogued', message: 'uploaded and catalogued', name, path, folder: 0, size: bytes.length, sha256: sha(bytes), renamed: false });
        expect(r.json.url).toBe(`/books/${r.json.media_item_id}`);
        const item = await call('GET', `/api/media-items/${r.json.media_item_id}`, { token: admin.token });
        expect(item.status, item.text).toBe(200);
        expect(item.json.library_id).toBe(lib);
        expect(item.json.file_path).toBe(path);
        ids[name] = r.json.media_item_id;
        expect(readFileSync(join(dir, path)).equals(bytes)).toBe(true);
      }
      holds(['Comics/', 'Comics/Captain Nebula/', 'Comics/Captain Nebula/Captain Nebula 002.cbz', 'Rock & Roll.mobi', 'the lowercase title.epub']);
    }, 120_000);

    it('the same bytes again (under any name) are refused with the existing book; nothing is written', async () => {
      const r = await post('another name.epub', readFileSync(EPUB));
      expect(r.status, JSON.stringify(r.json)).toBe(409);
      const id = ids['the lowercase title.epub']!;
      const title = (await call('GET', `/api/media-items/${id}`, { token: admin.token })).json.title;
      expect(r.json).toEqual({ error: `this file is already in the catalog: "${title}"`, media_item_id: id, url: `/books/${id}` });
      holds(['Comics/', 'Comics/Captain Nebula/', 'Comics/Captain Nebula/Captain Nebula 002.cbz', 'Rock & Roll.mobi', 'the lowercase title.epub']);
    });

    it('a taken name gets " (1)", then " (2)"; the first file is never replaced', async () => {
      const before = readFileSync(join(dir, 'the lowercase title.epub'));
      const one = await post('the lowercase title.epub', readFileSync(EPUB2));
      expect(one.status, JSON.stringify(one.json)).toBe(201);
      expect(one.json).toMatchObject({ name: 'the lowercase title (1).epub', path: 'the lowercase title (1).epub', renamed: true, status: 'catalogued' });
      const two = await post('the lowercase title.epub', buildEpub('Third of the name'));
      expect(two.status, JSON.stringify(two.json)).toBe(201);
      expect(two.json.name).toBe('the lowercase title (2).epub');
      expect(readFileSync(join(dir, 'the lowercase title.epub')).equals(before)).toBe(true);
      expect(readFileSync(join(dir, 'the lowercase title (1).epub')).equals(readFileSync(EPUB2))).toBe(true);
    }, 60_000);

    it('over UPLOAD_MAX_BYTES: 413 when declared, and when found while streaming; nothing left', async () => {
      const before = tree(dir);
      const big = Buffer.alloc(LIMIT + 1, 7);
      const declared = await post('big.pdf', big);
      expectError({ status: declared.status, json: declared.json } as never, 413, 'the file is larger than the upload limit of 3 MB (UPLOAD_MAX_BYTES)');
      // no length declared: counted as it streams, cut at the limit
      const chunks = Array.from({ length: 8 }, () => Buffer.alloc(512 * 1024, 7));
      const streamed = await rawUpload(b.url, `/api/libraries/${lib}/uploads?name=big.pdf`, admin.token, chunks);
      expect(streamed).toEqual({ status: 413, json: { error: 'the file is larger than the upload limit of 3 MB (UPLOAD_MAX_BYTES)' } });
      expect(tree(dir)).toEqual(before);
    });

    it('bad names and subfolders are refused with their message before anything is written', async () => {
      const before = tree(dir);
      const bytes = readFileSync(EPUB2);
      const cases: [Record<string, string>, number, string][] = [
        [{ name: '..' }, 400, 'the file name must not be "." or ".."'],
        [{ name: '../escape.epub' }, 400, 'the file name must not contain "/" or "\\"'],
        [{ name: 'a\\b.epub' }, 400, 'the file name must not contain "/" or "\\"'],
        [{ name: '.hidden.epub' }, 400, 'the file name must not start with "." (hidden files are not catalogued)'],
        [{ name: 'nul\u0000.epub' }, 400, 'name must not contain control characters'],
        [{ name: 'bell\u0007.epub' }, 400, 'name must not contain control characters'],
        [{ name: 'line\u2028.epub' }, 400, 'the file name must not contain control characters'],
        [{ name: `${'x'.repeat(260)}.epub` }, 400, 'the file name is longer than 255 bytes'],
        [{ name: 'notes.txt' }, 415, '"notes.txt" is not a supported book file (EPUB, KEPUB, PDF, CBZ, CBR, CB7, MOBI, PRC, AZW, AZW3, FB2)'],
        [{ name: 'book.epub', subfolder: '../outside' }, 400, 'a subfolder name must not be "." or ".."'],
        [{ name: 'book.epub', subfolder: 'a/../../b' }, 400, 'a subfolder name must not be "." or ".."'],
        [{ name: 'book.epub', subfolder: '/etc' }, 400, 'the subfolder must be a path inside the folder, not an absolute path'],
        [{ name: 'book.epub', subfolder: 'a//b' }, 400, 'a subfolder name is empty'],
        [{ name: 'book.epub', subfolder: 'x\u0001y' }, 400, 'subfolder must not contain control characters'],
        [{ name: 'book.epub', folder: '1' }, 400, "folder must be the number of one of the library's folders (0 to 0)"],
        [{ name: 'book.epub', folder: '-1' }, 400, "folder must be the number of one of the library's folders (0 to 0)"],
        [{ name: '' }, 400, 'name is required (the file name)'],
      ];
      for (const [q, status, message] of cases) {
        const { name, ...rest } = q;
        const r = await post(name!, bytes, rest);
        expect({ q, status: r.status, json: r.json }).toEqual({ q, status, json: { error: message } });
      }
      // a symlink inside the folder that leads out of it
      const outside = mkdtempSync(join(tmpdir(), 'bindery-outside-'));
      symlinkSync(outside, join(dir, 'escape'));
      try {
        const r = await post('book.epub', bytes, { subfolder: 'escape/deeper' });
        expect(r).toEqual({ status: 400, json: { error: 'the subfolder leads outside the library folder' } });
        expect(readdirSync(outside)).toEqual([]);
      } finally {
        rmSync(join(dir, 'escape'));
        rmSync(outside, { recursive: true, force: true });
      }
      expect(tree(dir)).toEqual(before);
    });

    it('the wrong type, truncated and corrupt archives and a zip bomb are refused; nothing half-written stays', async () => {
      const before = tree(dir);
      const bomb = buildZip([
        { name: 'META-INF/container.xml', data: '<container/>' },
        { name: 'page.jpg', data: Buffer.alloc(64 * 1024 * 1024), deflate: true },
      ]);
      expect(bomb.length).toBeLessThan(LIMIT);
      const liar = buildZip([{ name: 'page.jpg', data: Buffer.alloc(4 * 1024 * 1024), deflate: true, declaredSize: 1000 }]);
      const cases: [string, Buffer, number, string | RegExp][] = [
        ['truncated.cbz', readFileSync(join(CORRUPT, 'truncated.cbz')), 422, /^not a valid CBZ: the archive is truncated or corrupt \(.+\)$/],
        ['truncated.epub', readFileSync(join(CORRUPT, 'truncated.epub')), 422, /^not a valid EPUB: the archive is truncated or corrupt \(.+\)$/],
        ['not-a-zip.epub', readFileSync(join(CORRUPT, 'not-a-zip.epub')), 415, 'not a valid EPUB: the file is not a ZIP archive'],
        ['empty.epub', Buffer.alloc(0), 422, 'not a valid EPUB: the file is empty'],
        ['garbage.pdf', readFileSync(join(CORRUPT, 'garbage.pdf')), 422, 'not a valid PDF: the file is truncated (no %%EOF at its end)'],
        ['a pdf really.epub', Buffer.from('%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n'), 415, 'not a valid EPUB: the file is a PDF, not a ZIP archive'],
        ['no-images.cbz', readFileSync(join(CORRUPT, 'no-images.cbz')), 422, 'not a valid CBZ: no page images in the archive'],
        ['bomb.epub', bomb, 422, 'not a valid EPUB: page.jpg inflates more than 100 times its packed size (a zip bomb)'],
        ['liar.cbz', liar, 422, /^not a valid CBZ: page\.jpg is truncated or corrupt \(.+\)$/],
        ['cut.mobi', readFileSync(MOBI).subarray(0, 2000), 422, /^not a valid MOBI: the file is truncated or corrupt \(record \d+ lies outside it\)$/],
        ['cut.azw3', readFileSync(AZW3).subarray(0, 2000), 422, /^not a valid AZW3: the file is truncated or corrupt \(record \d+ lies outside it\)$/],
        ['cut.fb2', Buffer.from('<?xml version="1.0"?><FictionBook><body><p>half'), 422, 'not a valid FB2: the file is truncated (it does not end with </FictionBook>)'],
        [
          'cut.cb7',
          Buffer.concat([Buffer.from('7z\xbc\xaf\x27\x1c\x00\x04', 'latin1'), Buffer.alloc(24, 0xff)]),
          422,
          'not a valid CB7: the file is truncated (its header lies past the end)',
        ],
        ['not.cbr', Buffer.from('Rar!\x1a\x07\x00garbage', 'latin1'), 422, /^not a valid CBR: the archive is truncated or corrupt \(.+\)$/],
      ];
      for (const [name, body, status, message] of cases) {
        const r = await post(name, body);
        expect({ name, status: r.status }).toEqual({ name, status });
        expect(Object.keys(r.json)).toEqual(['error']);
        if (typeof message === 'string') expect(r.json.error, name).toBe(message);
        else expect(r.json.error, name).toMatch(message);
      }
      expect(tree(dir)).toEqual(before);
    }, 60_000);

    it('a client that goes away mid-body leaves no temporary file', async () => {
      const before = tree(dir);
      const chunks = Array.from({ length: 4 }, () => Buffer.alloc(256 * 1024, 1));
      const r = await rawUpload(b.url, `/api/libraries/${lib}/uploads?name=gone.pdf&subfolder=new%20folder`, admin.token, chunks, { length: 2_000_000, abortAfter: 3 });
      expect(r).toBe('aborted');
      await eventually(async () => expect(tree(dir)).toEqual(before), 5000);
    });

    it('an upload may take longer than HTTP_REQUEST_TIMEOUT_SECONDS while it keeps a pace; a trickle is a 408 and leaves nothing', async () => {
      const bytes = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(2_400_000, 0x20), Buffer.from('\n%%EOF\n')]);
      // 600 KB a second for about 4 s: past the 3 s deadline, above the pace of 1 MiB every 3 s
      const slices = Array.from({ length: Math.ceil(bytes.length / 300_000) }, (_, i) => bytes.subarray(i * 300_000, (i + 1) * 300_000));
      const t0 = Date.now();
      const slow = await rawUpload(b.url, `/api/libraries/${lib}/uploads?name=slow%20but%20steady.pdf`, admin.token, slices, { length: bytes.length, everyMs: 500 });
      expect(Date.now() - t0).toBeGreaterThan(DEADLINE_S * 1000);
      expect(slow).toMatchObject({ status: 201, json: { name: 'slow but steady.pdf', size: bytes.length } });
      const before = tree(dir);
      // 4 KiB every 200 ms: under the pace, cut within two windows
      const trickle = Array.from({ length: 200 }, () => Buffer.alloc(4096, 0x20));
      const cut = await rawUpload(b.url, `/api/libraries/${lib}/uploads?name=trickle.pdf`, admin.token, trickle, { length: 200 * 4096, everyMs: 200 });
      expect(cut).toEqual({ status: 408, json: { error: 'request timeout' } });
      expect(tree(dir)).toEqual(before);
      // refused before its body is read (no credentials), the request keeps the whole-request deadline
      const anon = await rawUpload(b.url, `/api/libraries/${lib}/uploads?name=anon.pdf`, '', trickle, { length: 200 * 4096, everyMs: 200 });
      expect(anon).toEqual({ status: 401, json: { error: 'authentication required' } });
    }, 60_000);

    it('a plain user is refused, and nothing is written', async () => {
      const before = tree(dir);
      const r = await post('mine.epub', buildEpub('Mine'), {}, plain.token);
      expect(r).toEqual({ status: 403, json: { error: 'metadata editing access required' } });
      const anon = await fetch(`${b.url}/api/libraries/${lib}/uploads?name=x.epub`, { method: 'POST', body: buildEpub('x') });
      expect(anon.status).toBe(401);
      expect(await anon.json()).toEqual({ error: 'authentication required' });
      expect(tree(dir)).toEqual(before);
    });

    it('a user the admin allowed to edit uploads too, and the scan their upload asks for catalogues it (no watcher needed)', async () => {
      const editor = await register(call);
      const g = await call('PUT', `/api/auth/users/${editor.id}/permissions`, { token: admin.token, body: { can_edit_metadata: true } });
      expect(g.status, g.text).toBe(200);
      const quiet = emptyDir();
      const ql = await createLibrary(call, admin.token, { name: 'Unwatched uploads', folders: [quiet], watch: false });
      await settled(call, admin.token, ql.id);
      const folders = await call('GET', `/api/libraries/${ql.id}/upload-folders`, { token: editor.token });
      // the server path is an admin's to see
      expect(folders.json).toEqual({ library_id: ql.id, max_bytes: LIMIT, folders: [{ index: 0, name: quiet.split('/').pop() }] });
      const bytes = buildEpub('Brought by an editor');
      const r = await upload(b.url, editor.token, ql.id, 'Brought by an editor.epub', bytes);
      expect(r.status, JSON.stringify(r.json)).toBe(201);
      expect(r.json).toMatchObject({ name: 'Brought by an editor.epub', sha256: sha(bytes) });
      expect(r.json.scan_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(['catalogued', 'queued']).toContain(r.json.status);
      await eventually(async () => {
        const list = await call('GET', `/api/media-items?library_id=${ql.id}`, { token: editor.token });
        expect(list.json.data.map((i: { title: string }) => i.title)).toEqual(['Brought by an editor']);
      }, 30_000);
      // the scan is the upload's, asked by the editor; scanning by hand stays an admin's
      const scans = await call('GET', '/api/scanner/status', { token: admin.token });
      expect(JSON.stringify(scans.json)).toContain(`"id":"${r.json.scan_id}"`);
      const byHand = await call('POST', '/api/scanner/scan', { token: editor.token, body: { library_id: ql.id } });
      expect(byHand.status).toBe(403);
    }, 60_000);

    it('a full disk is a 503 with its message, and leaves nothing (needs a tmpfs: root)', async (ctx) => {
      const disk = smallDisk();
      if (!disk) return ctx.skip();
      try {
        const small = await createLibrary(call, admin.token, { name: 'Small disk', folders: [disk], watch: false });
        await settled(call, admin.token, small.id);
        const bytes = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(2 * 1024 * 1024, 0x20), Buffer.from('\n%%EOF\n')]);
        const r = await upload(b.url, admin.token, small.id, 'too big for the disk.pdf', bytes, { subfolder: 'made/for/it' });
        expect(r).toEqual({ status: 503, json: { error: "there is not enough space on the server's disk for this file" } });
        expect(readdirSync(disk)).toEqual([]);
      } finally {
        execFileSync('umount', [disk]);
        rmSync(disk, { recursive: true, force: true });
      }
    });
  });
}
