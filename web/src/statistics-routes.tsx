// The reading statistics page (decision 120): the caller's own figures, as /api/me/statistics
// answers them, for the year asked (this year by default).
import type { Web } from './context';
import { Failed } from './layout';
import { type Statistics, StatisticsPage } from './pages/statistics';

export function statisticsRoutes({ page, render }: Web): void {
  page('/statistics', {}, async ({ req, reply, api, viewer }) => {
    const year = (req.query as { year?: unknown }).year;
    const q = typeof year === 'string' ? `?year=${encodeURIComponent(year)}` : '';
    const r = await api<Statistics>('GET', `/api/me/statistics${q}`);
    if (r.status !== 200) return render(reply, 'Reading statistics', viewer, '/statistics', <Failed status={r.status} />, r.status === 400 ? 400 : 502);
    return render(reply, 'Reading statistics', viewer, '/statistics', <StatisticsPage s={r.body} locale="en" />);
  });
}
