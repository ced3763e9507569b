// The reading statistics page (decision 120): the person's year in figures, one chart drawn here as
// SVG (role="img" with its title and description, no script) and the table it is drawn from beside
// it for screen readers and for anyone who wants the numbers; numbers and dates through Intl.
import type { Figure, PersonStatistics } from '@bindery/contracts/api/statistics';
import type { ComponentChildren } from 'preact';
import { type I18n, useI18n } from '../i18n';

export type Statistics = PersonStatistics;

/** How the page writes numbers and dates: in the reader's locale (decision 121). */
export function formats(locale: string, t: I18n['t']) {
  const int = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
  const pct = new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 0 });
  // the days are already the person's (counted in their time zone): shown as they are, in UTC
  const day = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' });
  const month = new Intl.DateTimeFormat(locale, { month: 'short', timeZone: 'UTC' });
  return {
    minutes: (seconds: number) => t('stats.minutes', { minutes: int.format(Math.round(seconds / 60)) }),
    int: (n: number) => int.format(n),
    pct: (share: number) => pct.format(share),
    day: (date: string) => day.format(new Date(`${date}T00:00:00Z`)),
    month: (m: string) => month.format(new Date(`${m}-01T00:00:00Z`)),
  };
}

export type Formats = ReturnType<typeof formats>;

/** A row of a figures table: its key, its heading cell, then one cell for each further column. */
export interface StatsRow {
  key: string;
  cells: ComponentChildren[];
}

/**
 * A table of figures as every statistics page draws it: its caption, the columns' headings (the
 * first heads the rows), each row's first cell its heading, each further cell labelled by its
 * column for the stacked phone layout.
 */
