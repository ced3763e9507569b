// Mail (issue 47): the test mail, password reset links, invitations and each person's e-reader
// address. Identity makes and checks the links; this process mails them. Without SMTP_URL and
// MAIL_FROM every route here but the status answers 503 `mail is not configured`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { type Catalog, type Failure, fail, httpStatusOf, Identity, isUuid, Messages } from '@bindery/contracts';
import type { Logger, Mailer } from '@bindery/platform';
import type { Auth } from '../http/authenticate';
import type { CallIdentity } from '../http/rpc';
import type { Origins } from '../http/origin';
import type { Reads } from '../read-model/reads';
import { escapeHtml, isFragment, sendFailure, sendFragment, sendResult } from '../http/reply';
import { errors, fragmentErrors, MessageBody, params, serviceBody, SIGNED_IN } from '../http/schemas';
import { setSessionCookie, type CookiePolicy } from '../http/session-cookie';
import { authResponse, bodyOf } from './auth';
import { AuthResponse } from './auth-schemas';
import { invitationMail, resetMail } from '../mail/links';
import { bestFormat, isKindle, type SendWorker } from '../mail/sends';

export const MAIL_NOT_CONFIGURED = 'mail is not configured';
/** The one answer to a reset request, whether or not the address has an account. */
export const RESET_REQUESTED = 'if an account has this e-mail address, a link to reset its password is on its way';
const NO_LINK_BASE = 'this server does not know its public address: set PUBLIC_URL to send links';

export interface MailDeps {
  mailer: Mailer | null;
  call: CallIdentity;
  auth: Auth;
  reads: Reads;
  origins: Origins;
  cookie: CookiePolicy;
  log: Logger;
  /** reset requests carry the per-client-address limit of login and register */
  rateLimited: boolean;
  /** mails the books people send to their e-readers (null when mail is off) */
  sends: SendWorker | null;
}

/** The answer when a book is too large for the mail limit. */
export const tooLarge = (size: number, limit: number) => `the book is ${megabytes(size)} MB, more than the ${megabytes(limit)} MB a mail may carry`;
const megabytes = (n: number) => (n / 1e6).toFixed(n >= 10e6 ? 0 : 1);
/** The answer when a book has no format the address takes. */
export const noFormatFor = (address: string) =>
  `this book has no format ${isKindle(address) ? 'a Kindle takes (EPUB or PDF)' : 'an e-reader takes by mail (EPUB, PDF, AZW3, MOBI, FB2 or a comic archive)'}`;

/** a send as identity answers it (the contract's own schema) */
const Send = Identity.BookSend;

const Invitation = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.String(),
  all_libraries: Type.Boolean(),
  library_ids: Type.Array(Type.String()),
  expires_at: Type.String(),
  created_at: Type.String(),
  invited_by: Type.String(),
});

