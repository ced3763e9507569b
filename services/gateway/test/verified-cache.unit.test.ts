// The sign-in cache's one check in flight per credentials: requests that arrive together (or right
// after an entry expired) share one argon2 check instead of each running their own; and OPDS's
// Basic and reader-key sign-ins use it (identity here is a counting stand-in: the hook is under test).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Auth } from '../src/http/authenticate';
import type { CallIdentity } from '../src/http/rpc';
import { VerifiedCache, type Verified } from '../src/http/verified-cache';
import { readerAuth } from '../src/opds/reader-auth';

const ann: Verified = { user_id: '00000000-0000-4000-8000-000000000001', role: 'user' };

describe('VerifiedCache.once', () => {
  it('runs one check for concurrent requests with the same credentials, and a new one after it settles', async () => {
    const cache = new VerifiedCache();
    let checks = 0;
    let release!: (v: Verified) => void;
    const check = () => {
      checks++;
      return new Promise<Verified>((r) => {
        release = r;
      });
    };
    const together = Array.from({ length: 16 }, () => cache.once('kosync', ['ann', 'key'], check));
    // other credentials are checked on their own
    const other = cache.once('kosync', ['ann', 'other-key'], async () => ({ ...ann, role: 'admin' as const }));
    expect(checks).toBe(1);
    release(ann);
    expect(await Promise.all(together)).toEqual(Array(16).fill(ann));
    expect(await other).toEqual({ ...ann, role: 'admin' });
    await cache.once('kosync', ['ann', 'key'], async () => {
      checks++;
      return ann;
    });
    expect(checks).toBe(2);
  });

  it('shares a failed check with the requests waiting on it, then forgets it', async () => {
    const cache = new VerifiedCache();
    let checks = 0;
    const failing = () => {
      checks++;
      return Promise.reject(new Error('identity is down'));
    };
    const both = [cache.once('basic', ['bob', 'pw'], failing), cache.once('basic', ['bob', 'pw'], failing)];
    await expect(both[0]).rejects.toThrow('identity is down');
    await expect(both[1]).rejects.toThrow('identity is down');
    expect(checks).toBe(1);
    expect(await cache.once('basic', ['bob', 'pw'], async () => 'refused')).toBe('refused');
  });
});

describe('OPDS sign-in (readerAuth)', () => {
  /** identity's verification, counted; it answers once `release` is called */
  const slowIdentity = () => {
    const calls: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const identity = (async (op: string, body: { input?: { password: string }; key?: string }) => {
      calls.push(op);
      await gate;
      if (op === 'reader-key-verify') return body.key === 'good-key' ? { ok: true, value: ann } : { ok: false, error: { code: 'unauthorized', message: 'no' } };
      return body.input?.password === 'right' ? { ok: true, value: ann } : { ok: false, error: { code: 'invalid_credentials', message: 'Invalid credentials' } };
    }) as unknown as CallIdentity;
    return { identity, calls, release: () => release() };
  };
  const auth = { optionalUser: async (req: FastifyRequest) => void (req.caller = null) } as unknown as Auth;
  const request = (headers: Record<string, string>, params: Record<string, string> = {}) =>
    ({ headers, params, ip: '127.0.0.1', caller: undefined as unknown }) as unknown as FastifyRequest;
  const reply = () => {
    const r = { status: 0, code: (s: number) => ((r.status = s), r), header: () => r, send: () => r, type: () => r };
    return r as unknown as FastifyReply & { status: number };
  };
  const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`ann:${password}`).toString('base64')}` });

  it('checks the password once for the requests that arrive together, and refuses them all when it is wrong', async () => {
    const { identity, calls, release } = slowIdentity();
    const hook = readerAuth(auth, identity, new VerifiedCache());
    const reqs = Array.from({ length: 8 }, () => request(basic('right')));
    const wrong = Array.from({ length: 3 }, () => request(basic('wrong')));
    const replies = [...reqs, ...wrong].map(() => reply());
    const done = [...reqs, ...wrong].map((q, i) => hook(q, replies[i]!));
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(['credentials-verify', 'credentials-verify']);
    release();
    await Promise.all(done);
    expect(reqs.map((q) => q.caller)).toEqual(Array(8).fill(ann));
    expect(wrong.map((q) => q.caller ?? null)).toEqual([null, null, null]);
    expect(replies.slice(8).map((r) => r.status)).toEqual([401, 401, 401]);
    // taken on trust afterwards: no new check
    await hook(request(basic('right')), reply());
    expect(calls).toHaveLength(2);
  });

  it('checks a reader key once for the requests that arrive together', async () => {
    const { identity, calls, release } = slowIdentity();
    const hook = readerAuth(auth, identity, new VerifiedCache());
    const reqs = Array.from({ length: 5 }, () => request({}, { key: 'good-key' }));
    const done = reqs.map((q) => hook(q, reply()));
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(['reader-key-verify']);
    release();
    await Promise.all(done);
    expect(reqs.map((q) => q.caller)).toEqual(Array(5).fill(ann));
  });
});
