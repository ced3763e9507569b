// The per-client-address limit on login and register (on top of the per-login lock): an instance
// started with a low limit answers 429 {error} with Retry-After once an address has used it up,
// whatever login strings it tries, and a forged X-Forwarded-For does not buy fresh attempts.
// The limit lives in the gateway process, the same code in both modes: embedded is enough here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBindery, type Bindery } from '../support/bindery';
import { api, expectError as err, expectLimited, login, PASSWORD, uniq, type Call } from './helpers';

describe('login and register rate limit per client address (embedded)', () => {
  let b: Bindery;
  let call: Call;
  beforeAll(async () => {
    b = await startBindery('embedded', { AUTH_RATE_LIMIT_MAX: '4', AUTH_RATE_LIMIT_WINDOW_SECONDS: '120' });
    call = api(b);
  });
  afterAll(async () => b?.stop());

  const limited = (r: Awaited<ReturnType<Call>>) => expectLimited(r, 120);

  it('login: each spelling of a name is a fresh lock key, but the address runs out after 4 tries', async () => {
    const n = uniq('bob');
    const reg = await call('POST', '/api/auth/register', { body: { email: `${n}@example.com`, username: n, password: PASSWORD } });
    expect(reg.status, reg.text).toBe(201);
    for (const spelling of [n.toUpperCase(), ` ${n} `, `${n}@example.com`]) err(await login(call, spelling, 'wrong-passw0rd'), 401, 'invalid credentials');
    expect((await login(call, n, PASSWORD)).status).toBe(200);
    limited(await login(call, n.toUpperCase(), 'wrong-passw0rd'));
    // the right password is no way round it either, nor a forged proxy header, nor a form
    limited(await login(call, n, PASSWORD));
    limited(await call('POST', '/api/auth/login', { body: { login: n, password: PASSWORD }, headers: { 'X-Forwarded-For': '203.0.113.9' } }));
    limited(await call('POST', '/api/auth/login', { form: { login: n, password: PASSWORD } }));
    // other routes are not limited
    expect((await call('GET', '/api/setup/status')).status).toBe(200);
  });

  it('register has its own budget per address', async () => {
    // the first test registered once from this address
    for (let i = 0; i < 2; i++) {
      const n = uniq('reg');
      expect((await call('POST', '/api/auth/register', { body: { email: `${n}@example.com`, username: n, password: PASSWORD } })).status).toBe(201);
    }
    // a request refused for its body still counts
    err(await call('POST', '/api/auth/register', { body: {} }), 400, 'email is required');
    const n = uniq('reg');
    limited(await call('POST', '/api/auth/register', { body: { email: `${n}@example.com`, username: n, password: PASSWORD } }));
    const hx = await call('POST', '/api/auth/register', { form: { email: `${n}@example.com`, username: n, password: PASSWORD }, headers: { 'HX-Request': 'true' } });
    expect(hx.status).toBe(429);
    expect(hx.text).toMatch(/^<div class="alert alert-error" role="alert">too many requests: try again in \d+ seconds<\/div>$/);
  });
});
