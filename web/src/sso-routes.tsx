// Single sign-on's pages (issue 47): where a refused sign-in lands, the profile's link card and the
// app passwords page. They read the API's /api/auth/oidc routes in-process like every other page.
import { Identity } from '@bindery/contracts';
import { apiFor, type Api } from './api';
import { sendHtml } from './http';
import { i18nFor } from './i18n/request';
import type { Web } from './context';
import { AppPasswords, type SsoConfig, SsoLinkCard, SsoProblem } from './pages/sso';

/** Single sign-on's settings as the API states them (null when identity does not answer). */
export async function ssoConfig(api: Api): Promise<SsoConfig | null> {
  const r = await api.get('/api/auth/oidc/config');
  return r.status === 200 ? r.body : null;
}

export function ssoRoutes({ app, page, render, deps }: Web): void {
  const { origin } = deps;
  app.get('/login/sso', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    const problem: Identity.OidcProblem = Identity.isOidcProblem(q.problem) ? q.problem : 'failed';
    const sso = await ssoConfig(apiFor(app, req));
    const { t } = i18nFor(req);
    let message = t(`sso.problem.${problem}`);
    // local sign-in still works while the provider is away, unless the server takes only the provider
    if (problem === 'unavailable' && !sso?.only) message = `${message} ${t('sso.problem.passwordStillWorks')}`;
    return render(reply, t('sso.problem.title'), null, undefined, <SsoProblem message={message} sso={sso} />, problem === 'unavailable' ? 503 : 403);
  });

  // the profile's card, fetched after the page like its sessions (nothing when single sign-on is off)
  page('/profile/sso', {}, async ({ reply, api }) => {
    const r = await api.get('/api/auth/oidc/links');
    if (r.status !== 200 || !r.body.enabled) return reply.code(200).type('text/html; charset=utf-8').send('');
    return sendHtml(reply, <SsoLinkCard links={r.body} />, 200, true);
  });

  page('/profile/app-passwords', {}, async ({ req, reply, api, viewer }) => {
    const [links, key] = await Promise.all([api.get('/api/auth/oidc/links'), api.get('/api/auth/opds-key')]);
    const hasPassword = links.status === 200 ? links.body.has_password : true;
    const opdsKey = key.status === 200 ? key.body : { exists: false, created_at: null };
    return render(reply, i18nFor(req).t('sso.apps.title'), viewer, '/profile', <AppPasswords origin={origin?.(req) ?? ''} hasPassword={hasPassword} opdsKey={opdsKey} />);
  });
}
