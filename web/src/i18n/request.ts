// The language of a request's pages and fragments: worked out once per request (the person's
// profile when the page knows the viewer, else the sign-in picker's cookie, else Accept-Language)
// and kept with the request, so every fragment of the same request speaks the same language.
import type { FastifyRequest } from 'fastify';
import { errorKeyOf } from './api-errors';
import { type I18n, i18nOf, LANGUAGE_COOKIE, negotiate } from './index';

const chosen = new WeakMap<FastifyRequest, I18n>();

/** The request's translator; with `viewer` (a signed-in page), their profile's language wins. */
export function i18nFor(req: FastifyRequest, viewer?: { language?: string; timezone?: string } | null): I18n {
  const have = chosen.get(req);
  if (have && !viewer) return have;
  const accept = req.headers['accept-language'];
  const locale = negotiate(viewer?.language, cookieOf(req, LANGUAGE_COOKIE), typeof accept === 'string' ? accept : null);
  const one = i18nOf(locale, viewer?.timezone ?? have?.timeZone);
  chosen.set(req, one);
  return one;
}

/** One cookie's value from the request's Cookie header (null when absent). */
function cookieOf(req: FastifyRequest, name: string): string | null {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return null;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return null;
}

/**
 * The API's error message in the language a request negotiated (the profile's language when given,
 * else the cookie, else Accept-Language), for the gateway's `message_localized`: null when that
 * language is English or the message is not one the map knows (the API's `error` says it all).
 */
export function localizedApiError(req: FastifyRequest, message: string, profileLanguage?: string | null): string | null {
  const accept = req.headers['accept-language'];
  const locale = negotiate(profileLanguage, cookieOf(req, LANGUAGE_COOKIE), typeof accept === 'string' ? accept : null);
  if (locale === 'en') return null;
  const hit = errorKeyOf(message);
  return hit ? i18nOf(locale).t(hit.key, hit.values) : null;
}
