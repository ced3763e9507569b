// Password reset links, invitations and e-reader addresses (issue 47). Identity makes and checks
// the links and keeps only their SHA-256; the gateway mails them.
import { randomBytes, randomUUID } from 'node:crypto';
import { err, fail, Identity, Messages, ok, type Result } from '@bindery/contracts';
import { isUniqueViolation } from '@bindery/platform';
import {
  INVITATION_INVALID,
  INVITATION_TTL_MS,
  parseEreaderAddress,
  parseSendInput,
  sendOutcome,
  parseInvitation,
  parseNewPassword,
  parseResetRequest,
  RESET_INVALID,
  RESET_PER_ACCOUNT,
  RESET_TTL_MS,
  RESET_WINDOW_MS,
} from '../domain/mail';
import { sessionCutoff } from '../domain/change-password';
import { userRegistered } from '../domain/register';
import { initialUser } from '../domain/user';
import { isUuid, length, NAME_MAX, readStrings, usernameProblem, validation } from '../domain/validate';
import * as users from '../store/users';
import * as sessions from '../store/sessions';
import * as mail from '../store/mail';
import { kosyncKeyOf } from '../store/kosync';
import { revokeReaderKey } from './reader-auth';
import { internal, type Ctx } from './context';

const newToken = () => randomBytes(32).toString('base64url');
const iso = (d: Date | string) => (typeof d === 'string' ? new Date(d) : d).toISOString();

/**
 * A reset link for the account with this address, or null — for no such account as for one whose
 * limit is reached; the requester is told neither. Both paths hash a token, so they cost alike.
 */
export async function requestReset(ctx: Ctx, req: Identity.IdentityRequest<'password-reset-request'>): Promise<Result<{ mail: Identity.LinkMail | null }>> {
  const parsed = parseResetRequest(req.input);
  if (!parsed.ok) return parsed;
  const token = newToken();
  const hash = mail.tokenHash(token);
  const owner = await users.ownerOf(ctx.db, 'email', parsed.value);
  if (!owner) return ok({ mail: null });
  return ctx.tx(async (trx) => {
    const u = await users.findById(trx, owner);
    if (!u) return ok({ mail: null });
    const now = ctx.rt.now();
    if ((await mail.resetsSince(trx, u.id, new Date(now.getTime() - RESET_WINDOW_MS))) >= RESET_PER_ACCOUNT) return ok({ mail: null });
    const expires_at = new Date(now.getTime() + RESET_TTL_MS).toISOString();
    await ctx.emit(trx, `password-resets-${u.id}`, 'any', [{ type: 'identity.password-reset-requested.v1', data: { user_id: u.id, token_hash: hash, expires_at } }]);
    return ok({ mail: { to: u.email, username: u.username, token, expires_at, ...(u.language ? { language: u.language } : {}) } });
  });
}

/** Sets the new password from a link, once; ends every session of the account, its reader key and its other links. */
export async function completeReset(ctx: Ctx, req: Identity.IdentityRequest<'password-reset-complete'>): Promise<Result<{ message: string }>> {
  const parsed = parseNewPassword(req.input, 'new_password');
  if (!parsed.ok) return parsed;
  const hash = mail.tokenHash(parsed.value.token);
  // an unknown link costs no argon2 work: refuse it before hashing
  if ((await mail.openReset(ctx.db, hash, ctx.rt.now())) === null) return err(fail('validation', RESET_INVALID));
  let pw: string;
  let verifier: string;
  try {
    [pw, verifier] = await Promise.all([ctx.hash(parsed.value.password), ctx.hash(kosyncKeyOf(parsed.value.password))]);
  } catch {
    return err(internal(Messages.failedToHashPassword));
  }
  return ctx.tx(async (trx) => {
    const now = ctx.rt.now();
    const id = await mail.openReset(trx, hash, now);
    if (id === null) return err(fail('validation', RESET_INVALID));
    const user = await ctx.loadUser(trx, id);
    if (!user.exists || user.deleted) return err(fail('validation', RESET_INVALID));
    await users.setPasswordHash(trx, id, pw, verifier);
    const cutoff = sessionCutoff(now);
    await users.setSessionsValidAfter(trx, id, cutoff);
    await sessions.revokeAllForUser(trx, id, now);
    await ctx.emit(trx, `password-resets-${id}`, 'any', [{ type: 'identity.password-reset-used.v1', data: { user_id: id, token_hash: hash } }]);
    await ctx.appendUser(trx, user, [
      { type: 'identity.password-changed.v1', data: { user_id: id, changed_by: id, sessions_revoked_before: cutoff.toISOString(), session_kept: null } },
    ]);
    await revokeReaderKey(ctx, trx, id);
    return ok({ message: 'password updated: sign in with the new password' });
  });
}

