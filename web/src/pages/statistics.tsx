// The reading statistics page (decision 120): the person's year in figures, one chart drawn here as
// SVG (role="img" with its title and description, no script) and the table it is drawn from beside
// it for screen readers and for anyone who wants the numbers; numbers and dates through Intl.
import type { Figure, PersonStatistics } from '@bindery/contracts/api/statistics';

export type Statistics = PersonStatistics;

/** How the page writes numbers and dates: in the reader's locale (decision 121). */
export function formats(locale: string) {
  const int = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
  const pct = new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 0 });
  // the days are already the person's (counted in their time zone): shown as they are, in UTC
  const day = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' });
  const month = new Intl.DateTimeFormat(locale, { month: 'short', timeZone: 'UTC' });
  return {
    minutes: (seconds: number) => `${int.format(Math.round(seconds / 60))} min`,
    int: (n: number) => int.format(n),
    pct: (share: number) => pct.format(share),
    day: (date: string) => day.format(new Date(`${date}T00:00:00Z`)),
    month: (m: string) => month.format(new Date(`${m}-01T00:00:00Z`)),
  };
}

type Formats = ReturnType<typeof formats>;

const W = 600;
const H = 200;
const PAD = 24;

/** Minutes read each month: a bar chart, with its table. */
export function MonthChart({ s, f }: { s: Statistics; f: Formats }) {
  const max = Math.max(1, ...s.months.map((m) => m.seconds));
  const slot = (W - PAD) / s.months.length;
  const total = s.months.reduce((n, m) => n + m.seconds, 0);
  return (
    <figure class="stats-chart">
      <svg role="img" aria-labelledby="chart-title chart-desc" viewBox={`0 0 ${W} ${H + PAD}`} width="100%" focusable="false">
        <title id="chart-title">{`Minutes read each month of ${s.year}`}</title>
        <desc id="chart-desc">{`${f.minutes(total)} in ${s.year}; the table below gives each month's figure.`}</desc>
        {s.months.map((m, i) => {
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
      <figcaption>
        <table class="stack stats-table">
          <caption>Each month of {s.year}</caption>
          <thead>
            <tr>
              <th scope="col">Month</th>
              <th scope="col">Time read</th>
              <th scope="col">Books started</th>
              <th scope="col">Books finished</th>
            </tr>
          </thead>
          <tbody>
            {s.months.map((m) => (
              <tr key={m.month}>
                <th scope="row">{f.month(m.month)}</th>
                <td data-label="Time read">{f.minutes(m.seconds)}</td>
                <td data-label="Books started">{f.int(m.started)}</td>
                <td data-label="Books finished">{f.int(m.finished)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </figcaption>
    </figure>
  );
}

function FigureTable({ caption, rows, f, what }: { caption: string; rows: Figure[]; f: Formats; what: string }) {
  if (rows.length === 0) return null;
  return (
    <table class="stack stats-table">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{what}</th>
          <th scope="col">Time read</th>
          <th scope="col">Books</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.name}>
            <th scope="row">{r.name}</th>
            <td data-label="Time read">{f.minutes(r.seconds)}</td>
            <td data-label="Books">{f.int(r.books)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function StatisticsPage({ s, locale }: { s: Statistics; locale: string }) {
  const f = formats(locale);
  const t = s.totals;
  return (
    <section aria-labelledby="stats-heading">
      <h1 id="stats-heading">Reading statistics, {s.year}</h1>
      <nav aria-label="Years" class="subnav">
        <ul class="subnav-list">
          <li>
            <a href={`/statistics?year=${s.year - 1}`}>{s.year - 1}</a>
          </li>
          <li>
            <a href={`/statistics?year=${s.year + 1}`}>{s.year + 1}</a>
          </li>
        </ul>
      </nav>
      <p>Days are counted in your time zone, {s.timezone}.</p>
      <h2>Your year in review</h2>
      <dl class="stats-totals">
        <dt>Time read</dt>
        <dd>{f.minutes(t.seconds)}</dd>
        <dt>Days read</dt>
        <dd>{f.int(t.days_read)}</dd>
        <dt>Books read</dt>
        <dd>{f.int(t.books_read)}</dd>
        <dt>Books started</dt>
        <dd>{f.int(t.books_started)}</dd>
        <dt>Books finished</dt>
        <dd>{f.int(t.books_finished)}</dd>
        <dt>Read in all</dt>
        <dd>{f.pct(t.progress)} of a book</dd>
        <dt>Current streak</dt>
        <dd>{f.int(t.current_streak)} days</dd>
        <dt>Longest streak</dt>
        <dd>{f.int(t.longest_streak)} days</dd>
      </dl>
      <h2>Month by month</h2>
      <MonthChart s={s} f={f} />
      <h2>Day by day</h2>
      {s.days.length === 0 ? (
        <p>No reading recorded in {s.year}.</p>
      ) : (
        <table class="stack stats-table">
          <caption>Each day you read in {s.year}</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">Time read</th>
              <th scope="col">Books</th>
              <th scope="col">Read</th>
            </tr>
          </thead>
          <tbody>
            {s.days.map((d) => (
              <tr key={d.date}>
                <th scope="row">
                  <time dateTime={d.date}>{f.day(d.date)}</time>
                </th>
                <td data-label="Time read">{f.minutes(d.seconds)}</td>
                <td data-label="Books">{f.int(d.books)}</td>
                <td data-label="Read">{f.pct(d.progress)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Books</h2>
      {s.books.length === 0 ? (
        <p>No books read in {s.year}.</p>
      ) : (
        <table class="stack stats-table">
          <caption>The books you read in {s.year}, most time first</caption>
          <thead>
            <tr>
              <th scope="col">Book</th>
              <th scope="col">Time read</th>
              <th scope="col">Read</th>
              <th scope="col">Finished</th>
            </tr>
          </thead>
          <tbody>
            {s.books.map((b) => (
              <tr key={b.id}>
                <th scope="row">{b.title === null ? 'A book no longer in your libraries' : <a href={`/books/${encodeURIComponent(b.id)}`}>{b.title}</a>}</th>
                <td data-label="Time read">{f.minutes(b.seconds)}</td>
                <td data-label="Read">{f.pct(b.progress)}</td>
                <td data-label="Finished">{b.finished ? <time dateTime={b.finished}>{f.day(b.finished)}</time> : 'not yet'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>By device, format, author, series and tag</h2>
      <FigureTable caption="By device" what="Device" rows={s.by_device} f={f} />
      <FigureTable caption="By format" what="Format" rows={s.by_format} f={f} />
      <FigureTable caption="By author" what="Author" rows={s.by_author} f={f} />
      <FigureTable caption="By series" what="Series" rows={s.by_series} f={f} />
      <FigureTable caption="By tag" what="Tag" rows={s.by_tag} f={f} />
    </section>
  );
}
