// Which entries of a comic archive are pages and in what order. The catalog alone decides it, at
// scan time: each file's ordered page list travels in its item's events, and the gateway streams
// page n of that list (OPDS-PSE) without knowing the rule.

const PAGE_EXTENSIONS = new Set(['jpg', 'jpeg', 'png', 'gif', 'webp', 'avif']);

/** A comic page: an image, not inside __MACOSX or any hidden file or folder. */
export function isPageName(name: string): boolean {
  const parts = name.split(/[/\\]/u);
  if (parts.some((p) => p.startsWith('.') || p === '__MACOSX')) return false;
  const base = parts[parts.length - 1] ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 && PAGE_EXTENSIONS.has(base.slice(dot + 1).toLowerCase());
}

/** Natural order for page names: digit runs compare by value, the rest case-insensitively. Ties
 * go to fewer leading zeros, then plain code-unit order, so the result never depends on the locale. */
export function naturalCompare(a: string, b: string): number {
  const ta = a.toLowerCase().match(/\d+|\D+/gu) ?? [];
  const tb = b.toLowerCase().match(/\d+|\D+/gu) ?? [];
  let padding = 0;
  for (let i = 0; i < Math.min(ta.length, tb.length); i++) {
    const x = ta[i] as string;
    const y = tb[i] as string;
    if (x === y) continue;
    if (/^\d/u.test(x) && /^\d/u.test(y)) {
      const nx = x.replace(/^0+/u, '');
      const ny = y.replace(/^0+/u, '');
      if (nx.length !== ny.length) return nx.length - ny.length;
      if (nx !== ny) return nx < ny ? -1 : 1;
      padding ||= x.length - y.length;
      continue;
    }
    return x < y ? -1 : 1;
  }
  if (ta.length !== tb.length) return ta.length - tb.length;
  if (padding) return padding;
  return a < b ? -1 : a > b ? 1 : 0;
}
