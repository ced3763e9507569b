// Device credentials and registration codes: 256-bit random secrets, kept only as their SHA-256
// (a secret this long needs no slow hash: nothing can be guessed from its digest). Sync keys for
// KOReader's stock sync are shorter (typed by hand on an e-reader) and KOReader only ever sends
// their md5, so they are kept as an argon2id hash of that md5.
import { createHash, randomBytes, randomInt } from 'node:crypto';
import argon2 from 'argon2';
import { DeviceSync } from '@bindery/contracts';

export const newDeviceToken = (): string => DeviceSync.TOKEN_PREFIX + randomBytes(32).toString('base64url');
/** A Kobo's store token: it travels in the address the Kobo calls (`/kobo/<token>`), so base64url only. */
export const newKoboToken = (): string => DeviceSync.KOBO_TOKEN_PREFIX + randomBytes(32).toString('base64url');
export const newDeviceCode = (): string => randomBytes(32).toString('base64url');
/** What the approval URL carries: short enough to type, long enough not to guess (48 bits, alive for minutes). */
export const newRegistrationId = (): string => randomBytes(6).toString('hex').toUpperCase();
export const digest = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('hex');

/** letters and digits that cannot be mistaken for one another on an e-reader's keyboard (no l, 1, o, 0) */
const SYNC_KEY_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';
/** OWASP's argon2id baseline, as identity's password hashes: 19 MiB, 2 passes, 1 lane. */
const ARGON = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** A sync key: 20 characters of a 32-letter alphabet (100 bits) in four groups, e.g. `k7qam-3xnpe-w2hcd-9tfvr`. */
export function newSyncKey(): string {
  const groups: string[] = [];
  for (let g = 0; g < 4; g++) {
    let s = '';
    for (let i = 0; i < 5; i++) s += SYNC_KEY_ALPHABET[randomInt(SYNC_KEY_ALPHABET.length)];
    groups.push(s);
  }
  const key = groups.join('-');
  if (!DeviceSync.SYNC_KEY_PATTERN.test(key)) throw new Error('sync key out of pattern');
  return key;
}

/** What is kept of a sync key: an argon2id hash of md5(key) as hex, which is what KOReader sends as `x-auth-key`. */
export const syncKeyVerifier = (key: string): Promise<string> => argon2.hash(createHash('md5').update(key, 'utf8').digest('hex'), ARGON);

/** The event that gives a device a new sync key (its verifier, never the key). */
export const syncKeyIssued = (user: string, device: string, verifier: string, at: Date) =>
  ({ type: 'device-sync.sync-key-issued.v1', data: { user_id: user, device_id: device, verifier, issued_at: at.toISOString() } }) as const;
