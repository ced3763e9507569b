// Who is calling: a Bearer header or the `token` cookie, verified with HS256 pinned, then checked
// against the auth view (deleted accounts and revoked sessions are refused; the role is current).
// A cookie rides along on any request the browser makes, a cross-site form's and a book chapter's
// in the reader's frame too: an unsafe method authenticated by the cookie must also carry the
// session's CSRF token (csrf.ts), which only our own pages know.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail, Identity, Messages } from '@bindery/contracts';
import { TokenVerifier, type AccessClaims } from '@bindery/platform';
import type { AuthView, Verdict } from '../read-model/auth-view';
import { isFragment, sendFailure } from './reply';
import { CsrfTokens } from './csrf';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Identity.Caller | null;
    /** set by optionalUser: a session cookie came with an unsafe request without its CSRF token */
    unprovenCookie?: boolean;
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

type Resolved = Identity.Caller | 'invalid' | 'cross-site' | null;

export function authenticator(key: Uint8Array, view: AuthView) {
  const tokens = new TokenVerifier(key);
  const csrf = new CsrfTokens(key);
  const unprovenCookie = (req: FastifyRequest, fromCookie: boolean, jti: string) => fromCookie && !SAFE_METHODS.has(req.method) && !csrf.matches(req, jti);
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
    if (unprovenCookie(req, cred.fromCookie, claims.jti)) return 'cross-site';
    return { user_id: claims.user_id, role: v.role, jti: claims.jti, exp: claims.exp, ...(v.can_edit_metadata ? { can_edit_metadata: true } : {}) };
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

  /** Metadata and cover edits (issue 43): an admin, or a user identity says the admin allowed (`can_edit_metadata`). */
  const requireEditor = async (req: FastifyRequest, reply: FastifyReply) => {
    await requireUser(req, reply);
    if (reply.sent) return;
    if (!req.caller || !Identity.mayEditMetadata(req.caller)) return sendFailure(reply, fail('forbidden', Messages.editorRequired));
  };

  /**
   * For public routes that behave differently for an authenticated caller (register, logout). An
   * unproven cookie is not refused here, only not believed: the request counts as anonymous, so a
   * cross-site form can neither create an admin through an admin's cookie nor end their session.
   */
  const optionalUser = async (req: FastifyRequest) => {
    const c = await resolve(req);
    req.caller = c && c !== 'invalid' && c !== 'cross-site' ? c : null;
    req.unprovenCookie = c === 'cross-site';
  };

  /** The CSRF token of the session the request's cookie holds (for the pages to carry), or null without a valid one. */
  const csrfOf = async (req: FastifyRequest): Promise<string | null> => {
    const c = req.cookies?.token;
    if (!c) return null;
    const claims = tokens.known(c) ?? (await tokens.verify(c));
    return claims ? csrf.of(claims.jti) : null;
  };

  return { requireUser, requireAdmin, requireEditor, optionalUser, csrfOf };
}

export type Auth = ReturnType<typeof authenticator>;
