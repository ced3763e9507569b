// Paths inside an archive: EPUB hrefs are URLs relative to the file that holds them.

/** Directory part of an archive path, with its trailing slash ('' at the root). */
export function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i + 1);
}

/** Resolves `href` (fragment and query dropped, percent-decoded) against `baseDir`; never climbs above the root. */
export function resolveHref(baseDir: string, href: string): string | null {
  const bare = href.trim().replace(/[#?].*$/u, '');
  if (bare === '' || /^[a-z][a-z0-9+.-]*:/iu.test(bare)) return null;
  let decoded = bare;
  try {
    decoded = decodeURIComponent(bare);
  } catch {
    // A stray '%' in an href: use it as written.
  }
  const joined = decoded.startsWith('/') ? decoded.slice(1) : baseDir + decoded;
  const out: string[] = [];
  for (const part of joined.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return out.length ? out.join('/') : null;
}
