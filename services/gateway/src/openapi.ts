// The API document: every route's TypeBox schemas, gathered by @fastify/swagger into OpenAPI 3.1 at
// GET /api/openapi.json. Response schemas document answers and never shape them: fastify would
// otherwise serialize through them (fast-json-stringify drops unlisted fields and coerces types), so
// every JSON answer is `JSON.stringify` of what the route sent, as before routes had schemas.
import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import Type from 'typebox';
import { content, Empty } from './http/schemas';

export const OPENAPI_PATH = '/api/openapi.json';

export interface OpenApiOptions {
  /** every route as it is registered (a test holds the document to them) */
  onRoute?: (route: RouteOptions) => void;
}

/** A route's path parameters, as text (`:name` and a trailing `*`). */
export function paramsOf(url: string) {
  const names = [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
  if (url.endsWith('*')) names.push('*');
  return Type.Object(Object.fromEntries(names.map((n) => [n, Type.String()])));
}

/** The routes of the web app (web/), which declares none itself: pages and form actions answer HTML. */
export function webSchema(r: RouteOptions): FastifySchema {
  const html = content('text/html', 'a page or an HTML fragment');
  const redirect = Empty('to sign-in, or where the page or action leads');
  const params = paramsOf(r.url);
  if (r.url.startsWith('/assets/'))
    return { tags: ['web'], summary: 'a static asset of the web app', params, response: { 200: content('*/*', 'the asset'), 404: content('text/plain', 'no such asset') } };
  const method = Array.isArray(r.method) ? r.method[0] : r.method;
  return {
    tags: ['web'],
    summary: method === 'GET' ? 'a page of the web app' : 'a form action of the web app',
    params,
    response: { 200: html, 302: redirect, 303: redirect, 400: html, 403: html, 404: html, 409: html },
  };
}

export interface ApiDocument {
  /** runs a registration whose routes declare no schema, giving each `describe(route)` */
  describing(describe: (r: RouteOptions) => FastifySchema, register: () => void): void;
}

/** Registers the document (before any route, so each is seen). */
export async function openApi(app: FastifyInstance, o: OpenApiOptions): Promise<ApiDocument> {
  let describe: ((r: RouteOptions) => FastifySchema) | null = null;
  app.addHook('onRoute', (r) => {
    if (describe && r.schema === undefined) r.schema = describe(r);
    o.onRoute?.(r);
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Bindery',
        // the interface carries no version (its paths have no version segment)
        version: '1',
        description:
          'A self-hosted library server. Errors are `{error: <message>}`; a body that cannot be bound is 400 `invalid request`, one over the size limit 413, a server fault 500.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'a session token (or, where a route says so, a device token)' },
          cookie: { type: 'apiKey', in: 'cookie', name: 'token', description: 'the session cookie set at sign-in' },
        },
      },
    },
  });
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.get(
    OPENAPI_PATH,
    {
      schema: {
        tags: ['system'],
        summary: 'this document',
        response: { 200: Type.Object({ openapi: Type.String(), info: Type.Object({}), paths: Type.Record(Type.String(), Type.Object({})) }, { description: 'OpenAPI 3.1' }) },
      },
    },
    async (_req, reply) => reply.header('Cache-Control', 'no-cache').send(app.swagger()),
  );
  return {
    describing(d, register) {
      describe = d;
      try {
        register();
      } finally {
        describe = null;
      }
    },
  };
}
