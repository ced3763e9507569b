// Who is calling: a Bearer header or the `token` cookie, verified with HS256 pinned, then checked
// against the auth view (deleted accounts and revoked sessions are refused; the role is current).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail, Messages, type Identity } from '@bindery/contracts';
import { TokenVerifier } from '@bindery/platform';
import type { AuthView } from '../projections/auth-view';
import { sendFailure } from './reply';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Identity.Caller | null;
  }
}

export function tokenOf(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  if (h) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
    if (m) return m[1]!;
  }
  const c = req.cookies?.token;
  return c ? c : null;
}

export function authenticator(key: Uint8Array, view: AuthView) {
  const tokens = new TokenVerifier(key);
  /** Resolves the caller, or null when no usable token came with the request. */
  const resolve = async (req: FastifyRequest): Promise<Identity.Caller | 'invalid' | null> => {
    const token = tokenOf(req);
    if (!token) return null;
    const claims = await tokens.verify(token);
    if (!claims) return 'invalid';
    const v = await view.check(claims);
    if (!v.ok) return 'invalid';
    return { user_id: claims.user_id, role: v.role, jti: claims.jti, exp: claims.exp };
  };

  const requireUser = async (req: FastifyRequest, reply: FastifyReply) => {
    const c = await resolve(req);
    if (c === null) return sendFailure(reply, fail('unauthorized', Messages.unauthorized));
    if (c === 'invalid') return sendFailure(reply, fail('unauthorized', Messages.invalidToken));
    req.caller = c;
  };

  const requireAdmin = async (req: FastifyRequest, reply: FastifyReply) => {
    await requireUser(req, reply);
    if (reply.sent) return;
    if (req.caller?.role !== 'admin') return sendFailure(reply, fail('admin_required', Messages.adminRequired));
  };

  /** For public routes that behave differently for an authenticated caller (register, logout). */
  const optionalUser = async (req: FastifyRequest) => {
    const c = await resolve(req);
    req.caller = c && c !== 'invalid' ? c : null;
  };

  return { requireUser, requireAdmin, optionalUser };
}

export type Auth = ReturnType<typeof authenticator>;
