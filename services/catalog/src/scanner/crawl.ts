// Walks a library's folders: every book file once, with its size and modification time.
// Hidden entries are skipped; a symlink is followed only when its target stays inside the folder
// and is not a folder the walk is already inside (a loop).
import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isInside } from '@bindery/platform';
import { formatOf, type BookFormat } from '../formats/index';
import { checkAborted } from './scan-stopped';

/** Stats asked for at once within a folder. */
const STAT_AT_ONCE = 32;

export interface FoundFile {
  root: string;
  rel: string;
  abs: string;
  format: BookFormat;
  size: number;
  mtimeMs: number;
}

export interface CrawlProblem {
  rel: string;
  root: string;
  error: string;
}

/** `signal`: looked at per entry, so a stopped scan does not walk on through a large tree. */
export async function* crawl(roots: readonly string[], onProblem: (p: CrawlProblem) => void, signal?: AbortSignal): AsyncGenerator<FoundFile> {
  for (const root of roots) {
    let realRoot: string;
    try {
      realRoot = await realpath(root);
    } catch (e) {
      onProblem({ root, rel: '', error: `folder is not readable: ${(e as Error).message}` });
      continue;
    }
    // each folder to walk, with its real path, so a link back up the tree is seen as a loop
    const stack: { rel: string; real: string }[] = [{ rel: '', real: realRoot }];
    const visited = new Set<string>([realRoot]);
    while (stack.length > 0) {
      const { rel: relDir, real: realDir } = stack.pop()!;
      let entries: Dirent[];
      try {
        // one call per folder: its names come back together, not in slices of a directory stream
        entries = await readdir(join(root, relDir), { withFileTypes: true });
      } catch (e) {
        onProblem({ root, rel: relDir, error: `folder is not readable: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` });
        continue;
      }
      const subdirs: { rel: string; real: string }[] = [];
      const books: { rel: string; abs: string; format: BookFormat }[] = [];
      for (const ent of entries) {
        checkAborted(signal);
        if (ent.name.startsWith('.')) continue;
        const rel = relDir === '' ? ent.name : `${relDir}/${ent.name}`;
        const abs = join(root, rel);
        let isDir = ent.isDirectory();
        let isFile = ent.isFile();
        let real = join(realDir, ent.name);
        if (ent.isSymbolicLink()) {
          const target = await realpath(abs).catch(() => null);
          if (!target || !isInside(realRoot, target)) continue;
          const st = await stat(target).catch(() => null);
          if (!st) continue;
          isDir = st.isDirectory();
          isFile = st.isFile();
          if (isDir) {
            if (visited.has(target) || isInside(target, realDir)) continue; // a loop
            visited.add(target);
          }
          real = target;
        }
        if (isDir) subdirs.push({ rel, real });
        else if (isFile) {
          const format = formatOf(ent.name);
          if (format) books.push({ rel, abs, format });
        }
      }
      // a rescan of an unchanged library is mostly these stats: a slice of them is asked for at
      // once, so the thread pool answers them side by side rather than one round trip each
      for (let i = 0; i < books.length; i += STAT_AT_ONCE) {
        checkAborted(signal);
        const slice = books.slice(i, i + STAT_AT_ONCE);
        const stats = await Promise.all(slice.map((b) => stat(b.abs).catch(() => null)));
        for (let j = 0; j < slice.length; j++) {
          const st = stats[j];
          if (!st?.isFile()) continue;
          yield { root, ...slice[j]!, size: st.size, mtimeMs: Math.trunc(st.mtimeMs) };
        }
      }
      // depth-first, in name order
      subdirs.sort((a, b) => (a.rel < b.rel ? 1 : a.rel > b.rel ? -1 : 0));
      stack.push(...subdirs);
    }
  }
}
