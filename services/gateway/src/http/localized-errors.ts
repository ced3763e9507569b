// `message_localized` (issue 48): an /api answer's error in the language the request negotiated, as
// an extra field beside `error`, which never changes (clients match on the interface's exact
// words). Added only when that language is not English and the web's map of the API's messages
// (web/src/i18n/api-errors.ts) knows the message; the language is the caller's profile's when the
// projection has it at hand, else the sign-in picker's cookie, else Accept-Language.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Identity } from '@bindery/contracts';
import { localizedApiError } from '@bindery/web';
import type { Reads } from '../read-model/reads';

/** error bodies are small: anything larger is passed over untouched */
const MOST = 16 * 1024;

/** The language the caller chose in their profile, when the projection holds it without a read. */
function profileLanguage(req: FastifyRequest, reads: Reads): string | null {
  const user = req.caller?.user_id;
  if (!user) return null;
  const profile = reads.identity.profileCached(user, reads.models.position('identity'));
  return typeof profile === 'string' ? Identity.profileLanguage(profile) : null;
}

/** The body with `message_localized` added, or the payload as it was. */
export function withLocalizedMessage(req: FastifyRequest, reply: FastifyReply, payload: unknown, reads: Reads): unknown {
  if (reply.statusCode < 400 || typeof payload !== 'string' || payload.length > MOST) return payload;
  if (!req.url.startsWith('/api/') || !String(reply.getHeader('content-type') ?? '').includes('application/json')) return payload;
  // nothing to do for a request that negotiates English (no Accept-Language, no cookie, no profile language)
  if (!req.headers['accept-language'] && !req.headers.cookie && !req.caller) return payload;
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    return payload;
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return payload;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== 'string' || 'message_localized' in body) return payload;
  const localized = localizedApiError(req, error, profileLanguage(req, reads));
  return localized === null ? payload : JSON.stringify({ ...body, message_localized: localized });
}

export function localizedErrors(app: FastifyInstance, reads: Reads): void {
  app.addHook('onSend', async (req, reply, payload) => withLocalizedMessage(req, reply, payload, reads));
}
