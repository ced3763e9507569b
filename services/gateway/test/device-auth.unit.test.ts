// Where a device credential may come from, and which `next` paths the login page follows.
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { credentialDigest, deviceCredentialOf } from '../src/http/device-auth';
import { safeNext } from '../src/routes/device-pages';

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

describe('safeNext', () => {
  it('keeps local paths and turns anything else into /', () => {
    expect(safeNext('/devices/approve/ABC123')).toBe('/devices/approve/ABC123');
    expect(safeNext('/a?b=c')).toBe('/a?b=c');
    for (const bad of ['//evil.example', '/\\evil.example', 'https://evil.example/', 'javascript:alert(1)', '', '/a b', 42, undefined, `/${'x'.repeat(600)}`]) {
      expect(safeNext(bad)).toBe('/');
    }
  });
});
