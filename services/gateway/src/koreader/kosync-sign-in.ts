// Who calls the kosync protocol: KOReader sends the username as `x-auth-user` and md5(password) as
// `x-auth-key`. The key is a device's sync key (then the device is named in what it pushes) or the
// user's password; a verified pair is taken on trust for a while, and each refusal spends the
// address's attempt budget.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rateLimitedMessage } from '@bindery/contracts';
import type { AuthFailures } from '../http/auth-failures';
import type { CallIdentity } from '../http/rpc';
import { PASSWORD_TTL_MS, type Verified, type VerifiedCache } from '../http/verified-cache';
import { keyField, kosyncError } from './kosync-protocol';
import type { SyncKeys } from './sync-keys';

/** how long a verified key is taken on trust before it is checked again (argon2 is slow) */
export const KOSYNC_TTL_MS = PASSWORD_TTL_MS;

declare module 'fastify' {
  interface FastifyRequest {
    /** the device whose sync key signed a kosync request in (null: the user's password did) */
    kosyncDevice: { device_id: string; name: string } | null;
  }
}

export interface KosyncSignInDeps {
  identity: CallIdentity;
  /** the budgets of failed credential checks per address (a key is checked like a password here) */
  failures: AuthFailures;
  /** the sign-ins taken on trust (shared with OPDS) */
  verified: VerifiedCache;
  /** devices' sync keys, checked before the password */
  syncKeys: SyncKeys;
}

/** The onRequest of the protocol's signed-in routes: sets `req.caller`, or answers 2001 (or 429 / 502). */
export function kosyncSignIn(app: FastifyInstance, { identity, failures, verified, syncKeys }: KosyncSignInDeps) {
  app.decorateRequest('kosyncDevice', null);
  const requireKosync = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const wait = failures.wait(req.ip, 'password');
    if (wait)
      return reply
        .code(429)
        .header('Retry-After', String(wait))
        .send({ code: 2001, message: rateLimitedMessage(wait) });
    const user = req.headers['x-auth-user'];
    const key = req.headers['x-auth-key'];
    if (!keyField(user) || typeof key !== 'string' || key === '') return kosyncError(reply, 2001);
    const signIn = (v: Verified) => {
      req.caller = { user_id: v.user_id, role: v.role };
      req.kosyncDevice = v.device ?? null;
    };
    const hit = verified.get('kosync', [user, key]);
    if (hit) return signIn(hit);
    const outcome = await verified.once('kosync', [user, key], async (): Promise<Verified | 'unavailable' | 'refused'> => {
      // a device's sync key first (only users with one run its check), then the password
      const byDevice = await syncKeys.verify(user, key.slice(0, 1024));
      if (byDevice) {
        verified.set('kosync', [user, key], byDevice);
        return byDevice;
      }
      const r = await identity('kosync-verify', { login: user, key: key.slice(0, 1024) });
      if (!r.ok) return r.error.code === 'service_unavailable' ? 'unavailable' : 'refused';
      const v = r.value;
      verified.set('kosync', [user, key], { user_id: v.user_id, role: v.role });
      return v;
    });
    if (outcome === 'unavailable') return kosyncError(reply, 2000);
    if (outcome === 'refused') {
      failures.failed(req.ip, 'password');
      return kosyncError(reply, 2001);
    }
    signIn(outcome);
  };
  return requireKosync;
}
