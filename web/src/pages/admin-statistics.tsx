// The library's reading statistics for admins (decision 120): the year's totals, time read each month
// drawn on the server as SVG with the table it is drawn from, the most read books, and by name only
// the people who let admins see their figures. Everyone else is in the totals, never named.
import type { LibraryStatistics } from '@bindery/contracts/api/statistics';
import { useI18n } from '../i18n';
import { AdminTabs } from './admin-tabs';
import { formats, MonthBars } from './statistics';

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
          <table class="stack stats-table">
            <caption>{t('adminStatistics.eachMonth', { year })}</caption>
            <thead>
              <tr>
                <th scope="col">{t('stats.month')}</th>
                <th scope="col">{t('stats.timeRead')}</th>
                <th scope="col">{t('adminStatistics.readers')}</th>
              </tr>
            </thead>
            <tbody>
              {s.months.map((m) => (
                <tr key={m.month}>
                  <th scope="row">{f.month(m.month)}</th>
                  <td data-label={t('stats.timeRead')}>{f.minutes(m.seconds)}</td>
                  <td data-label={t('adminStatistics.readers')}>{f.int(m.readers)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </figcaption>
      </figure>
      <h2>{t('adminStatistics.mostRead')}</h2>
      {s.books.length === 0 ? (
        <p>{t('stats.noReading', { year })}</p>
      ) : (
        <table class="stack stats-table" id="admin-stats-books">
          <caption>{t('adminStatistics.booksCaption', { year })}</caption>
          <thead>
            <tr>
              <th scope="col">{t('stats.book')}</th>
              <th scope="col">{t('adminStatistics.readers')}</th>
              <th scope="col">{t('stats.timeRead')}</th>
            </tr>
          </thead>
          <tbody>
            {s.books.map((b) => (
              <tr key={b.id}>
                <th scope="row">{b.title === null ? t('adminStatistics.gone') : <a href={`/books/${encodeURIComponent(b.id)}`}>{b.title}</a>}</th>
                <td data-label={t('adminStatistics.readers')}>{f.int(b.readers)}</td>
                <td data-label={t('stats.timeRead')}>{f.minutes(b.seconds)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>{t('adminStatistics.people')}</h2>
      {s.readers.length === 0 ? (
        <p>{t('adminStatistics.nobody', { year })}</p>
      ) : (
        <table class="stack stats-table" id="admin-stats-people">
          <caption>{t('adminStatistics.peopleCaption', { year })}</caption>
          <thead>
            <tr>
              <th scope="col">{t('adminStatistics.person')}</th>
              <th scope="col">{t('stats.timeRead')}</th>
              <th scope="col">{t('stats.daysRead')}</th>
              <th scope="col">{t('stats.books')}</th>
            </tr>
          </thead>
          <tbody>
            {s.readers.map((r) => (
              <tr key={r.username}>
                <th scope="row">{r.username}</th>
                <td data-label={t('stats.timeRead')}>{f.minutes(r.seconds)}</td>
                <td data-label={t('stats.daysRead')}>{f.int(r.days_read)}</td>
                <td data-label={t('stats.books')}>{f.int(r.books)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
