// Who is reading: a reader key in the path (`/opds/key/<key>/...`), the session cookie or Bearer
// token, or HTTP Basic (what KOReader and most reader apps send). Basic is checked by identity
// under the login lock rules; a success is remembered briefly in the gateway's VerifiedCache (under
// an HMAC of the credentials, never the password), and requests arriving while it is checked wait
// for that one check, so an app fetching fifty covers does not run fifty password hashes.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail, Messages, type Failure } from '@bindery/contracts';
import type { Auth } from '../http/authenticate';
import type { CallIdentity } from '../http/rpc';
import { AuthFailures } from '../http/auth-failures';
import { sendFailure } from '../http/reply';
import { PASSWORD_TTL_MS, VerifiedCache, type Verified } from '../http/verified-cache';

export const REALM = 'Bindery';
export const CHALLENGE = `Basic realm="${REALM}", charset="UTF-8"`;
/** how long a verified Basic login is taken on trust before identity is asked again (argon2 is slow) */
export const BASIC_TTL_MS = PASSWORD_TTL_MS;
/** a key check is one indexed lookup, so a revoked key stops working within seconds */
export const KEY_TTL_MS = 5_000;

export function parseBasic(header: string | undefined): { login: string; password: string } | 'malformed' | null {
  if (!header) return null;
  const m = /^Basic\s+([A-Za-z0-9+/=_-]*)\s*$/i.exec(header);
  if (!m) return /^Basic\b/i.test(header) ? 'malformed' : null;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return 'malformed';
  return { login: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** a failed check of the key or password (an outage is not one) */
const checkFailed = (f: Failure) => f.code !== 'service_unavailable';

export function readerAuth(auth: Auth, identity: CallIdentity, verified: VerifiedCache = new VerifiedCache(), failures = new AuthFailures(null)) {
  const challenge = (reply: FastifyReply, f: Failure) => {
    if (f.code !== 'login_locked') reply.header('WWW-Authenticate', CHALLENGE);
    return sendFailure(reply, f);
  };

  async function byKey(key: string): Promise<Verified | Failure> {
    const hit = verified.get('reader-key', [key]);
    if (hit) return hit;
    // an app fetching a page's covers at once asks once
    return verified.once('reader-key', [key], async () => {
      const r = await identity('reader-key-verify', { key });
      if (!r.ok) return r.error.code === 'service_unavailable' ? r.error : fail('unauthorized', Messages.invalidToken);
      verified.set('reader-key', [key], r.value, KEY_TTL_MS);
      return r.value;
    });
  }

  async function byBasic(login: string, password: string): Promise<Verified | Failure> {
    const hit = verified.get('basic', [login, password]);
    if (hit) return hit;
    // one password hash for the requests that arrive together (or right after the entry expired)
    return verified.once('basic', [login, password], async () => {
      const r = await identity('credentials-verify', { input: { login, password } });
      if (!r.ok) return r.error;
      verified.set('basic', [login, password], r.value);
      return r.value;
    });
  }

  /** onRequest hook of every OPDS route: sets `req.caller` or answers 401 with a Basic challenge. */
  return async function requireReader(req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const key = (req.params as { key?: string } | undefined)?.key;
    if (key !== undefined) {
      // a valid key always passes (one lookup by its hash); a wrong one counts against the
      // address's budget of bad reader keys, and over it is answered 429
      const v = await byKey(key);
      if ('code' in v && checkFailed(v) && failures.refuseFailed(req, reply, 'reader-key')) return reply;
      // a wrong key is refused without a Basic challenge: a password would not help that URL
      if ('code' in v) return sendFailure(reply, v);
      req.caller = v;
      return;
    }
    await auth.optionalUser(req);
    if (req.caller) return;
    const basic = parseBasic(req.headers.authorization);
    if (basic === null) return challenge(reply, fail('unauthorized', Messages.unauthorized));
    if (basic === 'malformed') return challenge(reply, fail('unauthorized', Messages.invalidCredentials));
    // over the address's password budget: no check at all, not even one taken on trust earlier
    if (failures.refuse(req, reply)) return reply;
    const v = await byBasic(basic.login, basic.password);
    if ('code' in v && checkFailed(v)) failures.failed(req.ip, 'password');
    if ('code' in v)
      return v.code === 'service_unavailable' ? sendFailure(reply, v) : challenge(reply, v.code === 'validation' ? fail('invalid_credentials', Messages.invalidCredentials) : v);
    req.caller = v;
  };
}
