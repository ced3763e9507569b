// Session tokens: HS256 JWTs with the algorithm pinned on verification.
import { SignJWT, jwtVerify, errors } from 'jose';
import { randomUUID } from 'node:crypto';

export interface AccessClaims {
  jti: string;
  user_id: string;
  user_role: 'user' | 'admin';
  user_email: string;
  user_username: string;
  iat: number;
  exp: number;
}

export const tokenKey = (secret: string): Uint8Array => new TextEncoder().encode(secret);

export async function signAccessToken(
  key: Uint8Array,
  who: Pick<AccessClaims, 'user_id' | 'user_role' | 'user_email' | 'user_username'>,
  ttlSeconds: number,
  now: Date,
): Promise<{ token: string; claims: AccessClaims }> {
  const iat = Math.floor(now.getTime() / 1000);
  const claims: AccessClaims = { jti: randomUUID(), ...who, iat, exp: iat + ttlSeconds };
  const token = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key);
  return { token, claims };
}

export async function verifyAccessToken(key: Uint8Array, token: string): Promise<AccessClaims | null> {
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'] });
    const p = payload as Partial<AccessClaims>;
    if (typeof p.jti !== 'string' || typeof p.user_id !== 'string' || (p.user_role !== 'user' && p.user_role !== 'admin') || typeof p.exp !== 'number' || typeof p.iat !== 'number') return null;
    return p as AccessClaims;
  } catch (e) {
    if (e instanceof errors.JOSEError) return null;
    throw e;
  }
}
