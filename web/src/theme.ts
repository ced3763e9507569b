// The profile's `theme` (free text; `tokyo-night` at registration) as the page's colour scheme:
// `light` and names ending in -day, -light, -latte or -dawn are light; `system` follows the
// browser; anything else (tokyo-night included) is dark.
export type Scheme = 'light' | 'dark' | 'system';

export function schemeOf(theme: string | undefined): Scheme {
  const t = (theme ?? '').trim().toLowerCase();
  if (t === 'system') return 'system';
  if (t === 'light' || /-(day|light|latte|dawn)$/.test(t)) return 'light';
  return 'dark';
}

/** What the profile page offers; any other stored value still maps through schemeOf. */
export const THEMES: { value: string; label: string }[] = [
  { value: 'tokyo-night', label: 'Dark (Tokyo Night)' },
  { value: 'light', label: 'Light' },
  { value: 'system', label: 'Follow the system' },
];
