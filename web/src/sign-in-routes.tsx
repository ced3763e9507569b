// Where a visit starts: the root (to first run, the dashboard or sign-in), the first run's page and
// the sign-in page, none of which needs a session.
import { type Api, apiFor } from './api';
import { type Web, viewerOf } from './context';
import { localTarget, redirectTo } from './http';
import { FirstRun, SignIn } from './pages/auth';
import { ssoConfig } from './sso-routes';

const needsSetup = async (api: Api): Promise<boolean> => (await api.get('/api/setup/status')).body?.needs_setup === true;

export function signInRoutes({ app, render }: Web): void {
  app.get('/', async (req, reply) => {
    const api = apiFor(app, req);
    if (await needsSetup(api)) return redirectTo(req, reply, '/setup');
    return redirectTo(req, reply, (await viewerOf(api)) ? '/dashboard' : '/login');
  });

  app.get('/setup', async (req, reply) => {
    const api = apiFor(app, req);
    if (!(await needsSetup(api))) return redirectTo(req, reply, '/login');
    return render(reply, 'Welcome', null, undefined, <FirstRun />);
  });

  app.get('/login', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    // `next` is what the device approval page sent before this page existed
    const target = localTarget(q.redirect ?? q.next);
    const api = apiFor(app, req);
    if (await needsSetup(api)) return redirectTo(req, reply, '/setup');
    if (await viewerOf(api)) return redirectTo(req, reply, target);
    return render(reply, 'Sign in', null, undefined, <SignIn redirect={target} sso={await ssoConfig(api)} />);
  });
}
