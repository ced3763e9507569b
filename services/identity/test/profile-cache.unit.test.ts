import { describe, expect, it } from 'vitest';
import { ProfileCache } from '../src/handlers/profile-cache';

const p = (username: string) => ({ id: 'u1', email: 'a@example.com', username, first_name: '', last_name: '', role: 'user' as const });

describe('ProfileCache', () => {
  it('serves a loaded profile without loading again', async () => {
    const c = new ProfileCache();
    let loads = 0;
    const load = async () => (loads++, p('ann'));
    expect(await c.get('u1', load)).toEqual(p('ann'));
    expect(await c.get('u1', load)).toEqual(p('ann'));
    expect(loads).toBe(1);
  });
  it('loads again after an invalidation', async () => {
    const c = new ProfileCache();
    await c.get('u1', async () => p('ann'));
    c.invalidate('u1');
    expect(await c.get('u1', async () => p('bob'))).toEqual(p('bob'));
  });
  it('does not keep a value loaded before an invalidation that landed while loading', async () => {
    const c = new ProfileCache();
    let release!: () => void;
    const slow = c.get('u1', () => new Promise((r) => (release = () => r(p('old')))));
    c.invalidate('u1'); // a commit lands while the old row is in flight
    release();
    expect(await slow).toEqual(p('old'));
    expect(await c.get('u1', async () => p('new'))).toEqual(p('new'));
  });
  it('expires entries after 30 seconds', async () => {
    let now = 1_700_000_000_000; // a real clock reading: lru-cache treats a start time of 0 as "no expiry"
    const c = new ProfileCache(() => now);
    await c.get('u1', async () => p('ann'));
    now += 29_999;
    expect(await c.get('u1', async () => p('bob'))).toEqual(p('ann'));
    now += 2;
    expect(await c.get('u1', async () => p('bob'))).toEqual(p('bob'));
  });
  it('does not cache an unknown user', async () => {
    const c = new ProfileCache();
    expect(await c.get('u1', async () => undefined)).toBeUndefined();
    expect(await c.get('u1', async () => p('ann'))).toEqual(p('ann'));
  });
});