export function mailRoutes(app: FastifyInstance, d: MailDeps): void {
  const { mailer, call, auth } = d;
  const limited = d.rateLimited ? { rateLimit: {} } : {};
  const unconfigured = (req: FastifyRequest, reply: FastifyReply) => sendFailure(reply, fail('service_unavailable', MAIL_NOT_CONFIGURED), isFragment(req));
  /** onRequest of every mail route: 503 before anything else when mail is off */
  const needsMail = async (req: FastifyRequest, reply: FastifyReply) => {
    if (!mailer) return unconfigured(req, reply);
  };
  const refusedBy = (reply: FastifyReply, req: FastifyRequest, said: string) => {
    const message = `the mail server refused the message: ${said}`;
    if (isFragment(req))
      return reply
        .code(502)
        .type('text/html; charset=utf-8')
        .send(`<div class="alert alert-error" role="alert">${escapeHtml(message)}</div>`);
    return reply.code(502).send({ error: message });
  };
  const ok = (req: FastifyRequest, reply: FastifyReply, status: number, body: Record<string, unknown> & { message: string }, redirect?: string) =>
    isFragment(req) ? sendFragment(reply, status, `<div class="alert alert-success" role="status">${escapeHtml(body.message)}</div>`, redirect) : reply.code(status).send(body);
  const tags = ['mail'];

  app.get(
    '/api/mail/status',
    { schema: { tags, summary: 'whether this server sends mail', response: { 200: Type.Object({ configured: Type.Boolean(), max_attachment_bytes: Type.Integer() }) } } },
    async () => ({ configured: mailer !== null, max_attachment_bytes: mailer?.config.maxAttachmentBytes ?? 0 }),
  );

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
      const to = (me.value as Identity.UserProfile).email;
      const sent = await mailer!.send({ to, subject: 'Bindery test mail', text: 'This is a test mail from your Bindery server: mail works.' });
      if (!sent.ok) return refusedBy(reply, req, sent.error);
      return ok(req, reply, 200, { message: `test mail sent to ${to}` });
    },
  );

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
      const base = d.origins.publicBase(req);
      const r = await call('password-reset-request', { input });
      if (!r.ok) return sendFailure(reply, r.error, isFragment(req));
      const m = (r.value as { mail: Identity.LinkMail | null }).mail;
      // mailed after the answer: a known address answers as fast as an unknown one
      if (m) {
        if (!base) d.log.warn(NO_LINK_BASE);
        else
          void mailer!.send(resetMail(base, m.to, m.username, m.token, m.expires_at)).then((s) => {
            if (!s.ok) d.log.warn({ error: s.error }, 'a password reset mail was refused');
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
      return ok(req, reply, 200, r.value as { message: string }, '/login');
    },
  );

  const admin = { onRequest: [auth.requireAdmin, needsMail] };
  app.get(
    '/api/admin/invitations',
    { ...admin, schema: { tags, summary: 'open invitations (admin)', response: { 200: Type.Object({ invitations: Type.Array(Invitation) }), ...errors(...SIGNED_IN, 503) } } },
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
    async (req, reply) => {
      const frag = isFragment(req);
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest), frag);
      // a form sends its checkboxes as text: `all_libraries=on`, `library_ids` once or many times
      if (typeof input.all_libraries === 'string') input.all_libraries = input.all_libraries === 'on' || input.all_libraries === 'true';
      if (typeof input.library_ids === 'string') input.library_ids = [input.library_ids];
      if (Array.isArray(input.library_ids)) {
        const known = await d.reads.catalog.libraryIds();
        const unknown = input.library_ids.find((x) => typeof x === 'string' && isUuid(x) && !known.has(x.toLowerCase()));
        if (unknown !== undefined) return sendFailure(reply, fail('validation', `${Messages.libraryNotFound}: ${String(unknown)}`), frag);
      }
      const base = d.origins.publicBase(req);
      if (!base) return sendFailure(reply, fail('service_unavailable', NO_LINK_BASE), frag);
      const r = await call('invitation-create', { caller: req.caller!, input });
      if (!r.ok) return sendFailure(reply, r.error, frag);
      const { invitation, mail } = r.value as { invitation: Identity.Invitation; mail: Identity.LinkMail };
      const sent = await mailer!.send(invitationMail(base, mail.to, mail.token, mail.expires_at));
      if (!sent.ok) {
        // an invitation nobody received is withdrawn: the admin sees why and may try again
        await call('invitation-revoke', { caller: req.caller!, invitation_id: invitation.id });
        return refusedBy(reply, req, sent.error);
      }
      if (frag) reply.header('HX-Trigger', 'invitations-changed');
      return ok(req, reply, 201, { message: `invitation sent to ${invitation.email}`, invitation });
    },
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
      return ok(req, reply, 200, r.value as { message: string });
    },
  );

  app.get(
    '/api/invitations/:token',
    {
      onRequest: needsMail,
      schema: {
        tags,
        summary: "what an invitation's link offers",
        params: params({ token: 'from the link' }),
        response: { 200: Type.Object({ email: Type.String(), role: Type.String(), expires_at: Type.String() }), ...errors(404, 503) },
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
      onRequest: [needsMail, async (req, reply) => (d.origins.crossSite(req) ? sendFailure(reply, fail('forbidden', Messages.crossOriginRefused), isFragment(req)) : undefined)],
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
      const a = r.value as Identity.AuthResult;
      setSessionCookie(reply, a.session.access_token, a.session.expires_in, d.cookie);
      if (isFragment(req)) return sendFragment(reply, 201, `<div class="alert alert-success" role="status">Welcome, ${escapeHtml(a.user.username)}.</div>`, '/dashboard');
      return reply.code(201).send(authResponse(a));
    },
  );

  const Address = Type.Object({ address: Type.String() });
  // ---- books to e-readers ----
  /** Records a send of one book the caller may see to their address: the answer, or the refusal. */
  const sendOne = async (req: FastifyRequest, id: string): Promise<{ ok: true; message: string; send: Identity.BookSend } | { ok: false; failure: Failure }> => {
    const no = (code: Failure['code'], message: string) => ({ ok: false as const, failure: fail(code, message) });
    if (!isUuid(id)) return no('validation', Messages.invalidMediaItemId);
    const c = await d.reads.context(req.caller!);
    const found = await d.reads.catalog.item(c.access, id);
    if (!found.ok) return no('not_found', Messages.mediaItemNotFound);
    const item = JSON.parse(found.value) as Catalog.MediaItem;
    const a = await call('ereader-get', { caller: req.caller! });
    if (!a.ok) return { ok: false, failure: a.error };
    const address = (a.value as { address: string }).address;
    if (address === '') return no('validation', Identity.NO_EREADER_ADDRESS);
    const choice = bestFormat(item.formats, address, d.sends?.converter != null);
    if (!choice) return no('unprocessable', noFormatFor(address));
    const f = choice.file;
    const limit = mailer!.config.maxAttachmentBytes;
    if (f.size > limit) return no('payload_too_large', tooLarge(f.size, limit));
    const base = f.file_path.split('/').pop() ?? `book.${f.format}`;
    // a converted book goes as an EPUB of the same name
    const input = choice.convert
      ? { item_id: item.id, title: item.title, format: 'epub', file_name: `${base.replace(/\.[^.]+$/, '')}.epub`, size: f.size, convert_from: f.format }
      : { item_id: item.id, title: item.title, format: f.format, file_name: base, size: f.size };
    const r = await call('send-create', { caller: req.caller!, input });
    if (!r.ok) return { ok: false, failure: r.error };
    d.sends?.kick();
    return { ok: true, message: `${item.title} is on its way to ${address}`, send: r.value as Identity.BookSend };
  };
  app.post(
    '/api/media-items/:id/send',
    {
      onRequest: [auth.requireUser, needsMail],
      schema: {
        tags,
        summary: 'mail a book to your e-reader address (its best format for the address)',
        params: params({ id: 'the media item' }),
        response: { 202: Type.Object({ message: Type.String(), send: Send }), ...fragmentErrors(400, 404, 413, 422), ...errors(...SIGNED_IN, 502, 503) },
      },
      config: { fragmentErrors: true },
    },
    async (req, reply) => {
      const r = await sendOne(req, (req.params as { id: string }).id);
      if (!r.ok) return sendFailure(reply, r.failure, isFragment(req));
      return ok(req, reply, 202, { message: r.message, send: r.send });
    },
  );
  app.post(
    '/api/media-items/send',
    {
      onRequest: [auth.requireUser, needsMail],
      schema: {
        tags,
        summary: 'mail several books to your e-reader address, each on its own',
        body: serviceBody({ media_item_ids: 'the media items (at most 100)' }),
        response: {
          200: Type.Object({
            message: Type.String(),
            data: Type.Array(Type.Object({ media_item_id: Type.String(), status: Type.Integer(), error: Type.Optional(Type.String()), send: Type.Optional(Send) })),
          }),
          ...fragmentErrors(400),
          ...errors(...SIGNED_IN, 503),
        },
      },
      config: { fragmentErrors: true },
    },
    async (req, reply) => {
      const ids = (bodyOf(req) ?? {}).media_item_ids;
      if (!Array.isArray(ids) || ids.length === 0 || ids.length > 100 || !ids.every((x) => typeof x === 'string'))
        return sendFailure(reply, fail('validation', 'media_item_ids must be a list of 1 to 100 media item ids'), isFragment(req));
      const data = [];
      for (const id of new Set(ids as string[])) {
        const r = await sendOne(req, id);
        data.push(r.ok ? { media_item_id: id, status: 202, send: r.send } : { media_item_id: id, status: httpStatusOf(r.failure.code), error: r.failure.message });
      }
      const queued = data.filter((x) => x.status === 202).length;
      const message = `${queued} of ${data.length} ${data.length === 1 ? 'book' : 'books'} on the way${queued < data.length ? `; ${data.find((x) => x.error)?.error}` : ''}`;
      return ok(req, reply, 200, { message, data });
    },
  );
  app.get(
    '/api/sends',
    {
      onRequest: [auth.requireUser, needsMail],
      schema: { tags, summary: 'the books you sent to your e-reader, newest first', response: { 200: Type.Object({ data: Type.Array(Send) }), ...errors(...SIGNED_IN, 503) } },
    },
    async (req, reply) => sendResult(reply, await call('sends-list', { caller: req.caller! })),
  );

  app.get(
    '/api/auth/ereader',
    { onRequest: [auth.requireUser, needsMail], schema: { tags, summary: 'your e-reader’s e-mail address', response: { 200: Address, ...errors(...SIGNED_IN, 503) } } },
    async (req, reply) => sendResult(reply, await call('ereader-get', { caller: req.caller! })),
  );
  app.put(
    '/api/auth/ereader',
    {
      onRequest: [auth.requireUser, needsMail],
      schema: {
        tags,
        summary: 'set your e-reader’s e-mail address (empty removes it)',
        body: serviceBody({ address: 'e.g. name@kindle.com' }),
        response: { 200: Type.Object({ message: Type.String(), address: Type.String() }), ...fragmentErrors(400), ...errors(...SIGNED_IN, 503) },
      },
      config: { fragmentErrors: true },
    },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest), isFragment(req));
      const r = await call('ereader-set', { caller: req.caller!, input });
      if (!r.ok) return sendFailure(reply, r.error, isFragment(req));
      return ok(req, reply, 200, r.value as { message: string; address: string });
    },
  );
}
