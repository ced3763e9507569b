// Budgets of failed credential checks per client address and kind of credential, shared by every
// route that checks one. Passwords are one kind, whatever the surface (web login, OPDS Basic,
// KOReader's stock sync, the current password of a self change): spelling a login another way
// (`Dave`, ` dave`, the e-mail) or moving to another surface buys no fresh tries, and over the
// budget a route answers 429 with Retry-After before any check runs (no argon2 work anyone can
// trigger). A secret looked up by its hash (a Kobo token, a reader key, a device credential) is a
// kind of its own and costs one indexed lookup: a valid one always passes, so one address full of
// someone's bad tokens (everyone behind a proxy without TRUST_PROXY) locks nobody out; a failed one
// counts, and over the budget is answered 429 instead of 401. The per-login-string lock of the
// interface stays as it is, in identity.
import { LRUCache } from 'lru-cache';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail, rateLimitedMessage } from '@bindery/contracts';
import { isFragment, sendFailure } from './reply';

export interface AuthBudget {
  max: number;
  windowMs: number;
}

/** What a failed check was of: each kind has its own budget per address. */
export type CredentialKind = 'password' | 'kobo-token' | 'reader-key' | 'device-credential';

export class AuthFailures {
  /** per `<kind> <address>`: the window starts at the first failure and ends `windowMs` later */
  private readonly failures: LRUCache<string, { n: number; until: number }> | null;

  constructor(private readonly budget: AuthBudget | null) {
    this.failures = budget ? new LRUCache({ max: 100_000, ttl: budget.windowMs }) : null;
  }

  /** Seconds until this address may try this kind again, or 0 when it is within its budget. */
  wait(ip: string, kind: CredentialKind = 'password'): number {
    const f = this.failures?.get(`${kind} ${ip}`);
    if (!f || !this.budget || f.n < this.budget.max) return 0;
    return Math.max(1, Math.ceil((f.until - Date.now()) / 1000));
  }

  /** One failed check of this kind from this address. */
  failed(ip: string, kind: CredentialKind = 'password'): void {
    if (!this.failures || !this.budget) return;
    const key = `${kind} ${ip}`;
    const f = this.failures.get(key, { updateAgeOnGet: false });
    if (f) f.n += 1;
    else this.failures.set(key, { n: 1, until: Date.now() + this.budget.windowMs });
  }

  /**
   * For a route about to check a password: answers 429 `{error}` (a fragment for HX-Request routes
   * that use them) with Retry-After and returns true when the address is over its password budget.
   */
  refuse(req: FastifyRequest, reply: FastifyReply, fragments = false): boolean {
    return this.over(req, reply, this.wait(req.ip, 'password'), fragments);
  }

  /**
   * For a route whose token or key was not found: counts the failure and, when the address was
   * already over its budget for the kind, answers 429 with Retry-After and returns true (else the
   * route answers its own 401).
   */
  refuseFailed(req: FastifyRequest, reply: FastifyReply, kind: Exclude<CredentialKind, 'password'>): boolean {
    const wait = this.wait(req.ip, kind);
    this.failed(req.ip, kind);
    return this.over(req, reply, wait, false);
  }

  private over(req: FastifyRequest, reply: FastifyReply, wait: number, fragments: boolean): boolean {
    if (!wait) return false;
    reply.header('Retry-After', String(wait));
    sendFailure(reply, fail('rate_limited', rateLimitedMessage(wait)), fragments && isFragment(req));
    return true;
  }
}
