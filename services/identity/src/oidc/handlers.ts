// Single sign-on's requests (issue 47). A provider's `sub` is the person: a known one signs its
// account in with the same session a password sign-in makes; an unknown one gets an account only
// with OIDC_AUTO_CREATE, and is never joined to an existing account by its e-mail address; a
// signed-in user links their own account from their profile. With OIDC_ADMIN_GROUP, each sign-in
// makes the role follow the provider's `groups` claim (the last admin is never demoted).
import { randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import { err, fail, Messages, ok, type Identity, type Result } from '@bindery/contracts';

type OidcBegun = Identity.OidcBegun;
type OidcFinished = Identity.OidcFinished;
type OidcLinks = Identity.OidcLinks;
type OidcProblem = Identity.OidcProblem;
import type { Trx } from '@bindery/platform';
import { localReturn } from './return-to';
import { userRegistered } from '../domain/register';
import { initialUser, stateProfiles, type Ev } from '../domain/user';
import { emailProblem, length, NAME_MAX, USERNAME_MAX, usernameProblem } from '../domain/validate';
import type { IdentityDb } from '../store/database';
import * as links from '../store/oidc-links';
import * as users from '../store/users';
import type { Ctx } from '../handlers/context';
import { oidcFromEnv } from './config';
import { OidcClient, OidcRefusal, type Verified } from './client';
import { seal, unseal } from './transaction';

const clients = new WeakMap<Ctx, OidcClient | null>();
/** The context's client, made from the environment at first use; null without single sign-on. */
export function clientOf(ctx: Ctx): OidcClient | null {
  if (!clients.has(ctx)) {
    const s = oidcFromEnv();
    clients.set(ctx, s ? new OidcClient(s, ctx.rt.log) : null);
  }
  return clients.get(ctx) ?? null;
}

const refused = (problem: OidcProblem): Result<OidcFinished> => ok({ outcome: 'refused', problem });

export async function config(ctx: Ctx): Promise<Result<Identity.OidcConfig>> {
  const c = clientOf(ctx);
  return ok(c ? { enabled: true, only: c.settings.only, label: c.settings.label } : { enabled: false, only: false, label: '' });
}

export async function begin(ctx: Ctx, req: Identity.IdentityRequest<'oidc-begin'>): Promise<Result<OidcBegun | { problem: OidcProblem }>> {
  const c = clientOf(ctx);
  if (!c) return err(fail('not_found', Messages.notFound));
  if (req.purpose === 'link' && !req.caller) return err(fail('unauthorized', Messages.unauthorized));
  let redirect: URL;
  try {
    redirect = new URL(req.redirect_uri);
  } catch {
    return err(fail('validation', 'redirect_uri must be an absolute address'));
  }
  const t = {
    state: oidc.randomState(),
    nonce: oidc.randomNonce(),
    verifier: oidc.randomPKCECodeVerifier(),
    purpose: req.purpose,
    user_id: req.purpose === 'link' ? req.caller!.user_id : null,
    redirect_uri: redirect.href,
    return_to: localReturn(req.return_to, req.purpose === 'link' ? '/profile' : '/dashboard'),
  };
  try {
    const url = await c.authorizationUrl(t);
    return ok({ url, transaction: await seal(ctx.rt.tokenKey, t, ctx.rt.now()) });
  } catch (e) {
    if (e instanceof OidcRefusal) {
      ctx.rt.log.warn({ detail: e.detail }, 'single sign-on refused');
      return ok({ problem: e.problem });
    }
    throw e;
  }
}

export async function finish(ctx: Ctx, req: Identity.IdentityRequest<'oidc-finish'>): Promise<Result<OidcFinished>> {
  const c = clientOf(ctx);
  if (!c) return refused('not_configured');
  const t = await unseal(ctx.rt.tokenKey, req.transaction, ctx.rt.now());
  if (!t) return refused('expired');
  // a link is finished by the user who began it, in the same browser
  if (t.purpose === 'link' && (!req.caller || req.caller.user_id !== t.user_id)) return refused('expired');
  const wantGroups = c.settings.adminGroup !== null;
  let v: Verified;
  try {
    v = await c.finish(t, req.callback_url, (claims) => (wantGroups && !('groups' in claims)) || (c.settings.autoCreate && typeof claims.email !== 'string'));
  } catch (e) {
    if (!(e instanceof OidcRefusal)) throw e;
    ctx.rt.log.warn({ detail: e.detail, problem: e.problem }, 'single sign-on refused');
    return refused(e.problem);
  }
  if (t.purpose === 'link') return link(ctx, v, t.user_id!, t.return_to);
  return signIn(ctx, c, v, t.return_to, req.client ?? '');
}

async function link(ctx: Ctx, v: Verified, userId: string, returnTo: string): Promise<Result<OidcFinished>> {
  return ctx.tx(async (trx) => {
    const owner = await links.userOf(trx, v.issuer, v.subject);
    if (owner !== null && owner !== userId) return refused('linked_elsewhere');
    if (owner === userId) return ok({ outcome: 'linked', return_to: returnTo });
    const user = await ctx.loadUser(trx, userId);
    if (!user.exists || user.deleted) return refused('expired');
    await ctx.appendUser(trx, user, [{ type: 'identity.oidc-linked.v1', data: { user_id: userId, issuer: v.issuer, subject: v.subject, how: 'self' } }]);
    return ok({ outcome: 'linked', return_to: returnTo });
  });
}

const groupsOf = (claims: Record<string, unknown>): string[] => {
  const g = claims.groups;
  if (Array.isArray(g)) return g.filter((x): x is string => typeof x === 'string');
  return typeof g === 'string' ? [g] : [];
};

const text = (v: unknown, max: number): string => (typeof v === 'string' ? [...v.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim()].slice(0, max).join('') : '');

async function signIn(ctx: Ctx, c: OidcClient, v: Verified, returnTo: string, client: string): Promise<Result<OidcFinished>> {
  const s = c.settings;
  const isAdminByGroup = s.adminGroup !== null ? groupsOf(v.claims).includes(s.adminGroup) : null;
  const settings = await ctx.settings();
  return ctx.tx(async (trx) => {
    await ctx.lockAdmins(trx);
    let id = await links.userOf(trx, v.issuer, v.subject);
    if (id === null) {
      if (!s.autoCreate) return refused('unknown_account');
      const made = await autoCreate(ctx, trx, v, isAdminByGroup === true ? 'admin' : 'user', settings.new_users_see_all_libraries);
      if (typeof made !== 'string') return refused(made.problem);
      id = made;
    } else if (isAdminByGroup !== null) {
      await followGroup(ctx, trx, id, isAdminByGroup);
    }
    const row = await users.findById(trx, id);
    if (!row) return refused('unknown_account');
    const a = await ctx.issueSession(trx, row, settings, undefined, client);
    return ok({ outcome: 'signed-in', return_to: returnTo, session: a.session, user: a.user });
  });
}

/** The role follows the provider's admin group at each sign-in; the last admin stays one. */
async function followGroup(ctx: Ctx, trx: Trx<IdentityDb>, id: string, admin: boolean): Promise<void> {
  const user = await ctx.loadUser(trx, id);
  if (!user.exists || user.deleted) return;
  const role = admin ? 'admin' : 'user';
  if (user.role === role) return;
  if (!admin && (await users.adminIds(trx)).length <= 1) {
    ctx.rt.log.warn({ user_id: id }, 'single sign-on: the last admin is not in the admin group, and stays an admin');
    return;
  }
  const events: Ev[] = [{ type: 'identity.role-changed.v1', data: { user_id: id, role, previous_role: user.role, changed_by: id, source: 'oidc-group' } }];
  await ctx.appendUser(trx, user, stateProfiles(user, events));
}

/** A new account for an unknown subject: its e-mail must be free (an existing account is linked only by its owner). */
async function autoCreate(ctx: Ctx, trx: Trx<IdentityDb>, v: Verified, role: 'admin' | 'user', allLibraries: boolean): Promise<string | { problem: OidcProblem }> {
  const email = text(v.claims.email, 254);
  if (email === '' || emailProblem(email) !== null) return { problem: 'no_email' };
  if ((await users.ownerOf(trx, 'email', email)) !== null) return { problem: 'email_taken' };
  const username = await freeUsername(trx, [text(v.claims.preferred_username, USERNAME_MAX), email.split('@')[0]!, text(v.claims.name, USERNAME_MAX)]);
  const id = randomUUID();
  const input = {
    email,
    username,
    password: '',
    first_name: text(v.claims.given_name, NAME_MAX),
    last_name: text(v.claims.family_name, NAME_MAX),
    role,
  };
  await ctx.appendUser(trx, initialUser(id), [
    userRegistered(id, input, role, null, allLibraries),
    { type: 'identity.oidc-linked.v1', data: { user_id: id, issuer: v.issuer, subject: v.subject, how: 'auto-created' } },
  ]);
  return id;
}

/** The first of the names the provider gave that makes a valid, free username (a number after it when taken). */
async function freeUsername(trx: Trx<IdentityDb>, names: string[]): Promise<string> {
  const base = names.map((n) => n.trim()).find((n) => n !== '' && usernameProblem(n.padEnd(3, '_')) === null) ?? 'reader';
  const padded = length(base) < 3 ? base.padEnd(3, '_') : base;
  for (let i = 1; i < 1000; i++) {
    const suffix = i === 1 ? '' : `-${i}`;
    const name = [...padded].slice(0, USERNAME_MAX - suffix.length).join('') + suffix;
    if ((await users.ownerOf(trx, 'username', name)) === null) return name;
  }
  return `reader-${randomUUID().slice(0, 8)}`;
}

export async function linksOf(ctx: Ctx, req: Identity.IdentityRequest<'oidc-links'>): Promise<Result<OidcLinks>> {
  const c = clientOf(ctx);
  const me = await users.findById(ctx.db, req.caller.user_id);
  if (!me) return err(fail('unauthorized', Messages.invalidToken));
  const l = await links.anyLinkOf(ctx.db, me.id);
  return ok({
    enabled: c !== null,
    label: c?.settings.label ?? '',
    linked: l !== null,
    linked_at: l?.linked_at.toISOString() ?? null,
    has_password: (await users.passwordHash(ctx.db, me.id)) !== undefined,
  });
}

export async function logoutUrl(ctx: Ctx, req: Identity.IdentityRequest<'oidc-logout-url'>): Promise<Result<{ url: string | null }>> {
  const c = clientOf(ctx);
  return ok({ url: c ? await c.endSessionUrl(req.post_logout_redirect_uri) : null });
}

export const handlers = {
  'oidc-config': config,
  'oidc-begin': begin,
  'oidc-finish': finish,
  'oidc-links': linksOf,
  'oidc-logout-url': logoutUrl,
};
