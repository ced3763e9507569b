// /api/auth/*: accounts and sessions, by request/reply to identity.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { fail, Messages, type Identity } from '@bindery/contracts';
import Type from 'typebox';
import { AuthResponse, FieldBody, LoginBody, MaxDevicesBody, PasswordBody, ProfileBody, RefreshBody, RegisterBody, UserIdParams, UserListing } from './auth-schemas';
import { errors, fragmentErrors, jsonOrHtml, MessageBody, params, SIGNED_IN } from '../http/schemas';
import type { Auth } from '../http/authenticate';
import type { CallIdentity } from '../http/rpc';
import { escapeHtml, isFragment, sendFailure, sendFragment, sendResult } from '../http/reply';
import { checkTarget } from '../http/target';
import type { AuthFailures } from '../http/auth-failures';
import type { VerifiedCache } from '../http/verified-cache';
import type { Origins } from '../http/origin';
import { clearSessionCookie, setSessionCookie, type CookiePolicy } from '../http/session-cookie';

export interface AuthDeps {
  call: CallIdentity;
  auth: Auth;
  cookie: CookiePolicy;
  /** login and register carry the per-client-address limit */
  rateLimited?: boolean;
  /** each user's number of devices (the devices projection), for `device_count` in the user listing */
  deviceCounts?: () => Promise<Map<string, number>>;
  /** the per-address budget of failed credential checks (shared with every other surface) */
  failures?: AuthFailures;
  /** the sign-ins taken on trust: a user's go at once when their password changes or they are deleted */
  verified?: VerifiedCache;
  /** a sign-in or registration posted from another site's page is refused (login CSRF) */
  origins?: Origins;
}

/** The body as a bound object; anything else (an array, a bare value) cannot be bound. */
export function bodyOf(req: FastifyRequest): Record<string, unknown> | null {
  const b = req.body;
  if (b === undefined || b === null || b === '') return {};
  if (typeof b === 'object' && !Array.isArray(b)) return b as Record<string, unknown>;
  return null;
}

export function authResponse(a: Identity.AuthResult) {
  return {
    access_token: a.session.access_token,
    ...(a.session.refresh_token ? { refresh_token: a.session.refresh_token } : {}),
    token_type: a.session.token_type,
    expires_in: a.session.expires_in,
    user: a.user,
  };
}

/** A fragment's redirect target: a local path only, never another origin. */
function localPath(v: unknown): string {
  // visible ASCII only: it goes into a header, and `//host` or `/\\host` would leave the site
  return typeof v === 'string' && v.length <= 2048 && /^\/(?![/\\])[\x21-\x7e]*$/.test(v) ? v : '/dashboard';
}

/** Forms carry every value as text: a form's digit string is the number a JSON client would send. */
async function formIntegers(req: FastifyRequest) {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const b = req.body as Record<string, unknown> | undefined;
  if (type !== 'application/x-www-form-urlencoded' || !b) return;
  if (typeof b.max_devices === 'string' && /^\s*-?\d{1,9}\s*$/.test(b.max_devices)) b.max_devices = Number(b.max_devices);
}

/** What signs in, for the owner's list of sessions: the User-Agent header as sent. */
const clientOf = (req: FastifyRequest): string => {
  const ua = req.headers['user-agent'];
  return typeof ua === 'string' ? ua.slice(0, 1000) : '';
};

/** A failed check of a password: counts against the address's budget (a missing field or an outage does not). */
const FAILED_CHECKS = new Set(['invalid_credentials', 'login_locked', 'current_password_incorrect']);

/** the user a by-id route names, when it names one */
const userId = (req: FastifyRequest) => (req.params as { user_id?: string }).user_id;
/** the body a route schema has bound: an object */
const boundBody = (req: FastifyRequest) => req.body as Record<string, unknown>;

export function authRoutes(fastify: FastifyInstance, deps: AuthDeps): void {
  const c = authContext(deps);
  signInRoutes(fastify, c);
  sessionTokenRoutes(fastify, c);
  accountEditRoutes(fastify, c);
  userAdminRoutes(fastify, c);
}

/** What the route groups share, built once: the deps, the tags, the rate limit, the session cookie of a sign-in. */
function authContext({ call, auth, cookie, rateLimited = false, deviceCounts, failures, verified, origins }: AuthDeps) {
  const signedIn = (reply: FastifyReply, a: Identity.AuthResult) => setSessionCookie(reply, a.session.access_token, a.session.expires_in, cookie);
  return { call, auth, cookie, deviceCounts, failures, verified, origins, tags: ['auth'], limited: rateLimited ? { rateLimit: {} } : {}, signedIn };
}
type AuthContext = ReturnType<typeof authContext>;

