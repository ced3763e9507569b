// The low findings of issue 41, against a real embedded Bindery (the code under test is the
// gateway's, the same in both modes): a Host that is not a plain `host[:port]` goes into no
// absolute link; failed checks are budgeted per address and kind of credential, a valid token or
// key passes over its kind's budget and a bad token spends no password tries; a 429 stops the
// request (no route runs, no error is logged) and no Kobo token or reader key reaches the log;
// answers carrying secrets or a user's data are neither stored nor sniffed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBindery, type Bindery } from '../support/bindery';
import { type Res, withHost } from '../support/http';
import { enroll, asDevice } from './device-helpers';
import { api, expectError as err, expectLimited, PASSWORD, uniq, type Account, type Call } from './helpers';
import { basic } from './opds-helpers';

/** the failure budget; below identity's per-login lock (5 by default), so the lock never answers first */
const MAX = 4;
const KOBO_PATH = /^\/kobo\/bkt_[A-Za-z0-9_-]{43}$/;
const BAD_KOBO = 'invalid or revoked Kobo token';

/** A 429 with Retry-After, its message naming the same number of seconds. */
const limited = (r: Res) => expectLimited(r, 300);

/** A well-formed Kobo token that no Kobo has (passes the pattern, so it is looked up). */
const wrongKobo = (i: number) => `bkt_${'A'.repeat(40)}${String(i).padStart(3, '0')}`;

