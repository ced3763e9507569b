// Two identity replicas share requests and the login lock; a SIGTERM lets in-flight work finish.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { availableModes, spawnBindery, startBindery, type Bindery, type Proc } from '../support/bindery';
import { client } from '../support/http';

const distributed = (await availableModes()).includes('distributed');

describe.skipIf(!distributed)('identity replicas (distributed)', () => {
  let b: Bindery;
  let second: Proc;
  let admin: string;
  beforeAll(async () => {
    b = await startBindery('distributed');
    second = (await spawnBindery('service', { ...b.env, BINDERY_SERVICES: 'identity' }, /bindery identity started/)).proc;
    const r = await client(b.url)('POST', '/api/auth/register', { body: { email: 'boss@example.com', username: 'boss', password: 'passw0rd-boss' } });
    admin = r.json.access_token;
    const s = await client(b.url)('PUT', '/api/system/settings', { token: admin, body: { login_max_attempts: 4 } });
    expect(s.status).toBe(200);
  });
  afterAll(async () => {
    await second?.stop();
    await b?.stop();
  });

  it('a profile change made through one replica is what every replica serves next', async () => {
    const http = client(b.url);
    const u = await http('POST', '/api/auth/register', { body: { email: 'rep@example.com', username: 'rep-one', password: 'passw0rd-rep' } });
    const token = u.json.access_token;
    // warm both replicas' caches
    for (let i = 0; i < 6; i++) expect((await http('GET', '/api/auth/profile', { token })).json.username).toBe('rep-one');
    expect((await http('PUT', '/api/auth/username', { token, body: { username: 'rep-two' } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    const seen = new Set<string>();
    for (let i = 0; i < 10; i++) seen.add((await http('GET', '/api/auth/profile', { token })).json.username);
    expect([...seen]).toEqual(['rep-two']);
  });

  it('the lock counts failures handled by either replica and holds after one replica stops', async () => {
    const http = client(b.url);
    const login = `nobody-${randomUUID().slice(0, 8)}`;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await http('POST', '/api/auth/login', { body: { login, password: 'wrong-passw0rd' } })).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    await second.stop();
    const r = await http('POST', '/api/auth/login', { body: { login, password: 'wrong-passw0rd' } });
    expect(r.status).toBe(429);
    expect(r.json).toEqual({ error: 'Account locked. Try again in 15 minutes' });
  });
});

describe('graceful stop (embedded)', () => {
  let b: Bindery;
  beforeAll(async () => {
    b = await startBindery('embedded');
  });
  afterAll(async () => {
    await b?.stop();
  });

  it('finishes an in-flight registration on SIGTERM, then exits 0, and the account survives a restart', async () => {
    const http = client(b.url);
    const pending = http('POST', '/api/auth/register', { body: { email: 'late@example.com', username: 'late', password: 'passw0rd-late' } });
    await new Promise((r) => setTimeout(r, 30));
    const code = b.procs[0]!.stop('SIGTERM');
    const r = await pending;
    expect(r.status).toBe(201);
    expect(await code).toBe(0);
    await b.restart();
    const again = await client(b.url)('POST', '/api/auth/login', { body: { login: 'late', password: 'passw0rd-late' } });
    expect(again.status).toBe(200);
    expect(again.json.user.username).toBe('late');
  });
});
