// Shared pieces of the account end-to-end tests: a checked client over the harness's, unique
// account names, JWT decoding, cookie parsing and polling for eventually-consistent effects.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';
import { startBindery, type Bindery, type Mode } from '../support/bindery';
import { client, type Req, type Res } from '../support/http';

/**
 * One instance per mode for a test file, all started together on first use (startup is the slow
 * part, and the modes' processes start in parallel), all stopped when the file ends.
 * Call at the top level of the file; `get(mode)` belongs in that mode's beforeAll.
 */
export function instances(modes: Mode[]): (mode: Mode) => Promise<Bindery> {
  let started: Map<Mode, Promise<Bindery>> | null = null;
  // a failed test shows what the processes logged (warnings and errors): the place to start looking
  afterEach(async ({ task }) => {
    if (task.result?.state !== 'fail' || !started) return;
    for (const [mode, p] of started) {
      const b = await p.catch(() => null);
      for (const proc of b?.procs ?? []) {
        const out = proc.output().trim();
        if (out) console.log(`--- ${mode} ${proc.name} (pid ${proc.child.pid}), its last output:\n${out.slice(-3_000)}`);
      }
    }
  });
  afterAll(async () => {
    if (!started) return;
    await Promise.all(
      [...started.values()].map((p) =>
        p.then(
          (b) => b.stop(),
          () => undefined,
        ),
      ),
    );
  });
  return (mode) => {
    started ??= new Map(modes.map((m) => [m, startBindery(m)]));
    for (const p of started.values()) p.catch(() => undefined); // a failed start is reported by its own mode
    return started.get(mode)!;
  };
}

export type Call = (method: string, path: string, r?: Req) => Promise<Res>;

/**
 * A client that follows the instance across restarts and checks what no response may ever carry:
 * a password hash.
 */
export function api(b: Bindery): Call {
  return async (method, path, r) => {
    const res = await client(b.url)(method, path, r);
    expect(res.text.toLowerCase(), `${method} ${path} leaked a password hash`).not.toContain('argon2');
    return res;
  };
}

let seq = 0;
/** A name no other test of this run uses (lower-case letters and digits, 3..50 characters). */
export function uniq(prefix = 'u'): string {
  seq += 1;
  return `${prefix}${seq}x${Math.random().toString(36).slice(2, 8)}`;
}

export const PASSWORD = 'passw0rd-123';

export interface Account {
  id: string;
  email: string;
  username: string;
  password: string;
  token: string;
  refresh: string;
  role: string;
}

/**
 * The CSRF token of a session, as our pages carry it (`<meta name="csrf-token">`): the header a
 * write signed in by the cookie must send (`X-CSRF-Token`).
 */
export async function csrfOf(call: Call, token: string): Promise<{ 'X-CSRF-Token': string }> {
  const page = await call('GET', '/profile', { cookie: `token=${token}` });
  const value = /<meta name="csrf-token" content="([\w-]+)"/.exec(page.text)?.[1];
  expect(value, `no CSRF token on the profile page (${page.status})`).toBeDefined();
  return { 'X-CSRF-Token': value! };
}

/** Registers an account (as `caller` when given) and checks it was created. */
export async function register(call: Call, opts: { role?: string; caller?: string; password?: string; name?: string } = {}): Promise<Account> {
  const username = opts.name ?? uniq();
  const email = `${username}@example.com`;
  const password = opts.password ?? PASSWORD;
  const body: Record<string, string> = { email, username, password };
  if (opts.role) body.role = opts.role;
  const r = await call('POST', '/api/auth/register', { body, ...(opts.caller ? { token: opts.caller } : {}) });
  expect(r.status, r.text).toBe(201);
  return { id: r.json.user.id, email, username, password, token: r.json.access_token, refresh: r.json.refresh_token, role: r.json.user.role };
}

export async function login(call: Call, loginName: string, password: string): Promise<Res> {
  return call('POST', '/api/auth/login', { body: { login: loginName, password } });
}

/** PUT /api/system/settings as an admin, expecting success. */
export async function putSettings(call: Call, adminToken: string, body: Record<string, unknown>): Promise<Res> {
  const r = await call('PUT', '/api/system/settings', { token: adminToken, body });
  expect(r.status, r.text).toBe(200);
  return r;
}

const b64url = (s: string) => Buffer.from(s, 'base64url').toString('utf8');

export function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [h, p] = token.split('.');
  return { header: JSON.parse(b64url(h!)), payload: JSON.parse(b64url(p!)) };
}

/** The secret this instance signs with (distributed: from the environment; embedded: from DATA_DIR). */
export function jwtSecret(b: Bindery): string {
  return b.env.JWT_SECRET ?? readFileSync(join(b.env.DATA_DIR!, 'jwt-secret'), 'utf8').trim();
}

/** The `token` Set-Cookie header of a response, or undefined. */
export function tokenCookie(r: Res): string | undefined {
  return r.cookies.find((c) => c.startsWith('token='));
}

/** Retries an assertion until it passes or the time is up (for effects that go through events). */
export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 3000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A well-formed id that no account has. */
export const NO_SUCH_ID = '00000000-0000-4000-8000-000000000000';

/** An HTML error fragment with the JSON status (HX-Request calls). */
export const fragment = (r: Res, status: number, message: string) => {
  expect(r.status, r.text).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^text\/html/);
  expect(r.json).toBeUndefined();
  // Bindery's fragment markup (docs/decisions.md), with the message HTML-escaped
  expect(r.text).toBe(`<div class="alert alert-error" role="alert">${message.replace(/'/g, '&#39;')}</div>`);
};

/** A 429 `{error}` with Retry-After (1..`maxSeconds`), its message naming the same number of seconds; returns the seconds. */
export function expectLimited(r: Res, maxSeconds: number): number {
  expect(r.status, r.text).toBe(429);
  expect(Object.keys(r.json)).toEqual(['error']);
  const m = /^too many requests: try again in (\d+) seconds$/.exec(r.json.error);
  expect(m, r.json.error).not.toBeNull();
  const retry = Number(r.headers.get('retry-after'));
  expect(retry).toBeGreaterThan(0);
  expect(retry).toBeLessThanOrEqual(maxSeconds);
  expect(Number(m![1])).toBe(retry);
  return retry;
}

/** One account's record in the admin user listing. */
export async function userRecord(call: Call, adminToken: string, id: string): Promise<Record<string, unknown> | undefined> {
  const r = await call('GET', '/api/auth/users', { token: adminToken });
  expect(r.status, r.text).toBe(200);
  return (r.json as Record<string, unknown>[]).find((u) => u.id === id);
}

export const expectError = (r: Res, status: number, message: string) => {
  expect(r.status, r.text).toBe(status);
  expect(r.json).toEqual({ error: message });
};

export const expectMessage = (r: Res, message: string) => {
  expect(r.status, r.text).toBe(200);
  expect(r.json).toEqual({ message });
};