/** Registering and signing in, each refused from another site's page. */
function signInRoutes(fastify: FastifyInstance, { call, auth, origins, failures, tags, limited, signedIn }: AuthContext): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  /** onRequest of sign-in routes: another site's page may not post a form that signs someone in */
  const sameSite = async (req: FastifyRequest, reply: FastifyReply) => {
    if (origins?.crossSite(req)) return sendFailure(reply, fail('forbidden', Messages.crossOriginRefused), isFragment(req));
  };

  const registered = {
    201: jsonOrHtml(AuthResponse, 'the account and its session; an HTML fragment for an HX-Request call'),
    ...fragmentErrors(400, 403, 409, 429),
    ...errors(500),
  };
  app.post(
    '/api/auth/register',
    {
      onRequest: [sameSite, auth.optionalUser],
      schema: { tags, summary: 'register an account', body: RegisterBody, response: registered },
      config: { fragmentErrors: true, ...limited },
    },
    async (req, reply) => {
      const frag = isFragment(req);
      const r = await call('register', { caller: req.caller, input: req.body, client: clientOf(req) });
      if (!r.ok) return sendFailure(reply, r.error, frag);
      const a = r.value;
      signedIn(reply, a);
      if (frag) return sendFragment(reply, 201, `<div class="alert alert-success" role="status">Account created for ${escapeHtml(a.user.username)}.</div>`, '/dashboard');
      return reply.code(201).send(authResponse(a));
    },
  );

  const loggedIn = { 200: jsonOrHtml(AuthResponse, 'a session; an HTML fragment for an HX-Request call'), ...fragmentErrors(400, 403, 429), ...errors(401, 500) };
  app.post(
    '/api/auth/login',
    { onRequest: sameSite, schema: { tags, summary: 'sign in', body: LoginBody, response: loggedIn }, config: { fragmentErrors: true, ...limited } },
    async (req, reply) => {
      const frag = isFragment(req);
      if (failures?.refuse(req, reply, true)) return reply;
      const r = await call('login', { input: req.body, client: clientOf(req) });
      if (!r.ok && FAILED_CHECKS.has(r.error.code)) failures?.failed(req.ip);
      // The 401 stays JSON even for fragment requests.
      if (!r.ok) return sendFailure(reply, r.error, frag && r.error.code !== 'invalid_credentials');
      const a = r.value;
      signedIn(reply, a);
      if (frag) {
        const to = localPath((req.body as { redirect?: unknown }).redirect);
        return sendFragment(reply, 200, `<div class="alert alert-success" role="status">Signed in. <a href="${escapeHtml(to)}">Continue</a></div>`, to);
      }
      return reply.code(200).send(authResponse(a));
    },
  );
}

/** A session renewed with its refresh token, and signing out. */
function sessionTokenRoutes(fastify: FastifyInstance, { call, auth, cookie, origins, tags, signedIn }: AuthContext): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/api/auth/refresh', { schema: { tags, summary: 'renew a session', body: RefreshBody, response: { 200: AuthResponse, ...errors(400, 401) } } }, async (req, reply) => {
    const r = await call('refresh', { refresh_token: req.body.refresh_token ?? '' });
    if (!r.ok) return sendFailure(reply, r.error);
    const a = r.value;
    signedIn(reply, a);
    return reply.send(authResponse(a));
  });

  const logoutBody = Type.Unknown({ description: 'optional `{refresh_token}` to end that session too; anything else is ignored' });
  // Signing out is a write like any other: another site's form, or a document of this origin
  // without the session's CSRF token, neither ends the session nor clears its cookie.
  const signOutProof = async (req: FastifyRequest, reply: FastifyReply) => {
    if (origins?.crossSite(req)) return sendFailure(reply, fail('forbidden', Messages.crossOriginRefused));
    await auth.optionalUser(req);
    if (req.unprovenCookie) return sendFailure(reply, fail('forbidden', Messages.crossSiteRefused));
  };
  app.post(
    '/api/auth/logout',
    { onRequest: signOutProof, schema: { tags, summary: 'sign out', body: logoutBody, response: { 200: MessageBody, ...errors(400, 403) } } },
    async (req, reply) => {
      const input = bodyOf(req) ?? {};
      const rt = typeof input.refresh_token === 'string' && input.refresh_token !== '' ? input.refresh_token : undefined;
      const r = await call('logout', { caller: req.caller, ...(rt ? { refresh_token: rt } : {}) });
      clearSessionCookie(reply, cookie);
      return sendResult(reply, r);
    },
  );
}

