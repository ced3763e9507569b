import type { FastifyReply } from 'fastify';

export interface CookiePolicy {
  secure: boolean;
}

/** The session cookie: Path=/, HttpOnly, SameSite=Lax, Max-Age = session duration, Secure only when configured. */
export function setSessionCookie(reply: FastifyReply, token: string, maxAge: number, p: CookiePolicy): void {
  reply.setCookie('token', token, { path: '/', httpOnly: true, sameSite: 'lax', maxAge, secure: p.secure });
}

export function clearSessionCookie(reply: FastifyReply, p: CookiePolicy): void {
  reply.setCookie('token', '', { path: '/', httpOnly: true, sameSite: 'lax', maxAge: 0, secure: p.secure });
}
