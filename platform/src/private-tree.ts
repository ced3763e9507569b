// The embedded data directory is its owner's alone (it holds password hashes and notes): DATA_DIR
// 0700 and nothing under it with a group or other permission bit. This module imports only node's
// own, so that the start's walk of the whole tree can run in a thread of its own
// (private-tree-worker.ts): at 100,000 books the covers are 200,000 files, about 0.7 s of lstat
// that would otherwise come before the first answer.
import { chmodSync, type Dirent, existsSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

export interface Tightened {
  /** entries whose group and other permissions were removed */
  tightened: number;
  /** paths that could not be changed (or read) */
  failed: string[];
}

/**
 * DATA_DIR created 0700, or tightened to 0700, and every file and folder under it stripped of group
 * and other permissions (what an earlier version or another umask left). Symlinks are left as they
 * are, and so is what they point to. With `within`, only the data directory, its own entries and the
 * tree under its subfolder `within` are walked (PGlite's folder: PGlite sets some modes itself; what
 * the process itself writes elsewhere follows its umask).
 */
export function privateDataDir(dir: string, within?: string): Tightened {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const out: Tightened = { tightened: 0, failed: [] };
  const tighten = (path: string, mode: number) => {
    if ((mode & 0o077) === 0) return;
    try {
      chmodSync(path, mode & 0o700);
      out.tightened++;
    } catch {
      out.failed.push(path);
    }
  };
  // one folder at a time, so a walk holds one folder's entries, not the whole tree's
  const walk = (folder: string, deep: boolean) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      out.failed.push(folder);
      return;
    }
    for (const e of entries) {
      if (e.isSymbolicLink()) continue;
      const path = join(folder, e.name);
      try {
        tighten(path, lstatSync(path).mode & 0o777);
      } catch {
        out.failed.push(path);
        continue;
      }
      if (deep && e.isDirectory()) walk(path, true);
    }
  };
  // DATA_DIR itself may be a symlink to the folder meant: that folder is tightened
  tighten(dir, statSync(dir).mode & 0o777);
  if (within === undefined) {
    walk(dir, true);
  } else {
    walk(dir, false);
    const sub = join(dir, within);
    if (existsSync(sub) && !lstatSync(sub).isSymbolicLink()) walk(sub, true);
  }
  return out;
}

/**
 * `privateDataDir(dir)`, the whole tree, in a worker thread: on a machine with a second core it
 * costs the start nothing. The bundle's private-tree-worker.js next to this code, else the
 * TypeScript source with tsx registered in the thread; where no thread can start, here.
 */
export function privateDataDirApart(dir: string): Promise<Tightened & { thread: boolean }> {
  let worker: Worker;
  try {
    const built = fileURLToPath(new URL('./private-tree-worker.js', import.meta.url));
    if (existsSync(built)) worker = new Worker(built, { workerData: { dir } });
    else {
      const api = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href;
      const source = new URL('./private-tree-worker.ts', import.meta.url).href;
      worker = new Worker(`import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); })`, {
        eval: true,
        workerData: { dir },
      });
    }
  } catch {
    return Promise.resolve({ ...privateDataDir(dir), thread: false });
  }
  return new Promise((resolve) => {
    let settled = false;
    const settle = (t: Tightened, thread: boolean) => {
      if (settled) return;
      settled = true;
      resolve({ ...t, thread });
    };
    worker.once('message', (t: Tightened) => settle(t, true));
    // a thread that failed or ended without an answer: the walk is done here after all
    // (only then: the walk here is not begun once the thread has answered)
    const here = () => {
      if (!settled) settle(privateDataDir(dir), false);
    };
    worker.once('error', here);
    worker.once('exit', here);
  });
}