const invitationOf = (r: NonNullable<mail.InvitationRow>): Identity.Invitation => ({
  id: r.id,
  email: r.email,
  role: r.role,
  all_libraries: r.all_libraries,
  library_ids: r.library_ids,
  expires_at: iso(r.expires_at),
  created_at: iso(r.created_at),
  invited_by: r.invited_by,
});

export async function createInvitation(
  ctx: Ctx,
  req: Identity.IdentityRequest<'invitation-create'>,
): Promise<Result<{ invitation: Identity.Invitation; mail: Identity.LinkMail }>> {
  const denied = await ctx.requireAdmin(req.caller);
  if (denied) return err(denied);
  const parsed = parseInvitation(req.input);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  const token = newToken();
  return ctx.tx(async (trx) => {
    const now = ctx.rt.now();
    if ((await users.ownerOf(trx, 'email', input.email)) !== null) return err(fail('conflict', Messages.emailExists));
    if (await mail.openInvitationFor(trx, input.email, now)) return err(fail('conflict', 'an open invitation for this email already exists'));
    const id = randomUUID();
    const expires_at = new Date(now.getTime() + INVITATION_TTL_MS).toISOString();
    await ctx.emit(trx, `invitation-${id}`, -1, [
      {
        type: 'identity.invitation-created.v1',
        data: {
          invitation_id: id,
          email: input.email,
          role: input.role,
          all_libraries: input.all_libraries,
          library_ids: input.library_ids,
          token_hash: mail.tokenHash(token),
          expires_at,
          invited_by: req.caller.user_id,
        },
      },
    ]);
    const row = await mail.invitationById(trx, id);
    if (!row) throw new Error(`invitation ${id} missing right after it was made`);
    return ok({ invitation: invitationOf(row), mail: { to: input.email, username: '', token, expires_at } });
  });
}

export async function listInvitations(ctx: Ctx, req: Identity.IdentityRequest<'invitations-list'>): Promise<Result<{ invitations: Identity.Invitation[] }>> {
  const denied = await ctx.requireAdmin(req.caller);
  if (denied) return err(denied);
  return ok({ invitations: (await mail.openInvitations(ctx.db, ctx.rt.now())).map(invitationOf) });
}

export async function revokeInvitation(ctx: Ctx, req: Identity.IdentityRequest<'invitation-revoke'>): Promise<Result<{ message: string }>> {
  const denied = await ctx.requireAdmin(req.caller);
  if (denied) return err(denied);
  if (!isUuid(req.invitation_id)) return err(fail('validation', 'invalid invitation id'));
  const id = req.invitation_id.toLowerCase();
  return ctx.tx(async (trx) => {
    const row = await mail.invitationById(trx, id);
    if (!row || row.ended_at !== null) return err(fail('not_found', 'invitation not found'));
    const version = await ctx.store.streamVersion(trx, `invitation-${id}`);
    await ctx.emit(trx, `invitation-${id}`, version, [{ type: 'identity.invitation-revoked.v1', data: { invitation_id: id, revoked_by: req.caller.user_id } }]);
    return ok({ message: 'invitation withdrawn' });
  });
}

export async function peekInvitation(ctx: Ctx, req: Identity.IdentityRequest<'invitation-peek'>): Promise<Result<{ email: string; role: string; expires_at: string }>> {
  const row = req.token === '' ? undefined : await mail.openInvitation(ctx.db, mail.tokenHash(req.token), ctx.rt.now());
  return row ? ok({ email: row.email, role: row.role, expires_at: iso(row.expires_at) }) : err(fail('not_found', INVITATION_INVALID));
}

