// The scanner end to end, on real files made by make-corpus.sh: what a scan finds, the hashes it
// records, the files it cannot read, duplicate content, rescans, moves, rewrites and deletions.
import { createHash } from 'node:crypto';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, expectError, instances, register, type Account, type Call } from './helpers';
import { byPath, copyOf, createLibrary, items, manifest, scan, settled, uploadUrl, type ManifestRow } from './catalog-helpers';
import { FIXTURE } from './catalog-helpers';

const modes = await availableModes();
const get = instances(modes);
const rows = manifest();
const books = rows.filter((r) => r.kind === 'book');
const dups = rows.filter((r) => r.kind === 'duplicate');
// a CBZ whose ComicInfo.xml is broken still has its pages: it is a book, read from its file name
const unreadable = rows.filter((r) => r.kind === 'corrupt' && !r.note.startsWith('pages fine'));
const readable = [...rows.filter((r) => r.kind === 'book' || r.kind === 'duplicate'), ...rows.filter((r) => r.kind === 'corrupt' && r.note.startsWith('pages fine'))];
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe.each(modes)('scanner and files (%s)', (mode) => {
  let call: Call;
  let admin: Account;
  let user: Account;
  let dir: string;
  let lib: Record<string, any>;
  let list: Record<string, any>[];

  beforeAll(async () => {
    call = api(await get(mode));
    admin = await register(call);
    user = await register(call);
    dir = copyOf(FIXTURE);
    lib = await createLibrary(call, admin.token, { name: `Corpus ${mode}`, folders: [dir], watch: false });
    await settled(call, admin.token, lib.id);
    list = await items(call, admin.token, lib.id);
  });

  it('finds every book file once, with the SHA-256 of its bytes', () => {
    for (const b of [...books, ...dups]) {
      const item = byPath(list, b.path);
      expect(item, b.path).toBeDefined();
      const f = item.formats.find((x: { file_path: string }) => x.file_path === b.path);
      expect(f.sha256, b.path).toBe(b.sha256);
      expect(f.size).toBe(b.bytes);
      expect(f.partial_md5).toMatch(/^[0-9a-f]{32}$/);
    }
    const paths = list.flatMap((i) => i.formats.map((f: { file_path: string }) => f.file_path));
    expect(new Set(paths).size).toBe(paths.length);
    expect(paths.sort()).toEqual(readable.map((b) => b.path).sort());
    expect(paths.some((p) => p.includes('.hidden') || p.includes('/._'))).toBe(false);
  });

  it('reads titles and authors from EPUB metadata and ComicInfo.xml', () => {
    for (const b of books.filter((x) => x.format.startsWith('epub') || (x.format === 'cbz' && x.note.includes('ComicInfo')))) {
      const item = byPath(list, b.path);
      expect(item.title, b.path).toBe(b.title.trim());
      if (b.authors.length) expect(item.authors, b.path).toEqual(b.authors);
      if (b.language && b.format.startsWith('epub')) expect(item.language).toBe(b.language);
    }
    const withSeries = books.find((b) => b.format.startsWith('epub') && b.series);
    if (withSeries) expect(byPath(list, withSeries.path).series).toBe(withSeries.series);
  });

  it('extracts covers and serves them with a thumbnail', async () => {
    const covered = list.filter((i) => i.cover_url);
    expect(covered.length).toBeGreaterThan(books.length / 2);
    const item = covered[0]!;
    const c = await call('GET', item.cover_url, { token: user.token });
    expect(c.status).toBe(200);
    expect(c.headers.get('content-type')).toBe('image/jpeg');
    expect(c.bytes.subarray(0, 3).toString('hex')).toBe('ffd8ff');
    const t = await call('GET', item.thumbnail_url, { token: user.token });
    expect(t.status).toBe(200);
    expect(t.bytes.length).toBeLessThan(c.bytes.length + 1);
    const again = await call('GET', item.cover_url, { token: user.token, headers: { 'if-none-match': c.headers.get('etag')! } });
    expect(again.status).toBe(304);
    expectError(await call('GET', item.cover_url), 401, 'authentication required');
  });

  it('records the files it cannot read and keeps going', async () => {
    const r = await call('GET', `/api/scanner/issues?library_id=${lib.id}`, { token: admin.token });
    expect(r.status, r.text).toBe(200);
    const issues = r.json.data as { file_path: string; error: string }[];
    expect(issues.map((i) => i.file_path).sort()).toEqual(unreadable.map((u) => u.path).sort());
    for (const i of issues) expect(i.error.length).toBeGreaterThan(5);
    expectError(await call('GET', '/api/scanner/issues', { token: user.token }), 403, 'admin access required');
  });

  it('serves book files inside the library with MIME type, ranges and validators', async () => {
    const epub = books.find((b) => b.format.startsWith('epub'))!;
    const url = uploadUrl(lib.id, epub.path);
    const r = await call('GET', url, { token: user.token });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/epub+zip');
    expect(sha(r.bytes)).toBe(epub.sha256);
    expect(r.headers.get('accept-ranges')).toBe('bytes');
    const part = await call('GET', url, { token: user.token, headers: { range: 'bytes=0-99' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-99/${epub.bytes}`);
    expect(part.bytes.equals(r.bytes.subarray(0, 100))).toBe(true);
    const cached = await call('GET', url, { token: user.token, headers: { 'if-none-match': r.headers.get('etag')! } });
    expect(cached.status).toBe(304);
    // the cookie works as well as the header
    expect((await call('GET', url, { cookie: `token=${user.token}` })).status).toBe(200);
    expectError(await call('GET', url), 401, 'authentication required');
    const cbz = books.find((b) => b.format === 'cbz')!;
    const c = await call('GET', uploadUrl(lib.id, cbz.path), { token: user.token });
    expect(c.headers.get('content-type')).toBe('application/vnd.comicbook+zip');
    expect(sha(c.bytes)).toBe(cbz.sha256);
  });

  it('serves every file by the URL in its record, whatever its name (NFD, emoji, &, spaces)', async () => {
    const odd = books.filter((b) => /NFD|emoji|[&<>"]/.test(b.note + b.path));
    expect(odd.length).toBeGreaterThanOrEqual(2);
    for (const b of odd) {
      const f = byPath(list, b.path).formats.find((x: { file_path: string }) => x.file_path === b.path);
      const r = await call('GET', f.file_url, { token: user.token });
      expect(r.status, b.path).toBe(200);
      expect(sha(r.bytes)).toBe(b.sha256);
    }
  });

  it('never serves a byte outside the library folders', async () => {
    for (const p of ['../etc/passwd', '..%2f..%2fetc%2fpasswd', '%2e%2e/%2e%2e/etc/passwd', 'corrupt/../../x', '%00', 'nothing-here.epub']) {
      const r = await call('GET', `/uploads/library-${lib.id}/${p}`, { token: user.token });
      expect(r.status, p).toBe(404);
      expect(r.text).not.toContain('root:');
    }
    expect((await call('GET', `/uploads/library-00000000-0000-4000-8000-000000000000/${encodeURIComponent(books[0]!.path)}`, { token: user.token })).status).toBe(404);
    expect((await call('GET', '/api/media-items/' + list[0]!.id + '/download', { token: user.token })).status).toBe(404);
  });

  it('opens a pending conflict for each duplicate and resolves it once', async () => {
    const r = await call('GET', '/api/admin/hash-conflicts', { token: admin.token });
    expect(r.status, r.text).toBe(200);
    const groups = r.json.data as { id: string; sha256: string; items: Record<string, any>[] }[];
    for (const d of dups) {
      const g = groups.find((x) => x.sha256 === d.sha256);
      expect(g, d.path).toBeDefined();
      expect(g!.items.map((i) => i.file_path).sort()).toEqual([d.path, d.dup_of].sort());
      for (const i of g!.items) expect(i.usage).toEqual({ progress: 0, highlights: 0, bookmarks: 0, notes: 0, collections: 0 });
    }
    expectError(await call('GET', '/api/admin/hash-conflicts', { token: user.token }), 403, 'admin access required');
    const [first, second] = dups.map((d) => groups.find((x) => x.sha256 === d.sha256)!);
    const keep = first!.items.find((i) => i.file_path === dups[0]!.dup_of)!;
    const drop = first!.items.find((i) => i.id !== keep.id)!;
    expectError(
      await call('POST', `/api/admin/hash-conflicts/${first!.id}/resolve`, { token: admin.token, body: { action: 'keep' } }),
      400,
      'keep_uuid is required when action is keep',
    );
    expectError(
      await call('POST', `/api/admin/hash-conflicts/${first!.id}/resolve`, { token: admin.token, body: { action: 'merge' } }),
      400,
      "action must be 'keep' or 'keep_all'",
    );
    const ok = await call('POST', `/api/admin/hash-conflicts/${first!.id}/resolve`, { token: admin.token, form: { action: 'keep', keep_uuid: keep.id } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.conflict).toMatchObject({ status: 'resolved', kept_item_id: keep.id, removed_item_ids: [drop.id] });
    expectError(await call('POST', `/api/admin/hash-conflicts/${first!.id}/resolve`, { token: admin.token, body: { action: 'keep_all' } }), 409, 'hash conflict already resolved');
    expectError(await call('GET', `/api/media-items/${drop.id}`, { token: admin.token }), 404, 'media item not found');
    expect((await call('GET', `/api/media-items/${keep.id}`, { token: admin.token })).status).toBe(200);
    expect(existsSync(join(dir, drop.file_path))).toBe(true); // files on disk are never deleted
    const all = await call('POST', `/api/admin/hash-conflicts/${second!.id}/resolve`, { token: admin.token, body: { action: 'keep_all' } });
    expect(all.status, all.text).toBe(200);
    expect(all.json.conflict.status).toBe('dismissed');
    expectError(
      await call('POST', `/api/admin/hash-conflicts/00000000-0000-4000-8000-000000000000/resolve`, { token: admin.token, body: { action: 'keep_all' } }),
      404,
      'hash conflict not found',
    );
    // a rescan neither brings the removed duplicate back nor reopens either conflict
    const s = await scan(call, admin.token, lib.id);
    expect(s.status).toBe('completed');
    expect(byPath(await items(call, admin.token, lib.id), drop.file_path)).toBeUndefined();
    const after = await call('GET', '/api/admin/hash-conflicts', { token: admin.token });
    expect(after.json.data.filter((g: { id: string }) => g.id === first!.id || g.id === second!.id)).toEqual([]);
  });

  it('does not re-read unchanged files on a rescan', async () => {
    const s = await scan(call, admin.token, lib.id);
    expect(s.counts).toMatchObject({ added: 0, updated: 0, relinked: 0, removed: 0 });
    expect(s.counts.unchanged).toBeGreaterThanOrEqual(books.length);
  });

  it("keeps a book's id when its file is moved, rewritten in place, or comes back", async () => {
    const before = await items(call, admin.token, lib.id);
    const moved = books.find((b) => b.format === 'epub3' && !b.path.startsWith('inbox'))!;
    const id = byPath(before, moved.path).id;
    mkdirSync(join(dir, 'moved here'), { recursive: true });
    renameSync(join(dir, moved.path), join(dir, 'moved here', 'renamed.epub'));
    let s = await scan(call, admin.token, lib.id);
    expect(s.counts.relinked).toBe(1);
    expect(s.counts.added).toBe(0);
    let now = await items(call, admin.token, lib.id);
    expect(byPath(now, 'moved here/renamed.epub').id).toBe(id);
    expect(byPath(now, moved.path)).toBeUndefined();

    // rewritten in place: same path, new bytes (another real EPUB's): same item, old hash remembered
    const other = books.find((b) => b.format === 'epub3' && b.path !== moved.path)!;
    copyFileSync(join(dir, other.path), join(dir, 'moved here', 'renamed.epub'));
    s = await scan(call, admin.token, lib.id);
    expect(s.counts.updated).toBeGreaterThanOrEqual(1);
    now = await items(call, admin.token, lib.id);
    const item = byPath(now, 'moved here/renamed.epub');
    expect(item.id).toBe(id);
    expect(item.sha256).toBe(other.sha256);
    expect(item.known_sha256).toEqual(expect.arrayContaining([other.sha256, moved.sha256]));

    // deleted: the item disappears; put back later: the same item returns
    rmSync(join(dir, 'moved here', 'renamed.epub'));
    s = await scan(call, admin.token, lib.id);
    expect(s.counts.removed).toBe(1);
    expectError(await call('GET', `/api/media-items/${id}`, { token: admin.token }), 404, 'media item not found');
    copyFileSync(join(dir, other.path), join(dir, 'back.epub'));
    s = await scan(call, admin.token, lib.id);
    const back = await call('GET', `/api/media-items/${id}`, { token: admin.token });
    // the copy has the other book's bytes, so it is a duplicate of that book, restored as this item
    expect(back.status, back.text).toBe(200);
    expect(back.json.formats.map((f: { file_path: string }) => f.file_path)).toEqual(['back.epub']);
    expect(statSync(join(dir, other.path)).size).toBe(other.bytes);
  });

  it('holds up against a corrupt file appearing mid-library', async () => {
    const bad = join(dir, 'inbox', 'half.epub');
    const good = readFileSync(join(FIXTURE, books.find((b) => b.format.startsWith('epub'))!.path));
    appendFileSync(bad, good.subarray(0, Math.floor(good.length / 3)));
    const s = await scan(call, admin.token, lib.id);
    expect(s.status).toBe('completed');
    expect(s.counts.errors).toBeGreaterThanOrEqual(1);
    const r = await call('GET', `/api/scanner/issues?library_id=${lib.id}`, { token: admin.token });
    expect(r.json.data.map((i: { file_path: string }) => i.file_path)).toContain('inbox/half.epub');
  });
});

export type { ManifestRow };
