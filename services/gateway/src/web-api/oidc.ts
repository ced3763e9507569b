// /api/auth/oidc/*: single sign-on through an OpenID provider (issue 47). Identity holds the client
// and decides who signs in; these routes carry the browser there and back: the sealed transaction
// (state, nonce, PKCE verifier) rides in a short-lived HttpOnly cookie scoped to these routes, and a
// refusal goes to the sign-in problem page with a fixed reason (never the provider's own words).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { Identity } from '@bindery/contracts';
import type { Auth } from '../http/authenticate';
import type { CallIdentity } from '../http/rpc';
import { isFragment, sendResult } from '../http/reply';
import type { Origins } from '../http/origin';
import { errors, query, SIGNED_IN } from '../http/schemas';
import { setSessionCookie, type CookiePolicy } from '../http/session-cookie';
import { SsoConfig as Config, SsoLinks as Links } from '@bindery/contracts/api/auth';

export interface OidcDeps {
  call: CallIdentity;
  auth: Auth;
  cookie: CookiePolicy;
  origins: Origins;
  rateLimited?: boolean;
}

const TX_COOKIE = 'bindery_oidc_tx';
/** set while a session made through the provider lasts: signing out then ends the provider's session too */
const SIGNED_IN_COOKIE = 'bindery_oidc';
const BASE = '/api/auth/oidc';
const CONFIG_TTL_MS = 10_000;

const Redirect = Type.Null({ description: 'a redirect (Location)' });

export const problemPage = (p: Identity.OidcProblem): string => `/login/sso?problem=${p}`;

/** A path of this site only (never `//host` or `/\host`). */
const localPath = (v: unknown, fallback: string): string => (typeof v === 'string' && v.length <= 2048 && /^\/(?![/\\])[\x21-\x7e]*$/.test(v) ? v : fallback);

export function oidcRoutes(fastify: FastifyInstance, deps: OidcDeps): void {
  const c = oidcContext(deps);
  oidcSignInRoutes(fastify, c);
  oidcAccountRoutes(fastify, c);
}

/** What the route groups share, built once: the provider's settings (cached briefly), the transaction cookie, a redirect. */
function oidcContext({ call, auth, cookie, origins, rateLimited = false }: OidcDeps) {
  let cached: { value: Identity.OidcConfig; at: number } | null = null;
  const config = async (): Promise<Identity.OidcConfig | null> => {
    if (cached && Date.now() - cached.at < CONFIG_TTL_MS) return cached.value;
    const r = await call('oidc-config', {});
    if (!r.ok) return null;
    cached = { value: r.value, at: Date.now() };
    return cached.value;
  };
  const txCookie = (reply: FastifyReply, value: string, maxAge: number) =>
    // SameSite=Lax: the provider's answer is a top-level GET from its site, which Lax lets through
    reply.setCookie(TX_COOKIE, value, { path: BASE, httpOnly: true, sameSite: 'lax', maxAge, secure: cookie.secure });
  const go = (reply: FastifyReply, to: string) => reply.code(302).header('Location', to).send();
  return { call, auth, cookie, origins, tags: ['auth'], limited: rateLimited ? { rateLimit: {} } : {}, config, txCookie, go };
}
type OidcContext = ReturnType<typeof oidcContext>;

/** Begins a sign-in or a link: to the provider with the transaction cookie, or to the problem page. */
async function begin(c: OidcContext, req: FastifyRequest, reply: FastifyReply, purpose: 'sign-in' | 'link', returnTo: string) {
  const base = c.origins.publicBase(req);
  const to = async (): Promise<string> => {
    if (!base) return problemPage('no_address');
    const r = await c.call('oidc-begin', { caller: req.caller, purpose, redirect_uri: `${base}${BASE}/callback`, return_to: returnTo });
    if (!r.ok) return problemPage(r.error.code === 'not_found' ? 'not_configured' : 'unavailable');
    const v = r.value;
    if ('problem' in v) return problemPage(v.problem);
    c.txCookie(reply, v.transaction, 600);
    return v.url;
  };
  const target = await to();
  // htmx follows HX-Redirect with a full navigation (a fetch cannot follow a redirect to another site)
  if (isFragment(req)) return reply.code(200).header('HX-Redirect', target).send('');
  return c.go(reply, target);
}

