// Invitations by mail: an admin invites an address (the mail carries the link), lists and withdraws
// open invitations; the link's page reads what it offers and makes the invited account.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { fail, isUuid, Messages } from '@bindery/contracts';
import { escapeHtml, isFragment, sendFailure, sendFragment, sendResult } from '../http/reply';
import { errors, fragmentErrors, MessageBody, params, serviceBody, SIGNED_IN } from '../http/schemas';
import { setSessionCookie } from '../http/session-cookie';
import { authResponse, bodyOf } from './auth';
import { AuthResponse } from './auth-schemas';
import { invitationMail } from '../mail/links';
import { type MailContext, NO_LINK_BASE } from './mail-context';
import { Invitation, InvitationOffer, Invitations } from '@bindery/contracts/api/auth';

/** The admin's invitations: the open ones, a new one mailed, one withdrawn. */
export function invitationAdminRoutes(app: FastifyInstance, c: MailContext): void {
  const { call, auth, needsMail, ok, tags } = c;
  const admin = { onRequest: [auth.requireAdmin, needsMail] };
  app.get(
    '/api/admin/invitations',
    { ...admin, schema: { tags, summary: 'open invitations (admin)', response: { 200: Invitations, ...errors(...SIGNED_IN, 503) } } },
    async (req, reply) => sendResult(reply, await call('invitations-list', { caller: req.caller! })),
  );

  app.post(
    '/api/admin/invitations',
    {
      ...admin,
      schema: {
        tags,
        summary: 'invite an address to make an account with a role and library access (admin)',
        body: serviceBody({ email: 'who is invited', role: "'user' (default) or 'admin'", all_libraries: 'every library', library_ids: 'these libraries' }),
        response: { 201: Type.Object({ message: Type.String(), invitation: Invitation }), ...fragmentErrors(400, 409, 502), ...errors(...SIGNED_IN, 503) },
      },
      config: { fragmentErrors: true },
    },
    async (req, reply) => invite(c, req, reply),
  );

  app.delete(
    '/api/admin/invitations/:id',
    {
      ...admin,
      schema: {
        tags,
        summary: 'withdraw an open invitation (admin)',
        params: params({ id: 'the invitation' }),
        response: { 200: MessageBody, ...errors(400, ...SIGNED_IN, 404, 503) },
      },
    },
    async (req, reply) => {
      const r = await call('invitation-revoke', { caller: req.caller!, invitation_id: (req.params as { id: string }).id });
      if (!r.ok) return sendFailure(reply, r.error, isFragment(req));
      if (isFragment(req)) reply.header('HX-Trigger', 'invitations-changed');
      return ok(req, reply, 200, r.value);
    },
  );
}

/** Makes an invitation and mails its link; an invitation whose mail is refused is withdrawn. */
async function invite(c: MailContext, req: FastifyRequest, reply: FastifyReply) {
  const { call, mailer, refusedBy, ok } = c;
  const frag = isFragment(req);
  const input = bodyOf(req);
  if (!input) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest), frag);
  // a form sends its checkboxes as text: `all_libraries=on`, `library_ids` once or many times
  if (typeof input.all_libraries === 'string') input.all_libraries = input.all_libraries === 'on' || input.all_libraries === 'true';
  if (typeof input.library_ids === 'string') input.library_ids = [input.library_ids];
  if (Array.isArray(input.library_ids)) {
    const known = await c.reads.catalog.libraryIds();
    const unknown = input.library_ids.find((x) => typeof x === 'string' && isUuid(x) && !known.has(x.toLowerCase()));
    if (unknown !== undefined) return sendFailure(reply, fail('validation', `${Messages.libraryNotFound}: ${String(unknown)}`), frag);
  }
  const base = c.origins.publicBase(req);
  if (!base) return sendFailure(reply, fail('service_unavailable', NO_LINK_BASE), frag);
  const r = await call('invitation-create', { caller: req.caller!, input });
  if (!r.ok) return sendFailure(reply, r.error, frag);
  const { invitation, mail } = r.value;
  const sent = await mailer!.send(invitationMail(base, mail.to, mail.token, mail.expires_at));
  if (!sent.ok) {
    // an invitation nobody received is withdrawn: the admin sees why and may try again
    await call('invitation-revoke', { caller: req.caller!, invitation_id: invitation.id });
    return refusedBy(reply, req, sent.error);
  }
  if (frag) reply.header('HX-Trigger', 'invitations-changed');
  return ok(req, reply, 201, { message: `invitation sent to ${invitation.email}`, invitation });
}

/** The invitation's link: what it offers, and the invited account made and signed in. */
export function invitationLinkRoutes(app: FastifyInstance, c: MailContext): void {
  const { call, needsMail, limited, tags } = c;
  app.get(
    '/api/invitations/:token',
    {
      onRequest: needsMail,
      schema: {
        tags,
        summary: "what an invitation's link offers",
        params: params({ token: 'from the link' }),
        response: { 200: InvitationOffer, ...errors(404, 503) },
      },
      config: limited,
    },
    async (req, reply) => {
      const token = (req.params as { token: string }).token;
      if (token.length > 256) return sendFailure(reply, fail('not_found', 'this invitation is invalid, used or expired'));
      return sendResult(reply, await call('invitation-peek', { token }));
    },
  );

  app.post(
    '/api/auth/invitations/accept',
    {
      // another site's page may not post a form that signs someone in
      onRequest: [needsMail, async (req, reply) => (c.origins.crossSite(req) ? sendFailure(reply, fail('forbidden', Messages.crossOriginRefused), isFragment(req)) : undefined)],
      schema: {
        tags,
        summary: 'make the invited account (its address, role and libraries are the invitation’s) and sign it in',
        body: serviceBody({
          token: 'from the link',
          username: 'the name to sign in with',
          password: 'a password',
          confirm_password: 'the same again',
          first_name: '',
          last_name: '',
        }),
        response: { 201: AuthResponse, ...fragmentErrors(400, 409), ...errors(503) },
      },
      config: { fragmentErrors: true, ...limited },
    },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest), isFragment(req));
      const ua = req.headers['user-agent'];
      const r = await call('invitation-accept', { input, client: typeof ua === 'string' ? ua.slice(0, 1000) : '' });
      if (!r.ok) return sendFailure(reply, r.error, isFragment(req));
      const a = r.value;
      setSessionCookie(reply, a.session.access_token, a.session.expires_in, c.cookie);
      if (isFragment(req)) return sendFragment(reply, 201, `<div class="alert alert-success" role="status">Welcome, ${escapeHtml(a.user.username)}.</div>`, '/dashboard');
      return reply.code(201).send(authResponse(a));
    },
  );
}
