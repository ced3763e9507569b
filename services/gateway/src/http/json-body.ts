// The JSON body parser: an empty body counts as `{}`; malformed JSON, prototype poisoning and
// nesting deeper than any Bindery body needs are refused before parsing, so a 5,000-deep array
// never reaches `JSON.stringify` on the bus.
import type { FastifyInstance } from 'fastify';
import { HttpFailure } from './failure';
import { fail, Messages } from '@bindery/contracts';

export const MAX_JSON_DEPTH = 64;

/** True when brackets outside strings nest deeper than `max`; linear, no parse. */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

export function jsonBodyParser(app: FastifyInstance, bodyLimit: number): void {
  const strict = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, {});
    if (nestedDeeperThan(text, MAX_JSON_DEPTH)) return done(new HttpFailure(fail('validation', Messages.bodyTooDeep)), undefined);
    strict(req, text, done);
  });
}
