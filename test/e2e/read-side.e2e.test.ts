// The gateway's read models: a client reads its own writes at once (through the same gateway and,
// in distributed mode, through a second gateway replica), and a projection rebuilt from the log
// answers every read exactly as the live one did.
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes, spawnBindery, type Bindery } from '../support/bindery';
import { client } from '../support/http';
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

  it('shows an edit to the next read, on this gateway and on another replica', async () => {
    const list = await items(call, admin.token, lib.id);
    const target = list[0]!;
    for (let i = 0; i < 5; i++) {
      const title = `Retitled ${mode} ${i} ${Date.now()}`;
      const r = await call('PUT', `/api/media-items/${target.id}`, { token: admin.token, body: { title, tags: [`round-${i}`] } });
      expect(r.status, r.text).toBe(200);
      const via = i % 2 === 0 ? call : other;
      const one = await via('GET', `/api/media-items/${target.id}`, { token: user.token });
      expect(one.json.title).toBe(title);
      const page = await via('GET', `/api/media-items?library_id=${lib.id}&limit=1000`, { token: user.token });
      expect(page.json.data.find((x: { id: string }) => x.id === target.id).title).toBe(title);
      const found = await via('GET', `/api/media-items/search?tags_filter=%22round-${i}%22`, { token: user.token });
      expect(found.json.data.map((x: { id: string }) => x.id)).toEqual([target.id]);
    }
  });

  it('shows a profile change and a deletion to the next read', async () => {
    const first = `First${Date.now()}`;
    expect((await call('PUT', '/api/auth/profile', { token: user.token, body: { first_name: first, theme: 'paper' } })).status).toBe(200);
    const p = await other('GET', '/api/auth/profile', { token: user.token });
    expect(p.status, p.text).toBe(200);
    expect(p.json).toEqual({ id: user.id, email: user.email, username: user.username, first_name: first, last_name: '', role: 'user', theme: 'paper' });
    const made = await call('POST', '/api/media-items', { token: admin.token, body: { library_id: lib.id, title: 'Made for reading', authors: ['A. Writer'] } });
    expect(made.status, made.text).toBe(201);
    expect((await other('GET', `/api/media-items/${made.json.id}`, { token: user.token })).json.title).toBe('Made for reading');
    expect((await call('DELETE', `/api/media-items/${made.json.id}`, { token: admin.token })).status).toBe(200);
    expectError(await other('GET', `/api/media-items/${made.json.id}`, { token: user.token }), 404, 'media item not found');
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
