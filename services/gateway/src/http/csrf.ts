// The proof a cookie-authenticated write needs: a token bound to the session (an HMAC of the
// session's id under a key derived from the token key), which the pages carry in a <meta> and send
// as `X-CSRF-Token`. A header alone proves nothing: htmx (or any markup) in another document of
// this origin, a book's chapter in the reader's frame say, can send `HX-Request` or a JSON content
// type, but it cannot know a secret of the session.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

export const CSRF_HEADER = 'x-csrf-token';

export class CsrfTokens {
  private readonly key: Buffer;

  constructor(tokenKey: Uint8Array) {
    // a key of its own: a CSRF token never doubles as anything signed with the session key
    this.key = createHmac('sha256', tokenKey).update('bindery csrf token v1').digest();
  }

  /** The token of the session `jti`. */
  of(jti: string): string {
    return createHmac('sha256', this.key).update(jti).digest('base64url');
  }

  /** True when the request carries the token of session `jti`. */
  matches(req: FastifyRequest, jti: string): boolean {
    const sent = req.headers[CSRF_HEADER];
    if (typeof sent !== 'string' || sent.length > 100) return false;
    const want = Buffer.from(this.of(jti));
    const got = Buffer.from(sent);
    return got.length === want.length && timingSafeEqual(got, want);
  }
}
