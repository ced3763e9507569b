// /api/auth/*: accounts and sessions, by request/reply to identity.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fail, Messages, type Identity } from '@bindery/contracts';
import type { Auth } from '../http/authenticate';
import type { CallIdentity } from '../http/rpc';
import { escapeHtml, isFragment, sendFailure, sendFragment, sendResult } from '../http/reply';
import { checkTarget } from '../http/target';
import { clearSessionCookie, setSessionCookie, type CookiePolicy } from '../http/session-cookie';

export interface AuthDeps {
  call: CallIdentity;
  auth: Auth;
  cookie: CookiePolicy;
}

/** The body as a bound object; anything else (an array, a bare value) cannot be bound. */
export function bodyOf(req: FastifyRequest): Record<string, unknown> | null {
  const b = req.body;
  if (b === undefined || b === null || b === '') return {};
  if (typeof b === 'object' && !Array.isArray(b)) return b as Record<string, unknown>;
  return null;
}

const invalid = () => fail('invalid_request', Messages.invalidRequest);

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

export function authRoutes(app: FastifyInstance, { call, auth, cookie }: AuthDeps): void {
  const user = { onRequest: auth.requireUser };
  const byId = { onRequest: [auth.requireUser, checkTarget] };
  const userId = (req: FastifyRequest) => (req.params as { user_id?: string }).user_id;
  const signedIn = (reply: FastifyReply, a: Identity.AuthResult) => setSessionCookie(reply, a.session.access_token, a.session.expires_in, cookie);

  app.post('/api/auth/register', { onRequest: auth.optionalUser, config: { fragmentErrors: true } }, async (req, reply) => {
    const frag = isFragment(req);
    const input = bodyOf(req);
    if (!input) return sendFailure(reply, invalid(), frag);
    const r = await call('register', { caller: req.caller, input });
    if (!r.ok) return sendFailure(reply, r.error, frag);
    const a = r.value as Identity.AuthResult;
    signedIn(reply, a);
    if (frag) return sendFragment(reply, 201, `<div class="alert alert-success" role="status">Account created for ${escapeHtml(a.user.username)}.</div>`, '/dashboard');
    return reply.code(201).send(authResponse(a));
  });

  app.post('/api/auth/login', { config: { fragmentErrors: true } }, async (req, reply) => {
    const frag = isFragment(req);
    const input = bodyOf(req);
    if (!input) return sendFailure(reply, invalid(), frag);
    const r = await call('login', { input });
    // The 401 stays JSON even for fragment requests.
    if (!r.ok) return sendFailure(reply, r.error, frag && r.error.code !== 'invalid_credentials');
    const a = r.value as Identity.AuthResult;
    signedIn(reply, a);
    if (frag) {
      const to = localPath(input.redirect);
      return sendFragment(reply, 200, `<div class="alert alert-success" role="status">Signed in. <a href="${escapeHtml(to)}">Continue</a></div>`, to);
    }
    return reply.code(200).send(authResponse(a));
  });

  app.post('/api/auth/refresh', async (req, reply) => {
    const input = bodyOf(req);
    if (!input || (input.refresh_token !== undefined && typeof input.refresh_token !== 'string')) return sendFailure(reply, invalid());
    const r = await call('refresh', { refresh_token: (input.refresh_token as string | undefined) ?? '' });
    if (!r.ok) return sendFailure(reply, r.error);
    const a = r.value as Identity.AuthResult;
    signedIn(reply, a);
    return reply.send(authResponse(a));
  });

  app.post('/api/auth/logout', { onRequest: auth.optionalUser }, async (req, reply) => {
    const input = bodyOf(req) ?? {};
    const rt = typeof input.refresh_token === 'string' && input.refresh_token !== '' ? input.refresh_token : undefined;
    const r = await call('logout', { caller: req.caller, ...(rt ? { refresh_token: rt } : {}) });
    clearSessionCookie(reply, cookie);
    return sendResult(reply, r);
  });

  // GET /api/auth/profile is served from the read model: routes/profile.ts

  const updateProfile = async (req: FastifyRequest, reply: FastifyReply) => {
    const input = bodyOf(req);
    if (!input) return sendFailure(reply, invalid());
    const id = userId(req);
    return sendResult(reply, await call('profile-update', { caller: req.caller!, ...(id !== undefined ? { target_id: id } : {}), input }));
  };
  app.put('/api/auth/profile', user, updateProfile);
  app.put('/api/auth/profile/:user_id', byId, updateProfile);

  for (const field of ['theme', 'username', 'email'] as const) {
    app.put(`/api/auth/${field}`, user, async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, invalid());
      return sendResult(reply, await call('field-set', { caller: req.caller!, field, input }));
    });
  }

  const changePassword = async (req: FastifyRequest, reply: FastifyReply) => {
    const input = bodyOf(req);
    if (!input) return sendFailure(reply, invalid());
    const id = userId(req);
    return sendResult(reply, await call('password-change', { caller: req.caller!, ...(id !== undefined ? { target_id: id } : {}), input }));
  };
  app.put('/api/auth/password', user, changePassword);
  app.put('/api/auth/password/:user_id', byId, changePassword);

  const deleteUser = async (req: FastifyRequest, reply: FastifyReply) => {
    const id = userId(req);
    const r = await call('user-delete', { caller: req.caller!, ...(id !== undefined ? { target_id: id } : {}) });
    if (!r.ok) return sendFailure(reply, r.error, isFragment(req));
    if (id === undefined || id.toLowerCase() === req.caller!.user_id) clearSessionCookie(reply, cookie);
    return reply.send(r.value);
  };
  // delete-user errors are fragments for HX-Request calls
  app.delete('/api/auth/profile', { ...user, config: { fragmentErrors: true } }, deleteUser);
  app.delete('/api/auth/profile/:user_id', { ...byId, config: { fragmentErrors: true } }, deleteUser);

  app.get('/api/auth/users', { onRequest: auth.requireAdmin }, async (req, reply) => sendResult(reply, await call('users-list', { caller: req.caller! })));

  const maxDevices = async (req: FastifyRequest, reply: FastifyReply) => {
    const input = bodyOf(req);
    if (!input) return sendFailure(reply, invalid());
    return sendResult(reply, await call('max-devices-set', { caller: req.caller!, target_id: userId(req) ?? '', input }));
  };
  app.put('/api/auth/users/:user_id/max-devices', { onRequest: auth.requireAdmin }, maxDevices);
  app.put('/api/auth/users//max-devices', { onRequest: auth.requireAdmin }, maxDevices);
}
