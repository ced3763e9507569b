// Where a device credential may come from (the sign-in page's redirect targets: web/test).
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { credentialDigest, deviceCredentialOf } from '../src/http/device-auth';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as FastifyRequest;
const TOKEN = 'bdt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

describe('deviceCredentialOf', () => {
  it('reads the Device scheme, a Bearer device credential and X-Device-Token', () => {
    expect(deviceCredentialOf(req({ authorization: `Device ${TOKEN}` }))).toBe(TOKEN);
    expect(deviceCredentialOf(req({ authorization: `device   ${TOKEN}  ` }))).toBe(TOKEN);
    expect(deviceCredentialOf(req({ authorization: `Bearer ${TOKEN}` }))).toBe(TOKEN);
    expect(deviceCredentialOf(req({ 'x-device-token': ` ${TOKEN} ` }))).toBe(TOKEN);
  });

  it('leaves session tokens, Basic credentials and empty headers alone', () => {
    expect(deviceCredentialOf(req({ authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig' }))).toBeNull();
    expect(deviceCredentialOf(req({ authorization: 'Basic dTpw' }))).toBeNull();
    expect(deviceCredentialOf(req({ 'x-device-token': '  ' }))).toBeNull();
    expect(deviceCredentialOf(req({}))).toBeNull();
  });

  it('digests a credential as lower-case hex SHA-256', () => {
    expect(credentialDigest('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
