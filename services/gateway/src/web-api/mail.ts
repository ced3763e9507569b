// Mail (issue 47): the test mail, password reset links, invitations and each person's e-reader
// address. Identity makes and checks the links; this process mails them. Without SMTP_URL and
// MAIL_FROM every route here but the status answers 503 `mail is not configured`.
import type { FastifyInstance } from 'fastify';
import { fail, Messages } from '@bindery/contracts';
import { isFragment, sendFailure } from '../http/reply';
import { errors, fragmentErrors, MessageBody, serviceBody, SIGNED_IN } from '../http/schemas';
import { bodyOf } from './auth';
import { testText } from '@bindery/identity/mail-texts';
import { resetMail } from '../mail/links';
import { type MailContext, type MailDeps, mailContext, NO_LINK_BASE } from './mail-context';
import { invitationAdminRoutes, invitationLinkRoutes } from './mail-invitations';
import { bookSendRoutes, ereaderRoutes } from './mail-sends';
import { MailStatus } from '@bindery/contracts/api/auth';

export { MAIL_NOT_CONFIGURED, type MailDeps } from './mail-context';
export { noFormatFor, tooLarge } from './mail-sends';

/** The one answer to a reset request, whether or not the address has an account. */
export const RESET_REQUESTED = 'if an account has this e-mail address, a link to reset its password is on its way';

export function mailRoutes(app: FastifyInstance, d: MailDeps): void {
  const c = mailContext(d);
  mailStatusRoutes(app, c);
  passwordResetRoutes(app, c);
  invitationAdminRoutes(app, c);
  invitationLinkRoutes(app, c);
  bookSendRoutes(app, c);
  ereaderRoutes(app, c);
}

/** Whether mail is set up, and a test mail to the admin. */
function mailStatusRoutes(app: FastifyInstance, c: MailContext): void {
  const { mailer, call, auth, needsMail, refusedBy, ok, tags } = c;
  app.get('/api/mail/status', { schema: { tags, summary: 'whether this server sends mail', response: { 200: MailStatus } } }, async () => ({
    configured: mailer !== null,
    max_attachment_bytes: mailer?.config.maxAttachmentBytes ?? 0,
  }));

  app.post(
    '/api/admin/mail/test',
    {
      onRequest: [auth.requireAdmin, needsMail],
      schema: { tags, summary: "mail a test message to the admin's own address", response: { 200: MessageBody, ...errors(...SIGNED_IN, 502, 503) } },
      config: { fragmentErrors: true },
    },
    async (req, reply) => {
      const me = await call('profile-get', { caller: req.caller! });
      if (!me.ok) return sendFailure(reply, me.error, isFragment(req));
      const to = me.value.email;
      const sent = await mailer!.send({ to, ...testText(me.value.language) });
      if (!sent.ok) return refusedBy(reply, req, sent.error);
      return ok(req, reply, 200, { message: `test mail sent to ${to}` });
    },
  );
}

/** A reset link mailed on request, and the new password set with its token. */
function passwordResetRoutes(app: FastifyInstance, c: MailContext): void {
  const { mailer, call, needsMail, limited, ok, tags } = c;
  app.post(
    '/api/auth/password-reset/request',
    {
      onRequest: needsMail,
      schema: {
        tags,
        summary: 'mail a password reset link (the answer is the same for every address)',
        body: serviceBody({ email: 'the account’s e-mail address' }),
        response: { 202: MessageBody, ...fragmentErrors(400, 429), ...errors(503) },
      },
      config: { fragmentErrors: true, ...limited },
    },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest), isFragment(req));
      const base = c.origins.publicBase(req);
      const r = await call('password-reset-request', { input });
      if (!r.ok) return sendFailure(reply, r.error, isFragment(req));
      const m = r.value.mail;
      // mailed after the answer: a known address answers as fast as an unknown one
      if (m) {
        if (!base) c.log.warn(NO_LINK_BASE);
        else
          void mailer!.send(resetMail(base, m.to, m.username, m.token, m.expires_at, m.language)).then((s) => {
            if (!s.ok) c.log.warn({ error: s.error }, 'a password reset mail was refused');
          });
      }
      return ok(req, reply, 202, { message: RESET_REQUESTED });
    },
  );

  app.post(
    '/api/auth/password-reset',
    {
      onRequest: needsMail,
      schema: {
        tags,
        summary: "set a new password with a reset link's token (ends every session of the account)",
        body: serviceBody({ token: 'from the link', new_password: 'the new password', confirm_password: 'the same again' }),
        response: { 200: MessageBody, ...fragmentErrors(400), ...errors(503) },
      },
      config: { fragmentErrors: true, ...limited },
    },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest), isFragment(req));
      const r = await call('password-reset-complete', { input });
      if (!r.ok) return sendFailure(reply, r.error, isFragment(req));
      return ok(req, reply, 200, r.value, '/login');
    },
  );
}
