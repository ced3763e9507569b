// The admin folder browser: lists directories under the configured browse roots so an admin can
// pick library folders. Containment is decided on real paths; what is shown is expressed under
// the configured root, so a root that is itself a symlink keeps its familiar name.
//
// Decisions:
// - A symlink to a directory is listed only when its target is inside a browse root; one that
//   leads out is left out (it could not be opened anyway), so every entry shown can be browsed.
// - With nested roots (say '/' and '/data') the outermost one wins: '/data' then has parent '/'.
// - Missing roots are left out of the roots listing; unlistable ones are shown, readable false.
// - Folders that could never hold a library (`hidden`: system trees, the data directory) are left
//   out of listings, and asking for one answers as if it were outside the roots.
import type { Dirent } from 'node:fs';
import { opendir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { Messages, type Catalog } from '@bindery/contracts';
import { canList, errnoOf, isInside } from '@bindery/platform';

export const BrowseMessages = {
  outside: Messages.pathOutsideAllowed,
  notAbsolute: 'folder must be an absolute path',
  missing: 'folder does not exist',
  notDirectory: 'not a directory',
  unreadable: 'folder is not readable',
} as const;

export const MAX_ENTRIES = 5000;
/** How many access checks run at once while building a listing. */
const CHECKS_AT_ONCE = 32;

export type BrowseEntry = Catalog.FolderEntry;

/** What `browse` answers (contracts' FolderListing): `truncated` when more than MAX_ENTRIES folders were there (the first MAX_ENTRIES by name are listed). */
export type BrowseResult = Catalog.FolderListing;

export interface BrowseError {
  error: string;
}

const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });
const byName = (a: string, b: string) => collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);

/** '/a/b/' and '/a//b' → '/a/b'; '/' stays '/'. */
function tidy(p: string): string {
  const n = path.posix.normalize(p);
  return n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
}

interface Root {
  shown: string;
  real: string;
}

async function realRoots(roots: readonly string[]): Promise<Root[]> {
  const found = await Promise.all(
    roots
      .filter((r) => path.posix.isAbsolute(r) && !r.includes('\0'))
      .map(async (r) => {
        const shown = tidy(r);
        const real = await realpath(shown).catch(() => null);
        const st = real ? await stat(real).catch(() => null) : null;
        return real && st?.isDirectory() ? { shown, real } : null;
      }),
  );
  return found.filter((r): r is Root => r !== null);
}

/** The outermost root whose real path holds `real`. */
function outermost(roots: Root[], real: string): Root | undefined {
  return roots.filter((r) => isInside(r.real, real)).sort((a, b) => a.real.length - b.real.length)[0];
}

/** `real` expressed under the root's configured name. */
const shownPath = (root: Root, real: string): string => (real === root.real ? root.shown : path.posix.join(root.shown, path.posix.relative(root.real, real)));

/** Judges a real path: true when it must not be shown. */
export type Hidden = (real: string) => boolean;

export async function browse(roots: readonly string[], requested: string | undefined, hidden: Hidden = () => false): Promise<BrowseResult | BrowseError> {
  const allowed = await realRoots(roots);
  if (requested === undefined || requested === '') return listRoots(allowed);
  if (!path.posix.isAbsolute(requested)) return { error: BrowseMessages.notAbsolute };

  // Judge the spelling first, so nothing outside the roots can be probed for existence.
  const wanted = tidy(requested);
  if (requested.includes('\0') || !allowed.some((r) => isInside(r.shown, wanted) || isInside(r.real, wanted))) return { error: BrowseMessages.outside };

  let real: string;
  try {
    real = await realpath(wanted);
  } catch (e) {
    // A missing folder behind a symlink that leads out is "outside", so nothing there can be probed.
    if (!(await existingPartInside(wanted, allowed))) return { error: BrowseMessages.outside };
    const code = errnoOf(e);
    return { error: code === 'EACCES' || code === 'EPERM' ? BrowseMessages.unreadable : BrowseMessages.missing };
  }
  const root = outermost(allowed, real);
  if (!root || hidden(real)) return { error: BrowseMessages.outside };
  const st = await stat(real).catch(() => null);
  if (!st) return { error: BrowseMessages.missing };
  if (!st.isDirectory()) return { error: BrowseMessages.notDirectory };

  const shown = shownPath(root, real);
  const listed = await listDir(real, shown, allowed, hidden);
  if (!listed) return { error: BrowseMessages.unreadable };
  return { path: shown, parent: real === root.real ? null : path.posix.dirname(shown), ...listed };
}

/** Whether the deepest existing ancestor of `p` really lies inside a root. */
async function existingPartInside(p: string, allowed: Root[]): Promise<boolean> {
  for (let dir = path.posix.dirname(p); ; dir = path.posix.dirname(dir)) {
    const real = await realpath(dir).catch(() => null);
    if (real !== null) return allowed.some((r) => isInside(r.real, real));
    if (dir === '/') return false;
  }
}

async function listRoots(allowed: Root[]): Promise<BrowseResult> {
  const outer = allowed.filter((r) => outermost(allowed, r.real) === r);
  const unique = [...new Map(outer.map((r) => [r.shown, r])).values()].sort((a, b) => byName(a.shown, b.shown));
  const entries = await Promise.all(unique.map(async (r) => ({ name: r.shown, path: r.shown, readable: await canList(r.real) })));
  return { path: null, parent: null, entries, truncated: false };
}

/**
 * The browsable subfolders of `real`, or null when it cannot be listed. Names are gathered first
 * (files are skipped without a syscall), sorted, then checked in order until the cap is reached.
 */
async function listDir(real: string, shown: string, allowed: Root[], hidden: Hidden): Promise<{ entries: BrowseEntry[]; truncated: boolean } | null> {
  const candidates: Dirent[] = [];
  try {
    for await (const d of await opendir(real, { bufferSize: 256 })) {
      if (!d.name.startsWith('.') && (d.isDirectory() || d.isSymbolicLink())) candidates.push(d);
    }
  } catch {
    return null;
  }
  candidates.sort((a, b) => byName(a.name, b.name));

  const entries: BrowseEntry[] = [];
  for (let i = 0; i < candidates.length; i += CHECKS_AT_ONCE) {
    const batch = candidates.slice(i, i + CHECKS_AT_ONCE);
    const checked = await Promise.all(batch.map((d) => entryOf(d, real, shown, allowed, hidden)));
    for (const e of checked) {
      if (!e) continue;
      if (entries.length === MAX_ENTRIES) return { entries, truncated: true };
      entries.push(e);
    }
  }
  return { entries, truncated: false };
}

async function entryOf(d: Dirent, dir: string, shown: string, allowed: Root[], hidden: Hidden): Promise<BrowseEntry | null> {
  let target = path.posix.join(dir, d.name);
  if (d.isSymbolicLink()) {
    const t = await realpath(target).catch(() => null);
    if (!t || !allowed.some((r) => isInside(r.real, t)) || !(await stat(t).catch(() => null))?.isDirectory()) return null;
    target = t;
  }
  if (hidden(target)) return null;
  return { name: d.name, path: path.posix.join(shown, d.name), readable: await canList(target) };
}
