// The API document against the routes themselves: the gateway built in-process (PGlite, the
// in-memory bus), every route it registers collected by fastify's onRoute hook, and each held to
// GET /api/openapi.json: a schema with its answers per status, and an operation in the document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import { asTables, createLogger, Foreground, MemoryBus, migrate, type NoTables, openPGlite, type Database } from '@bindery/platform';
import { buildApp } from '../src/app';
import { migrations, SCHEMA } from '../src/read-model/migrations';
import { AuthView } from '../src/read-model/auth-view';
import { ReadModels } from '../src/read-model/read-model';
import { Reads } from '../src/read-model/reads';
import type { GatewayDb } from '../src/read-model/database';
import { openApi } from '../src/openapi';
import { MessageBody, params } from '../src/http/schemas';
import { type RouteSpec, WebRoutes } from '@bindery/contracts/api/routes';

let database: Database;
let bus: MemoryBus;
let app: FastifyInstance;
const routes: RouteOptions[] = [];

/** the process's count of requests being answered, and how many began */
class CountedForeground extends Foreground {
  begun = 0;
  override begin(): () => void {
    this.begun++;
    return super.begin();
  }
}
const foreground = new CountedForeground();

beforeAll(async () => {
  database = await openPGlite('memory://');
  await migrate(database.db, SCHEMA, migrations);
  bus = new MemoryBus();
  const log = createLogger('test', 'silent');
  app = await buildApp({
    bus,
    log,
    view: new AuthView(asTables<GatewayDb, NoTables>(database.db)),
    reads: new Reads(asTables<GatewayDb, NoTables>(database.db), new ReadModels(asTables<GatewayDb, NoTables>(database.db), bus, log, true, [])),
    tokenKey: new Uint8Array(32),
    cookieSecure: false,
    rpcTimeoutMs: 1000,
    bodyLimit: 1024 * 1024,
    trustProxy: false,
    authRateLimit: null,
    ready: async () => true,
    onRoute: (r) => routes.push(r),
    foreground,
  });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await bus?.close();
  await database?.close();
});

/** fastify's `/a/:id/*` as OpenAPI's `/a/{id}/{*}` (what @fastify/swagger writes) */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{*}');
const methodsOf = (r: RouteOptions) => (Array.isArray(r.method) ? r.method : [r.method]).filter((m) => m !== 'HEAD');

type Doc = { openapi: string; paths: Record<string, Record<string, { responses?: Record<string, unknown> }>> };

/** What keeps routes from being documented: no response schema, no params schema, no operation. */
function problemsOf(registered: RouteOptions[], doc: Doc): string[] {
  const problems: string[] = [];
  for (const r of registered) {
    for (const m of methodsOf(r)) {
      const name = `${m} ${r.url}`;
      if (!r.schema?.response) {
        problems.push(`${name}: no response schema`);
        continue;
      }
      if (/:[A-Za-z]|\*/.test(r.url) && !r.schema.params) problems.push(`${name}: no params schema`);
      const op = doc.paths[openApiPath(r.url)]?.[m.toLowerCase()];
      if (!op) problems.push(`${name}: not in the document`);
      else if (Object.keys(op.responses ?? {}).length === 0) problems.push(`${name}: no answers in the document`);
    }
  }
  return problems;
}

describe('requests in the foreground', () => {
  it('counts each request while it is answered, and not a WebSocket upgrade', async () => {
    const before = foreground.begun;
    expect((await app.inject({ method: 'GET', url: '/api/openapi.json' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/api/nothing-here' })).statusCode).toBe(404);
    expect(foreground.begun - before).toBe(2);
    await app.inject({ method: 'GET', url: '/api/openapi.json', headers: { upgrade: 'websocket', connection: 'upgrade' } });
    expect(foreground.begun - before).toBe(2);
    expect(foreground.active).toBe(0);
  });
});

describe('the API document', () => {
  it('has every registered route, each with a schema that declares its answers', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as Doc;
    expect(doc.openapi).toBe('3.1.0');
    expect(routes.length).toBeGreaterThan(150);
    expect(problemsOf(routes, doc)).toEqual([]);
  });

  it('finds a route without a schema, one without its params, and one kept out of the document', async () => {
    const seen: RouteOptions[] = [];
    const small = Fastify();
    await openApi(small, { onRoute: (r) => seen.push(r) });
    const ok = { response: { 200: MessageBody } };
    small.get('/fine/:id', { schema: { ...ok, params: params({ id: 'an id' }) } }, async () => ({ message: 'x' }));
    small.get('/bare', async () => ({ message: 'x' }));
    small.get('/no-params/:id', { schema: ok }, async () => ({ message: 'x' }));
    small.get('/hidden', { schema: { ...ok, hide: true } }, async () => ({ message: 'x' }));
    await small.ready();
    const doc = (await small.inject({ method: 'GET', url: '/api/openapi.json' })).json() as Doc;
    expect(problemsOf(seen, doc)).toEqual(['GET /bare: no response schema', 'GET /no-params/:id: no params schema', 'GET /hidden: not in the document']);
    await small.close();
  });
});

describe("the web's route map (decision 119)", () => {
  /** the registered route's success answer: its lowest 2xx */
  const successOf = (r: RouteOptions) => {
    const codes = Object.keys((r.schema?.response ?? {}) as Record<string, unknown>).filter((c) => /^2\d\d$/.test(c));
    const answer = (r.schema!.response as Record<string, { content?: Record<string, { schema: unknown }> }>)[codes.sort()[0]!];
    // JSON, or an HTML fragment for an HX-Request call (jsonOrHtml): the JSON form's schema
    return answer?.content?.['application/json']?.schema ?? answer;
  };
  /** routes whose body is not only JSON (the map types the JSON form; the route declares no body schema) */
  const notOnlyJson = ['PUT /api/media-items/:id/cover'];
  /** routes whose body is optional and the pages send none (`{}`) */
  const bodyOptional = ['POST /api/devices/:id/approve'];
  const bodyOf = (r: RouteOptions) => r.schema?.body as { anyOf?: unknown[] } | undefined;

  it('holds every entry to the registered route: its answer, body and query are the route’s own schemas', () => {
    const problems: string[] = [];
    for (const [key, spec] of Object.entries(WebRoutes) as [string, RouteSpec][]) {
      const [method, url] = key.split(' ') as [string, string];
      const r = routes.find((x) => x.url === url && methodsOf(x).includes(method));
      if (!r) {
        problems.push(`${key}: no such route`);
        continue;
      }
      if (successOf(r) !== spec.response) problems.push(`${key}: another answer schema`);
      const body = bodyOf(r);
      // a body the route reads after its own checks (routeBody) is typed by the object it documents
      const sameBody =
        spec.body === undefined
          ? body === undefined || bodyOptional.includes(key)
          : body === spec.body || body?.anyOf?.[0] === spec.body || (body === undefined && notOnlyJson.includes(key));
      if (!sameBody) problems.push(`${key}: another body`);
      if (JSON.stringify(r.schema?.querystring) !== JSON.stringify(spec.query)) problems.push(`${key}: another query`);
    }
    expect(problems).toEqual([]);
  });
});
