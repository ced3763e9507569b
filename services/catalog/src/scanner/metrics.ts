// What the scanner tells Prometheus: scans finished by status, their durations, and what became of
// the files they looked at.
import type { Metrics } from '@bindery/platform';
import type { ScanCounts } from './scan-library';

const SCAN_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600];

export type ScanFinished = (status: 'completed' | 'failed', seconds: number, counts: ScanCounts) => void;

/** Registers the scan metrics in the process's registry; the returned function records one finished scan. */
export function scanMetrics(metrics: Metrics): ScanFinished {
  const scans = metrics.counter('bindery_scans_total', 'Library scans finished, by status', ['status']);
  const duration = metrics.histogram('bindery_scan_duration_seconds', 'Library scan durations', ['status'], SCAN_BUCKETS);
  const files = metrics.counter('bindery_scan_files_total', 'Files looked at by scans, by what became of them', ['result']);
  return (status, seconds, counts) => {
    scans.inc({ status });
    duration.observe({ status }, seconds);
    for (const result of ['added', 'updated', 'relinked', 'removed', 'unchanged', 'errors'] as const) {
      if (counts[result] > 0) files.inc({ result }, counts[result]);
    }
  };
}