/** The invitation's link makes the account (its address, role and libraries are the invitation's) and signs it in. */
export async function acceptInvitation(ctx: Ctx, req: Identity.IdentityRequest<'invitation-accept'>): Promise<Result<Identity.AuthResult>> {
  const parsed = parseNewPassword(req.input, 'password');
  if (!parsed.ok) return parsed;
  const names = readStrings(req.input, ['username', 'first_name', 'last_name'] as const);
  if (!names) return err(fail('invalid_request', Messages.invalidRequest));
  const username = names.username.trim();
  const problem = usernameProblem(names.username) ?? (username === '' ? Messages.usernameBlank : usernameProblem(username));
  if (problem) return err(validation(problem));
  for (const k of ['first_name', 'last_name'] as const) if (length(names[k].trim()) > NAME_MAX) return err(validation(`${k} must be at most ${NAME_MAX} characters`));
  const hash = mail.tokenHash(parsed.value.token);
  if (!(await mail.openInvitation(ctx.db, hash, ctx.rt.now()))) return err(fail('validation', INVITATION_INVALID));
  let pw: string;
  let verifier: string;
  try {
    [pw, verifier] = await Promise.all([ctx.hash(parsed.value.password), ctx.hash(kosyncKeyOf(parsed.value.password))]);
  } catch {
    return err(internal(Messages.failedToHashPassword));
  }
  try {
    return await ctx.tx(async (trx) => {
      await ctx.lockAdmins(trx);
      const inv = await mail.openInvitation(trx, hash, ctx.rt.now(), true);
      if (!inv) return err(fail('validation', INVITATION_INVALID));
      if ((await users.ownerOf(trx, 'email', inv.email)) !== null) return err(fail('conflict', Messages.emailExists));
      if ((await users.ownerOf(trx, 'username', username)) !== null) return err(fail('conflict', Messages.usernameExists));
      const id = randomUUID();
      const input = { email: inv.email, username, password: '', first_name: names.first_name.trim(), last_name: names.last_name.trim(), role: inv.role };
      const registered = userRegistered(id, input, inv.role, inv.invited_by, inv.all_libraries);
      if (registered.type === 'identity.user-registered.v1') registered.data.library_ids = inv.library_ids;
      await ctx.appendUser(trx, initialUser(id), [registered]);
      await users.setPasswordHash(trx, id, pw, verifier);
      const version = await ctx.store.streamVersion(trx, `invitation-${inv.id}`);
      await ctx.emit(trx, `invitation-${inv.id}`, version, [{ type: 'identity.invitation-accepted.v1', data: { invitation_id: inv.id, user_id: id } }]);
      const row = await users.findById(trx, id);
      if (!row) throw new Error(`user ${id} missing right after its registration`);
      return ok(await ctx.issueSession(trx, row, await ctx.settings(trx), undefined, req.client));
    });
  } catch (e) {
    if (isUniqueViolation(e, 'users_email_key')) return err(fail('conflict', Messages.emailExists));
    if (isUniqueViolation(e, 'users_username_key')) return err(fail('conflict', Messages.usernameExists));
    throw e;
  }
}

export async function getEreader(ctx: Ctx, req: Identity.IdentityRequest<'ereader-get'>): Promise<Result<{ address: string }>> {
  const a = await mail.ereaderAddress(ctx.db, req.caller.user_id);
  return a === null ? err(fail('user_not_found', Messages.userNotFound)) : ok({ address: a });
}

export async function setEreader(ctx: Ctx, req: Identity.IdentityRequest<'ereader-set'>): Promise<Result<{ message: string; address: string }>> {
  const parsed = parseEreaderAddress(req.input);
  if (!parsed.ok) return parsed;
  const id = req.caller.user_id;
  return ctx.tx(async (trx) => {
    const current = await mail.ereaderAddress(trx, id);
    if (current === null) return err(fail('user_not_found', Messages.userNotFound));
    if (current !== parsed.value) await ctx.emit(trx, `ereader-${id}`, 'any', [{ type: 'identity.ereader-address-changed.v1', data: { user_id: id, address: parsed.value } }]);
    return ok({ message: parsed.value === '' ? 'e-reader address removed' : 'e-reader address saved', address: parsed.value });
  });
}