/** Your profile, fields, password and account; the by-id forms are an admin's for any user. */
function accountEditRoutes(fastify: FastifyInstance, { call, auth, cookie, failures, verified, tags }: AuthContext): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const user = { onRequest: auth.requireUser };
  const byId = { onRequest: [auth.requireUser, checkTarget], schema: { tags, params: UserIdParams }, config: { paramsFailure: fail('invalid_user_id', Messages.invalidUserId) } };
  // GET /api/auth/profile is served from the read model: web-api/profile.ts

  const updateProfile = async (req: FastifyRequest, reply: FastifyReply) => {
    const id = userId(req);
    return sendResult(reply, await call('profile-update', { caller: req.caller!, ...(id !== undefined ? { target_id: id } : {}), input: boundBody(req) }));
  };
  const updated = { 200: MessageBody, ...errors(400, ...SIGNED_IN, 404, 409) };
  app.put('/api/auth/profile', { ...user, schema: { tags, summary: 'update your profile', body: ProfileBody, response: updated } }, updateProfile);
  app.put('/api/auth/profile/:user_id', { ...byId, schema: { ...byId.schema, summary: "update a user's profile (admin)", body: ProfileBody, response: updated } }, updateProfile);

  for (const field of ['theme', 'username', 'email'] as const) {
    app.put(
      `/api/auth/${field}`,
      { ...user, schema: { tags, summary: `change your ${field}`, body: FieldBody[field], response: { 200: MessageBody, ...errors(400, ...SIGNED_IN, 409) } } },
      async (req, reply) => sendResult(reply, await call('field-set', { caller: req.caller!, field, input: req.body })),
    );
  }

  const changePassword = async (req: FastifyRequest, reply: FastifyReply) => {
    const id = userId(req);
    // the current password is a password check too: a stolen session must not guess it freely
    if (id === undefined && failures?.refuse(req, reply)) return reply;
    const r = await call('password-change', { caller: req.caller!, ...(id !== undefined ? { target_id: id } : {}), input: boundBody(req) });
    if (!r.ok && FAILED_CHECKS.has(r.error.code)) failures?.failed(req.ip);
    if (r.ok) verified?.forgetUser((id ?? req.caller!.user_id).toLowerCase());
    return sendResult(reply, r);
  };
  const changed = { 200: MessageBody, ...errors(400, ...SIGNED_IN, 404, 429, 500) };
  app.put('/api/auth/password', { ...user, schema: { tags, summary: 'change your password', body: PasswordBody, response: changed } }, changePassword);
  app.put('/api/auth/password/:user_id', { ...byId, schema: { ...byId.schema, summary: "set a user's password (admin)", body: PasswordBody, response: changed } }, changePassword);

  const deleteUser = async (req: FastifyRequest, reply: FastifyReply) => {
    const id = userId(req);
    const r = await call('user-delete', { caller: req.caller!, ...(id !== undefined ? { target_id: id } : {}) });
    if (!r.ok) return sendFailure(reply, r.error, isFragment(req));
    verified?.forgetUser((id ?? req.caller!.user_id).toLowerCase());
    if (id === undefined || id.toLowerCase() === req.caller!.user_id) clearSessionCookie(reply, cookie);
    return reply.send(r.value);
  };
  // delete-user errors are fragments for HX-Request calls
  const deleted = { 200: MessageBody, ...fragmentErrors(400, ...SIGNED_IN, 404) };
  app.delete('/api/auth/profile', { ...user, schema: { tags, summary: 'delete your account', response: deleted }, config: { fragmentErrors: true } }, deleteUser);
  app.delete(
    '/api/auth/profile/:user_id',
    { ...byId, schema: { ...byId.schema, summary: "delete a user's account (admin)", response: deleted }, config: { ...byId.config, fragmentErrors: true } },
    deleteUser,
  );
}

/** The admin's list of users (with their device counts) and each user's device limit. */
function userAdminRoutes(fastify: FastifyInstance, { call, auth, deviceCounts, tags }: AuthContext): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/api/auth/users',
    { onRequest: auth.requireAdmin, schema: { tags, summary: 'every user (admin)', response: { 200: UserListing, ...errors(...SIGNED_IN) } } },
    async (req, reply) => {
      const r = await call('users-list', { caller: req.caller! });
      if (!r.ok || !deviceCounts) return sendResult(reply, r);
      const counts = await deviceCounts();
      return reply.send(r.value.map((u) => ({ ...u, device_count: counts.get(u.id) ?? 0 })));
    },
  );

  // The body is checked before the id here (the spec's order for max-devices), so no params schema.
  const maxDevices = async (req: FastifyRequest, reply: FastifyReply) =>
    sendResult(reply, await call('max-devices-set', { caller: req.caller!, target_id: userId(req) ?? '', input: boundBody(req) }));
  const md = { onRequest: auth.requireAdmin, preValidation: formIntegers };
  const mdSchema = { tags, summary: "set a user's device limit (admin)", body: MaxDevicesBody, response: { 200: MessageBody, ...errors(400, ...SIGNED_IN, 404) } };
  app.put('/api/auth/users/:user_id/max-devices', { ...md, schema: { ...mdSchema, params: params({ user_id: 'the user (checked after the body)' }) } }, maxDevices);
  app.put('/api/auth/users//max-devices', { ...md, schema: { ...mdSchema, params: Type.Object({}) } }, maxDevices);
}
