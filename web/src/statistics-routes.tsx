// The reading statistics page (decision 120): the caller's own figures, as /api/me/statistics
// answers them, for the year asked (this year by default).
import type { Web } from './context';
import { i18nFor } from './i18n/request';
import { Failed } from './layout';
import { StatisticsPage } from './pages/statistics';

export function statisticsRoutes({ page, render }: Web): void {
  page('/statistics', {}, async ({ req, reply, api, viewer }) => {
    const year = (req.query as { year?: unknown }).year;
    const r = await api.get('/api/me/statistics', { query: { year: typeof year === 'string' ? year : undefined } });
    const title = i18nFor(req).t('stats.title');
    if (r.status !== 200) return render(reply, title, viewer, '/statistics', <Failed status={r.status} />, r.status === 400 ? 400 : 502);
    return render(reply, title, viewer, '/statistics', <StatisticsPage s={r.body} />);
  });
}
