// The address a Kobo is configured with: `<public base>/kobo/<token>`. The base follows the rule of
// every other absolute link the gateway writes (Origins.publicBase: a believable Host or PUBLIC_URL);
// without one the answer carries the path alone and the page tells the user to put the server in front.
import type { FastifyRequest } from 'fastify';
import type { Origins } from '../http/origin';

export const KOBO_PREFIX = '/kobo';

export const koboPath = (token: string) => `${KOBO_PREFIX}/${token}`;

/** The origin absolute Kobo links start with, or '' when the request's Host is not to be believed. */
export function publicBase(req: FastifyRequest, origins: Origins): string {
  return origins.publicBase(req) ?? '';
}

export const koboUrl = (req: FastifyRequest, token: string, origins: Origins) => `${publicBase(req, origins)}${koboPath(token)}`;

/** The line to write under `[OneStoreServices]` in `.kobo/Kobo/Kobo eReader.conf`. */
export const koboConfLine = (url: string) => `api_endpoint=${url}`;

/** What to do with the address, for the approval answer and page. */
export const koboSetup = (url: string) => ({
  kobo_url: url,
  kobo_config: {
    file: '.kobo/Kobo/Kobo eReader.conf',
    section: '[OneStoreServices]',
    line: koboConfLine(url),
  },
});
