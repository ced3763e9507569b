// Path safety for everything that turns a user-supplied path into a file on disk: library folders,
// the scanner, the folder browser and file serving. Containment is decided on real paths, so a
// symlink may point anywhere inside a root but never lead out of one.
import { constants } from 'node:fs';
import { access, opendir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';

/** Errors that mean "no such file here" rather than a broken server; anything else is rethrown. */
const ABSENT = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENAMETOOLONG', 'EACCES', 'EPERM']);

export const errnoOf = (e: unknown): string | undefined => (typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined);

/**
 * True when `realPath` is `realRoot` or below it. Both must already be real (canonical, absolute)
 * paths; the check is by whole segments, so /lib2 is not inside /lib.
 */
export function isInside(realRoot: string, realPath: string): boolean {
  if (realPath === realRoot) return true;
  const prefix = realRoot.endsWith(path.sep) ? realRoot : realRoot + path.sep;
  return realPath.startsWith(prefix);
}

/**
 * The path's segments when it is a plain library-relative path, else null: no NUL, no backslash,
 * not absolute in POSIX or Windows form, and no segment that would change meaning on
 * normalisation (`..`, `.`, empty from `//`, a leading or trailing slash).
 */
export function relativeSegments(relPath: string): string[] | null {
  if (relPath === '' || relPath.includes('\0') || relPath.includes('\\')) return null;
  if (path.posix.isAbsolute(relPath) || path.win32.isAbsolute(relPath) || /^[A-Za-z]:[\\/]/.test(relPath)) return null;
  const segments = relPath.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return null;
  return segments;
}

async function realOrNull(p: string): Promise<string | null> {
  try {
    return await realpath(p);
  } catch (e) {
    if (ABSENT.has(errnoOf(e) ?? '')) return null;
    throw e;
  }
}

/**
 * Finds a library-relative path (already percent-decoded, '/'-separated) under the first root
 * that holds it. `abs` is the real path that was checked, so callers open exactly what was
 * vetted; `root` is the entry of `roots` it was found under. A name that exists on disk in the
 * other Unicode normalisation form (NFC vs NFD) is found too, after the exact spelling is tried.
 */
export async function resolveInside(roots: readonly string[], relPath: string): Promise<{ abs: string; root: string } | null> {
  if (relativeSegments(relPath) === null) return null;
  const spellings = [...new Set([relPath, relPath.normalize('NFC'), relPath.normalize('NFD')])].filter((s) => relativeSegments(s) !== null);
  const realRoots = await Promise.all(roots.map((r) => (path.isAbsolute(r) ? realOrNull(r) : Promise.resolve(null))));
  for (const spelling of spellings) {
    for (let i = 0; i < roots.length; i++) {
      const root = roots[i]!;
      const realRoot = realRoots[i];
      if (!realRoot) continue;
      const real = await realOrNull(path.join(realRoot, spelling));
      if (real !== null && isInside(realRoot, real)) return { abs: real, root };
    }
  }
  return null;
}

export type FolderCheck = { ok: true; real: string } | { ok: false; reason: string };

/** Whether a directory can be listed: R_OK|X_OK and an opendir that succeeds (root passes access() regardless). */
export async function canList(dir: string): Promise<boolean> {
  try {
    await access(dir, constants.R_OK | constants.X_OK);
    const d = await opendir(dir);
    await d.close();
    return true;
  } catch {
    return false;
  }
}

/** Validates a folder an admin configures for a library (or the scanner is about to walk). */
export async function checkFolder(folder: string): Promise<FolderCheck> {
  if (!path.isAbsolute(folder)) return { ok: false, reason: `folder must be an absolute path: ${folder}` };
  if (folder.includes('\0')) return { ok: false, reason: `folder does not exist: ${folder}` };
  let real: string;
  try {
    real = await realpath(folder);
  } catch (e) {
    const code = errnoOf(e);
    if (code === 'EACCES' || code === 'EPERM') return { ok: false, reason: `folder is not readable: ${folder}` };
    if (ABSENT.has(code ?? '')) return { ok: false, reason: `folder does not exist: ${folder}` };
    throw e;
  }
  const st = await stat(real).catch(() => null);
  if (!st) return { ok: false, reason: `folder does not exist: ${folder}` };
  if (!st.isDirectory()) return { ok: false, reason: `not a directory: ${folder}` };
  if (!(await canList(real))) return { ok: false, reason: `folder is not readable: ${folder}` };
  return { ok: true, real };
}

/** Folders no library may be: the system's own (exact real paths). */
const SYSTEM_FOLDERS = new Set([
  '/',
  '/etc',
  '/proc',
  '/sys',
  '/dev',
  '/boot',
  '/root',
  '/run',
  '/var',
  '/var/lib',
  '/var/run',
  '/usr',
  '/usr/local',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/opt',
  '/snap',
  '/tmp',
  '/var/tmp',
]);
/** Trees no library may lie in: configuration, kernel and device files, never books. */
const SYSTEM_TREES = ['/etc', '/proc', '/sys', '/dev', '/boot'];

/** True when a real (canonical) path lies in a system tree (or is its top). */
export function inSystemTree(real: string): boolean {
  return SYSTEM_TREES.some((t) => isInside(t, real));
}

/** True when a real (canonical) path is a system folder or lies in a system tree. */
export function isSystemFolder(real: string): boolean {
  return SYSTEM_FOLDERS.has(real) || inSystemTree(real);
}

/** True when one real path is the other or lies inside it. */
export function overlaps(a: string, b: string): boolean {
  return isInside(a, b) || isInside(b, a);
}

/** The real path of a folder that may not exist yet (a data directory before its first write). */
export async function realOrResolved(p: string): Promise<string> {
  const abs = path.resolve(p);
  return (await realOrNull(abs).catch(() => null)) ?? abs;
}

const executables = new Map<string, Promise<string | null>>();
/** The absolute path of an executable on PATH (looked up once per process and name), or null. */
export function findExecutable(name: string): Promise<string | null> {
  let found = executables.get(name);
  if (!found) {
    found = (async () => {
      for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
        if (!dir) continue;
        const candidate = path.join(dir, name);
        try {
          await access(candidate, constants.X_OK);
          return candidate;
        } catch {
          // not in this directory
        }
      }
      return null;
    })();
    executables.set(name, found);
  }
  return found;
}
