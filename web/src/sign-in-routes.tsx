// Where a visit starts: the root (to first run, the dashboard or sign-in), the first run's page and
// the sign-in page, none of which needs a session; and the language picker those pages show.
import { type Api, apiFor } from './api';
import { type Web, viewerOf } from './context';
import { localTarget, redirectTo, securityHeaders } from './http';
import { LANGUAGE_COOKIE, LOCALES } from './i18n';
import { i18nFor } from './i18n/request';
import { FirstRun, SignIn } from './pages/auth';
import { ssoConfig } from './sso-routes';

const needsSetup = async (api: Api): Promise<boolean> => (await api.get('/api/setup/status')).body?.needs_setup === true;

/** the language cookie lasts a year; `auto` (the browser's) clears it */
const LANGUAGE_MAX_AGE = 365 * 24 * 3600;

export function signInRoutes({ app, render }: Web): void {
  app.get('/', async (req, reply) => {
    const api = apiFor(app, req);
    if (await needsSetup(api)) return redirectTo(req, reply, '/setup');
    return redirectTo(req, reply, (await viewerOf(api)) ? '/dashboard' : '/login');
  });

  app.get('/setup', async (req, reply) => {
    const api = apiFor(app, req);
    if (!(await needsSetup(api))) return redirectTo(req, reply, '/login');
    return render(reply, i18nFor(req).t('setup.title'), null, undefined, <FirstRun />);
  });

  app.get('/login', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    // `next` is what the device approval page sent before this page existed
    const target = localTarget(q.redirect ?? q.next);
    const api = apiFor(app, req);
    if (await needsSetup(api)) return redirectTo(req, reply, '/setup');
    if (await viewerOf(api)) return redirectTo(req, reply, target);
    return render(reply, i18nFor(req).t('signIn.title'), null, undefined, <SignIn redirect={target} sso={await ssoConfig(api)} />);
  });

  // the sign-in and first-run pages' language picker: a cookie of this site, then back to the page
  app.post('/language', async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const language = body.language;
    const back = localTarget(body.back, '/login');
    const isAuto = language === 'auto';
    if (!isAuto && !(typeof language === 'string' && (LOCALES as readonly string[]).includes(language))) {
      return securityHeaders(reply)
        .code(400)
        .type('text/plain; charset=utf-8')
        .send(`language must be one of ${[...LOCALES, 'auto'].join(', ')}`);
    }
    const secure = req.protocol === 'https' ? '; Secure' : '';
    const cookie = isAuto
      ? `${LANGUAGE_COOKIE}=; Path=/; Max-Age=0; SameSite=Lax${secure}`
      : `${LANGUAGE_COOKIE}=${language}; Path=/; Max-Age=${LANGUAGE_MAX_AGE}; SameSite=Lax${secure}`;
    reply.header('Set-Cookie', cookie);
    return redirectTo(req, reply, back);
  });
}
