// What every page answer carries (a strict CSP, no sniffing, same-origin referrers, no caching of
// a user's page) and the redirect rules: only a path of this site is ever a redirect target.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { h, type VNode } from 'preact';
import { I18nContext, type I18n } from './i18n';
import { i18nFor } from './i18n/request';
import { renderToString } from 'preact-render-to-string';

export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

/**
 * The reader page's policy. foliate-js shows a book's sections in frames from blob: URLs of this
 * origin, which inherit this policy: so the only script that may run is the one this response names
 * by its nonce (the reader's own bundle), never a script of this site by its address (`'self'` would
 * let a chapter load htmx or the reader from /assets and act with the session), nor any inline script,
 * handler or `javascript:` URL. The book's pictures, fonts and style sheets (blob:) and its inline
 * styles are allowed; its forms go nowhere. connect-src blob: lets the reader read a section it
 * sanitizes before showing it (reader/sanitize.ts).
 */
export const readerCsp = (nonce: string): string =>
  `default-src 'self'; script-src 'nonce-${nonce}'; style-src 'self' blob: 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data: blob:; media-src 'self' blob:; frame-src blob:; connect-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'; object-src 'none'`;

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
  const i18n = i18nFor(reply.request);
  return sendRendered(reply.header('Content-Language', i18n.locale), renderHtml(inLanguage(i18n, node), fragment), status, csp);
}

/** A page or fragment in the request's language: its components read it with useI18n(). */
export const inLanguage = (i18n: I18n, node: VNode) => h(I18nContext.Provider, { value: i18n }, node);

/** A page (with its doctype) or a fragment, as HTML text. */
export const renderHtml = <P>(node: VNode<P>, fragment = false): string => (fragment ? renderToString(node) : `<!doctype html>${renderToString(node)}`);

/** HTML already rendered (a cached page), with the page's headers. */
export const sendRendered = (reply: FastifyReply, html: string | Buffer, status = 200, csp = CSP): FastifyReply =>
  securityHeaders(reply, csp).code(status).type('text/html; charset=utf-8').send(html);

export const isHtmx = (req: FastifyRequest): boolean => req.headers['hx-request'] === 'true';

/** Where each web app reads the CSRF token of a request's session (the gateway's authenticator). */
const csrfSources = new WeakMap<FastifyInstance, (req: FastifyRequest) => Promise<string | null>>();
export const useCsrf = (app: FastifyInstance, source: (req: FastifyRequest) => Promise<string | null>) => void csrfSources.set(app, source);
/** The CSRF token of the request's session, or null (no session, or no source: then no write is taken). */
export const csrfOf = (app: FastifyInstance, req: FastifyRequest): Promise<string | null> => csrfSources.get(app)?.(req) ?? Promise.resolve(null);

/**
 * True when a write to a page route comes from one of our pages: it carries its session's CSRF
 * token (`X-CSRF-Token`, which app.js adds to every htmx request). `HX-Request` proves nothing: htmx
 * loaded by another document of this origin sends it too.
 */
export async function fromOurPage(app: FastifyInstance, req: FastifyRequest): Promise<boolean> {
  const want = await csrfOf(app, req);
  const sent = req.headers['x-csrf-token'];
  if (want === null || typeof sent !== 'string' || sent.length !== want.length) return false;
  return timingSafeEqual(Buffer.from(sent), Buffer.from(want));
}

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
