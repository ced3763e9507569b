// The sign-in's transaction between the redirect to the provider and its answer: state, nonce and
// the PKCE verifier, with what the sign-in is for. Sealed (AES-256-GCM, a key derived from the
// token secret) into the cookie the gateway sets, so any identity replica finishes what another began.
import { hkdfSync } from 'node:crypto';
import { EncryptJWT, jwtDecrypt } from 'jose';

export interface Transaction {
  state: string;
  nonce: string;
  verifier: string;
  purpose: 'sign-in' | 'link';
  /** the signed-in user who asked to link (purpose `link`) */
  user_id: string | null;
  redirect_uri: string;
  return_to: string;
}

/** how long a person has at the provider's login page */
export const TRANSACTION_SECONDS = 600;

const keys = new WeakMap<Uint8Array, Uint8Array>();
const keyOf = (tokenKey: Uint8Array): Uint8Array => {
  let k = keys.get(tokenKey);
  if (!k) {
    k = new Uint8Array(hkdfSync('sha256', tokenKey, new Uint8Array(0), 'bindery oidc transaction v1', 32));
    keys.set(tokenKey, k);
  }
  return k;
};

export async function seal(tokenKey: Uint8Array, t: Transaction, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000);
  return new EncryptJWT({ ...t })
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
    .setIssuedAt(iat)
    .setExpirationTime(iat + TRANSACTION_SECONDS)
    .encrypt(keyOf(tokenKey));
}

/** The transaction, or null when it is not one of ours, was altered or has expired. */
export async function unseal(tokenKey: Uint8Array, sealed: string, now: Date): Promise<Transaction | null> {
  try {
    const { payload } = await jwtDecrypt(sealed, keyOf(tokenKey), { currentDate: now, keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] });
    const p = payload as Record<string, unknown>;
    const str = (k: string) => (typeof p[k] === 'string' ? (p[k] as string) : null);
    const [state, nonce, verifier, redirect_uri, return_to] = [str('state'), str('nonce'), str('verifier'), str('redirect_uri'), str('return_to')];
    if (!state || !nonce || !verifier || !redirect_uri || return_to === null) return null;
    if (p.purpose !== 'sign-in' && p.purpose !== 'link') return null;
    return { state, nonce, verifier, redirect_uri, return_to, purpose: p.purpose, user_id: str('user_id') };
  } catch {
    return null;
  }
}
