// What every page answer carries (a strict CSP, no sniffing, same-origin referrers, no caching of
// a user's page) and the redirect rules: only a path of this site is ever a redirect target.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

/**
 * The reader page's policy: scripts still only from this site (a book's own scripts never run);
 * foliate-js shows a book's sections in frames from blob: URLs, which inherit this policy, so those
 * frames, the book's pictures, fonts and style sheets (blob:) and its own inline styles are allowed.
 */
export const READER_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' blob: 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data: blob:; media-src 'self' blob:; frame-src blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

export function securityHeaders(reply: FastifyReply, csp = CSP): FastifyReply {
  return reply
    .header('Content-Security-Policy', csp)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'same-origin')
    .header('X-Frame-Options', 'DENY')
    .header('Cache-Control', 'no-store');
}

/** A whole page (doctype included) or an htmx fragment, rendered by preact (which escapes text and attributes). */
export function sendHtml(reply: FastifyReply, node: VNode, status = 200, fragment = false, csp = CSP): FastifyReply {
  return sendRendered(reply, renderHtml(node, fragment), status, csp);
}

/** A page (with its doctype) or a fragment, as HTML text. */
export const renderHtml = (node: VNode, fragment = false): string => (fragment ? renderToString(node) : `<!doctype html>${renderToString(node)}`);

/** HTML already rendered (a cached page), with the page's headers. */
export const sendRendered = (reply: FastifyReply, html: string, status = 200, csp = CSP): FastifyReply =>
  securityHeaders(reply, csp).code(status).type('text/html; charset=utf-8').send(html);

export const isHtmx = (req: FastifyRequest): boolean => req.headers['hx-request'] === 'true';

/**
 * A redirect target from a form or query value: a path of this site only. Refused: other origins
 * (`https://…`, `//host`), backslashes (`/\host` is `//host` to browsers), control characters and
 * spaces, anything over 2048 characters.
 */
export function localTarget(v: unknown, fallback = '/dashboard'): string {
  return typeof v === 'string' && v.length <= 2048 && /^\/(?![/\\])[\x21-\x7e]*$/.test(v) && !v.includes('\\') ? v : fallback;
}

/** The path and query the browser asked for (for an htmx request: the page it is on). */
export function askedFor(req: FastifyRequest): string {
  const current = req.headers['hx-current-url'];
  if (isHtmx(req) && typeof current === 'string') {
    try {
      const u = new URL(current);
      return localTarget(u.pathname + u.search, '/dashboard');
    } catch {
      return '/dashboard';
    }
  }
  return localTarget(req.url, '/dashboard');
}

/** To a page of ours: a 303 for a page load, an `HX-Redirect` (full load) for an htmx request. */
export function redirectTo(req: FastifyRequest, reply: FastifyReply, to: string): FastifyReply {
  securityHeaders(reply);
  if (isHtmx(req)) return reply.code(200).header('HX-Redirect', to).send('');
  return reply.redirect(to, 303);
}

/** The sign-in page, coming back to the page asked for afterwards. */
export const loginFor = (req: FastifyRequest) => `/login?redirect=${encodeURIComponent(askedFor(req))}`;
