// Hostile text and shapes at the HTTP door: NUL and other control characters, lone UTF-16
// surrogates, deep JSON, malformed URLs and requests fastify refuses itself. Each is a 400 (404 for
// a path) with `{error}`, nothing is stored, and no database or bus error leaks through.
import { connect } from 'node:net';
import { connect as natsConnect } from '@nats-io/transport-node';
import { rpcSubject } from '@bindery/contracts';
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes, type Bindery } from '../support/bindery';
import { api, expectError as err, instances, login, PASSWORD, register, uniq, userRecord, type Account, type Call } from './helpers';

const modes = await availableModes();
const instance = instances(modes);

const NUL = '\u0000';
const ctl = (field: string) => `${field} must not contain control characters`;
const unicode = (field: string) => `${field} must be valid Unicode text`;
const USERNAME_CHARS = 'username must not contain control or bidirectional formatting characters';
const DEEP = 'request body is nested too deeply';

/** A raw HTTP exchange, for requests a fetch client will not send. */
function rawHttp(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname, () => s.write(request));
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('close', () => resolve(out));
    s.on('error', reject);
    setTimeout(() => s.destroy(), 5000);
  });
}

for (const mode of modes) {
  describe(`hostile input (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let user: Account;
    beforeAll(async () => {
      b = await instance(mode);
      call = api(b);
      admin = await register(call, { name: uniq('keeper') });
      user = await register(call);
    });

    const accountCount = async () => ((await call('GET', '/api/auth/users', { token: admin.token })).json as unknown[]).length;

    it('a NUL in any register or login field is a 400 naming the field, and creates nothing', async () => {
      const before = await accountCount();
      const n = uniq('nul');
      const good = { email: `${n}@example.com`, username: n, password: PASSWORD };
      for (const field of ['email', 'username', 'password', 'first_name'] as const) {
        const body = { ...good, [field]: `${(good as Record<string, string>)[field] ?? 'x'}${NUL}` };
        err(await call('POST', '/api/auth/register', { body }), 400, ctl(field));
        err(await call('POST', '/api/auth/register', { form: body }), 400, ctl(field));
      }
      err(await call('POST', '/api/auth/register', { body: { ...good, extra: { deep: [`a${NUL}`] } } }), 400, ctl('extra.deep[0]'));
      err(await call('POST', '/api/auth/register', { raw: `{"email":"${n}@example.com","username":"${n}","password":"${PASSWORD}","x\\u0000y":1}` }), 400, ctl('a field name'));
      err(await login(call, `${user.username}${NUL}`, PASSWORD), 400, ctl('login'));
      err(await call('POST', '/api/auth/login', { form: { login: user.username, password: `${PASSWORD}${NUL}` } }), 400, ctl('password'));
      // fragments stay fragments
      const hx = await call('POST', '/api/auth/register', { body: { ...good, username: `a${NUL}b` }, headers: { 'HX-Request': 'true' } });
      expect(hx.status).toBe(400);
      expect(hx.text).toBe(`<div class="alert alert-error" role="alert">${ctl('username')}</div>`);
      expect(await accountCount()).toBe(before);
      // the same body without the NUL still works, as JSON and as a form
      expect((await call('POST', '/api/auth/register', { form: good })).status).toBe(201);
    });

    it('a NUL in a profile update, a field setter, settings and config is a 400; nothing changes', async () => {
      err(await call('PUT', '/api/auth/profile', { token: user.token, body: { first_name: `Ada${NUL}`, theme: 'never' } }), 400, ctl('first_name'));
      err(await call('PUT', '/api/auth/theme', { token: user.token, body: { theme: `x${NUL}` } }), 400, ctl('theme'));
      err(await call('PUT', `/api/auth/profile/${user.id}`, { token: admin.token, body: { last_name: `L${NUL}` } }), 400, ctl('last_name'));
      err(await call('PUT', '/api/system/config', { token: admin.token, body: { 'site.name': `Home${NUL}` } }), 400, ctl('site.name'));
      err(await call('PUT', '/api/system/config', { token: admin.token, body: { [`site${NUL}name`]: 'Home' } }), 400, ctl('a field name'));
      err(await call('PUT', '/api/system/settings', { token: admin.token, body: { registration_enabled: `true${NUL}` } }), 400, ctl('registration_enabled'));
      expect(await userRecord(call, admin.token, user.id)).toMatchObject({ first_name: '', last_name: '', theme: 'tokyo-night' });
      expect((await call('GET', '/api/system/config', { token: admin.token })).json.config).not.toHaveProperty('site.name');
    });

    it('a NUL in search text or any *_filter is a 400, not a database error', async () => {
      const params = ['q', 'author_filter', 'series_filter', 'genre_filter', 'tags_filter', 'language_filter', 'publisher_filter', 'authors', 'library_id', 'sort'];
      for (const p of params) {
        err(await call('GET', `/api/media-items/search?${p}=a%00b`, { token: user.token }), 400, ctl(p));
      }
      err(await call('GET', '/api/media-items?sort=title%00', { token: user.token }), 400, ctl('sort'));
      err(await call('GET', '/api/media-items/search?q=%01', { token: user.token }), 400, ctl('q'));
      // tab, line feed and carriage return are text
      expect((await call('GET', '/api/media-items/search?q=a%09b%0Ac%0D', { token: user.token })).status).toBe(200);
    });

    it('a NUL in a library name, a tag or a bulk change is a 400; nothing is created', async () => {
      const name = uniq('Shelf');
      err(await call('POST', '/api/libraries', { token: admin.token, body: { name: `${name}${NUL}`, folders: [] } }), 400, ctl('name'));
      err(await call('POST', '/api/libraries', { token: admin.token, body: { name, folders: [`/srv${NUL}`] } }), 400, ctl('folders[0]'));
      const libs = (await call('GET', '/api/libraries', { token: admin.token })).json as { name: string; id: string }[];
      expect(libs.map((l) => l.name)).not.toContain(name);
      const lib = await call('POST', '/api/libraries', { token: admin.token, body: { name, folders: [] } });
      expect(lib.status, lib.text).toBe(201);
      // the check runs before the route's own (which would say the library has no folders)
      err(await call('POST', '/api/media-items', { token: admin.token, body: { library_id: lib.json.id, title: 'T', tags: ['ok', `bad${NUL}`] } }), 400, ctl('tags[1]'));
      err(await call('PUT', `/api/libraries/${lib.json.id}`, { token: admin.token, body: { name: `x${NUL}` } }), 400, ctl('name'));
      err(await call('POST', '/api/media-items/bulk-update', { token: admin.token, body: { ids: [], changes: { add_tags: [`t${NUL}`] } } }), 400, ctl('changes.add_tags[0]'));
      expect((await call('GET', `/api/libraries/${lib.json.id}`, { token: admin.token })).json.name).toBe(name);
    });

    it('a lone surrogate in a username (or anywhere) is a 400, not a JSON error from the database', async () => {
      const n = uniq('sur');
      const raw = (username: string) => `{"email":"${n}@example.com","username":"${username}","password":"${PASSWORD}"}`;
      err(await call('POST', '/api/auth/register', { raw: raw(`${n}\\ud800`) }), 400, unicode('username'));
      err(await call('POST', '/api/auth/register', { raw: raw(`\\udc00${n}`) }), 400, unicode('username'));
      err(await call('PUT', '/api/auth/profile', { token: user.token, raw: '{"first_name":"A\\ud83d"}' }), 400, unicode('first_name'));
      err(await call('PUT', '/api/system/config', { token: admin.token, raw: '{"motd":"\\udfff"}' }), 400, unicode('motd'));
      // percent-encoded bytes that are not UTF-8 stay undecoded text: searched, never a 500
      expect((await call('GET', '/api/media-items/search?q=%ED%A0%80', { token: user.token })).status).toBe(200);
      // a well-formed pair is an ordinary character
      const ok = await call('POST', '/api/auth/register', { raw: raw(`${n}\\ud83d\\udcda`) });
      expect(ok.status, ok.text).toBe(201);
      expect(ok.json.user.username).toBe(`${n}📚`);
    });

    it('control and bidirectional formatting characters are refused in usernames', async () => {
      const n = uniq('bidi');
      for (const c of ['\u0001', '\u001b', '\u007f', '\u0085', '\u202e', '\u202a', '\u2066', '\u2069', '\u200e', '\u200f', '\u061c']) {
        const expected = c < ' ' ? ctl('username') : USERNAME_CHARS;
        err(await call('POST', '/api/auth/register', { body: { email: `${n}@example.com`, username: `ad${c}min`, password: PASSWORD } }), 400, expected);
        err(await call('PUT', '/api/auth/username', { token: user.token, body: { username: `${n}${c}` } }), 400, expected);
        err(await call('PUT', '/api/auth/profile', { token: user.token, body: { username: `${n}${c}` } }), 400, expected);
      }
      expect((await call('GET', '/api/auth/profile', { token: user.token })).json.username).toBe(user.username);
      // ordinary non-ASCII names stay welcome
      expect((await call('POST', '/api/auth/register', { body: { email: `${n}@example.com`, username: `Zoë-${n}`, password: PASSWORD } })).status).toBe(201);
    });

    it('JSON nested 5,000 deep is a 400 before it reaches the bus; ordinary nesting passes', async () => {
      const deep = '['.repeat(5000) + ']'.repeat(5000);
      const deepObj = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
      err(await call('POST', '/api/auth/register', { raw: deep }), 400, DEEP);
      err(await call('POST', '/api/auth/login', { raw: `{"login":"x","password":"y","z":${deep}}` }), 400, DEEP);
      err(await call('PUT', '/api/system/settings', { token: admin.token, raw: deepObj }), 400, DEEP);
      err(await call('POST', '/api/libraries', { token: admin.token, raw: `{"name":"deep","folders":${deep}}` }), 400, DEEP);
      err(await call('POST', '/api/media-items/bulk-update', { token: admin.token, raw: `{"ids":[],"changes":${deepObj}}` }), 400, DEEP);
      // brackets inside strings are text, not nesting
      const r = await call('PUT', '/api/auth/profile', { token: user.token, body: { first_name: '['.repeat(90) } });
      expect(r.status, r.text).toBe(200);
      expect((await call('GET', '/api/healthz')).status).toBe(404);
      expect((await call('GET', '/healthz')).status).toBe(200);
    });

    it.runIf(mode === 'distributed')('identity refuses the same text from a caller on the bus, and bidi usernames too', async () => {
      const nc = await natsConnect({ servers: b.env.NATS_URL! });
      try {
        const ask = async (op: string, body: unknown) => (await nc.request(rpcSubject('identity', op), JSON.stringify(body), { timeout: 10_000 })).json();
        const n = uniq('bus');
        const input = (username: string) => ({ email: `${n}@example.com`, username, password: PASSWORD });
        expect(await ask('register', { caller: null, input: input(`${n}${NUL}`) })).toEqual({ ok: false, error: { code: 'validation', message: ctl('username') } });
        expect(await ask('register', { caller: null, input: input(`${n}\ud800`) })).toEqual({ ok: false, error: { code: 'validation', message: unicode('username') } });
        expect(await ask('register', { caller: null, input: input(`${n}\u202e`) })).toEqual({ ok: false, error: { code: 'validation', message: USERNAME_CHARS } });
        expect(await ask('login', { input: { login: `x${NUL}`, password: PASSWORD } })).toEqual({ ok: false, error: { code: 'validation', message: ctl('login') } });
        expect(await ask('max-devices-set', { caller: { user_id: admin.id, role: 'admin' }, target_id: user.id, input: { max_devices: '5' } })).toEqual({
          ok: false,
          error: { code: 'invalid_request', message: 'invalid request' },
        });
      } finally {
        await nc.close();
      }
    });

    it("fastify's own errors are {error} bodies: malformed URLs, content types, broken requests", async () => {
      err(await call('GET', '/api/media-items/%E0%A4%A', { token: user.token }), 400, 'malformed URL');
      err(await call('GET', '/api/auth/profile%ZZ', { token: user.token }), 400, 'malformed URL');
      err(await call('DELETE', `/api/auth/profile/%`, { token: admin.token }), 400, 'malformed URL');
      // a NUL in a path names no resource
      err(await call('GET', '/uploads/library-00000000-0000-4000-8000-000000000000/a%00b', { token: user.token }), 404, 'not found');
      err(await call('GET', '/api/libraries/%00', { token: user.token }), 404, 'not found');
      err(await call('POST', '/api/auth/login', { raw: 'login=x', contentType: 'text/plain' }), 400, 'invalid request');
      err(await call('POST', '/api/auth/login', { raw: '{"login":', contentType: 'application/json' }), 400, 'invalid request');
      err(await call('PUT', '/api/system/settings', { token: admin.token, raw: '[]' }), 400, 'invalid request');
      const broken = await rawHttp(b.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
      expect(broken).toMatch(/^HTTP\/1\.1 400 /);
      expect(broken.split('\r\n\r\n')[1]).toBe('{"error":"bad request"}');
      const big = await call('GET', '/healthz', { headers: { 'x-big': 'a'.repeat(20000) } });
      expect(big.status).toBe(431);
      expect(big.json).toEqual({ error: 'request headers too large' });
    });
  });
}