/** The provider's answer: a session, a link, or the problem page; the transaction cookie goes either way. */
async function finish(c: OidcContext, req: FastifyRequest, reply: FastifyReply) {
  const { call, auth, cookie, go } = c;
  const transaction = req.cookies[TX_COOKIE];
  // the transaction is used once, whatever the outcome
  c.txCookie(reply, '', 0);
  if (!transaction) return go(reply, problemPage('expired'));
  await auth.optionalUser(req);
  const base = c.origins.publicBase(req) ?? 'http://localhost';
  const ua = req.headers['user-agent'];
  const r = await call('oidc-finish', {
    caller: req.caller,
    transaction: transaction.slice(0, 8192),
    callback_url: `${base}${req.url}`.slice(0, 8192),
    client: typeof ua === 'string' ? ua.slice(0, 1000) : '',
  });
  if (!r.ok) return go(reply, problemPage(r.error.code === 'service_unavailable' ? 'unavailable' : 'failed'));
  const v = r.value;
  if (v.outcome === 'refused') return go(reply, problemPage(v.problem));
  if (v.outcome === 'signed-in') {
    setSessionCookie(reply, v.session.access_token, v.session.expires_in, cookie);
    reply.setCookie(SIGNED_IN_COOKIE, '1', { path: '/', httpOnly: true, sameSite: 'lax', maxAge: v.session.expires_in, secure: cookie.secure });
  }
  return go(reply, localPath(v.return_to, '/dashboard'));
}

/** The button's settings, the way out to the provider (to sign in or to link), and the way back. */
function oidcSignInRoutes(fastify: FastifyInstance, c: OidcContext): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { call, auth, tags, limited } = c;
  app.get(`${BASE}/config`, { schema: { tags, summary: 'single sign-on: whether it is on, and its button', response: { 200: Config, ...errors(503) } } }, async (_req, reply) => {
    const cfg = await c.config();
    return cfg ? reply.send(cfg) : sendResult(reply, await call('oidc-config', {}));
  });

  app.get(
    `${BASE}/start`,
    {
      schema: {
        tags,
        summary: 'sign in through the single sign-on provider (a redirect to it)',
        querystring: query({ redirect: 'where to go once signed in (a path of this site)' }),
        response: { 302: Redirect },
      },
      config: { ...limited },
    },
    async (req, reply) => begin(c, req, reply, 'sign-in', localPath((req.query as { redirect?: unknown }).redirect, '/dashboard')),
  );

  app.post(
    `${BASE}/link`,
    {
      onRequest: auth.requireUser,
      schema: { tags, summary: 'link your account to the single sign-on provider (a redirect to it)', response: { 200: Redirect, 302: Redirect, ...errors(...SIGNED_IN) } },
    },
    async (req, reply) => begin(c, req, reply, 'link', '/profile?sso=linked'),
  );

  app.get(
    `${BASE}/callback`,
    { schema: { tags, summary: "the provider's answer: a session, a link, or the problem page", response: { 302: Redirect } }, config: { ...limited } },
    async (req, reply) => finish(c, req, reply),
  );
}

/** After signing out, the provider's sign-out; and the caller's link to the provider. */
function oidcAccountRoutes(fastify: FastifyInstance, c: OidcContext): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { call, auth, cookie, go, tags } = c;
  // After the web's sign-out (POST /api/auth/logout): the provider's end-session address when this
  // browser's session came from it and it offers one (RP-initiated logout), else the sign-in page.
  app.get(
    `${BASE}/signed-out`,
    { schema: { tags, summary: "after signing out: the provider's sign-out, where it offers one", response: { 302: Redirect } } },
    async (req, reply) => {
      if (req.cookies[SIGNED_IN_COOKIE] === undefined) return go(reply, '/login');
      reply.setCookie(SIGNED_IN_COOKIE, '', { path: '/', httpOnly: true, sameSite: 'lax', maxAge: 0, secure: cookie.secure });
      const base = c.origins.publicBase(req);
      if (!base) return go(reply, '/login');
      const r = await call('oidc-logout-url', { post_logout_redirect_uri: `${base}/login` });
      const url = r.ok ? r.value.url : null;
      return go(reply, url ?? '/login');
    },
  );

  app.get(
    `${BASE}/links`,
    { onRequest: auth.requireUser, schema: { tags, summary: 'your link to the single sign-on provider', response: { 200: Links, ...errors(...SIGNED_IN) } } },
    async (req, reply) => sendResult(reply, await call('oidc-links', { caller: req.caller! })),
  );
}
