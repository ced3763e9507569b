// Sign-ins taken on trust for a short while: a password check is an argon2 hash (slow by design), and
// reader apps and KOReader send their credentials with every request. One cache serves OPDS Basic,
// OPDS reader keys and KOReader's stock sync; entries are keyed by an HMAC of the kind and the
// credentials under a secret of this process (never the credentials themselves) and expire on their
// own TTL. An entry that came from a device's sync key names the device, so revoking or rotating it
// can drop the entry at once (`forgetDevices`); identity's events about a user drop theirs (`forgetUser`).
import { createHmac, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Identity } from '@bindery/contracts';

/** how long a verified password is taken on trust before it is checked again (argon2 is slow) */
export const PASSWORD_TTL_MS = 60_000;

export interface Verified {
  user_id: string;
  role: Identity.Role;
  /** set when a device's own credential (a sync key) signed in, not the user's password */
  device?: { device_id: string; name: string };
}

export type VerifiedKind = 'basic' | 'reader-key' | 'kosync';

export class VerifiedCache {
  private readonly secret = randomBytes(32);
  private readonly entries = new LRUCache<string, Verified>({ max: 20_000, ttl: PASSWORD_TTL_MS });
  private readonly checking = new Map<string, Promise<unknown>>();

  private key(kind: VerifiedKind, parts: string[]): string {
    return createHmac('sha256', this.secret)
      .update([kind, ...parts].join('\0'))
      .digest('base64url');
  }

  get(kind: VerifiedKind, parts: string[]): Verified | undefined {
    return this.entries.get(this.key(kind, parts));
  }

  /** `ttlMs` shorter than the default for a credential that is cheap to check again (a reader key). */
  set(kind: VerifiedKind, parts: string[], value: Verified, ttlMs = PASSWORD_TTL_MS): void {
    this.entries.set(this.key(kind, parts), value, { ttl: Math.min(ttlMs, PASSWORD_TTL_MS) });
  }

  /**
   * One check at a time for the same credentials: requests that come while it runs wait for its
   * outcome (a device's requests arriving together, or after an entry expired, would each run argon2).
   */
  once<T>(kind: VerifiedKind, parts: string[], check: () => Promise<T>): Promise<T> {
    const k = this.key(kind, parts);
    let running = this.checking.get(k) as Promise<T> | undefined;
    if (!running) {
      running = check().finally(() => this.checking.delete(k));
      this.checking.set(k, running);
    }
    return running;
  }

  /** Drops every entry of a user (a password changed, a reader key replaced or revoked, an account deleted). */
  forgetUser(userId: string): void {
    for (const [k, v] of this.entries.entries()) if (v.user_id === userId) this.entries.delete(k);
  }

  /** Drops every entry a device's credential made (a device deleted, or its sync key replaced). */
  forgetDevices(): void {
    for (const [k, v] of this.entries.entries()) if (v.device) this.entries.delete(k);
  }
}
