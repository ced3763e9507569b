// Admin: the scanner. Each library's scan state (scanning, waiting, idle) with its latest scan's
// counts, and the files the scanner could not read; the part under #scanner-status is fetched
// again whenever the live channel's `scanner` topic says a scan started, moved on or finished.
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

export const utc = (iso: string | null) => (iso ? `${iso.slice(0, 19).replace('T', ' ')} UTC` : '');

/** What a library's scanner is doing now, in a word, and its latest scan (running, else the newest). */
export function stateOf(scans: Scan[]): { state: string; scan: Scan | null } {
  const running = scans.find((s) => s.status === 'running');
  if (running) return { state: 'Scanning', scan: running };
  const queued = scans.find((s) => s.status === 'queued');
  const last = scans.find((s) => s.status === 'completed' || s.status === 'failed') ?? null;
  if (queued) return { state: 'Waiting to scan', scan: last };
  return { state: last ? (last.status === 'failed' ? 'Last scan failed' : 'Idle') : 'Never scanned', scan: last };
}

function Counts({ s }: { s: Scan }) {
  const c = s.counts;
  const n = (k: keyof Scan['counts']) => c[k] ?? 0;
  return (
    <span class="scan-counts">
      {`${n('files_seen')} files seen, ${n('added')} added, ${n('updated')} updated, ${n('relinked')} moved, ${n('removed')} removed, ${n('errors')} unreadable`}
    </span>
  );
}

export function ScannerStatus({ libraries, status, issues }: { libraries: LibraryRow[]; status: ScanStatus; issues: FileIssue[] }) {
  const names = new Map(libraries.map((l) => [l.id, l.name]));
  return (
    <div id="scanner-status">
      <p id="scanner-summary">
        {status.scanning ? 'A scan is running.' : 'No scan is running.'}
        {status.queued > 0 && ` ${status.queued} ${status.queued === 1 ? 'scan waits' : 'scans wait'} for its turn.`}
      </p>
      {libraries.length === 0 ? (
        <p>No library yet.</p>
      ) : (
        <table id="scan-states" class="stack">
          <caption class="muted">Each library's scanner</caption>
          <thead>
            <tr>
              <th scope="col">Library</th>
              <th scope="col">State</th>
              <th scope="col">Latest scan</th>
              <th scope="col">Progress</th>
            </tr>
          </thead>
          <tbody>
            {libraries.map((l) => {
              const { state, scan } = stateOf(status.scans.filter((s) => s.library_id === l.id));
              return (
                <tr key={l.id} data-library={l.id} data-state={scan?.status ?? 'none'}>
                  <td data-label="Library">{l.name}</td>
                  <td data-label="State" class="scan-state">
                    {state}
                  </td>
                  <td data-label="Latest scan" class="scan-when">
                    {scan
                      ? scan.status === 'running'
                        ? `started ${utc(scan.started_at)}`
                        : scan.finished_at
                          ? `${scan.status} ${utc(scan.finished_at)}${scan.error ? `: ${scan.error}` : ''}`
                          : `asked ${utc(scan.requested_at)}`
                      : 'none'}
                  </td>
                  <td data-label="Progress">{scan ? <Counts s={scan} /> : '—'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <h2 id="issues-title">Files the scanner could not read</h2>
      {issues.length === 0 ? (
        <p id="no-issues">None: every file found was read.</p>
      ) : (
        <table id="scan-issues" class="stack" aria-labelledby="issues-title">
          <thead>
            <tr>
              <th scope="col">Library</th>
              <th scope="col">File</th>
              <th scope="col">Problem</th>
              <th scope="col">Seen</th>
            </tr>
          </thead>
          <tbody>
            {issues.map((i) => (
              <tr key={`${i.library_id}/${i.file_path}`} data-file={i.file_path}>
                <td data-label="Library">{names.get(i.library_id) ?? i.library_id}</td>
                <td data-label="File" class="issue-file">
                  {i.file_path}
                </td>
                <td data-label="Problem" class="issue-error">
                  {i.error}
                </td>
                <td data-label="Seen">{utc(i.seen_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

export function AdminScanner(p: { libraries: LibraryRow[]; status: ScanStatus; issues: FileIssue[] }) {
  const scannable = p.libraries.filter((l) => l.folders.length > 0);
  return (
    <>
      <h1>Scanner</h1>
      <AdminTabs current="/admin/scanner" />
      <p class="muted">Updated as scans run, without reloading the page.</p>
      {scannable.length > 0 && (
        <form id="scan-form" class="inline-form" hx-post="/api/scanner/scan" hx-ext="bindery-json" hx-target="#scan-outcome">
          <label for="scan-library">Scan a library now</label>
          <select id="scan-library" name="library_id">
            {scannable.map((l) => (
              <option key={l.id} value={l.id}>
                {l.name}
              </option>
            ))}
          </select>
          <button type="submit" class="primary" id="scan-now">
            Scan now
          </button>
          <Outcome id="scan-outcome" />
        </form>
      )}
      <ScannerStatus {...p} />
    </>
  );
}
