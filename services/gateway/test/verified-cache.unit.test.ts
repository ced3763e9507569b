// The sign-in cache's one check in flight per credentials: requests that arrive together (or right
// after an entry expired) share one argon2 check instead of each running their own.
import { describe, expect, it } from 'vitest';
import { VerifiedCache, type Verified } from '../src/http/verified-cache';

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
