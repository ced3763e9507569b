// A real OpenID provider in the test process (oidc-provider, a certified implementation) for the
// single sign-on tests (issue 47): its own login page (dev interactions: any login, the login is
// the `sub`), each account's claims as the test sets them, and, when a test asks, an ID token
// replaced in the token endpoint's answer by an expired one (signed with the provider's own key)
// or a forged one (signed with another key under the same kid).
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as netServer } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';

export const CLIENT_ID = 'bindery';
export const CLIENT_SECRET = 'bindery-test-secret-0123456789';
export const LABEL = 'Sign in with Test ID';
export const ADMIN_GROUP = 'bindery-admins';

export interface Claims {
  email?: string;
  name?: string;
  preferred_username?: string;
  groups?: string[];
}

export interface TestProvider {
  issuer: string;
  accounts: Map<string, Claims>;
  /** the next token answers carry this ID token instead of the provider's own */
  tamper: null | 'expired' | 'forged';
  stop(): Promise<void>;
}

/** A port nothing listens on (yet): the provider's, known before Bindery starts with it as its issuer. */
export async function freePort(): Promise<number> {
  const s = netServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

export const oidcEnv = (port: number, extra: Record<string, string> = {}): Record<string, string> => ({
  OIDC_ISSUER_URL: `http://127.0.0.1:${port}`,
  OIDC_CLIENT_ID: CLIENT_ID,
  OIDC_CLIENT_SECRET: CLIENT_SECRET,
  OIDC_BUTTON_LABEL: LABEL,
  ...extra,
});

export async function startProvider(port: number, binderyUrl: string): Promise<TestProvider> {
  const { default: Provider } = await import('oidc-provider');
  const issuer = `http://127.0.0.1:${port}`;
  const pair = await generateKeyPair('RS256', { extractable: true });
  const other = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(pair.privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const accounts = new Map<string, Claims>();
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${binderyUrl}/api/auth/oidc/callback`],
        post_logout_redirect_uris: [`${binderyUrl}/login`],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'], groups: ['groups'] },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ sub: id, email_verified: true, ...(accounts.get(id) ?? { email: `${id}@example.test` }) }),
    }),
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    pkce: { required: () => true },
    cookies: { keys: ['oidc-test-cookie-key-0123456789'] },
    ttl: { Session: 3600, Grant: 3600, Interaction: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
  } as never);
  const state: TestProvider = { issuer, accounts, tamper: null, stop: async () => undefined };
  provider.use(async (ctx: { path: string; body: unknown }, next: () => Promise<void>) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (ctx.path !== '/token' || !state.tamper || !body?.id_token) return;
    const claims = decodeJwt(body.id_token);
    const now = Math.floor(Date.now() / 1000);
    const payload = state.tamper === 'expired' ? { ...claims, iat: now - 7200, exp: now - 3600 } : claims;
    const key = state.tamper === 'expired' ? pair.privateKey : other.privateKey;
    ctx.body = { ...body, id_token: await new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: 'test-key' }).sign(key) };
  });
  const server: Server = createServer(provider.callback());
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  state.stop = () => new Promise((r) => server.close(() => r()));
  return state;
}

/** On the provider's own pages: signs in as `login` and allows Bindery (its consent page). */
export async function providerLogin(page: Page, issuer: string, login: string): Promise<void> {
  await page.waitForURL((u) => u.href.startsWith(`${issuer}/interaction/`));
  await page.fill('input[name="login"]', login);
  await page.fill('input[name="password"]', 'anything');
  const loginPage = page.url();
  await Promise.all([page.waitForURL((u) => u.href !== loginPage), page.click('button[type="submit"]')]);
  await page.waitForLoadState();
  // the consent page, unless the provider holds a grant already
  if (page.url().startsWith(`${issuer}/interaction/`)) await page.click('button:has-text("Continue")');
}

/** The problem page's message, as the page shows it. */
export async function problemShown(page: Page, binderyUrl: string, problem: string, message: string): Promise<void> {
  await page.waitForURL(`${binderyUrl}/login/sso?problem=${problem}`);
  expect(await page.locator('#sso-problem').textContent()).toBe(message);
}

/**
 * A sign-in driven over HTTP up to the provider's answer, which is held back: Bindery's start, the
 * provider's login and consent forms (its dev interactions), with a cookie jar for each side. Gives
 * the callback address the provider sent the browser to and the transaction cookie Bindery set.
 */
export async function heldAnswer(binderyUrl: string, issuer: string, login: string): Promise<{ callback: string; tx: string }> {
  const start = await fetch(`${binderyUrl}/api/auth/oidc/start`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const tx = start.headers
    .getSetCookie()
    .map((c) => /^bindery_oidc_tx=([^;]+)/.exec(c)?.[1])
    .find(Boolean);
  expect(tx, 'the transaction cookie').toBeDefined();
  const jar = new Map<string, string>();
  const keep = (r: Response) => {
    for (const c of r.headers.getSetCookie()) {
      const m = /^([^=]+)=([^;]*)/.exec(c);
      if (m) jar.set(m[1]!, m[2]!);
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  let url = start.headers.get('location')!;
  expect(url.startsWith(`${issuer}/auth?`), `to the provider's authorization endpoint: ${url}`).toBe(true);
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(`${binderyUrl}/api/auth/oidc/callback`)) return { callback: url, tx: tx! };
    const r = await fetch(url, { redirect: 'manual', headers: { cookie: cookie() } });
    keep(r);
    if (r.status >= 300 && r.status < 400) {
      url = new URL(r.headers.get('location')!, url).href;
      continue;
    }
    // an interaction page: its form, the login's or the consent's
    const html = await r.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    expect(action, `a form on ${url} (${r.status})`).toBeDefined();
    const body = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'anything' } : { prompt: prompt ?? 'consent' });
    const posted = await fetch(new URL(action!.replaceAll('&amp;', '&'), url), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    keep(posted);
    url = new URL(posted.headers.get('location')!, url).href;
  }
  throw new Error(`no answer from the provider: last at ${url}`);
}

/** Console errors of our own pages: the provider's pages (their fonts, their favicon) and an expected refusal's status are not ours. */
export function ourErrors(errors: string[], statuses: number[] = []): string[] {
  return errors.filter((e) => !/ERR_NAME_NOT_RESOLVED/.test(e) && !statuses.some((s) => e.startsWith(`Failed to load resource: the server responded with a status of ${s} `)));
}

/** The provider's pages load a web font from the internet and ask for a favicon it does not have: answered empty here, so only our pages' errors are left. */
export async function quietProvider(ctx: BrowserContext, issuer: string): Promise<void> {
  await ctx.route(
    (u) => !u.hostname.startsWith('127.0.0.1') || u.href === `${issuer}/favicon.ico`,
    (r) => r.fulfill({ status: 200, contentType: 'text/plain', body: '' }),
  );
}
