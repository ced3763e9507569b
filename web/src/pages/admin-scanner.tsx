// Admin: the scanner. Each library's scan state (scanning, waiting, idle) with its latest scan's
// counts, and the files the scanner could not read; the part under #scanner-status is fetched
// again whenever the live channel's `scanner` topic says a scan started, moved on or finished.
import { type MessageKey, useI18n } from '../i18n';
import { Outcome } from '../layout';
import type { LibraryRow } from './admin-libraries';
import { AdminTabs } from './admin-tabs';

export interface Scan {
  id: string;
  library_id: string;
  reason: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  requested_at: string;
  started_at: string | null;
  finished_at: string | null;
  counts: Partial<Record<'files_seen' | 'added' | 'updated' | 'relinked' | 'removed' | 'unchanged' | 'errors', number>>;
  error: string | null;
}
export interface ScanStatus {
  scanning: boolean;
  queued: number;
  scans: Scan[];
}
export interface FileIssue {
  library_id: string;
  file_path: string;
  format: string;
  size: number;
  error: string;
  seen_at: string;
}

/** What a library's scanner is doing now, in a word, and its latest scan (running, else the newest). */
export function stateOf(scans: Scan[]): { state: MessageKey; scan: Scan | null } {
  const running = scans.find((s) => s.status === 'running');
  if (running) return { state: 'scanner.state.scanning', scan: running };
  const queued = scans.find((s) => s.status === 'queued');
  const last = scans.find((s) => s.status === 'completed' || s.status === 'failed') ?? null;
  if (queued) return { state: 'scanner.state.waiting', scan: last };
  return { state: last ? (last.status === 'failed' ? 'scanner.state.failed' : 'scanner.state.idle') : 'scanner.state.never', scan: last };
}

function Counts({ s }: { s: Scan }) {
  const { t } = useI18n();
  const c = s.counts;
  const n = (k: keyof Scan['counts']) => c[k] ?? 0;
  return (
    <span class="scan-counts">
      {t('scanner.counts', { seen: n('files_seen'), added: n('added'), updated: n('updated'), moved: n('relinked'), removed: n('removed'), errors: n('errors') })}
    </span>
  );
}

/** When a scan started, finished or was asked for, and how it ended. */
function LatestScan({ scan }: { scan: Scan | null }) {
  const { t, date } = useI18n();
  const at = (iso: string | null) => (iso ? date(iso, { dateStyle: 'medium', timeStyle: 'medium' }) : '');
  if (!scan) return <>{t('scanner.latest.none')}</>;
  if (scan.status === 'running') return <>{t('scanner.latest.started', { at: at(scan.started_at) })}</>;
  if (!scan.finished_at) return <>{t('scanner.latest.asked', { at: at(scan.requested_at) })}</>;
  const ended = t(scan.status === 'failed' ? 'scanner.latest.failed' : 'scanner.latest.completed', { at: at(scan.finished_at) });
  return <>{scan.error ? `${ended}: ${scan.error}` : ended}</>;
}

export function ScannerStatus({ libraries, status, issues }: { libraries: LibraryRow[]; status: ScanStatus; issues: FileIssue[] }) {
  const { t, date } = useI18n();
  const names = new Map(libraries.map((l) => [l.id, l.name]));
  return (
    <div id="scanner-status">
      <p id="scanner-summary">
        {status.scanning ? t('scanner.running') : t('scanner.notRunning')}
        {status.queued > 0 && ` ${t('scanner.queued', { count: status.queued })}`}
      </p>
      {libraries.length === 0 ? (
        <p>{t('scanner.noLibrary')}</p>
      ) : (
        <table id="scan-states" class="stack">
          <caption class="muted">{t('scanner.caption')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('scanner.library')}</th>
              <th scope="col">{t('scanner.state')}</th>
              <th scope="col">{t('scanner.latest')}</th>
              <th scope="col">{t('scanner.progress')}</th>
            </tr>
          </thead>
          <tbody>
            {libraries.map((l) => {
              const { state, scan } = stateOf(status.scans.filter((s) => s.library_id === l.id));
              return (
                <tr key={l.id} data-library={l.id} data-state={scan?.status ?? 'none'}>
                  <td data-label={t('scanner.library')}>{l.name}</td>
                  <td data-label={t('scanner.state')} class="scan-state">
                    {t(state)}
                  </td>
                  <td data-label={t('scanner.latest')} class="scan-when">
                    <LatestScan scan={scan} />
                  </td>
                  <td data-label={t('scanner.progress')}>{scan ? <Counts s={scan} /> : '—'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <h2 id="issues-title">{t('scanner.issues.heading')}</h2>
      {issues.length === 0 ? (
        <p id="no-issues">{t('scanner.issues.none')}</p>
      ) : (
        <table id="scan-issues" class="stack" aria-labelledby="issues-title">
          <thead>
            <tr>
              <th scope="col">{t('scanner.library')}</th>
              <th scope="col">{t('scanner.issues.file')}</th>
              <th scope="col">{t('scanner.issues.problem')}</th>
              <th scope="col">{t('scanner.issues.seen')}</th>
            </tr>
          </thead>
          <tbody>
            {issues.map((i) => (
              <tr key={`${i.library_id}/${i.file_path}`} data-file={i.file_path}>
                <td data-label={t('scanner.library')}>{names.get(i.library_id) ?? i.library_id}</td>
                <td data-label={t('scanner.issues.file')} class="issue-file">
                  {i.file_path}
                </td>
                <td data-label={t('scanner.issues.problem')} class="issue-error">
                  {i.error}
                </td>
                <td data-label={t('scanner.issues.seen')}>{date(i.seen_at, { dateStyle: 'medium', timeStyle: 'medium' })}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

export function AdminScanner(p: { libraries: LibraryRow[]; status: ScanStatus; issues: FileIssue[] }) {
  const { t } = useI18n();
  const scannable = p.libraries.filter((l) => l.folders.length > 0);
  return (
    <>
      <h1>{t('scanner.heading')}</h1>
      <AdminTabs current="/admin/scanner" />
      <p class="muted">{t('scanner.intro')}</p>
      {scannable.length > 0 && (
        <form id="scan-form" class="inline-form" hx-post="/api/scanner/scan" hx-ext="bindery-json" hx-target="#scan-outcome">
          <label for="scan-library">{t('scanner.scanLibrary')}</label>
          <select id="scan-library" name="library_id">
            {scannable.map((l) => (
              <option key={l.id} value={l.id}>
                {l.name}
              </option>
            ))}
          </select>
          <button type="submit" class="primary" id="scan-now">
            {t('scanner.scanNow')}
          </button>
          <Outcome id="scan-outcome" />
        </form>
      )}
      <ScannerStatus {...p} />
    </>
  );
}
