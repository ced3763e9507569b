// Admin: the system page (the read models' state and the server's settings) and saving its settings.
import { action } from './actions';
import type { Web } from './context';
import { i18nFor } from './i18n/request';
import { Failed } from './layout';
import { AdminSystem } from './pages/admin-system';

export function adminSystemRoutes({ app, page, render }: Web): void {
  page('/admin/system', { admin: true }, async ({ req, reply, api, viewer }) => {
    const { t } = i18nFor(req);
    const [p, st] = await Promise.all([api.get('/api/admin/projections'), api.get('/api/system/settings')]);
    if (p.status !== 200) return render(reply, t('sys.title'), viewer, '/admin/system', <Failed status={p.status} />, 502);
    return render(reply, t('sys.title'), viewer, '/admin/system', <AdminSystem projections={p.body.data} settings={st.status === 200 ? (st.body.settings ?? []) : []} />);
  });

  // every setting of the form in one PUT: identity checks each by its type and bounds, and applies none unless all pass
  action(app, '/admin/system/settings', { done: 'settings updated successfully' }, async (a, f) => {
    const known = await a.get('/api/system/settings');
    if (known.status !== 200) return known;
    const settings: Record<string, string> = {};
    for (const s of known.body.settings) {
      const v = f[s.key];
      if (typeof v === 'string') settings[s.key] = v;
    }
    return a.put('/api/system/settings', { body: { settings } });
  });
}
