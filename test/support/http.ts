// A small HTTP client for end-to-end tests: JSON or form bodies, bearer or cookie auth; and a
// request with a Host header of the test's choosing.
import { request as httpRequest } from 'node:http';
export interface Res {
  status: number;
  headers: Headers;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  cookies: string[];
  /** the raw body bytes */
  bytes: Buffer;
}

export interface Req {
  body?: unknown;
  form?: Record<string, string>;
  raw?: string;
  contentType?: string;
  token?: string;
  cookie?: string;
  headers?: Record<string, string>;
}

export function client(base: string) {
  return async function call(method: string, path: string, r: Req = {}): Promise<Res> {
    const headers: Record<string, string> = { ...(r.headers ?? {}) };
    let body: string | undefined;
    if (r.form) {
      body = new URLSearchParams(r.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (r.raw !== undefined) {
      body = r.raw;
      headers['content-type'] = r.contentType ?? 'application/json';
    } else if (r.body !== undefined) {
      body = JSON.stringify(r.body);
      headers['content-type'] = 'application/json';
    }
    if (r.token) headers.authorization = `Bearer ${r.token}`;
    if (r.cookie) headers.cookie = r.cookie;
    const res = await fetch(base + path, { method, headers, body });
    const bytes = Buffer.from(await res.arrayBuffer());
    const text = bytes.toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, text, json, cookies: res.headers.getSetCookie(), bytes };
  };
}

/** A request with a Host header of our choosing (fetch will not send one). */
export function withHost(
  url: string,
  method: string,
  path: string,
  host: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<{ status: number; text: string; json: any }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        method,
        path,
        headers: { ...headers, host, ...(data ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(data)) } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let json: any = null;
          try {
            json = JSON.parse(text);
          } catch {}
          resolve({ status: res.statusCode ?? 0, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}
