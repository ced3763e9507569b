// The library's reading statistics for admins (decision 120): the year's totals, time read each month
// drawn on the server as SVG with the table it is drawn from, the most read books, and by name only
// the people who let admins see their figures. Everyone else is in the totals, never named.
import type { LibraryStatistics } from '@bindery/contracts/api/statistics';
import { useI18n } from '../i18n';
import { AdminTabs } from './admin-tabs';
import { formats, MonthBars, StatsTable } from './statistics';

export function AdminStatisticsPage({ s }: { s: LibraryStatistics }) {
  const { t, locale } = useI18n();
  const f = formats(locale, t);
  const year = String(s.year);
  return (
    <section aria-labelledby="admin-stats-heading">
      <h1 id="admin-stats-heading">{t('adminStatistics.heading', { year })}</h1>
      <AdminTabs current="/admin/statistics" />
      <nav aria-label={t('stats.years')} class="subnav">
        <ul class="subnav-list">
          <li>
            <a href={`/admin/statistics?year=${s.year - 1}`}>{s.year - 1}</a>
          </li>
          <li>
            <a href={`/admin/statistics?year=${s.year + 1}`}>{s.year + 1}</a>
          </li>
        </ul>
      </nav>
      <p id="admin-stats-privacy">{t('adminStatistics.privacy', { sharing: s.sharing })}</p>
      <dl class="stats-totals">
        <dt>{t('stats.timeRead')}</dt>
        <dd id="admin-stats-time">{f.minutes(s.seconds)}</dd>
        <dt>{t('adminStatistics.activeReaders')}</dt>
        <dd id="admin-stats-readers">{f.int(s.active_readers)}</dd>
        <dt>{t('adminStatistics.sharing')}</dt>
        <dd id="admin-stats-sharing">{f.int(s.sharing)}</dd>
      </dl>
      <h2>{t('stats.monthByMonth')}</h2>
      <figure class="stats-chart">
        <MonthBars
          id="library-chart"
          months={s.months}
          title={t('adminStatistics.chartTitle', { year })}
          desc={t('adminStatistics.chartDesc', { time: f.minutes(s.seconds), year })}
          f={f}
        />
        <figcaption>
          <StatsTable
            caption={t('adminStatistics.eachMonth', { year })}
            columns={[t('stats.month'), t('stats.timeRead'), t('adminStatistics.readers')]}
            rows={s.months.map((m) => ({ key: m.month, cells: [f.month(m.month), f.minutes(m.seconds), f.int(m.readers)] }))}
          />
        </figcaption>
      </figure>
      <h2>{t('adminStatistics.mostRead')}</h2>
      {s.books.length === 0 ? (
        <p>{t('stats.noReading', { year })}</p>
      ) : (
        <StatsTable
          id="admin-stats-books"
          caption={t('adminStatistics.booksCaption', { year })}
          columns={[t('stats.book'), t('adminStatistics.readers'), t('stats.timeRead')]}
          rows={s.books.map((b) => ({
            key: b.id,
            cells: [b.title === null ? t('adminStatistics.gone') : <a href={`/books/${encodeURIComponent(b.id)}`}>{b.title}</a>, f.int(b.readers), f.minutes(b.seconds)],
          }))}
        />
      )}
      <h2>{t('adminStatistics.people')}</h2>
      {s.readers.length === 0 ? (
        <p>{t('adminStatistics.nobody', { year })}</p>
      ) : (
        <StatsTable
          id="admin-stats-people"
          caption={t('adminStatistics.peopleCaption', { year })}
          columns={[t('adminStatistics.person'), t('stats.timeRead'), t('stats.daysRead'), t('stats.books')]}
          rows={s.readers.map((r) => ({ key: r.username, cells: [r.username, f.minutes(r.seconds), f.int(r.days_read), f.int(r.books)] }))}
        />
      )}
    </section>
  );
}
