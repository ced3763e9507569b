import { describe, expect, it } from 'vitest';
import { signAccessToken, tokenKey, TokenVerifier } from '../src/tokens';

const key = tokenKey('a-test-secret-a-test-secret-a-test-secret');
const who = { user_id: 'u1', user_role: 'user' as const, user_email: 'a@example.com', user_username: 'ann' };

describe('TokenVerifier', () => {
  it('verifies a token once and recognises it again until it expires', async () => {
    const start = Date.now();
    let now = start;
    const v = new TokenVerifier(key, 10, () => now);
    const { token, claims } = await signAccessToken(key, who, 60, new Date(start));
    expect(await v.verify(token)).toEqual(claims);
    const same = await v.verify(token);
    expect(same).toBe(await v.verify(token)); // the cached object, not a second verification
    now = claims.exp * 1000 + 1;
    expect(await v.verify(token)).toBeNull(); // past exp: out of the cache, and refused by the signature check
  });

  it('keeps at most `max` tokens, dropping the least recently used', async () => {
    const v = new TokenVerifier(key, 2);
    const t = await Promise.all([0, 1, 2].map(async (i) => (await signAccessToken(key, { ...who, user_id: `u${i}` }, 60, new Date())).token));
    const first = await v.verify(t[0]!);
    await v.verify(t[1]!);
    await v.verify(t[2]!);
    const again = await v.verify(t[0]!);
    expect(again).toEqual(first);
    expect(again).not.toBe(first); // verified anew: it had been evicted
  });

  it('refuses a changed byte', async () => {
    const v = new TokenVerifier(key);
    const { token } = await signAccessToken(key, who, 60, new Date());
    await v.verify(token);
    expect(await v.verify(token.slice(0, -2) + (token.endsWith('A') ? 'BB' : 'AA'))).toBeNull();
  });
});
