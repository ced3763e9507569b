// The home page: the dashboard's sections, and the names of those hidden (to show them again).
import type { Web } from './context';
import { i18nFor } from './i18n/request';
import { Failed } from './layout';
import { Dashboard } from './pages/dashboard';

export function dashboardRoutes({ page, render }: Web): void {
  page('/dashboard', {}, async ({ req, reply, api, viewer }) => {
    const title = i18nFor(req).t('dash.title');
    const r = await api.get('/api/dashboard/sections', { query: { limit: '12' } });
    if (r.status !== 200) return render(reply, title, viewer, '/dashboard', <Failed status={r.status} />, 502);
    // the hidden sections' names, to show them again (the collection list counts every collection's
    // books, uncached: asked only when something is hidden)
    let hidden: { id: string; name: string }[] = [];
    if (r.body.hidden_collections.length > 0) {
      const all = await api.get('/api/collections');
      if (all.status === 200) hidden = all.body.data.filter((c) => c.show_on_dashboard && r.body.hidden_collections.includes(c.id));
    }
    return render(reply, title, viewer, '/dashboard', <Dashboard sections={r.body.sections} hidden={hidden} username={viewer.username} />, 200, {
      topic: 'progress',
      refresh: '#sections',
    });
  });
}
