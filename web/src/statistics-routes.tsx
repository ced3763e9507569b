// The reading statistics pages (decision 120): the caller's own figures, as /api/me/statistics
// answers them, and the library's for admins (/api/admin/statistics), for the year asked (this year
// by default).
import type { Web } from './context';
import { i18nFor } from './i18n/request';
import { Failed } from './layout';
import { AdminStatisticsPage } from './pages/admin-statistics';
import { StatisticsPage } from './pages/statistics';

/** The `year` of the page's query, as the API takes it (absent: this year). */
const yearAsked = (req: { query: unknown }) => {
  const year = (req.query as { year?: unknown }).year;
  return typeof year === 'string' ? year : undefined;
};

export function statisticsRoutes({ page, render }: Web): void {
  page('/statistics', {}, async ({ req, reply, api, viewer }) => {
    const r = await api.get('/api/me/statistics', { query: { year: yearAsked(req) } });
    const title = i18nFor(req).t('stats.title');
    if (r.status !== 200) return render(reply, title, viewer, '/statistics', <Failed status={r.status} />, r.status === 400 ? 400 : 502);
    return render(reply, title, viewer, '/statistics', <StatisticsPage s={r.body} />);
  });
  // an admin page: 404 for anyone else, as the other admin pages
  page('/admin/statistics', { admin: true }, async ({ req, reply, api, viewer }) => {
    const r = await api.get('/api/admin/statistics', { query: { year: yearAsked(req) } });
    const title = i18nFor(req).t('adminStatistics.title');
    if (r.status !== 200) return render(reply, title, viewer, '/admin/libraries', <Failed status={r.status} />, r.status === 400 ? 400 : 502);
    return render(reply, title, viewer, '/admin/libraries', <AdminStatisticsPage s={r.body} />);
  });
}
