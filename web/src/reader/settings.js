// The reader's own settings, kept in the browser (localStorage): text size, font, line spacing,
// margins and theme. The theme follows the profile's unless the reader picks light, sepia or dark;
// it colours the reader's shell (the classes on <html>) and the book (the styles given to foliate).

const KEY = 'bindery.reader.';
export const setting = (k, fallback) => localStorage.getItem(KEY + k) ?? fallback;
export const keep = (k, v) => localStorage.setItem(KEY + k, String(v));

const html = document.documentElement.classList;
const profileClass = [...html].find((c) => c.startsWith('theme-')) ?? 'theme-system';
const profileDark = () => profileClass === 'theme-dark' || (profileClass === 'theme-system' && matchMedia('(prefers-color-scheme: dark)').matches);

const COLOURS = {
  light: { fg: '#1a1a1a', bg: '#ffffff', link: '#1a56c4' },
  sepia: { fg: '#3b2f20', bg: '#f4ecd8', link: '#7a3a0c' },
  dark: { fg: '#e6e6e6', bg: '#1a1b26', link: '#8ab4f8' },
};
const FAMILIES = {
  serif: 'Georgia, "Iowan Old Style", "Palatino Linotype", "Times New Roman", serif',
  sans: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
};
/** foliate's gap between columns, which is also the page's side margin */
const GAPS = { narrow: '3%', normal: '6%', wide: '12%' };

/** The theme in use: the reader's choice, else the profile's light or dark. */
export function theme() {
  const t = setting('theme', 'profile');
  return Object.hasOwn(COLOURS, t) ? t : profileDark() ? 'dark' : 'light';
}

/** Colours the shell: the profile's classes, or the reader's choice. */
export function applyShell() {
  const t = setting('theme', 'profile');
  for (const c of [...html]) if (c.startsWith('theme-') || c === 'reader-sepia') html.remove(c);
  if (t === 'light' || t === 'sepia') html.add('theme-light');
  else if (t === 'dark') html.add('theme-dark');
  else html.add(profileClass);
  if (t === 'sepia') html.add('reader-sepia');
}

/** The styles foliate gives each section of the book. */
export function bookCss() {
  const t = theme();
  const c = COLOURS[t];
  const size = Number(setting('font', '100'));
  const lh = Number(setting('spacing', '1.5'));
  const family = FAMILIES[setting('family', 'publisher')];
  return `html { color: ${c.fg}; background: ${c.bg}; font-size: ${size}%; color-scheme: ${t === 'dark' ? 'dark' : 'light'}; }
body { color: ${c.fg}; background: none !important; }
p, li, blockquote, dd { line-height: ${lh}; }
a:any-link { color: ${c.link}; }
${family ? `body, body :not(code, pre, kbd, samp, tt, code *, pre *) { font-family: ${family} !important; }` : ''}`;
}

export const gap = () => GAPS[setting('margins', 'normal')] ?? GAPS.normal;

/**
 * Wires a <select> to a setting: shows the kept value and keeps a change, then calls `changed`.
 * Missing controls (a page without them) are skipped.
 */
export function bind(id, k, fallback, changed) {
  const el = document.getElementById(id);
  if (!el) return;
  el.value = setting(k, fallback);
  if (!el.value) el.value = fallback;
  el.addEventListener('change', () => {
    keep(k, el.value);
    changed();
  });
}