export function StatsTable({ id, caption, columns, rows }: { id?: string; caption: string; columns: string[]; rows: StatsRow[] }) {
  return (
    <table class="stack stats-table" id={id}>
      <caption>{caption}</caption>
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col" key={c}>
              {c}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key}>
            <th scope="row">{r.cells[0]}</th>
            {r.cells.slice(1).map((cell, i) => (
              <td data-label={columns[i + 1]} key={columns[i + 1]}>
                {cell}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const W = 600;
const H = 200;
const PAD = 24;

/**
 * Minutes read each month as a bar chart drawn here: an image with its title and description (the
 * table beside it gives the figures), no script. `id` names its title and description.
 */
export function MonthBars({ id, months, title, desc, f }: { id: string; months: { month: string; seconds: number }[]; title: string; desc: string; f: Formats }) {
  const max = Math.max(1, ...months.map((m) => m.seconds));
  const slot = (W - PAD) / months.length;
  return (
    <svg role="img" aria-labelledby={`${id}-title ${id}-desc`} viewBox={`0 0 ${W} ${H + PAD}`} width="100%" focusable="false">
      <title id={`${id}-title`}>{title}</title>
      <desc id={`${id}-desc`}>{desc}</desc>
      {months.map((m, i) => {
        const h = Math.round((m.seconds / max) * (H - PAD));
        return (
          <g key={m.month}>
            <rect x={PAD + i * slot + 4} y={H - h} width={slot - 8} height={h} fill="currentColor" />
            <text x={PAD + i * slot + slot / 2} y={H + 16} text-anchor="middle" font-size="12" fill="currentColor">
              {f.month(m.month)}
            </text>
          </g>
        );
      })}
      <line x1={PAD} y1={H} x2={W} y2={H} stroke="currentColor" />
    </svg>
  );
}

/** Minutes read each month: a bar chart, with its table. */
export function MonthChart({ s, f }: { s: Statistics; f: Formats }) {
  const { t } = useI18n();
  const year = String(s.year);
  const total = s.months.reduce((n, m) => n + m.seconds, 0);
  return (
    <figure class="stats-chart">
      <MonthBars id="chart" months={s.months} title={t('stats.chartTitle', { year })} desc={t('stats.chartDesc', { time: f.minutes(total), year })} f={f} />
      <figcaption>
        <StatsTable
          caption={t('stats.eachMonth', { year })}
          columns={[t('stats.month'), t('stats.timeRead'), t('stats.booksStarted'), t('stats.booksFinished')]}
          rows={s.months.map((m) => ({ key: m.month, cells: [f.month(m.month), f.minutes(m.seconds), f.int(m.started), f.int(m.finished)] }))}
        />
      </figcaption>
    </figure>
  );
}

function FigureTable({ caption, rows, f, what }: { caption: string; rows: Figure[]; f: Formats; what: string }) {
  const { t } = useI18n();
  if (rows.length === 0) return null;
  return (
    <StatsTable
      caption={caption}
      columns={[what, t('stats.timeRead'), t('stats.books')]}
      rows={rows.map((r) => ({ key: r.name, cells: [r.name, f.minutes(r.seconds), f.int(r.books)] }))}
    />
  );
}

export function StatisticsPage({ s }: { s: Statistics }) {
  const { t, locale } = useI18n();
  const f = formats(locale, t);
  const n = s.totals;
  const year = String(s.year);
  return (
    <section aria-labelledby="stats-heading">
      <h1 id="stats-heading">{t('stats.heading', { year })}</h1>
      <nav aria-label={t('stats.years')} class="subnav">
        <ul class="subnav-list">
          <li>
            <a href={`/statistics?year=${s.year - 1}`}>{s.year - 1}</a>
          </li>
          <li>
            <a href={`/statistics?year=${s.year + 1}`}>{s.year + 1}</a>
          </li>
        </ul>
      </nav>
      <p>{t('stats.zone', { zone: s.timezone })}</p>
      <h2>{t('stats.review')}</h2>
      <dl class="stats-totals">
        <dt>{t('stats.timeRead')}</dt>
        <dd>{f.minutes(n.seconds)}</dd>
        <dt>{t('stats.daysRead')}</dt>
        <dd>{f.int(n.days_read)}</dd>
        <dt>{t('stats.booksRead')}</dt>
        <dd>{f.int(n.books_read)}</dd>
        <dt>{t('stats.booksStarted')}</dt>
        <dd>{f.int(n.books_started)}</dd>
        <dt>{t('stats.booksFinished')}</dt>
        <dd>{f.int(n.books_finished)}</dd>
        <dt>{t('stats.readInAll')}</dt>
        <dd>{t('stats.ofABook', { share: f.pct(n.progress) })}</dd>
        <dt>{t('stats.currentStreak')}</dt>
        <dd>{t('stats.streak', { days: n.current_streak })}</dd>
        <dt>{t('stats.longestStreak')}</dt>
        <dd>{t('stats.streak', { days: n.longest_streak })}</dd>
      </dl>
      <h2>{t('stats.monthByMonth')}</h2>
      <MonthChart s={s} f={f} />
      <h2>{t('stats.dayByDay')}</h2>
      {s.days.length === 0 ? (
        <p>{t('stats.noReading', { year })}</p>
      ) : (
        <StatsTable
          caption={t('stats.eachDay', { year })}
          columns={[t('stats.day'), t('stats.timeRead'), t('stats.books'), t('stats.read')]}
          rows={s.days.map((d) => ({
            key: d.date,
            cells: [<time dateTime={d.date}>{f.day(d.date)}</time>, f.minutes(d.seconds), f.int(d.books), f.pct(d.progress)],
          }))}
        />
      )}
      <h2>{t('stats.books')}</h2>
      {s.books.length === 0 ? (
        <p>{t('stats.noBooks', { year })}</p>
      ) : (
        <StatsTable
          caption={t('stats.booksCaption', { year })}
          columns={[t('stats.book'), t('stats.timeRead'), t('stats.read'), t('stats.finished')]}
          rows={s.books.map((b) => ({
            key: b.id,
            cells: [
              b.title === null ? t('stats.gone') : <a href={`/books/${encodeURIComponent(b.id)}`}>{b.title}</a>,
              f.minutes(b.seconds),
              f.pct(b.progress),
              b.finished ? <time dateTime={b.finished}>{f.day(b.finished)}</time> : t('stats.notYet'),
            ],
          }))}
        />
      )}
      <h2>{t('stats.byAll')}</h2>
      <FigureTable caption={t('stats.byDevice')} what={t('stats.device')} rows={s.by_device} f={f} />
      <FigureTable caption={t('stats.byFormat')} what={t('stats.format')} rows={s.by_format} f={f} />
      <FigureTable caption={t('stats.byAuthor')} what={t('stats.author')} rows={s.by_author} f={f} />
      <FigureTable caption={t('stats.bySeries')} what={t('stats.series')} rows={s.by_series} f={f} />
      <FigureTable caption={t('stats.byTag')} what={t('stats.tag')} rows={s.by_tag} f={f} />
    </section>
  );
}
