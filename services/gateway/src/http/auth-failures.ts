// One budget of failed credential checks per client address, shared by every route that checks a
// password or a key: web login, OPDS Basic and reader keys, KOReader's stock sync, the plugin's and
// every device credential, the self password change. Spelling a login another way (`Dave`,
// ` dave`, the e-mail) or moving to another surface buys no fresh tries: the address is what
// counts. Over the budget a route answers 429 with Retry-After before any check runs (no argon2
// work anyone can trigger). The per-login-string lock of the interface stays as it is, in identity.
import { LRUCache } from 'lru-cache';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail, rateLimitedMessage } from '@bindery/contracts';
import { isFragment, sendFailure } from './reply';

export interface AuthBudget {
  max: number;
  windowMs: number;
}

export class AuthFailures {
  /** the window starts at an address's first failure and ends `windowMs` later */
  private readonly failures: LRUCache<string, { n: number; until: number }> | null;

  constructor(private readonly budget: AuthBudget | null) {
    this.failures = budget ? new LRUCache({ max: 100_000, ttl: budget.windowMs }) : null;
  }

  /** Seconds until this address may try again, or 0 when it is within its budget. */
  wait(ip: string): number {
    const f = this.failures?.get(ip);
    if (!f || !this.budget || f.n < this.budget.max) return 0;
    return Math.max(1, Math.ceil((f.until - Date.now()) / 1000));
  }

  /** One failed check from this address. */
  failed(ip: string): void {
    if (!this.failures || !this.budget) return;
    const f = this.failures.get(ip, { updateAgeOnGet: false });
    if (f) f.n += 1;
    else this.failures.set(ip, { n: 1, until: Date.now() + this.budget.windowMs });
  }

  /**
   * For a route about to check a credential: answers 429 `{error}` (a fragment for HX-Request
   * routes that use them) with Retry-After and returns true when the address is over its budget.
   */
  refuse(req: FastifyRequest, reply: FastifyReply, fragments = false): boolean {
    const wait = this.wait(req.ip);
    if (!wait) return false;
    reply.header('Retry-After', String(wait));
    sendFailure(reply, fail('rate_limited', rateLimitedMessage(wait)), fragments && isFragment(req));
    return true;
  }
}
