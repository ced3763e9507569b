// The pages read what the API answers, through the gateway's own routes in-process (fastify's
// inject, no socket): access rules, read models, caches and read-your-writes stay in one place, and
// a page shows exactly what `/api/...` would show the same caller. The caller's cookies go along.
import type { FastifyInstance, FastifyRequest } from 'fastify';

export interface Answer<T> {
  status: number;
  body: T;
  /** the answer as sent (a page that renders it may key a cache by it) */
  text?: string;
}

export type Api = <T = unknown>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) => Promise<Answer<T>>;

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
  return async <T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) => {
    const proof = method === 'GET' || typeof token !== 'string' ? base : { ...base, 'x-csrf-token': token };
    const headers = body === undefined ? proof : { ...proof, 'content-type': 'application/json' };
    const r = await app.inject({ method, url, headers, remoteAddress: req.socket.remoteAddress ?? '127.0.0.1', ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
    const text = r.body;
    // parsed when first read: a page kept as rendered (RenderKept) may need only the text
    let parsed: { value: unknown } | null = null;
    return {
      status: r.statusCode,
      text,
      get body(): T {
        if (parsed === null) {
          try {
            parsed = { value: text === '' ? undefined : JSON.parse(text) };
          } catch {
            parsed = { value: undefined };
          }
        }
        return parsed.value as T;
      },
    };
  };
}
