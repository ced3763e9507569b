// The gateway's read models: a client reads its own writes at once (through the same gateway without
// anything more, and, in distributed mode, through a second gateway replica when it presents the
// position token the write answered with, as a header or as the cookie), and a projection rebuilt
// from the log answers every read exactly as the live one did.
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes, spawnBindery, type Bindery } from '../support/bindery';
import { client, type Res } from '../support/http';
import { api, expectError, instances, register, type Account, type Call } from './helpers';
import { copyOf, createLibrary, FIXTURE, items, settled } from './catalog-helpers';

const modes = await availableModes();
const get = instances(modes);

describe.each(modes)('read side (%s)', (mode) => {
  let b: Bindery;
  let call: Call;
  /** a second gateway replica on the same database and bus (distributed), else the same one */
  let other: Call;
  let admin: Account;
  let user: Account;
  let lib: Record<string, any>;

  beforeAll(async () => {
    b = await get(mode);
    call = api(b);
    other = call;
    if (mode === 'distributed') {
      const g = await spawnBindery('service', { ...b.env, BINDERY_SERVICES: 'gateway' }, /bindery gateway started \(distributed\) at (http:\/\/\S+)/);
      b.procs.push(g.proc);
      other = client(g.match[1]!);
    }
    admin = await register(call);
    user = await register(call);
    lib = await createLibrary(call, admin.token, { name: 'Read side', folders: [copyOf(FIXTURE)], watch: false });
    await settled(call, admin.token, lib.id);
  }, 120_000);

  /** The position token a write answered with: the header, and the same text in a short-lived cookie. */
  const tokenOf = (r: Res) => {
    const h = r.headers.get('bindery-position');
    expect(h, `no position token on ${r.status} ${r.text}`).toMatch(/^[a-z-]+:\d+(\|[a-z-]+:\d+)*$/);
    const c = r.cookies.find((x) => x.startsWith('bindery_position='));
    expect(c).toMatch(/^bindery_position=[^;]+; Max-Age=60; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(decodeURIComponent(c!.split(';')[0]!.slice('bindery_position='.length))).toBe(h);
    return { header: { 'bindery-position': h! }, cookie: c!.split(';')[0]! };
  };

  it('shows an edit to the next read, on this gateway and on another replica', async () => {
    const list = await items(call, admin.token, lib.id);
    const target = list[0]!;
    for (let i = 0; i < 6; i++) {
      const title = `Retitled ${mode} ${i} ${Date.now()}`;
      const r = await call('PUT', `/api/media-items/${target.id}`, { token: admin.token, body: { title, tags: [`round-${i}`] } });
      expect(r.status, r.text).toBe(200);
      const t = tokenOf(r);
      expect(Number(/catalog:(\d+)/.exec(t.header['bindery-position'])?.[1])).toBeGreaterThan(0);
      // the same gateway needs nothing more; another replica is shown the token (header or cookie)
      const via = i % 2 === 0 ? call : other;
      const extra = i % 2 === 0 ? {} : i % 4 === 1 ? { headers: t.header } : { cookie: t.cookie };
      const one = await via('GET', `/api/media-items/${target.id}`, { token: user.token, ...extra });
      expect(one.json.title).toBe(title);
      const page = await via('GET', `/api/media-items?library_id=${lib.id}&limit=1000`, { token: user.token, ...extra });
      expect(page.json.data.find((x: { id: string }) => x.id === target.id).title).toBe(title);
      const found = await via('GET', `/api/media-items/search?tags_filter=%22round-${i}%22`, { token: user.token, ...extra });
      expect(found.json.data.map((x: { id: string }) => x.id)).toEqual([target.id]);
    }
  });

  it('shows a profile change and a deletion to the next read', async () => {
    const first = `First${Date.now()}`;
    const put = await call('PUT', '/api/auth/profile', { token: user.token, body: { first_name: first, theme: 'paper' } });
    expect(put.status, put.text).toBe(200);
    const p = await other('GET', '/api/auth/profile', { token: user.token, cookie: tokenOf(put).cookie });
    expect(p.status, p.text).toBe(200);
    expect(p.json).toEqual({ id: user.id, email: user.email, username: user.username, first_name: first, last_name: '', role: 'user', theme: 'paper' });
    const made = await call('POST', '/api/media-items', { token: admin.token, body: { library_id: lib.id, title: 'Made for reading', authors: ['A. Writer'] } });
    expect(made.status, made.text).toBe(201);
    expect((await other('GET', `/api/media-items/${made.json.id}`, { token: user.token, headers: tokenOf(made).header })).json.title).toBe('Made for reading');
    const del = await call('DELETE', `/api/media-items/${made.json.id}`, { token: admin.token, headers: tokenOf(made).header });
    expect(del.status).toBe(200);
    // the delete's token carries the catalog's new position (and keeps what was presented)
    expect(Number(/catalog:(\d+)/.exec(tokenOf(del).header['bindery-position'])?.[1])).toBeGreaterThan(Number(/catalog:(\d+)/.exec(tokenOf(made).header['bindery-position'])?.[1]));
    expectError(await other('GET', `/api/media-items/${made.json.id}`, { token: user.token, headers: tokenOf(del).header }), 404, 'media item not found');
  });

  it('answers reads whatever the position token says: malformed ones are ignored, unreachable ones waited for only once', async () => {
    for (const bad of ['nope', 'catalog:-1', 'catalog:1e9', `catalog:${'9'.repeat(16)}`, 'x'.repeat(600), 'catalog:1|:2', 'catalog:1;identity:2']) {
      const r = await other('GET', '/api/auth/profile', { token: user.token, headers: { 'bindery-position': bad } });
      expect(r.status, `${bad}: ${r.text}`).toBe(200);
      expect(r.json.id).toBe(user.id);
    }
    // a position no projection has reached (a token from an older database): answered once waited for
    const far = { 'bindery-position': 'catalog:999999999|identity:999999999' };
    for (let i = 0; i < 2; i++) {
      const r = await other('GET', `/api/media-items?library_id=${lib.id}&limit=1`, { token: user.token, headers: far });
      expect(r.status, r.text).toBe(200);
      expect(r.json.data).toHaveLength(1);
    }
    // reads answer no token; only writes the gateway waited for do
    const read = await call('GET', '/api/auth/profile', { token: user.token });
    expect(read.headers.get('bindery-position')).toBeNull();
    expect(read.cookies.filter((c) => c.startsWith('bindery_position='))).toEqual([]);
  });

  it('rebuilds a projection from the log and answers every read as before', async () => {
    const reads = [
      '/api/libraries',
      `/api/media-items?library_id=${lib.id}&limit=1000`,
      '/api/media-items?limit=1000&sort=-created_at',
      '/api/media-items?limit=1000&sort=series',
      '/api/media-items/search?q=the&limit=1000&authors=a&genres=&series=&languages=',
      '/api/media-items/search?author_filter=Whitfeld&limit=1000',
      '/api/auth/profile',
    ];
    const snap = async () =>
      Promise.all(
        reads.map(async (path) => {
          const r = await call('GET', path, { token: admin.token });
          expect(r.status, `${path}: ${r.text}`).toBe(200);
          return r.json;
        }),
      );
    const before = await snap();
    expect(before[1].data.length).toBeGreaterThan(20);
    for (const name of ['catalog', 'identity']) {
      const r = await call('POST', `/api/admin/projections/${name}/rebuild?wait=true`, { token: admin.token });
      expect(r.status, r.text).toBe(200);
      expect(r.json.message).toBe(`projection ${name} rebuilt`);
      expect(r.json.projection).toMatchObject({ name, rebuilding: false });
    }
    expect(await snap()).toEqual(before);
    const status = await call('GET', '/api/admin/projections', { token: admin.token });
    expect(status.json.data.map((p: { name: string }) => p.name)).toEqual(['catalog', 'identity', 'reading', 'devices']);
    expectError(await call('POST', '/api/admin/projections/nope/rebuild', { token: admin.token }), 404, 'unknown projection: nope');
    expectError(await call('POST', '/api/admin/projections/catalog/rebuild', { token: user.token }), 403, 'admin access required');
    // a rebuild in the background keeps serving the old tables, then the new ones
    const bg = await call('POST', '/api/admin/projections/catalog/rebuild', { token: admin.token });
    expect(bg.status, bg.text).toBe(202);
    for (let i = 0; i < 20; i++) {
      const r = await call('GET', `/api/media-items?library_id=${lib.id}&limit=1000`, { token: admin.token });
      expect(r.json).toEqual(before[1]);
    }
  });
});
