// One error mapper for the whole API: failures become `{error: <message>}` with the status
// contracts assigns, or an HTML fragment for browser-fragment (HX-Request) calls where the spec says so
// (a fragment in the request's language; the JSON's `error` always in the interface's words).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { httpStatusOf, type Failure, type Result } from '@bindery/contracts';
import { localizedApiError } from '@bindery/web';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** failures of this route are HTML fragments for HX-Request calls, body errors included */
    fragmentErrors?: boolean;
  }
}

export const isFragment = (req: FastifyRequest): boolean => req.headers['hx-request'] === 'true';

export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function sendFailure(reply: FastifyReply, f: Failure, asFragment = false): FastifyReply {
  const status = httpStatusOf(f.code);
  if (asFragment) {
    // a fragment is shown to a person as is: in the language the request negotiated (the cookie or
    // Accept-Language), the API's own words when that is English or the message is not in the map
    const shown = localizedApiError(reply.request, f.message) ?? f.message;
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(`<div class="alert alert-error" role="alert">${escapeHtml(shown)}</div>`);
  }
  return reply.code(status).send({ error: f.message });
}

export function sendFragment(reply: FastifyReply, status: number, html: string, redirect?: string): FastifyReply {
  if (redirect) reply.header('HX-Redirect', redirect);
  return reply.code(status).type('text/html; charset=utf-8').send(html);
}

/** Sends a successful value as JSON, or the failure through the mapper. */
export function sendResult<T>(reply: FastifyReply, r: Result<T>, status = 200, fragmentErrors = false): FastifyReply {
  if (!r.ok) return sendFailure(reply, r.error, fragmentErrors);
  return reply.code(status).send(r.value);
}
