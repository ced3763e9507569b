// Who is calling: a Bearer header or the `token` cookie, verified with HS256 pinned, then checked
// against the auth view (deleted accounts and revoked sessions are refused; the role is current).
// A cookie rides along on any request the browser makes, a cross-site form's too: an unsafe method
// authenticated by the cookie alone must also show it came from a page of ours (see sameSiteProof).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail, Messages, type Identity } from '@bindery/contracts';
import { TokenVerifier, type AccessClaims } from '@bindery/platform';
import type { AuthView, Verdict } from '../projections/auth-view';
import { isFragment, sendFailure } from './reply';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Identity.Caller | null;
  }
}

export function tokenOf(req: FastifyRequest): string | null {
  return credentialOf(req)?.token ?? null;
}

function credentialOf(req: FastifyRequest): { token: string; fromCookie: boolean } | null {
  const h = req.headers.authorization;
  if (h) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
    if (m) return { token: m[1]!, fromCookie: false };
  }
  const c = req.cookies?.token;
  return c ? { token: c, fromCookie: true } : null;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * What a cross-site form or a no-cors fetch cannot send: a JSON content type or a custom header
 * (`X-Requested-With`, htmx's `HX-Request`). Each forces a CORS preflight, which Bindery never grants.
 */
export function sameSiteProof(req: FastifyRequest): boolean {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') return true;
  const xrw = req.headers['x-requested-with'];
  return (typeof xrw === 'string' && xrw.trim() !== '') || req.headers['hx-request'] === 'true';
}

type Resolved = Identity.Caller | 'invalid' | 'cross-site' | null;

const unprovenCookie = (req: FastifyRequest, fromCookie: boolean) => fromCookie && !SAFE_METHODS.has(req.method) && !sameSiteProof(req);

export function authenticator(key: Uint8Array, view: AuthView) {
  const tokens = new TokenVerifier(key);
  /**
   * Resolves the caller, or null when no usable token came with the request: at once (no promise)
   * for a token seen before of a user whose facts are cached, else after looking them up.
   */
  const resolve = (req: FastifyRequest): Resolved | Promise<Resolved> => {
    const cred = credentialOf(req);
    if (!cred) return null;
    const claims = tokens.known(cred.token);
    const v = claims && view.checkCached(claims);
    return claims && v ? outcome(req, cred, claims, v) : lookUp(req, cred);
  };
  const lookUp = async (req: FastifyRequest, cred: { token: string; fromCookie: boolean }): Promise<Resolved> => {
    const claims = await tokens.verify(cred.token);
    if (!claims) return 'invalid';
    return outcome(req, cred, claims, await view.check(claims));
  };
  const outcome = (req: FastifyRequest, cred: { fromCookie: boolean }, claims: AccessClaims, v: Verdict): Identity.Caller | 'invalid' | 'cross-site' => {
    if (!v.ok) return 'invalid';
    if (unprovenCookie(req, cred.fromCookie)) return 'cross-site';
    return { user_id: claims.user_id, role: v.role, jti: claims.jti, exp: claims.exp };
  };

  const requireUser = async (req: FastifyRequest, reply: FastifyReply) => {
    // a token seen before, of a user whose facts are cached: no promise beyond this function's own
    const r = resolve(req);
    const c = r instanceof Promise ? await r : r;
    if (c === null) return sendFailure(reply, fail('unauthorized', Messages.unauthorized));
    if (c === 'invalid') return sendFailure(reply, fail('unauthorized', Messages.invalidToken));
    if (c === 'cross-site') return sendFailure(reply, fail('forbidden', Messages.crossSiteRefused), isFragment(req) && req.routeOptions.config?.fragmentErrors === true);
    req.caller = c;
  };

  const requireAdmin = async (req: FastifyRequest, reply: FastifyReply) => {
    await requireUser(req, reply);
    if (reply.sent) return;
    if (req.caller?.role !== 'admin') return sendFailure(reply, fail('admin_required', Messages.adminRequired));
  };

  /**
   * For public routes that behave differently for an authenticated caller (register, logout). An
   * unproven cookie is not refused here, only not believed: the request counts as anonymous, so a
   * cross-site form can neither create an admin through an admin's cookie nor end their session.
   */
  const optionalUser = async (req: FastifyRequest) => {
    const c = await resolve(req);
    req.caller = c && c !== 'invalid' && c !== 'cross-site' ? c : null;
  };

  return { requireUser, requireAdmin, optionalUser };
}

export type Auth = ReturnType<typeof authenticator>;
