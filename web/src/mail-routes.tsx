// Mail's pages (issue 47): forgot password, reset, an invitation's account, the admin's mail page,
// and the fragments the sign-in, profile and settings pages load (empty while mail is off, so
// those pages show nothing of it).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiFor, type Api } from './api';
import { sendHtml } from './http';
import { i18nFor } from './i18n/request';
import { NotFound } from './layout';
import type { Web } from './context';
import { AcceptInvitation, AdminMail, EreaderCard, ForgotPassword, InvitationList, MailCard, ResetPassword } from './pages/mail';

const mailStatus = async (api: Api): Promise<{ configured: boolean; max_attachment_bytes: number }> => {
  const r = await api.get('/api/mail/status');
  return r.status === 200 ? r.body : { configured: false, max_attachment_bytes: 0 };
};
const tokenOf = (req: FastifyRequest): string => {
  const t = (req.query as Record<string, unknown> | undefined)?.token;
  return typeof t === 'string' && /^[A-Za-z0-9_-]{1,256}$/.test(t) ? t : '';
};
const nothing = (reply: FastifyReply) => reply.code(200).type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send('');

export function mailRoutes({ app, page, render }: Web): void {
  const off = (reply: FastifyReply) => {
    const { t } = i18nFor(reply.request);
    return render(reply, t('notFound.title'), null, undefined, <NotFound href="/login" back={t('mail.backToSignIn')} />, 404);
  };

  // the sign-in page's link, loaded with it
  app.get('/login/forgot-link', async (req, reply) => {
    if (!(await mailStatus(apiFor(app, req))).configured) return nothing(reply);
    return sendHtml(
      reply,
      <p id="forgot-link">
        <a href="/forgot-password">{i18nFor(req).t('mail.forgotLink')}</a>
      </p>,
      200,
      true,
    );
  });

  app.get('/forgot-password', async (req, reply) => {
    if (!(await mailStatus(apiFor(app, req))).configured) return off(reply);
    return render(reply, i18nFor(req).t('mail.forgot.title'), null, undefined, <ForgotPassword />);
  });

  app.get('/reset-password', async (req, reply) => {
    if (!(await mailStatus(apiFor(app, req))).configured) return off(reply);
    // the token stays out of other sites' logs: nothing on this page sends a Referer
    reply.header('Referrer-Policy', 'no-referrer');
    return render(reply, i18nFor(req).t('mail.reset.title'), null, undefined, <ResetPassword token={tokenOf(req)} />);
  });

  app.get('/invitation', async (req, reply) => {
    const api = apiFor(app, req);
    if (!(await mailStatus(api)).configured) return off(reply);
    reply.header('Referrer-Policy', 'no-referrer');
    const token = tokenOf(req);
    const r = token ? await api.get('/api/invitations/:token', { params: { token } }) : null;
    return render(
      reply,
      i18nFor(req).t('mail.invitation.title'),
      null,
      undefined,
      <AcceptInvitation token={token} invitation={r?.status === 200 ? r.body : null} />,
      r?.status === 200 ? 200 : 404,
    );
  });

  page('/admin/mail', { admin: true }, async ({ req, reply, api, viewer }) => {
    const { t } = i18nFor(req);
    const status = await mailStatus(api);
    if (!status.configured) return render(reply, t('notFound.title'), viewer, undefined, <NotFound />, 404);
    const [inv, libs] = await Promise.all([api.get('/api/admin/invitations'), api.get('/api/libraries')]);
    const libraries = libs.status === 200 ? libs.body.map((l) => ({ id: l.id, name: l.name })) : [];
    return render(
      reply,
      t('mail.title'),
      viewer,
      '/admin/system',
      <AdminMail invitations={inv.status === 200 ? inv.body.invitations : []} libraries={libraries} maxBytes={status.max_attachment_bytes} />,
    );
  });

  page('/admin/mail/invitations', { admin: true }, async ({ reply, api }) => {
    const inv = await api.get('/api/admin/invitations');
    return sendHtml(reply, <InvitationList invitations={inv.status === 200 ? inv.body.invitations : []} />, 200, true);
  });

  // the admin settings page's card
  page('/admin/mail/card', { admin: true }, async ({ reply, api }) => {
    if (!(await mailStatus(api)).configured) return nothing(reply);
    return sendHtml(reply, <MailCard />, 200, true);
  });

  // the profile's e-reader address
  page('/profile/ereader', {}, async ({ reply, api }) => {
    if (!(await mailStatus(api)).configured) return nothing(reply);
    const [r, sends] = await Promise.all([api.get('/api/auth/ereader'), api.get('/api/sends')]);
    return sendHtml(reply, <EreaderCard address={r.status === 200 ? r.body.address : ''} sends={sends.status === 200 ? sends.body.data : []} />, 200, true);
  });
}
