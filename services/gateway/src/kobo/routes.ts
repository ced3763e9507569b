// Native Kobo sync: the Kobo store's API under `/kobo/<token>` (the address written in the device's
// configuration), and the reading-services host the device calls at this server's root. Books,
// covers and tags come from the gateway's read models; reading states and tag changes go to the
// reading service, removals to device-sync, KEPUBs from the catalog. docs/decisions.md, "Native Kobo
// sync", has the shapes and the choices.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import Type from 'typebox';
import { Binary, content, Empty, errors } from '../http/schemas';
import { paramsOf } from '../openapi';
import { koboAnnotationRoutes } from './annotations';
import { koboBookRoutes } from './books';
import { koboContext, type KoboDeps } from './context';
import { koboDownloadRoutes } from './downloads';
import { koboSyncRoutes } from './library-sync';
import { koboStartUpRoutes } from './start-up';
import { koboStoreProxy } from './store-proxy';
import { koboTagRoutes } from './tags';

/**
 * The schema of each Kobo route (given by app.ts as they are registered): the store protocol is
 * the device's, under active development, and its shapes are not part of the interface, so answers
 * are any JSON, a KEPUB or a cover; the device's bodies reach the routes as sent.
 */
export function koboSchema(r: RouteOptions): FastifySchema {
  const methods = Array.isArray(r.method) ? r.method : [r.method];
  const response = r.url.endsWith('/file/kepub')
    ? { 200: content('application/kepub+zip', 'the book as a KEPUB', Binary) }
    : r.url.endsWith('/image.jpg')
      ? { 200: content('image/jpeg', 'a cover, scaled', Binary) }
      : { 200: Type.Unknown({ description: 'the Kobo store protocol’s answer (JSON)' }), 201: Type.Unknown({ description: 'created' }), 204: Empty('done') };
  return {
    tags: ['kobo'],
    summary: `Kobo store protocol (coming soon; may change): ${r.url.replace(/^.*\/:token/, '')}`,
    params: paramsOf(r.url),
    ...(methods.some((m) => m === 'GET' || m === 'HEAD') ? {} : { body: Type.Unknown({ description: 'as the device sends it' }) }),
    response: { ...response, ...errors(400, 401, 404, 429, 502) },
  };
}

/** Every Kobo route, in the order they are registered: the store's under `/kobo/:token`, then the reading services'. */
export function koboRoutes(app: FastifyInstance, deps: KoboDeps): void {
  const k = koboContext(deps);
  koboStartUpRoutes(app, k);
  koboSyncRoutes(app, k);
  koboBookRoutes(app, k);
  koboDownloadRoutes(app, k);
  koboTagRoutes(app, k.P, k.hook, deps);

  // any other store call: an empty answer, never an error the device would show — or, when an admin
  // turned on `kobo_store_proxy`, the real store's answer
  const store = koboStoreProxy(deps.reads.db, deps.storeUrl ?? 'https://storeapi.kobo.com');
  const other = async (req: FastifyRequest, reply: FastifyReply) => ((await store.on()) ? store.passOn(req, reply) : {});
  app.all(`${k.P}/*`, k.hook, other);
  app.all(`${k.P}`, k.hook, other);

  koboAnnotationRoutes(app, deps);
  app.all('/api/UserStorage/*', async () => ({}));
}
