// File-system watching behind a small interface: chokidar with native events, or chokidar's
// polling where events are not delivered (network mounts, or when native watching fails).
// Symlinks are never followed: one that leads out of the library would have us watch (and
// loop through) anything on the server, and one that stays inside points at a folder that is
// watched already. Any change makes the whole library be scanned, and the scan follows links
// that stay inside.
import { realpathSync } from 'node:fs';
import { basename } from 'node:path';
import { watch as chokidar, type FSWatcher } from 'chokidar';

export interface WatchHandle {
  close(): Promise<void>;
}

export type WatchFn = (folders: string[], opts: { polling: boolean; intervalMs: number }, onChange: () => void, onError: (e: Error) => void) => WatchHandle;

export const chokidarWatch: WatchFn = (given, opts, onChange, onError) => {
  // a library folder that is itself a symlink is watched at its target
  const folders = given.map((f) => {
    try {
      return realpathSync(f);
    } catch {
      return f;
    }
  });
  const w: FSWatcher = chokidar(folders, {
    ignoreInitial: true,
    persistent: true,
    followSymlinks: false,
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
