// File-system watching behind a small interface: chokidar with native events, or chokidar's
// polling where events are not delivered (network mounts, or when native watching fails).
import { basename } from 'node:path';
import { watch as chokidar, type FSWatcher } from 'chokidar';

export interface WatchHandle {
  close(): Promise<void>;
}

export type WatchFn = (folders: string[], opts: { polling: boolean; intervalMs: number }, onChange: () => void, onError: (e: Error) => void) => WatchHandle;

export const chokidarWatch: WatchFn = (folders, opts, onChange, onError) => {
  const w: FSWatcher = chokidar(folders, {
    ignoreInitial: true,
    persistent: true,
    followSymlinks: true,
    ignorePermissionErrors: true,
    ignored: (p: string) => basename(p).startsWith('.') && !folders.includes(p),
    // a file still being copied is reported once its size has been stable for a moment
    awaitWriteFinish: { stabilityThreshold: 700, pollInterval: 100 },
    usePolling: opts.polling,
    interval: opts.intervalMs,
    binaryInterval: opts.intervalMs,
  });
  for (const ev of ['add', 'change', 'unlink', 'addDir', 'unlinkDir'] as const) w.on(ev, () => onChange());
  w.on('error', (e) => onError(e instanceof Error ? e : new Error(String(e))));
  return { close: () => w.close() };
};
