// Budgets of failed credential checks per address and kind: a password's is refused before the
// check, a token's counts failures and never refuses a valid token (the route hooks as kobo.ts,
// device-auth.ts and reader-auth.ts write them, in a real fastify).
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthFailures } from '../src/http/auth-failures';

const MAX = 3;
const budget = { max: MAX, windowMs: 60_000 };

describe('AuthFailures', () => {
  let app: FastifyInstance | null = null;
  afterEach(async () => app?.close());

  it('keeps a budget per address and kind', () => {
    const f = new AuthFailures(budget);
    for (let i = 0; i < MAX; i++) f.failed('192.0.2.1', 'kobo-token');
    expect(f.wait('192.0.2.1', 'kobo-token')).toBe(60);
    expect(f.wait('192.0.2.1', 'password')).toBe(0);
    expect(f.wait('192.0.2.1', 'reader-key')).toBe(0);
    expect(f.wait('192.0.2.2', 'kobo-token')).toBe(0);
    // a password failure without a kind is a password failure
    for (let i = 0; i < MAX; i++) f.failed('192.0.2.1');
    expect(f.wait('192.0.2.1', 'password')).toBe(60);
    expect(f.wait('192.0.2.1')).toBe(60);
  });

  it('without a budget counts nothing', () => {
    const f = new AuthFailures(null);
    for (let i = 0; i < 10; i++) f.failed('192.0.2.1', 'password');
    expect(f.wait('192.0.2.1', 'password')).toBe(0);
  });

  it('a token route: MAX bad tokens are 401, then 429 with Retry-After; a valid token always passes and the refused never reach the handler', async () => {
    const f = new AuthFailures(budget);
    let handled = 0;
    app = Fastify();
    app.get(
      '/t/:token',
      {
        onRequest: async (req, reply) => {
          if ((req.params as { token: string }).token === 'good') return;
          if (f.refuseFailed(req, reply, 'kobo-token')) return reply;
          return reply.code(401).send({ error: 'invalid or revoked Kobo token' });
        },
      },
      async () => {
        handled += 1;
        return { ok: true };
      },
    );
    for (let i = 0; i < MAX; i++) {
      const r = await app.inject({ url: `/t/bad${i}` });
      expect(r.statusCode).toBe(401);
      expect(r.json()).toEqual({ error: 'invalid or revoked Kobo token' });
    }
    const over = await app.inject({ url: '/t/bad' });
    expect(over.statusCode).toBe(429);
    expect(over.headers['retry-after']).toBe('60');
    expect(over.json()).toEqual({ error: 'too many requests: try again in 60 seconds' });
    expect(handled).toBe(0);
    const good = await app.inject({ url: '/t/good' });
    expect(good.statusCode).toBe(200);
    expect(handled).toBe(1);
    // the password budget of that address is whole
    expect(f.wait('127.0.0.1', 'password')).toBe(0);
  });

  it('a password route: refused with 429 before the check once MAX checks failed', async () => {
    const f = new AuthFailures(budget);
    let checks = 0;
    app = Fastify();
    app.post('/login', async (req, reply) => {
      if (f.refuse(req, reply)) return reply;
      checks += 1;
      f.failed(req.ip, 'password');
      return reply.code(401).send({ error: 'invalid credentials' });
    });
    for (let i = 0; i < MAX; i++) expect((await app.inject({ method: 'POST', url: '/login' })).statusCode).toBe(401);
    const r = await app.inject({ method: 'POST', url: '/login' });
    expect(r.statusCode).toBe(429);
    expect(r.json()).toEqual({ error: 'too many requests: try again in 60 seconds' });
    expect(checks).toBe(MAX);
  });
});