describe('issue 41, the low findings (embedded)', () => {
  let b: Bindery;
  let call: Call;
  let port: string;
  let made = 0;
  /** every secret a test used: none may reach the log */
  const secrets: string[] = [];
  beforeAll(async () => {
    // behind a trusted proxy, so each test speaks from an address of its own (X-Forwarded-For);
    // the address is what a budget counts, as it is for everyone behind a proxy without TRUST_PROXY
    b = await startBindery('embedded', { AUTH_RATE_LIMIT_MAX: String(MAX), AUTH_RATE_LIMIT_WINDOW_SECONDS: '300', TRUST_PROXY: 'true', LOG_LEVEL: 'info' });
    call = api(b);
    port = new URL(b.url).port;
  });
  afterAll(async () => b?.stop());

  /** the client speaking from `ip` */
  const at =
    (ip: string): Call =>
    (method, path, r = {}) =>
      call(method, path, { ...r, headers: { ...(r.headers ?? {}), 'X-Forwarded-For': ip } });

  /** an account, registered from an address of its own (register has its own request limit) */
  const account = async (): Promise<Account> => {
    const n = uniq();
    const body = { email: `${n}@example.com`, username: n, password: PASSWORD };
    const r = await at(`192.0.2.${++made}`)('POST', '/api/auth/register', { body });
    expect(r.status, r.text).toBe(201);
    return { id: r.json.user.id, email: body.email, username: n, password: PASSWORD, token: r.json.access_token, refresh: r.json.refresh_token, role: r.json.user.role };
  };

  /** a Kobo of `u`'s: its token and its store path */
  const kobo = async (u: Account): Promise<{ token: string; path: string }> => {
    const r = await call('POST', '/api/devices/kobo', { token: u.token, body: { name: 'Libra 2' } });
    expect(r.status, r.text).toBe(201);
    const token = (r.json.kobo_url as string).split('/kobo/')[1]!;
    secrets.push(token);
    return { token, path: `/kobo/${token}` };
  };

  /** a new reader key of `u`'s */
  const readerKey = async (u: Account): Promise<string> => {
    const r = await call('POST', '/api/auth/opds-key', { token: u.token, body: {} });
    expect(r.status, r.text).toBe(201);
    secrets.push(r.json.key);
    return r.json.key;
  };

  it('finding 2: a Host with user info, a path, a bad port or garbage is never written into an answer; paths are', async () => {
    const u = await account();
    const { token, path } = await kobo(u);
    // a second Kobo, given a new store address for each Host (a user holds five devices at most)
    const second = await call('POST', '/api/devices/kobo', { token: u.token, body: { name: 'Clara' } });
    expect(second.status, second.text).toBe(201);
    secrets.push(second.json.kobo_url.split('/kobo/')[1]);
    const retoken = `/api/devices/${second.json.device.id}/kobo-token`;
    const forged = [
      `127.0.0.1:${port}@evil.example`,
      `localhost:${port}@evil.example`,
      `evil.example@127.0.0.1:${port}`,
      `127.0.0.1:${port}/evil.example`,
      `127.0.0.1:${port}#evil.example`,
      '127.0.0.1:99999',
      `127.0.0.1:${port}:1`,
      `[::1]:${port}@evil.example`,
    ];
    const bearer = { authorization: `Bearer ${u.token}` };
    for (const host of forged) {
      // registration has a request limit per address: each from an address of its own
      const reg = await withHost(b.url, 'POST', '/api/devices/register', host, { 'X-Forwarded-For': `192.0.2.${++made}` }, { name: 'Clara', client: 'koreader' });
      expect(reg.status, `${host}: ${reg.text}`).toBe(201);
      expect(reg.json.verification_uri, host).toBeUndefined();
      expect(reg.json.auth_url).toMatch(/^\/devices\/approve\/[0-9A-F]{12}$/);
      expect(reg.text, host).not.toContain(host);

      const k = await withHost(b.url, 'POST', retoken, host, bearer);
      expect(k.status, `${host}: ${k.text}`).toBe(200);
      expect(k.json.kobo_url, host).toMatch(KOBO_PATH);
      expect(k.json.kobo_config.line).toBe(`api_endpoint=${k.json.kobo_url}`);
      secrets.push(k.json.kobo_url.split('/kobo/')[1]);

      const key = await withHost(b.url, 'POST', '/api/auth/opds-key', host, bearer, {});
      expect(key.status, `${host}: ${key.text}`).toBe(201);
      expect(key.json.opds_url, host).toBeUndefined();
      expect(key.json.opds_path).toBe(`/opds/key/${key.json.key}`);
      secrets.push(key.json.key);

      const init = await withHost(b.url, 'GET', `${path}/v1/initialization`, host);
      expect(init.status, `${host}: ${init.text}`).toBe(200);
      expect(init.json.Resources.library_sync, host).toBe(`${path}/v1/library/sync`);
      expect(init.text, host).not.toContain(host);

      const os = await withHost(b.url, 'GET', '/opds/search', host, bearer);
      expect(os.status, host).toBe(200);
      expect(os.text, host).not.toContain(host);
      expect(os.text).toContain('template="/opds/search?q={searchTerms}"');
    }
    // this machine's own address, as a plain authority, is still believed
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const k = await withHost(b.url, 'POST', retoken, host, bearer);
      expect(k.status, k.text).toBe(200);
      expect(k.json.kobo_url).toMatch(new RegExp(`^http://${host}/kobo/bkt_[A-Za-z0-9_-]{43}$`));
      secrets.push(k.json.kobo_url.split('/kobo/')[1]);
      const init = await withHost(b.url, 'GET', `${path}/v1/initialization`, host);
      expect(init.json.Resources.library_sync).toBe(`http://${host}/kobo/${token}/v1/library/sync`);
    }
  });

  it('finding 3: bad Kobo tokens from one address lock out neither a valid Kobo token nor a password sign-in there', async () => {
    const u = await account();
    const { path } = await kobo(u);
    const c = at('198.51.100.31');
    for (let i = 0; i < MAX; i++) err(await c('GET', `/kobo/${wrongKobo(i)}/v1/initialization`), 401, BAD_KOBO);
    // over the budget a bad token is told to wait; a valid one goes on as ever
    limited(await c('GET', `/kobo/${wrongKobo(MAX)}/v1/initialization`));
    limited(await c('GET', '/kobo/bkt_short/v1/library/sync'));
    const init = await c('GET', `${path}/v1/initialization`);
    expect(init.status, init.text).toBe(200);
    expect(init.json.Resources.library_sync).toMatch(new RegExp(`${path}/v1/library/sync$`));
    const sync = await c('GET', `${path}/v1/library/sync`);
    expect(sync.status, sync.text).toBe(200);
    expect(sync.json).toEqual([]);
    // passwords are another kind of credential: their budget is whole
    const login = await c('POST', '/api/auth/login', { body: { login: u.username, password: PASSWORD } });
    expect(login.status, login.text).toBe(200);
    expect((await c('GET', '/opds', { headers: basic(u.username, PASSWORD) })).status).toBe(200);
    limited(await c('GET', `/kobo/${wrongKobo(MAX + 1)}/v1/initialization`));
  });

  it('finding 3: a valid reader key and device credential pass over their budgets; bad ones are refused 401, then 429', async () => {
    const u = await account();
    const key = await readerKey(u);
    const device = await enroll(at(`192.0.2.${++made}`), u, 'Reader');
    secrets.push(device.token);
    const c = at('198.51.100.32');
    for (let i = 0; i < MAX; i++) err(await c('GET', `/opds/key/not-a-key-${i}`), 401, 'invalid or expired token');
    limited(await c('GET', '/opds/key/not-a-key-again'));
    const feed = await c('GET', `/opds/key/${key}`);
    expect(feed.status, feed.text).toBe(200);
    expect(feed.text).toContain('<feed');

    for (let i = 0; i < MAX; i++)
      err(await c('GET', '/api/sync/koreader/library', { headers: { authorization: `Device bdt_forged-credential-${i}` } }), 401, 'invalid or revoked device credential');
    limited(await c('GET', '/api/sync/koreader/library', { headers: { authorization: 'Device bdt_forged-credential' } }));
    const lib = await c('GET', '/api/sync/koreader/library', asDevice(device.token));
    expect(lib.status, lib.text).toBe(200);
    // neither kind spent a password try
    expect((await c('GET', '/opds', { headers: basic(u.username, PASSWORD) })).status).toBe(200);
  });

  it('finding 3: over the password budget every password check from the address is 429 before it runs, the right one too; tokens still pass', async () => {
    const u = await account();
    const { path } = await kobo(u);
    const c = at('198.51.100.33');
    for (let i = 0; i < MAX; i++) err(await c('GET', '/opds', { headers: basic(u.username, `wrong-passw0rd-${i}`) }), 401, 'invalid credentials');
    limited(await c('GET', '/opds', { headers: basic(u.username, PASSWORD) }));
    limited(await c('POST', '/api/auth/login', { body: { login: u.username, password: PASSWORD } }));
    const wrongCurrent = { current_password: 'wrong-passw0rd', new_password: 'n3w-passphrase', confirm_password: 'n3w-passphrase' };
    limited(await c('PUT', '/api/auth/password', { token: u.token, body: wrongCurrent }));
    expect((await c('GET', `${path}/v1/initialization`)).status).toBe(200);
    // another address has a budget of its own
    expect((await at('198.51.100.34')('GET', '/opds', { headers: basic(u.username, PASSWORD) })).status).toBe(200);
  });

  it('finding 4: a 429 burst stops at its answer (no route runs, no error is logged) and no Kobo token or reader key is ever logged', async () => {
    const u = await account();
    const { path } = await kobo(u);
    const key = await readerKey(u);
    const device = await enroll(at(`192.0.2.${++made}`), u, 'Reader');
    secrets.push(device.token);
    // one address per kind, so each burst below meets a spent budget of its own kind only
    const [byKobo, byPassword, byKey, byDevice] = ['198.51.100.35', '198.51.100.36', '198.51.100.37', '198.51.100.38'].map(at) as [Call, Call, Call, Call];
    const forged = (i: number) => ({ headers: { authorization: `Device bdt_forged-${i}` } });
    const proc = b.procs[0]!;
    const before = proc.output().length;
    for (let i = 0; i < MAX; i++) {
      err(await byKobo('GET', `/kobo/${wrongKobo(100 + i)}/v1/library/sync`), 401, BAD_KOBO);
      err(await byPassword('GET', '/opds', { headers: basic(u.username, `wrong-passw0rd-${i}`) }), 401, 'invalid credentials');
      err(await byKey('GET', `/opds/key/not-a-key-${i}/recent`), 401, 'invalid or expired token');
      err(await byDevice('GET', '/api/sync/koreader/library', forged(i)), 401, 'invalid or revoked device credential');
    }
    // the burst, and then the valid token, key and credential from the same addresses
    const burst = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => byKobo('GET', `/kobo/${wrongKobo(200 + i)}/v1/${i % 2 ? 'library/sync' : 'initialization'}`)),
      ...Array.from({ length: 20 }, () => byPassword('GET', '/opds/recent', { headers: basic(u.username, PASSWORD) })),
      ...Array.from({ length: 20 }, (_, i) => byKey('GET', `/opds/key/not-a-key-${i}/recent`)),
      ...Array.from({ length: 20 }, (_, i) => byDevice('GET', '/api/sync/koreader/library', forged(i))),
    ]);
    const valid = [
      await byKobo('GET', `${path}/v1/library/sync`),
      await byKobo('GET', `${path}/v1/initialization`),
      await byKobo('GET', `${path}/v1/user/profile`),
      await byKobo('GET', `${path}/v1/user/loyalty/benefits`),
      await byKobo('GET', `${path}/v1/analytics/gettests`),
      await byKobo('GET', `${path}/v1/user/wishlist`),
      await byKobo('GET', `${path}/v1/products/featured/abc`),
      await byKey('GET', `/opds/key/${key}/recent`),
      await byDevice('GET', '/api/sync/koreader/library', asDevice(device.token)),
    ];
    // lines are written asynchronously: give the process a moment
    await new Promise((r) => setTimeout(r, 500));
    const lines = proc
      .output()
      .slice(before)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    expect(lines.filter((l) => /already sent|writeHead/.test(l.msg))).toEqual([]);
    // nothing this file used as a secret is in anything the process wrote
    const all = proc.output();
    expect(secrets.length).toBeGreaterThanOrEqual(3);
    for (const s of [...secrets, wrongKobo(100), wrongKobo(200)]) expect(all.includes(s), `${s} is in the log`).toBe(false);
    for (const r of burst) limited(r);
    expect(valid.map((r) => r.status)).toEqual(valid.map(() => 200));
  });

  it('finding 5: the reader key, the profile and the Kobo initialization are answered no-store and nosniff; routes that cache say so', async () => {
    const u = await account();
    const { path } = await kobo(u);
    const privateAnswer = (r: Res) => {
      expect(r.headers.get('cache-control'), r.text).toBe('no-store');
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    };
    const made = await call('POST', '/api/auth/opds-key', { token: u.token, body: {} });
    expect(made.status).toBe(201);
    secrets.push(made.json.key);
    privateAnswer(made);
    const state = await call('GET', '/api/auth/opds-key', { token: u.token });
    expect(state.status).toBe(200);
    expect(state.json.exists).toBe(true);
    privateAnswer(state);
    const profile = await call('GET', '/api/auth/profile', { token: u.token });
    expect(profile.status).toBe(200);
    expect(profile.json).toMatchObject({ id: u.id, username: u.username });
    privateAnswer(profile);
    const init = await call('GET', `${path}/v1/initialization`);
    expect(init.status).toBe(200);
    expect(init.text).toContain(path);
    privateAnswer(init);
    // refusals too
    const refused = await call('GET', '/api/auth/profile');
    err(refused, 401, 'authentication required');
    privateAnswer(refused);
    // a route that may be cached says how, and is still not sniffed
    const doc = await call('GET', '/api/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.headers.get('cache-control')).toBe('no-cache');
    expect(doc.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
