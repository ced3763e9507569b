// Session tokens: HS256 JWTs with the algorithm pinned on verification.
import { SignJWT, jwtVerify, errors } from 'jose';
import { randomUUID, webcrypto } from 'node:crypto';
import { LRUCache } from 'lru-cache';

type CryptoKey = webcrypto.CryptoKey;

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

/** Clocks of the processes that sign and verify may differ by this much; a later `iat` is forged. */
export const CLOCK_SKEW_SECONDS = 60;

export async function verifyAccessToken(key: Uint8Array | CryptoKey, token: string, nowMs: number = Date.now()): Promise<AccessClaims | null> {
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], currentDate: new Date(nowMs) });
    const p = payload as Partial<AccessClaims>;
    if (typeof p.jti !== 'string' || typeof p.user_id !== 'string' || (p.user_role !== 'user' && p.user_role !== 'admin') || typeof p.exp !== 'number' || typeof p.iat !== 'number')
      return null;
    if (p.iat > Math.floor(nowMs / 1000) + CLOCK_SKEW_SECONDS) return null;
    return p as AccessClaims;
  } catch (e) {
    if (e instanceof errors.JOSEError) return null;
    throw e;
  }
}

/**
 * Verifies access tokens for a gateway: the HS256 key is imported once, and a token already
 * verified is recognised by its exact text until it expires (an LRU bounded at `max` tokens), so
 * a client reusing its token costs one lookup. The algorithm stays pinned; a changed byte is a
 * different token.
 */
export class TokenVerifier {
  private readonly key: Promise<CryptoKey>;
  private readonly seen: LRUCache<string, AccessClaims>;

  constructor(
    secret: Uint8Array,
    max = 10_000,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.key = webcrypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    // ttlResolution 0: the expiry check reads the clock each time (an injected clock included).
    this.seen = new LRUCache({ max, ttlResolution: 0, perf: { now: nowMs } });
  }

  /** The claims of a token this verifier already verified (and that has not expired), without a promise. */
  known(token: string): AccessClaims | undefined {
    return this.seen.get(token);
  }

  async verify(token: string): Promise<AccessClaims | null> {
    const hit = this.seen.get(token);
    if (hit) return hit;
    const claims = await verifyAccessToken(await this.key, token, this.nowMs());
    if (!claims) return null;
    // expiry by this verifier's clock too, so a cached token and a fresh one end at the same moment
    const ttl = claims.exp * 1000 - this.nowMs();
    if (ttl <= 0) return null;
    this.seen.set(token, claims, { ttl });
    return claims;
  }
}
