// The pages read what the API answers, through the gateway's own routes in-process (fastify's
// inject, no socket): access rules, read models, caches and read-your-writes stay in one place, and
// a page shows exactly what `/api/...` would show the same caller. The caller's cookies go along.
// Each call names a route of the contracts' WebRoutes (decision 119): its path parameters, query and
// body are typed by the route's schemas, and so is its answer.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { type AnswerOf, type CallOf, type Method, type OptionalCall, type PathOf, pathOf } from '@bindery/contracts/api/routes';

export interface Answer<T> {
  status: number;
  /** the success answer as the route's schema states it (read it once the status says success) */
  body: T;
  /** a failure's `{error}` message, when the answer is one */
  error: string | undefined;
  /** the answer as sent (a page that renders it may key a cache by it) */
  text?: string;
  /** the answer's entity tag, when the API sent one (a kept answer: the same tag, the same text) */
  etag?: string;
}

/** What a page kept as rendered is keyed by for one answer: its entity tag, else its whole text. */
export const answerKey = (a: Answer<unknown>): string | undefined => a.etag ?? a.text;

type Call<M extends Method> = <P extends PathOf<M>>(path: P, ...o: OptionalCall<M, P> extends true ? [CallOf<M, P>?] : [CallOf<M, P>]) => Promise<Answer<AnswerOf<M, P>>>;

/** The API as the signed-in caller: one function per method, each taking a route's path pattern. */
export interface Api {
  get: Call<'GET'>;
  post: Call<'POST'>;
  put: Call<'PUT'>;
  delete: Call<'DELETE'>;
}

/** The query string of a call: its defined values, in the order given (a list repeats its key). */
function searchOf(q: Record<string, string | string[] | undefined> | undefined): string {
  if (!q) return '';
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) for (const one of v === undefined ? [] : Array.isArray(v) ? v : [v]) s.append(k, one);
  const text = s.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * The last answers with an entity tag, per app, by the caller's credentials and the URL: a GET
 * names the tag it has (If-None-Match) and a 304 reuses the kept text, so an unchanged answer is
 * neither copied out of the API nor decoded again. The API decides for each request, as the caller,
 * whether the answer is still that one; the texts are kept only for the same cookie.
 */
const answers = new WeakMap<FastifyInstance, LRUCache<string, { etag: string; text: string }>>();
const answersOf = (app: FastifyInstance) => {
  let kept = answers.get(app);
  if (!kept) {
    kept = new LRUCache({ maxSize: 16 * 1024 * 1024, sizeCalculation: (a) => a.text.length * 2 + a.etag.length + 200 });
    answers.set(app, kept);
  }
  return kept;
};

export function apiFor(app: FastifyInstance, req: FastifyRequest): Api {
  // the API sees the request as the browser sent it: its cookie, the host it asked for and, behind a
  // trusted proxy, the forwarded address (rate limits, absolute links and origins stay right)
  const base: Record<string, string> = {};
  for (const h of ['cookie', 'host', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']) {
    const v = req.headers[h];
    if (typeof v === 'string') base[h] = v;
  }
  // a write carries the proof a cookie-authenticated write needs: the CSRF token the page sent (the
  // API checks it against the session, as it would the browser's own request)
  const token = req.headers['x-csrf-token'];
  const send = async (method: Method, pattern: string, o: { params?: Record<string, string>; query?: Record<string, string | string[] | undefined>; body?: unknown } = {}) => {
    const url = pathOf(pattern, o.params) + searchOf(o.query);
    // a POST always carries a JSON body (`{}` when the route reads none), as the pages always sent it
    const body = o.body === undefined && method === 'POST' ? {} : o.body;
    const proof = method === 'GET' || typeof token !== 'string' ? base : { ...base, 'x-csrf-token': token };
    const headers: Record<string, string> = body === undefined ? proof : { ...proof, 'content-type': 'application/json' };
    const keyed = method === 'GET' ? `${base.cookie ?? ''}\u0000${base.host ?? ''}\u0000${url}` : null;
    const had = keyed === null ? undefined : answersOf(app).get(keyed);
    const r = await app.inject({
      method,
      url,
      headers: had ? { ...headers, 'if-none-match': had.etag } : headers,
      remoteAddress: req.socket.remoteAddress ?? '127.0.0.1',
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    const same = had !== undefined && r.statusCode === 304;
    const text = same ? had.text : r.body;
    const tag = same ? had.etag : r.headers.etag;
    const etag = typeof tag === 'string' ? tag : undefined;
    if (keyed !== null && !same) {
      if (r.statusCode === 200 && etag !== undefined) answersOf(app).set(keyed, { etag, text });
      else if (had) answersOf(app).delete(keyed);
    }
    // parsed when first read: a page kept as rendered (RenderKept) may need only the text
    let parsed: { value: unknown } | null = null;
    const value = () => {
      if (parsed === null) {
        try {
          parsed = { value: text === '' ? undefined : JSON.parse(text) };
        } catch {
          parsed = { value: undefined };
        }
      }
      return parsed.value;
    };
    return {
      status: same ? 200 : r.statusCode,
      text,
      ...(etag === undefined ? {} : { etag }),
      get body() {
        return value();
      },
      get error() {
        const v = value() as { error?: unknown } | null | undefined;
        return r.statusCode >= 400 && v && typeof v === 'object' && typeof v.error === 'string' ? v.error : undefined;
      },
    };
  };
  // the answer's type is the route's response schema's (WebRoutes); fastify's inject cannot know it
  const as = <M extends Method>(m: M) => ((path: string, o?: Parameters<typeof send>[2]) => send(m, path, o)) as unknown as Call<M>;
  return { get: as('GET'), post: as('POST'), put: as('PUT'), delete: as('DELETE') };
}

/** An answer the page makes itself, without calling the API: a refusal with its message. */
export const refusal = (status: number, error: string): Answer<never> => ({ status, body: { error } as never, error });
/** An answer the page makes itself: a success with its message. */
export const success = (message: string): Answer<{ message: string }> => ({ status: 200, body: { message }, error: undefined });
