// The secrets device-sync hands out: their shape, their randomness, and the digest kept of them.
import { describe, expect, it } from 'vitest';
import { digest, newDeviceCode, newDeviceToken, newRegistrationId } from '../src/domain/credential';

describe('device secrets', () => {
  it('makes credentials with the bdt_ prefix and 256 random bits', () => {
    const a = newDeviceToken();
    expect(a).toMatch(/^bdt_[A-Za-z0-9_-]{43}$/);
    expect(newDeviceToken()).not.toBe(a);
  });

  it('makes device codes of 256 bits and approval codes of 12 upper-case hex digits', () => {
    expect(newDeviceCode()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const ids = new Set(Array.from({ length: 200 }, newRegistrationId));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(/^[0-9A-F]{12}$/);
  });

  it('keeps only the SHA-256 of a secret, as lower-case hex', () => {
    expect(digest('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(digest(newDeviceToken())).toMatch(/^[0-9a-f]{64}$/);
  });
});