const sendOut = (r: NonNullable<mail.SendRow>): Identity.BookSend => ({
  id: r.id,
  user_id: r.user_id,
  item_id: r.item_id,
  title: r.title,
  format: r.format,
  file_name: r.file_name,
  size: Number(r.size),
  address: r.address,
  convert_from: r.convert_from,
  status: r.status,
  attempts: r.attempts,
  detail: r.detail,
  next_attempt_at: r.next_attempt_at === null ? null : iso(r.next_attempt_at),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

/** A book to the caller's e-reader address: recorded pending; a gateway's worker mails it. */
export async function createSend(ctx: Ctx, req: Identity.IdentityRequest<'send-create'>): Promise<Result<Identity.BookSend>> {
  const parsed = parseSendInput(req.input);
  if (!parsed.ok) return parsed;
  const user = req.caller.user_id;
  return ctx.tx(async (trx) => {
    const address = await mail.ereaderAddress(trx, user);
    if (address === null) return err(fail('user_not_found', Messages.userNotFound));
    if (address === '') return err(fail('validation', Identity.NO_EREADER_ADDRESS));
    const id = randomUUID();
    await ctx.emit(trx, `send-${id}`, 'any', [{ type: 'identity.book-send-requested.v1', data: { send_id: id, user_id: user, ...parsed.value, address } }]);
    const row = await mail.sendById(trx, id);
    return row ? ok(sendOut(row)) : err(internal('the send was not recorded'));
  });
}

export async function listSends(ctx: Ctx, req: Identity.IdentityRequest<'sends-list'>): Promise<Result<{ data: Identity.BookSend[] }>> {
  return ok({ data: (await mail.sendsOf(ctx.db, req.caller.user_id)).map(sendOut) });
}

/** The sends due now, each taken for `lease_ms` (another worker skips them until then). */
export async function claimSends(ctx: Ctx, req: Identity.IdentityRequest<'sends-claim'>): Promise<Result<{ data: Identity.BookSend[] }>> {
  return ctx.tx(async (trx) => {
    const now = new Date();
    const due = await mail.dueSends(trx, now, req.limit);
    const until = new Date(now.getTime() + req.lease_ms).toISOString();
    for (const r of due) await ctx.emit(trx, `send-${r.id}`, 'any', [{ type: 'identity.book-send-claimed.v1', data: { send_id: r.id, until } }]);
    // each owner's language, for the words of the mail that carries the book
    const languages = new Map<string, string>();
    for (const id of new Set(due.map((r) => r.user_id))) languages.set(id, (await users.findById(trx, id))?.language ?? '');
    return ok({ data: due.map((r) => ({ ...sendOut(r), ...(languages.get(r.user_id) ? { language: languages.get(r.user_id) } : {}) })) });
  });
}

/** What came of a try: sent, tried again later (with backoff), or failed for good. */
export async function sendResult(ctx: Ctx, req: Identity.IdentityRequest<'send-result'>): Promise<Result<Identity.BookSend>> {
  if (!isUuid(req.send_id)) return err(validation('send_id must be a send id'));
  return ctx.tx(async (trx) => {
    const row = await mail.sendById(trx, req.send_id, true);
    if (!row) return err(fail('not_found', 'send not found'));
    // a result for a send that is no longer pending (a second worker after a lease ran out) changes nothing
    if (row.status !== 'pending') return ok(sendOut(row));
    const attempt = row.attempts + 1;
    const o = sendOutcome(attempt, req.ok, req.permanent, new Date());
    const detail = req.detail.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 1000);
    await ctx.emit(trx, `send-${row.id}`, 'any', [
      { type: 'identity.book-send-attempted.v1', data: { send_id: row.id, attempt, outcome: o.outcome, detail, next_attempt_at: o.next_attempt_at } },
    ]);
    const after = await mail.sendById(trx, row.id);
    return after ? ok(sendOut(after)) : err(internal('the send was not recorded'));
  });
}

export const handlers = {
  'password-reset-request': requestReset,
  'password-reset-complete': completeReset,
  'invitation-create': createInvitation,
  'invitations-list': listInvitations,
  'invitation-revoke': revokeInvitation,
  'invitation-peek': peekInvitation,
  'invitation-accept': acceptInvitation,
  'ereader-get': getEreader,
  'ereader-set': setEreader,
  'send-create': createSend,
  'sends-list': listSends,
  'sends-claim': claimSends,
  'send-result': sendResult,
};
